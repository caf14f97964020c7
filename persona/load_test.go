package persona

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/seed-3bc194a6/workforce/internal/benchtree"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/home"
)

// loadTree writes the archive into a temporary directory and loads its
// layers: directories "project", "user" and "base", highest first.
func loadTree(t *testing.T, archive string) (*Catalog, string) {
	t.Helper()
	root := t.TempDir()
	ar := txtar.Parse([]byte(archive))
	for _, f := range ar.Files {
		write(t, filepath.Join(root, f.Name), string(f.Data))
	}
	var layers []Layer
	for _, name := range []string{"project", "user", "base"} {
		layers = append(layers, Layer{Name: name, Dir: filepath.Join(root, name)})
	}
	return LoadLayers(layers), root
}

func diagStrings(ds []*diag.Diagnostic, root string) []string {
	var out []string
	for _, d := range ds {
		out = append(out, strings.ReplaceAll(d.Error(), root+"/", ""))
	}
	return out
}

func TestCascadeMerge(t *testing.T) {
	cat, root := loadTree(t, `
-- base/rev.json --
{"id": "rev", "intent": "review", "tags": ["a", "b"], "description": "base",
 "env": {"A": "1", "B": "1"}, "inputs": {"X": "x"},
 "permissions": {"allow": ["Read", "Grep"], "deny": ["Bash"], "mode": "default"},
 "mount": {"ignoredPatterns": ["*.log"], "readonlyPatterns": ["go.sum"]},
 "claudeMd": "base.md", "claudeMdMode": "extend",
 "agentsMdContent": "base agents",
 "tiers": {
   "best": {"harness": "claude", "model": "m1", "systemPrompt": "p1",
            "harnessSettings": {"reasoning": "high", "timeoutSeconds": 60}},
   "minimum": {"harness": "codex", "model": "m3", "agentsMd": "tier.md"}
 }}
-- base/base.md --
base sidecar
-- base/tier.md --
tier sidecar
-- user/rev.json --
{"id": "rev", "tags": ["c"], "env": {"B": "2", "C": "2"},
 "permissions": {"allow": ["Grep", "Edit"]},
 "mount": {"ignoredPatterns": ["tmp/"]},
 "agentsMd": "user.md",
 "tiers": {"best": {"harnessSettings": {"timeoutSeconds": 90}, "claudeMdMode": "overwrite"}}}
-- user/user.md --
user sidecar
-- project/rev.json --
{"id": "rev", "tiers": {"best": {"model": "m2"}, "minimum": {"agentsMdContent": "project tier"}}}
`)
	if len(cat.Errors) > 0 || len(cat.Warnings) > 0 {
		t.Fatalf("errors %v warnings %v", cat.Errors, cat.Warnings)
	}
	p, ok := cat.Get("rev")
	if !ok {
		t.Fatal("rev not loaded")
	}
	s := p.Spec
	checks := []struct {
		name      string
		got, want any
	}{
		{"layer", p.Layer, "project"},
		{"chain", len(p.Chain), 3},
		{"tags replace", s.Tags, []string{"c"}},
		{"description kept", s.Description, "base"},
		{"env merges key by key", s.Env, map[string]string{"A": "1", "B": "2", "C": "2"}},
		{"permissions allow union", s.Permissions.Allow, []string{"Read", "Grep", "Edit"}},
		{"permissions deny kept", s.Permissions.Deny, []string{"Bash"}},
		{"mount appends base first", s.Mount.IgnoredPatterns, []string{"*.log", "tmp/"}},
		{"tier field override", s.Tiers["best"].Model, "m2"},
		{"tier field kept", s.Tiers["best"].Harness, "claude"},
		{"harnessSettings one level deeper", *s.Tiers["best"].HarnessSettings, HarnessSettings{Reasoning: "high", TimeoutSeconds: 90}},
		{"claudeMd anchored to base", s.ClaudeMd, filepath.Join(root, "base/base.md")},
		{"agentsMd path owns the channel over lower content", [2]string{s.AgentsMd, s.AgentsMdContent}, [2]string{filepath.Join(root, "user/user.md"), ""}},
		{"tier content owns the tier channel", [2]string{s.Tiers["minimum"].AgentsMd, s.Tiers["minimum"].AgentsMdContent}, [2]string{"", "project tier"}},
		{"provenance of the model", p.Provenance()["tiers.best.model"], []Origin{{"project", filepath.Join(root, "project/rev.json")}}},
		{"provenance of claudeMd", p.Provenance()["claudeMd"], []Origin{{"base", filepath.Join(root, "base/rev.json")}}},
		{"provenance of appended list", len(p.Provenance()["mount.ignoredPatterns"]), 2},
		{"provenance of env key", p.Provenance()["env.B"][0].Layer, "user"},
	}
	for _, c := range checks {
		if !equalJSON(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}

	best, err := p.Resolve("best")
	if err != nil {
		t.Fatal(err)
	}
	if best.Claude.Path != filepath.Join(root, "base/base.md") || best.Claude.Mode != ModeOverwrite {
		t.Errorf("best claude sidecar = %+v, want base.md with the tier's overwrite mode", best.Claude)
	}
	if best.Claude.Origin.Layer != "base" {
		t.Errorf("best claude origin = %+v, want base", best.Claude.Origin)
	}
	if best.Agents.Path != filepath.Join(root, "user/user.md") || best.Agents.Mode != ModeOverwrite {
		t.Errorf("best agents sidecar = %+v, want user.md, default mode", best.Agents)
	}
	minimum, err := p.Resolve("minimum")
	if err != nil {
		t.Fatal(err)
	}
	if minimum.Agents.Content != "project tier" || minimum.Agents.Origin.Layer != "project" {
		t.Errorf("minimum agents sidecar = %+v", minimum.Agents)
	}
	if minimum.Claude.Mode != ModeExtend {
		t.Errorf("minimum claude mode = %q, want extend inherited from the top level", minimum.Claude.Mode)
	}
	if text, err := best.Claude.Text(); err != nil || text != "base sidecar\n" {
		t.Errorf("Text() = %q, %v", text, err)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestCascadeResolution(t *testing.T) {
	const base = `
-- base/rev.json --
{"id": "rev", "intent": "review", "description": "base", "tiers": {"best": {"harness": "claude", "model": "m"}}}
`
	tests := []struct {
		name       string
		archive    string
		wantIDs    []string
		wantErrors []string // prefixes of formatted errors, root-relative
		check      func(t *testing.T, cat *Catalog)
	}{
		{
			name:    "extends makes a new persona and keeps the base",
			archive: base + "-- user/docs.json --\n{\"id\": \"docs\", \"extends\": \"rev\", \"description\": \"docs\"}\n",
			wantIDs: []string{"docs", "rev"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("docs")
				if p.Spec.Tiers["best"].Model != "m" || p.Spec.Description != "docs" {
					t.Errorf("docs = %+v", p.Spec)
				}
			},
		},
		{
			name: "network: the top level's and the tier's both reach the resolved tier, each with its file",
			archive: base + "-- user/rev.json --\n{\"id\": \"rev\", \"network\": {\"mode\": \"allowlist\", \"allow\": [\"a.com\"]}}\n" +
				"-- project/rev.json --\n{\"id\": \"rev\", \"tiers\": {\"best\": {\"network\": {\"mode\": \"none\", \"presets\": []}}}}\n",
			wantIDs: []string{"rev"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("rev")
				r, err := p.Resolve("best")
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Network) != 2 {
					t.Fatalf("Resolve(best).Network = %+v, want the top level's and the tier's", r.Network)
				}
				top, tier := r.Network[0], r.Network[1]
				if top.Field != "network" || top.Origin.Layer != "user" || top.Spec.Mode != "allowlist" || len(top.Spec.Allow) != 1 {
					t.Errorf("top level's = %+v", top)
				}
				if tier.Field != "tiers.best.network" || tier.Origin.Layer != "project" || tier.Spec.Mode != "none" || tier.Spec.Presets == nil || len(*tier.Spec.Presets) != 0 {
					t.Errorf("tier's = %+v", tier)
				}
			},
		},
		{
			name:    "extends in the same layer",
			archive: base + "-- user/a.json --\n{\"id\": \"a\", \"extends\": \"b\"}\n-- user/b.json --\n{\"id\": \"b\", \"extends\": \"rev\"}\n",
			wantIDs: []string{"a", "b", "rev"},
		},
		{
			name:    "extends of its own id means the layer below",
			archive: base + "-- user/rev.json --\n{\"id\": \"rev\", \"extends\": \"rev\", \"description\": \"user\"}\n",
			wantIDs: []string{"rev"},
		},
		{
			name:       "cycle names every member, lower persona stays visible",
			archive:    base + "-- user/rev.json --\n{\"id\": \"rev\", \"extends\": \"x\"}\n-- user/x.json --\n{\"id\": \"x\", \"extends\": \"rev\"}\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{"user/rev.json: extends: extends cycle: rev -> x -> rev", "user/x.json: extends: extends cycle: rev -> x -> rev"},
			check: func(t *testing.T, cat *Catalog) {
				if p, _ := cat.Get("rev"); p.Layer != "base" {
					t.Errorf("rev from %s, want base", p.Layer)
				}
			},
		},
		{
			name:       "self cycle through a chain",
			archive:    "-- user/a.json --\n{\"id\": \"a\", \"extends\": \"b\"}\n-- user/b.json --\n{\"id\": \"b\", \"extends\": \"c\"}\n-- user/c.json --\n{\"id\": \"c\", \"extends\": \"a\"}\n",
			wantErrors: []string{"user/a.json: extends: extends cycle: a -> b -> c -> a", "user/b.json: extends: extends cycle: a -> b -> c -> a", "user/c.json: extends: extends cycle: a -> b -> c -> a"},
		},
		{
			name:       "unknown base",
			archive:    "-- project/a.json --\n{\"id\": \"a\", \"extends\": \"nobody\"}\n",
			wantErrors: []string{`project/a.json: extends: extends unknown persona "nobody"; no layer at or below project defines it`},
		},
		{
			name:       "override with nothing below and not standalone",
			archive:    "-- project/a.json --\n{\"id\": \"a\", \"tiers\": {\"best\": {\"model\": \"m\"}}}\n",
			wantErrors: []string{`project/a.json: no lower layer defines persona "a" to override, and as a standalone persona it lacks intent, description`},
		},
		{
			name:       "duplicate id in one layer",
			archive:    base + "-- base/zz.json --\n{\"id\": \"rev\", \"intent\": \"x\", \"description\": \"d\", \"tiers\": {\"best\": {\"harness\": \"codex\", \"model\": \"m\"}}}\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{`base/zz.json: id: persona "rev" is also defined by`},
		},
		{
			name:       "mode without a path after the cascade",
			archive:    base + "-- user/rev.json --\n{\"id\": \"rev\", \"tiers\": {\"best\": {\"claudeMdMode\": \"extend\"}}}\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{"user/rev.json: tiers.best.claudeMdMode: claudeMdMode is set but tier best has no claudeMd path"},
		},
		{
			name:    "mode in an override, path from below",
			archive: base + "-- base/x.md --\nx\n-- base/rev2.json --\n{\"id\": \"rev2\", \"extends\": \"rev\", \"claudeMd\": \"x.md\"}\n-- user/rev2.json --\n{\"id\": \"rev2\", \"claudeMdMode\": \"extend\"}\n",
			wantIDs: []string{"rev", "rev2"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("rev2")
				r, _ := p.Resolve("")
				if r.Claude.Mode != ModeExtend || !strings.HasSuffix(r.Claude.Path, "base/x.md") {
					t.Errorf("claude sidecar = %+v", r.Claude)
				}
			},
		},
		{
			name:       "sidecars checked from the layer's listing",
			archive:    base + "-- user/rev.json --\n{\"id\": \"rev\", \"claudeMd\": \"dir.md\", \"agentsMd\": \"gone.md\"}\n-- user/dir.md/x --\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{"user/rev.json: claudeMd: sidecar "}, // dir.md is a directory
			check: func(t *testing.T, cat *Catalog) {
				if len(cat.Warnings) != 1 || !strings.Contains(cat.Warnings[0].Error(), "agentsMd: sidecar file not found") {
					t.Errorf("warnings = %v, want the missing agentsMd", cat.Warnings)
				}
				if p, _ := cat.Get("rev"); p.Layer != "base" {
					t.Errorf("rev from %s, want the base persona to stay visible", p.Layer)
				}
			},
		},
		{
			name:    "an override's default tier may name a tier defined below",
			archive: "-- base/rev.json --\n{\"id\": \"rev\", \"intent\": \"review\", \"description\": \"d\", \"tiers\": {\"best\": {\"harness\": \"claude\", \"model\": \"m\"}, \"minimum\": {\"harness\": \"codex\", \"model\": \"m\"}}}\n-- user/rev.json --\n{\"id\": \"rev\", \"intent\": \"re-review\", \"defaultTier\": \"minimum\", \"tiers\": {\"best\": {\"model\": \"m2\"}}}\n",
			wantIDs: []string{"rev"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("rev")
				if p.Layer != "user" || p.Spec.EffectiveDefaultTier() != "minimum" {
					t.Errorf("rev from %s, default tier %s", p.Layer, p.Spec.EffectiveDefaultTier())
				}
			},
		},
		{
			name:       "undefined default tier after the cascade",
			archive:    base + "-- user/rev.json --\n{\"id\": \"rev\", \"defaultTier\": \"minimum\"}\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{`user/rev.json: defaultTier: tier "minimum" is not defined; defined: best`},
		},
		{
			name:    "an override says what it overrides and inherits",
			archive: base + "-- user/rev.json --\n{\"id\": \"rev\", \"description\": \"user\", \"permissions\": {\"deny\": [\"Bash\"]}}\n",
			wantIDs: []string{"rev"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("rev")
				if p.Overrides == nil || p.Overrides.Layer != "base" || !strings.HasSuffix(p.Overrides.File, "base/rev.json") || p.Shadows != nil {
					t.Errorf("Overrides = %v, Shadows = %v, want base/rev.json and nil", p.Overrides, p.Shadows)
				}
				if got, want := p.Inherited(), []string{"intent", "tiers.best"}; !slices.Equal(got, want) {
					t.Errorf("Inherited() = %q, want %q", got, want)
				}
			},
		},
		{
			name: "inherit false shadows the lower persona whole",
			archive: "-- base/rev.json --\n{\"id\": \"rev\", \"intent\": \"review\", \"tags\": [\"t\"], \"description\": \"base\", \"claudeMdContent\": \"base notes\", \"inputs\": {\"A\": \"a\"}, \"permissions\": {\"deny\": [\"WebFetch\"]}, \"tiers\": {\"best\": {\"harness\": \"claude\", \"model\": \"m\"}, \"minimum\": {\"harness\": \"codex\", \"model\": \"m\"}}}\n" +
				"-- user/rev.json --\n{\"id\": \"rev\", \"inherit\": false, \"intent\": \"mine\", \"description\": \"user\", \"harness\": \"opencode\", \"model\": \"o\"}\n",
			wantIDs: []string{"rev"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("rev")
				s := p.Spec
				if p.Layer != "user" || len(p.Chain) != 1 || s.Tags != nil || s.Inputs != nil || s.Permissions != nil || s.Tiers != nil || s.ClaudeMdContent != "" {
					t.Errorf("rev from %s, chain %v, spec %+v: want the user file alone", p.Layer, p.Chain, s)
				}
				if p.Shadows == nil || !strings.HasSuffix(p.Shadows.File, "base/rev.json") || p.Overrides != nil {
					t.Errorf("Shadows = %v, Overrides = %v, want base/rev.json and nil", p.Shadows, p.Overrides)
				}
				if got := p.Inherited(); got != nil {
					t.Errorf("Inherited() = %q, want none", got)
				}
				if r, _ := p.Resolve("best"); r.Harness != "opencode" || r.Claude.IsSet() {
					t.Errorf("rev@best runs %s with %+v", r.Harness, r.Claude)
				}
			},
		},
		{
			name:       "inherit false, not whole: the lower persona stays visible",
			archive:    base + "-- user/rev.json --\n{\"id\": \"rev\", \"inherit\": false, \"description\": \"user\"}\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{`user/rev.json:1:15: "inherit": false takes nothing from a lower persona, so the file must be a whole persona; it lacks intent, a runtime`},
			check: func(t *testing.T, cat *Catalog) {
				if p, _ := cat.Get("rev"); p.Layer != "base" {
					t.Errorf("rev from %s, want base", p.Layer)
				}
			},
		},
		{
			name:    "inherit false with nothing below",
			archive: "-- user/a.json --\n{\"id\": \"a\", \"inherit\": false, \"intent\": \"i\", \"description\": \"d\", \"harness\": \"claude\", \"model\": \"m\"}\n",
			wantIDs: []string{"a"},
			check: func(t *testing.T, cat *Catalog) {
				if p, _ := cat.Get("a"); p.Shadows != nil || p.Overrides != nil {
					t.Errorf("Shadows = %v, Overrides = %v, want nil", p.Shadows, p.Overrides)
				}
			},
		},
		{
			name: "extends of another id shadows the lower persona of its own, whatever inherit says",
			archive: base + "-- base/other.json --\n{\"id\": \"other\", \"intent\": \"o\", \"description\": \"other\", \"harness\": \"codex\", \"model\": \"c\"}\n" +
				"-- user/rev.json --\n{\"id\": \"rev\", \"extends\": \"other\", \"inherit\": false}\n" +
				"-- project/rev.json --\n{\"id\": \"rev\", \"description\": \"project\"}\n",
			wantIDs: []string{"other", "rev"},
			check: func(t *testing.T, cat *Catalog) {
				p, _ := cat.Get("rev")
				if p.Spec.Harness != "codex" || p.Spec.Tiers != nil || p.Spec.Description != "project" {
					t.Errorf("rev = %+v, want other's runtime and the project's description", p.Spec)
				}
				if p.Overrides == nil || !strings.HasSuffix(p.Overrides.File, "user/rev.json") {
					t.Errorf("Overrides = %v, want user/rev.json", p.Overrides)
				}
				if got, want := p.Inherited(), []string{"harness", "intent", "model"}; !slices.Equal(got, want) {
					t.Errorf("Inherited() = %q, want %q", got, want)
				}
				if p.Spec.Inherit != nil {
					t.Errorf("merged inherit = %v, want the project file's (unset)", *p.Spec.Inherit)
				}
			},
		},
		{
			name:       "bypass excludes sandbox settings",
			archive:    base + "-- user/rev.json --\n{\"id\": \"rev\", \"tiers\": {\"best\": {\"harnessSettings\": {\"dangerouslyBypassApprovalsAndSandbox\": true, \"sandboxMode\": \"read-only\"}}}}\n",
			wantIDs:    []string{"rev"},
			wantErrors: []string{"user/rev.json: tiers.best.harnessSettings: dangerouslyBypassApprovalsAndSandbox excludes sandboxMode"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, root := loadTree(t, tt.archive)
			if ids := cat.IDs(); !slices.Equal(ids, tt.wantIDs) && !(len(ids) == 0 && len(tt.wantIDs) == 0) {
				t.Errorf("ids = %v, want %v", ids, tt.wantIDs)
			}
			got := diagStrings(cat.Errors, root)
			if len(got) != len(tt.wantErrors) {
				t.Fatalf("errors = %q, want %q", got, tt.wantErrors)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.wantErrors[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, got[i], tt.wantErrors[i])
				}
			}
			if tt.check != nil {
				tt.check(t, cat)
			}
		})
	}
}

func TestLayers(t *testing.T) {
	root := t.TempDir()
	hd := filepath.Join(root, "home")
	repo := filepath.Join(root, "repo")
	must(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	must(t, os.MkdirAll(filepath.Join(repo, home.ProjectDir), 0o755))
	must(t, os.MkdirAll(filepath.Join(repo, "a/b"), 0o755))
	// A project layer above the root marker must not be found.
	must(t, os.MkdirAll(filepath.Join(root, home.ProjectDir), 0o755))
	write(t, home.ConfigPath(hd), `{"personaDirs": ["personas", "/team/personas", "~/x"]}`)

	layers, err := Layers(Options{Dir: filepath.Join(repo, "a/b"), Home: hd})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range layers {
		names = append(names, l.Name+"="+l.Dir)
	}
	userHome, _ := os.UserHomeDir()
	want := []string{
		"project=" + filepath.Join(repo, home.ProjectDir),
		"user=" + filepath.Join(hd, "personas"),
		"dir:2=/team/personas",
		"dir:3=" + filepath.Join(userHome, "x"),
		"built-in=",
	}
	if !slices.Equal(names, want) {
		t.Errorf("Layers() = %q, want %q", names, want)
	}

	// Outside any project, and with no config: the default user layer.
	layers, err = Layers(Options{Dir: filepath.Join(root, "home"), Home: filepath.Join(root, "other")})
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 3 || layers[0].Name != LayerProject || layers[0].Dir != filepath.Join(root, home.ProjectDir) {
		t.Errorf("without a marker the walk goes up: %+v", layers)
	}

	write(t, home.ConfigPath(filepath.Join(root, "bad")), `{"personaDirs": "x"}`)
	if _, err := Layers(Options{Dir: root, Home: filepath.Join(root, "bad")}); err == nil || !strings.Contains(err.Error(), "config.json: personaDirs: must be a list") {
		t.Errorf("malformed config: error = %v", err)
	}
}

func TestResolveInputs(t *testing.T) {
	def := "fallback"
	r := &Resolved{ID: "p", Inputs: map[string]Input{
		"EXPLICIT": {},
		"FROM_ENV": {Env: "OTHER"},
		"DEFAULTS": {Default: &def},
		"OPTIONAL": {Optional: true},
	}}
	env := map[string]string{"OTHER": "env-value", "EXPLICIT": "ignored"}
	got, err := r.ResolveInputs(map[string]string{"EXPLICIT": "x"}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"EXPLICIT": "x", "FROM_ENV": "env-value", "DEFAULTS": "fallback", "OPTIONAL": ""}
	if !equalJSON(got, want) {
		t.Errorf("ResolveInputs() = %v, want %v", got, want)
	}
	_, err = r.ResolveInputs(nil, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "needs input EXPLICIT") {
		t.Errorf("missing input: error = %v", err)
	}
	_, err = r.ResolveInputs(map[string]string{"NOPE": "1", "EXPLICIT": "x"}, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), `has no input "NOPE"`) {
		t.Errorf("unknown input: error = %v", err)
	}
}

// TestMissingInputs: the inputs the picker asks for are those a run
// without --input would report missing.
func TestMissingInputs(t *testing.T) {
	def := "fallback"
	inputs := map[string]Input{
		"SYMPTOM":  {Description: "what goes wrong"},
		"AREA":     {},
		"FROM_ENV": {Env: "OTHER"},
		"DEFAULTS": {Default: &def},
		"OPTIONAL": {Optional: true},
	}
	tests := []struct {
		name   string
		inputs map[string]Input
		env    map[string]string
		want   []string
	}{
		{name: "no inputs"},
		{name: "without a value, sorted", inputs: inputs, want: []string{"AREA", "FROM_ENV", "SYMPTOM"}},
		{name: "from the environment", inputs: inputs, env: map[string]string{"OTHER": "x", "SYMPTOM": "y"}, want: []string{"AREA"}},
		{name: "the input's own name is not its variable when env names another", inputs: inputs, env: map[string]string{"FROM_ENV": "x"}, want: []string{"AREA", "FROM_ENV", "SYMPTOM"}},
		{name: "an empty variable is no value", inputs: inputs, env: map[string]string{"AREA": ""}, want: []string{"AREA", "FROM_ENV", "SYMPTOM"}},
		{name: "defaults and optional only", inputs: map[string]Input{"D": {Default: &def}, "O": {Optional: true}}},
	}
	for _, tt := range tests {
		s := &Spec{Inputs: tt.inputs}
		if got := s.MissingInputs(func(k string) string { return tt.env[k] }); !slices.Equal(got, tt.want) {
			t.Errorf("%s: MissingInputs() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	values := map[string]string{"NAME": "world", "N2": "two", "EMPTY": ""}
	tests := []struct{ in, want string }{
		{"hello $NAME", "hello world"},
		{"hello ${NAME}!", "hello world!"},
		{"$NAMEX stays", "$NAMEX stays"},
		{"$N2 $EMPTY.", "two ."},
		{"cost $5 and $", "cost $5 and $"},
		{"${UNKNOWN} ${NAME", "${UNKNOWN} ${NAME"},
		{"$$NAME", "$world"},
	}
	for _, tt := range tests {
		if got := Substitute(tt.in, values); got != tt.want {
			t.Errorf("Substitute(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestParallelResolve loads a catalog large enough for
// several resolve workers, with extends between ids, a cycle, overrides
// that fail and standalone files that fail, and checks that the parallel
// resolution gives exactly the catalog the sequential one gives.
func TestParallelResolve(t *testing.T) {
	project, user, base, err := benchtree.Layers(t.TempDir(), 400)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{
		// extends across ids, onto ids resolved by the workers
		filepath.Join(user, "child-a.json"):    `{"id": "child-a", "extends": "persona-00007", "description": "child"}`,
		filepath.Join(project, "child-b.json"): `{"id": "child-b", "extends": "child-a", "tiers": {"best": {"model": "m"}}}`,
		// a cycle
		filepath.Join(user, "cyc-a.json"): `{"id": "cyc-a", "extends": "cyc-b"}`,
		filepath.Join(user, "cyc-b.json"): `{"id": "cyc-b", "extends": "cyc-a"}`,
		// an override that fails over a base that resolves
		filepath.Join(project, "persona-00101.json"): `{"id": "persona-00101", "tiers": {"best": {"claudeMdMode": "extend"}}}`,
		// a standalone persona missing what a standalone persona needs
		filepath.Join(base, "lonely.json"): `{"id": "lonely", "tiers": {"best": {"model": "m"}}}`,
		// extends onto an id whose top file fails
		filepath.Join(user, "child-c.json"): `{"id": "child-c", "extends": "persona-00101"}`,
	}
	for name, data := range extra {
		write(t, name, data)
	}
	layers := []Layer{{Name: "project", Dir: project}, {Name: "user", Dir: user}, {Name: "dir:2", Dir: base}}
	defer func(w int) { resolveWorkers = w }(resolveWorkers)
	resolveWorkers = -1
	sequential := LoadLayers(layers)
	resolveWorkers = 4
	parallel := LoadLayers(layers)
	if len(sequential.Personas) < 400 || len(sequential.Errors) < 3 {
		t.Fatalf("the catalog lacks what the test needs: %d personas, errors %v", len(sequential.Personas), sequential.Errors)
	}
	if got, want := specJSON(t, parallel), specJSON(t, sequential); got != want {
		t.Errorf("parallel resolution differs from sequential:\n%s\nwant\n%s", got, want)
	}
}
