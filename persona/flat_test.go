package persona

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tierView is what a run of one tier sees, for comparison.
type tierView struct {
	Harness, Model, Prompt, Reasoning, Sandbox string
	Timeout                                    int
	Agents                                     string // path base name or content
}

func viewTier(t *testing.T, p *Persona, tier string) tierView {
	t.Helper()
	r, err := p.Resolve(tier)
	if err != nil {
		t.Fatalf("Resolve(%q) = %v", tier, err)
	}
	v := tierView{Harness: r.Harness, Model: r.Model, Prompt: r.SystemPrompt, Reasoning: r.HarnessSettings.Reasoning,
		Sandbox: r.HarnessSettings.SandboxMode, Timeout: r.HarnessSettings.TimeoutSeconds, Agents: r.Agents.Content}
	if r.Agents.Path != "" {
		v.Agents = filepath.Base(r.Agents.Path)
	}
	return v
}

const flatBase = `
-- base/rev.json --
{"id": "rev", "intent": "review", "description": "flat", "harness": "codex", "model": "gpt-5",
 "systemPrompt": "Review.", "harnessSettings": {"reasoning": "high", "timeoutSeconds": 600}}
`

const tieredBase = `
-- base/rev.json --
{"id": "rev", "intent": "review", "description": "tiered", "defaultTier": "minimum",
 "tiers": {
   "best": {"harness": "claude", "model": "opus", "systemPrompt": "Best."},
   "minimum": {"harness": "opencode", "model": "mini", "harnessSettings": {"sandboxMode": "read-only"}, "agentsMdContent": "Brief."}}}
`

func TestFlatAndTieredCascade(t *testing.T) {
	tests := []struct {
		name     string
		archive  string
		wantFlat bool
		want     map[string]tierView // by tier; a missing tier is not served
		origins  map[string]string   // "tier field" -> layer
	}{
		{
			name:     "a flat persona serves every tier",
			archive:  flatBase,
			wantFlat: true,
			want: map[string]tierView{
				"best":       {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
				"best-value": {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
				"minimum":    {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
			},
			origins: map[string]string{"minimum harness": "base", "best systemPrompt": "base"},
		},
		{
			name: "top-level fields are defaults each tier overrides field by field",
			archive: "-- base/rev.json --\n" + `{"id": "rev", "intent": "review", "description": "d", "systemPrompt": "Default.",
 "harnessSettings": {"reasoning": "low", "timeoutSeconds": 60},
 "tiers": {"best": {"harness": "claude", "model": "opus", "harnessSettings": {"reasoning": "high"}},
           "minimum": {"harness": "codex", "model": "mini", "systemPrompt": "Mini."}}}`,
			want: map[string]tierView{
				"best":    {Harness: "claude", Model: "opus", Prompt: "Default.", Reasoning: "high", Timeout: 60},
				"minimum": {Harness: "codex", Model: "mini", Prompt: "Mini.", Reasoning: "low", Timeout: 60},
			},
			origins: map[string]string{"best systemPrompt": "base", "minimum systemPrompt": "base"},
		},
		{
			name: "complete top-level defaults serve the tiers not named",
			archive: "-- base/rev.json --\n" + `{"id": "rev", "intent": "review", "description": "d", "harness": "codex", "model": "m",
 "tiers": {"best": {"model": "big"}}}`,
			want: map[string]tierView{
				"best":       {Harness: "codex", Model: "big"},
				"best-value": {Harness: "codex", Model: "m"},
				"minimum":    {Harness: "codex", Model: "m"},
			},
		},
		{
			name:     "a flat file over a tiered persona replaces what it sets in every tier",
			archive:  tieredBase + "-- user/rev.json --\n" + `{"id": "rev", "harness": "codex", "model": "gpt-5", "systemPrompt": "Flat.", "agentsMd": "flat.md"}` + "\n-- user/flat.md --\nflat\n",
			wantFlat: false, // minimum keeps its sandboxMode
			want: map[string]tierView{
				"best":       {Harness: "codex", Model: "gpt-5", Prompt: "Flat.", Agents: "flat.md"},
				"best-value": {Harness: "codex", Model: "gpt-5", Prompt: "Flat.", Agents: "flat.md"},
				"minimum":    {Harness: "codex", Model: "gpt-5", Prompt: "Flat.", Sandbox: "read-only", Agents: "flat.md"},
			},
			origins: map[string]string{"minimum harness": "user", "minimum harnessSettings.sandboxMode": "base", "best model": "user"},
		},
		{
			name:     "a flat file over tiers it replaces entirely makes a flat persona",
			archive:  "-- base/rev.json --\n" + `{"id": "rev", "intent": "review", "description": "d", "tiers": {"best": {"harness": "claude", "model": "opus"}}}` + "\n-- user/rev.json --\n" + flatBase[len("\n-- base/rev.json --\n"):],
			wantFlat: true,
			want: map[string]tierView{
				"best":       {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
				"best-value": {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
				"minimum":    {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
			},
		},
		{
			name:    "a tiered override over a flat persona changes one tier",
			archive: flatBase + "-- user/rev.json --\n" + `{"id": "rev", "tiers": {"minimum": {"model": "mini", "harnessSettings": {"reasoning": "low"}}}}`,
			want: map[string]tierView{
				"best":       {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
				"best-value": {Harness: "codex", Model: "gpt-5", Prompt: "Review.", Reasoning: "high", Timeout: 600},
				"minimum":    {Harness: "codex", Model: "mini", Prompt: "Review.", Reasoning: "low", Timeout: 600},
			},
			origins: map[string]string{"minimum model": "user", "minimum harness": "base", "minimum harnessSettings.reasoning": "user", "minimum harnessSettings.timeoutSeconds": "base"},
		},
		{
			name:    "a top-level harnessSettings key of a higher layer replaces that key in the tiers below, and only it",
			archive: tieredBase + "-- user/rev.json --\n" + `{"id": "rev", "harnessSettings": {"sandboxMode": "workspace-write"}}`,
			want: map[string]tierView{
				"best":    {Harness: "claude", Model: "opus", Prompt: "Best.", Sandbox: "workspace-write"},
				"minimum": {Harness: "opencode", Model: "mini", Sandbox: "workspace-write", Agents: "Brief."},
			},
			origins: map[string]string{"minimum harnessSettings.sandboxMode": "user", "minimum harness": "base"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, _ := loadTree(t, tt.archive)
			if len(cat.Errors) > 0 || len(cat.Warnings) > 0 {
				t.Fatalf("errors %v warnings %v", cat.Errors, cat.Warnings)
			}
			p, ok := cat.Get("rev")
			if !ok {
				t.Fatal("rev not loaded")
			}
			if got := p.Spec.Flat(); got != tt.wantFlat {
				t.Errorf("Flat() = %v, want %v (tiers %v)", got, tt.wantFlat, specJSON(t, p.Spec.Tiers))
			}
			var wantTiers []string
			for _, tier := range Tiers {
				want, served := tt.want[tier]
				if !served {
					if _, err := p.Resolve(tier); err == nil {
						t.Errorf("Resolve(%q) works, want the tier not served", tier)
					}
					continue
				}
				wantTiers = append(wantTiers, tier)
				if got := viewTier(t, p, tier); got != want {
					t.Errorf("tier %s = %+v\nwant      %+v", tier, got, want)
				}
			}
			if got := p.Spec.TierNames(); !slices.Equal(got, wantTiers) {
				t.Errorf("TierNames() = %v, want %v", got, wantTiers)
			}
			for key, layer := range tt.origins {
				tier, field, _ := strings.Cut(key, " ")
				r, _ := p.Resolve(tier)
				if got := r.Origins[field].Layer; got != layer {
					t.Errorf("origin of %s %s = %q, want %q (%v)", tier, field, got, layer, r.Origins)
				}
			}
		})
	}
}

func TestFlatPersonaErrors(t *testing.T) {
	tests := []struct {
		name, archive, want string
	}{
		{"standalone without a runtime", "-- base/a.json --\n{\"id\": \"a\", \"intent\": \"x\", \"description\": \"d\"}",
			`base/a.json: no lower layer defines persona "a" to override, and as a standalone persona it lacks a runtime (harness and model at the top level, or tiers)`},
		{"flat without a model", "-- base/a.json --\n{\"id\": \"a\", \"intent\": \"x\", \"description\": \"d\", \"harness\": \"codex\"}",
			"base/a.json: model: missing; want the model the harness runs"},
		{"a tier missing what the top level does not give", "-- base/a.json --\n{\"id\": \"a\", \"intent\": \"x\", \"description\": \"d\", \"harness\": \"codex\", \"tiers\": {\"best\": {\"systemPrompt\": \"p\"}}}",
			"base/a.json: tiers.best.model: missing, in the tier and at the top level"},
		{"a flat mode without a sidecar is reported once", "-- base/a.json --\n{\"id\": \"a\", \"intent\": \"x\", \"description\": \"d\", \"harness\": \"codex\", \"model\": \"m\", \"agentsMdMode\": \"extend\"}",
			"base/a.json: agentsMdMode: agentsMdMode is set but there is no agentsMd path or agentsMdContent after the cascade"},
		{"bypass conflicts in the effective settings", "-- base/a.json --\n{\"id\": \"a\", \"intent\": \"x\", \"description\": \"d\", \"harness\": \"codex\", \"model\": \"m\", \"harnessSettings\": {\"sandboxMode\": \"read-only\", \"dangerouslyBypassApprovalsAndSandbox\": true}}",
			"base/a.json: harnessSettings: dangerouslyBypassApprovalsAndSandbox excludes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, root := loadTree(t, tt.archive)
			got := diagStrings(cat.Errors, root)
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("errors = %q, want one starting %q", got, tt.want)
			}
		})
	}
}

func TestCloudFields(t *testing.T) {
	cat, root := loadTree(t, `
-- base/bot.json --
{"id": "bot", "intent": "x", "description": "d", "harness": "grok", "model": "m",
  "sandbox": false, "cloud": true, "useSubscription": true, "onEvent": "h.ts",
  "integrations": {"github": {"source": {"kind": "workspace"}}},
  "capabilities": {"review": true, "teamSolve": {"enabled": true, "size": 3}},
  "memory": {"scopes": ["user"], "trajectories": true}, "relay": {"channels": ["#a"]},
  "agentsMd": "bot.md"}
-- base/bot.md --
bot
-- user/bot.json --
{"id": "bot", "memory": false}
-- user/plain.json --
{"id": "plain", "intent": "x", "description": "d", "harness": "codex", "model": "m", "mount": {"enabled": false}}
`)
	if len(cat.Errors) > 0 {
		t.Fatalf("errors %v", cat.Errors)
	}
	// One warning for the file that sets them, at the first of them, even
	// with a sidecar to anchor; one for the override.
	want := []string{
		"base/bot.json:2:3: sandbox, cloud, useSubscription, integrations, capabilities, memory, relay, onEvent: agentworkforce cloud fields, kept but ignored by workforce",
		"user/bot.json:1:15: memory: agentworkforce cloud field, kept but ignored by workforce",
	}
	if got := diagStrings(cat.Warnings, root); !slices.Equal(got, want) {
		t.Errorf("warnings = %q\nwant %q", got, want)
	}
	p, _ := cat.Get("bot")
	s := p.Spec
	if string(s.Memory) != "false" || string(s.Relay) != `{"channels": ["#a"]}` || !*s.Cloud || s.OnEvent != "h.ts" {
		t.Errorf("cloud fields = %s", specJSON(t, s.CloudFields))
	}
	if got := p.Provenance()["memory"]; len(got) != 1 || got[0].Layer != "user" {
		t.Errorf("provenance of memory = %v, want the user layer", got)
	}
	if r, _ := p.Resolve("minimum"); r.Harness != HarnessGrok {
		t.Errorf("harness = %q, want grok", r.Harness)
	}
	if plain, _ := cat.Get("plain"); *plain.Spec.Mount.Enabled {
		t.Error("mount.enabled false lost")
	}
}

func TestRunnable(t *testing.T) {
	for _, h := range Harnesses {
		if err := Runnable(h); err != nil {
			t.Errorf("Runnable(%q) = %v", h, err)
		}
	}
	var ue *UnsupportedHarnessError
	if err := Runnable("grok"); !errors.As(err, &ue) || err.Error() != "workforce cannot run harness grok yet; it runs claude, opencode, codex, gemini" {
		t.Errorf("Runnable(grok) = %v", err)
	}
	if err := Runnable("vim"); err == nil || errors.As(err, &ue) {
		t.Errorf("Runnable(vim) = %v, want an unknown harness", err)
	}
}

func TestSelect(t *testing.T) {
	names := []string{"review-a", "review-b", "lint", "docs/api"}
	tests := []struct {
		patterns []string
		want     []string
		wantErr  string
	}{
		{patterns: []string{"review-*"}, want: []string{"review-a", "review-b"}},
		{patterns: []string{"lint", "review-b"}, want: []string{"review-b", "lint"}},
		{patterns: []string{"{lint,review-?}"}, want: []string{"review-a", "review-b", "lint"}},
		{patterns: []string{"*"}, want: []string{"review-a", "review-b", "lint"}},
		{patterns: []string{"**"}, want: names},
		{patterns: []string{"review-*", "zz*"}, wantErr: `pattern "zz*" matches no persona; personas: docs/api, lint, review-a, review-b`},
		{patterns: []string{"nobody"}, wantErr: `unknown persona "nobody"; personas: docs/api, lint, review-a, review-b`},
		{patterns: []string{"[oops"}, wantErr: `invalid pattern "[oops"`},
	}
	for _, tt := range tests {
		got, err := SelectNames("persona", names, tt.patterns)
		if tt.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("SelectNames(%q) error = %v, want %q", tt.patterns, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("SelectNames(%q) = %q, %v; want %q", tt.patterns, got, err, tt.want)
		}
	}
	if !IsPattern("a*") || IsPattern("review-a") {
		t.Error("IsPattern is wrong")
	}
}
