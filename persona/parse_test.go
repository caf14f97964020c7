package persona

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/internal/diag"
)

const validPersona = `{
  "id": "reviewer",
  "intent": "review",
  "tags": ["review"],
  "description": "Reviews changes.",
  "defaultTier": "best",
  "inputs": {"TARGET": "main", "STYLE": {"env": "REVIEW_STYLE", "optional": true}},
  "env": {"TOKEN": "$GH_TOKEN"},
  "mcpServers": {"docs": {"type": "http", "url": "https://example.com/mcp"}},
  "permissions": {"allow": ["Read"], "mode": "plan"},
  "mount": {"ignoredPatterns": ["*.log"]},
  "claudeMd": "reviewer.md",
  "claudeMdMode": "extend",
  "tiers": {
    "best": {"harness": "claude", "model": "opus", "systemPrompt": "Review $TARGET.",
             "harnessSettings": {"reasoning": "high", "timeoutSeconds": 600}},
    "minimum": {"harness": "codex", "model": "openai/gpt-5", "agentsMdContent": "Be brief."}
  }
}`

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr []string // each a formatted diagnostic, "" for none
	}{
		{name: "valid", data: validPersona},
		{name: "override with only an id and a model", data: `{"id": "reviewer", "tiers": {"best": {"model": "m"}}}`},
		{name: "byte order mark", data: "\xef\xbb\xbf" + `{"id": "x"}`},
		{name: "missing comma", data: "{\n  \"id\": \"x\"\n  \"intent\": \"y\"\n}",
			wantErr: []string{`p.json:3:3: invalid JSON: invalid character '"' after object key:value pair`}},
		{name: "truncated", data: "{\n  \"id\": \"x\",\n", wantErr: []string{"p.json:3:1: invalid JSON: unexpected end of file"}},
		{name: "empty", data: "", wantErr: []string{"p.json:1:1: invalid JSON: unexpected end of file"}},
		{name: "trailing data", data: `{"id": "x"} {}`, wantErr: []string{"p.json:1:13: unexpected data after the JSON object"}},
		{name: "not an object", data: `[1]`, wantErr: []string{"p.json:1:1: must be object, but got array"}},
		{name: "every schema error listed, in order", data: "{\n  \"id\": \"Bad Id\",\n  \"tiers\": {\"best\": {\"harness\": \"vim\"}},\n  \"claudeMdMode\": \"append\"\n}",
			wantErr: []string{
				`p.json:2:9: id: does not match pattern '^[a-z0-9]+(-[a-z0-9]+)*$'`,
				"p.json:3:33: tiers.best.harness: must be one of claude, opencode, codex",
				"p.json:4:19: claudeMdMode: must be one of overwrite, extend",
			}},
		{name: "missing id", data: `{"intent": "x"}`, wantErr: []string{"p.json:1:1: missing required field 'id'"}},
		{name: "unknown field", data: `{"id": "x", "claudeMD": "a.md"}`, wantErr: []string{"p.json:1:13: unknown field 'claudeMD'"}},
		{name: "unknown tier", data: `{"id": "x", "tiers": {"fast": {"model": "m"}}}`, wantErr: []string{"p.json:1:31: tiers.fast: must be one of best, best-value, minimum"}},
		{name: "path and content together", data: `{"id": "x", "agentsMd": "a.md", "agentsMdContent": "hi"}`,
			wantErr: []string{"p.json:1:25: agentsMd: set either agentsMd or agentsMdContent, not both"}},
		{name: "unsafe path", data: `{"id": "x", "tiers": {"best": {"claudeMd": "../up.md"}}}`,
			wantErr: []string{`p.json:1:44: tiers.best.claudeMd: sidecar path "../up.md" leaves the persona's directory`}},
		{name: "flat, the form of agentworkforce 4.0.2", data: `{"id": "x", "intent": "i", "description": "d", "harness": "codex", "model": "m",
  "systemPrompt": "p", "harnessSettings": {"reasoning": "low", "timeoutSeconds": 60}}`},
		{name: "grok parses as a harness", data: `{"id": "x", "harness": "grok", "tiers": {"best": {"harness": "grok"}}}`},
		{name: "cloud fields", data: `{"id": "x", "sandbox": false, "cloud": true, "useSubscription": false, "onEvent": "h.ts",
  "integrations": {"slack": {"source": {"kind": "workspace_service_account", "name": "bot"}, "scope": {"team": "t"}}},
  "capabilities": {"review": {"enabled": false, "x": 1}, "teamSolve": true},
  "memory": {"enabled": true, "scopes": ["global"], "ttlDays": 1.5, "dedupMs": 0, "aiMemory": {"dbPath": "h.db"}},
  "relay": true, "inputs": {"A": {"picker": {"provider": "slack", "resource": "users"}}}}`},
		{name: "top-level harness", data: "{\"id\": \"x\",\n \"harness\": \"vim\"}",
			wantErr: []string{"p.json:2:13: harness: must be one of claude, opencode, codex, gemini, grok"}},
		{name: "unknown member of a cloud object", data: "{\"id\": \"x\",\n \"relay\": {\"chanels\": []}}",
			wantErr: []string{"p.json:2:12: relay: unknown field 'chanels'"}},
		{name: "a service account needs a name", data: `{"id": "x", "integrations": {"slack": {"source": {"kind": "workspace_service_account"}}}}`,
			wantErr: []string{"p.json:1:50: integrations.slack.source: missing required field 'name'"}},
		{name: "unknown fields each at their name", data: "{\"id\": \"x\",\n  \"modle\": \"m\", \"tiers\": {\"best\": {\"prompt\": \"p\"}}}",
			wantErr: []string{"p.json:2:3: unknown field 'modle'", "p.json:2:36: tiers.best: unknown field 'prompt'"}},
		{name: "wide characters count as one column", data: "{\"id\": \"x\", \"description\": \"é\", \"intent\": 5}",
			wantErr: []string{"p.json:1:43: intent: must be string, but got number"}},
		{name: "invalid UTF-8 in a string", data: "{\"id\": \"x\",\n  \"description\": \"caf\xe9 au lait\"}",
			wantErr: []string{"p.json:2:22: invalid UTF-8: byte 0xe9; a persona file is UTF-8 text"}},
		{name: "invalid UTF-8 after wide characters", data: "{\"id\": \"x\", \"intent\": \"é\xff\"}",
			wantErr: []string{"p.json:1:25: invalid UTF-8: byte 0xff"}},
		{name: "a truncated sequence", data: "{\"id\": \"x\", \"intent\": \"\xe2\x82\"}",
			wantErr: []string{"p.json:1:24: invalid UTF-8: byte 0xe2"}},
		{name: "an encoded surrogate", data: "{\"id\": \"x\",\n\n \"intent\": \"\xed\xa0\x80\"}",
			wantErr: []string{"p.json:3:13: invalid UTF-8: byte 0xed"}},
		{name: "inherit false, whole", data: `{"id": "x", "inherit": false, "intent": "i", "description": "d", "harness": "claude", "model": "m"}`},
		{name: "inherit true needs nothing more", data: `{"id": "x", "inherit": true, "tiers": {"best": {"model": "m"}}}`},
		{name: "inherit false, extending another id", data: `{"id": "x", "inherit": false, "extends": "y"}`},
		{name: "inherit false, not whole", data: "{\"id\": \"x\",\n  \"inherit\": false, \"tiers\": {\"best\": {\"model\": \"m\"}}}",
			wantErr: []string{`p.json:2:3: "inherit": false takes nothing from a lower persona, so the file must be a whole persona; it lacks intent, description`}},
		{name: "inherit false, a tier without a harness", data: "{\"id\": \"x\", \"inherit\": false, \"intent\": \"i\", \"description\": \"d\",\n  \"tiers\": {\"best\": {\"model\": \"m\"}}}",
			wantErr: []string{"p.json:1:13: tiers.best.harness: missing, in the tier and at the top level"}},
		{name: "inherit false, a flat persona without a model", data: "{\"id\": \"x\", \"inherit\": false, \"intent\": \"i\", \"description\": \"d\",\n  \"harness\": \"codex\"}",
			wantErr: []string{"p.json:1:13: model: missing; want the model the harness runs"}},
		{name: "inherit false and extends of its own id", data: `{"id": "x", "extends": "x", "inherit": false}`,
			wantErr: []string{`p.json:1:40: inherit: "inherit": false takes nothing from a lower persona of the same id, and "extends" names it; drop one`}},
		{name: "inherit is a boolean", data: `{"id": "x", "inherit": "no"}`,
			wantErr: []string{"p.json:1:24: inherit: must be boolean, but got string"}},
		{name: "a loader variable in env, at its name", data: "{\"id\": \"x\",\n  \"env\": {\"TOKEN\": \"t\", \"LD_PRELOAD\": \"./evil.so\"}}",
			wantErr: []string{"p.json:2:25: env.LD_PRELOAD: a persona may not set LD_PRELOAD: it changes what code the harness's programs load, or what their C library trusts"}},
		{name: "every loader variable, in order", data: `{"id": "x", "env": {"GCONV_PATH": ".", "LD_AUDIT": "a.so", "LD_BIND_NOW": "1", "RES_OPTIONS": "debug"}}`,
			wantErr: []string{
				"p.json:1:21: env.GCONV_PATH: a persona may not set GCONV_PATH",
				"p.json:1:40: env.LD_AUDIT: a persona may not set LD_AUDIT",
				"p.json:1:60: env.LD_BIND_NOW: a persona may not set LD_BIND_NOW",
				"p.json:1:80: env.RES_OPTIONS: a persona may not set RES_OPTIONS",
			}},
		{name: "a NUL byte in an env value", data: `{"id": "x", "env": {"FOO": "a\u0000b"}}`,
			wantErr: []string{"p.json:1:21: env.FOO: the value of FOO holds a NUL byte, which no environment can carry"}},
		{name: "env the loader does not read", data: `{"id": "x", "env": {"TMPDIR": "/tmp", "MALLOC_ARENA_MAX": "2", "ld_preload": "x", "OLD_PRELOAD": "x"}}`},
		{name: "a loader variable in a whole persona", data: `{"id": "x", "inherit": false, "intent": "i", "description": "d", "harness": "claude", "model": "m", "env": {"GLIBC_TUNABLES": "glibc.malloc.check=3"}}`,
			wantErr: []string{"p.json:1:109: env.GLIBC_TUNABLES: a persona may not set GLIBC_TUNABLES"}},
		{name: "network at the top level and in a tier", data: `{"id": "x", "network": {"mode": "allowlist", "allow": ["a.com", "*.b.org:443", "[::1]:8080"], "presets": []},
  "tiers": {"best": {"network": {"mode": "none"}}}}`},
		{name: "network: an unknown mode", data: "{\"id\": \"x\",\n  \"network\": {\"mode\": \"wide\"}}",
			wantErr: []string{"p.json:2:23: network.mode: must be one of allowlist, open, none"}},
		{name: "network: a bad host in a tier, at its place", data: "{\"id\": \"x\", \"tiers\": {\"best\": {\"network\": {\"allow\": [\"ok.com\",\n  \"good.host:99999\"]}}}}",
			wantErr: []string{`p.json:2:3: tiers.best.network.allow.1: network rule "good.host:99999": port 99999 is not between 1 and 65535`}},
		{name: "network: an unknown preset", data: `{"id": "x", "network": {"presets": ["all"]}}`,
			wantErr: []string{`p.json:1:37: network.presets.0: value must be "dev"`}},
		{name: "network: an unknown key", data: `{"id": "x", "network": {"hosts": []}}`,
			wantErr: []string{"p.json:1:25: network: unknown field 'hosts'"}},
		{name: "a fraction in an integer", data: "{\"id\": \"x\",\n  \"harnessSettings\": {\"timeoutSeconds\": 3.0}}",
			wantErr: []string{"p.json:2:41: harnessSettings.timeoutSeconds: must be a whole number written without a fraction or an exponent, within 64 bits, not number 3.0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := Parse("p.json", []byte(tt.data))
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Parse() error = %v", err)
				}
				if spec.ID == "" {
					t.Fatalf("Parse() id is empty")
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse() = nil error, want %q", tt.wantErr)
			}
			got := diag.Flatten("p.json", err)
			if len(got) != len(tt.wantErr) {
				t.Fatalf("Parse() errors = %v, want %d: %q", err, len(tt.wantErr), tt.wantErr)
			}
			for i, d := range got {
				if !strings.HasPrefix(d.Error(), tt.wantErr[i]) {
					t.Errorf("error %d = %q, want prefix %q", i, d.Error(), tt.wantErr[i])
				}
			}
		})
	}
}

// TestTypeErrorFields: a value the schema accepts but Go cannot hold is
// reported at the field as the file names it, map keys and list indexes
// included, never with Go's names (Runtime.harnessSettings...).
func TestTypeErrorFields(t *testing.T) {
	tests := []struct {
		name, data string
		want       string
	}{
		{"top-level timeout", `{"id": "x", "harnessSettings": {"timeoutSeconds": 1e3}}`,
			"p.json:1:51: harnessSettings.timeoutSeconds: must be a whole number written without a fraction or an exponent, within 64 bits, not number 1e3"},
		{"a tier's timeout", "{\"id\": \"x\", \"tiers\": {\"best\": {\"model\": \"m\",\n  \"harnessSettings\": {\"timeoutSeconds\": 2.5}}}}",
			"p.json:2:41: tiers.best.harnessSettings.timeoutSeconds: must be a whole number"},
		{"a later tier's timeout", `{"id": "x", "tiers": {"best": {"model": "m"}, "best-value": {"harnessSettings": {"timeoutSeconds": 99999999999999999999}}}}`,
			"p.json:1:100: tiers.best-value.harnessSettings.timeoutSeconds: must be a whole number"},
		{"an embedded cloud field", `{"id": "x", "sandbox": 3}`, "p.json:1:24: sandbox: must be true or false, not number"},
		{"a list element's field", `{"id": "x", "skills": [{"id": "a", "source": "s"}, {"id": "b", "source": 3}]}`,
			"p.json:1:74: skills.1.source: must be a string, not number"},
		{"a map value's list", `{"id": "x", "mcpServers": {"s": {"type": "stdio", "command": "c", "args": ["a", 1]}}}`,
			"p.json:1:81: mcpServers.s.args.1: must be a string, not number"},
		{"an object for a string", `{"id": "x", "model": {"name": "m"}}`,
			"p.json:1:22: model: must be a string, not object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Spec
			err := json.Unmarshal([]byte(tt.data), &s)
			if err == nil {
				t.Fatalf("Unmarshal(%s) = nil error", tt.data)
			}
			got := diag.JSONError("p.json", []byte(tt.data), err).Error()
			if !strings.HasPrefix(got, tt.want) {
				t.Errorf("diag.JSONError() = %q, want prefix %q", got, tt.want)
			}
			if strings.Contains(got, "Runtime") || strings.Contains(got, "CloudFields") {
				t.Errorf("diag.JSONError() = %q names a Go type", got)
			}
		})
	}
}

// TestParseFields checks decoded values, through the fast path (Parse, for
// a plain file) and through the schema path.
func TestParseFields(t *testing.T) {
	for name, parse := range map[string]func(string, []byte) (*Spec, error){"fast": Parse, "schema": parseSlow} {
		t.Run(name, func(t *testing.T) { checkParsedFields(t, parse) })
	}
}

func checkParsedFields(t *testing.T, parse func(string, []byte) (*Spec, error)) {
	spec, err := parse("p.json", []byte(validPersona))
	if err != nil {
		t.Fatal(err)
	}
	if got := *spec.Inputs["TARGET"].Default; got != "main" {
		t.Errorf("string input default = %q, want main", got)
	}
	if in := spec.Inputs["STYLE"]; in.Env != "REVIEW_STYLE" || !in.Optional {
		t.Errorf("object input = %+v", in)
	}
	if got := spec.Tiers["best"].HarnessSettings.TimeoutSeconds; got != 600 {
		t.Errorf("timeoutSeconds = %d, want 600", got)
	}
	if spec.ClaudeMd != "reviewer.md" || spec.ClaudeMdMode != ModeExtend {
		t.Errorf("sidecar = %q %q", spec.ClaudeMd, spec.ClaudeMdMode)
	}
	refs := spec.SidecarRefs()
	if len(refs) != 1 || refs[0].Field() != "claudeMd" {
		t.Errorf("SidecarRefs() = %+v, want one claudeMd", refs)
	}
}

// FuzzParse checks that Parse never panics, that its errors are diagnostics
// naming the file, and that a parsed spec survives a round trip through
// JSON unchanged.
func FuzzParse(f *testing.F) {
	f.Add([]byte(validPersona))
	f.Add([]byte(`{"id": "x", "tiers": {"best": {"model": "m"}}}`))
	f.Add([]byte("{\n  \"id\": \"x\"\n  \"intent\": \"y\"\n}"))
	f.Add([]byte(`{"id": "x", "claudeMd": "../a.md"}`))
	f.Add([]byte(`{"id": "é", "inputs": {"A": 1}}`))
	f.Add([]byte("{\"id\": \"x\", \"intent\": \"caf\xe9\"}"))
	f.Add([]byte(`{"id": "x", "inherit": false, "intent": "i", "description": "d", "harness": "claude", "model": "m"}`))
	f.Add([]byte(`{"id": "x", "harnessSettings": {"timeoutSeconds": 3.0}}`))
	f.Add([]byte(`{"id": "x", "harness": "grok", "model": "m", "systemPrompt": "p", "harnessSettings": {"reasoning": "low"}, "sandbox": true, "onEvent": "h.ts"}`))
	f.Add([]byte(`{"id": "x", "memory": {"scopes": ["user"], "trajectories": {"autoCompact": false}}, "relay": false, "capabilities": {"a": {}}}`))
	f.Add([]byte(`{"id": "x", "inputs": {"A": {"picker": {"provider": "p", "resource": "r"}}}, "mount": {"enabled": false}}`))
	f.Add([]byte(`{"id": "x", "skills": [{"id": "a", "source": "npm:a"}, {"id": "b", "source": "b.md", "files": {"SKILL.md": "s"}}, {"id": "c", "source": "c", "files": {}}]}`))
	f.Add([]byte(`{"id": "x", "skills": [{"id": "a", "source": "../a.md", "path": "/x"}, {"id": "b", "source": "https://example.com/b"}]}`))
	f.Add([]byte(`{"id": "x", "env": {"LD_PRELOAD": "a.so", "TMPDIR": "/tmp"}}`))
	f.Add([]byte(`{"id": "x", "env": {"LD_": "", "GCONV_PATH": "."}}`))
	f.Add([]byte(`{"id": "x", "env": {"AB": "a\u0000b"}}`))
	f.Add([]byte(`{"id": "x", "network": {"mode": "none", "allow": ["a.com:1"], "presets": []}, "tiers": {"best": {"network": {"presets": ["dev"]}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fast path never accepts what the schema rejects.
		if _, ok := quickParse(data); ok {
			if err := validateSchema("fuzz.json", data); err != nil {
				t.Fatalf("quickParse accepted a file the schema rejects: %v\n%s", err, data)
			}
		}
		spec, err := Parse("fuzz.json", data)
		if err == nil && !utf8.Valid(data) {
			t.Fatalf("Parse accepted invalid UTF-8: %q", data)
		}
		if err != nil {
			for _, d := range diag.Flatten("fuzz.json", err) {
				if d.File != "fuzz.json" {
					t.Fatalf("diagnostic %q does not name the file", d)
				}
				var pd *diag.Diagnostic
				if !errors.As(d, &pd) || pd.Line < 0 || pd.Column < 0 {
					t.Fatalf("bad diagnostic %#v", d)
				}
			}
			return
		}
		for k, v := range spec.Env {
			if LoaderVariable(k) {
				t.Fatalf("Parse accepted env %s, a loader variable", k)
			}
			if strings.ContainsRune(v, 0) {
				t.Fatalf("Parse accepted env %s=%q, which no environment can carry", k, v)
			}
		}
		again, err := json.Marshal(spec)
		if err != nil {
			t.Fatalf("Marshal(parsed spec) = %v", err)
		}
		spec2, err := Parse("again.json", again)
		if err != nil {
			t.Fatalf("Parse(Marshal(spec)) = %v\n%s", err, again)
		}
		// Compare JSON forms: an empty list and an absent one are the same
		// persona.
		if third, _ := json.Marshal(spec2); !bytes.Equal(again, third) {
			t.Fatalf("round trip changed the spec:\n%s\n%s", again, third)
		}
	})
}
