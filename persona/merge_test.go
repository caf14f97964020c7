package persona

import (
	"encoding/json"
	"testing"
)

// mergePairs are base and override files that between them set every kind
// of field: replaced values, merged maps, appended and united lists, tier
// fields, harness settings one level deeper, sidecar channels and modes.
var mergePairs = []struct{ name, base, over string }{
	{"every field", `{"id": "rev", "intent": "review", "tags": ["a"], "description": "base",
 "env": {"A": "1", "B": "1"}, "inputs": {"X": {"description": "x"}},
 "mcpServers": {"s": {"type": "stdio", "command": "srv"}},
 "skills": [{"id": "k", "source": "npm:k"}],
 "permissions": {"allow": ["Read"], "deny": ["Bash"], "mode": "default"},
 "mount": {"enabled": true, "ignoredPatterns": ["*.log"], "readonlyPatterns": ["go.sum"], "tree": "copy"},
 "claudeMdContent": "base claude", "claudeMdMode": "extend",
 "tiers": {
   "best": {"harness": "claude", "model": "m1", "harnessSettings": {"reasoning": "high", "timeoutSeconds": 60}},
   "minimum": {"harness": "codex", "model": "m3", "agentsMdContent": "tier"}}}`,
		`{"id": "rev", "tags": ["c"], "env": {"B": "2", "C": "2"}, "inputs": {"Y": {"optional": true}},
 "mcpServers": {"t": {"type": "http", "url": "https://x"}},
 "permissions": {"allow": ["Read", "Edit"], "deny": ["Write"], "mode": "plan"},
 "mount": {"enabled": false, "ignoredPatterns": ["tmp/"], "readonlyPatterns": ["go.mod"], "tree": "overlay"},
 "agentsMdContent": "over", "claudeMdMode": "overwrite",
 "tiers": {
   "best": {"model": "m2", "harnessSettings": {"timeoutSeconds": 90, "webSearch": true}, "claudeMdMode": "overwrite"},
   "best-value": {"harness": "opencode", "model": "m4"}}}`},
	{"override onto nothing", `{"id": "a"}`,
		`{"id": "a", "env": {"A": "1"}, "permissions": {"allow": ["Read"]}, "mount": {"ignoredPatterns": ["x"]},
 "tiers": {"best": {"harness": "claude", "model": "m", "harnessSettings": {"sandboxMode": "read-only"}}}}`},
	{"nothing onto everything", `{"id": "a", "env": {"A": "1"}, "permissions": {"allow": ["Read"]},
 "tiers": {"best": {"harness": "claude", "model": "m"}}}`, `{"id": "a"}`},
	{"repeated permissions", `{"id": "a", "permissions": {"allow": ["Read", "Read"], "deny": ["X", "Y", "X"]}}`,
		`{"id": "a", "permissions": {"allow": ["Edit", "Edit", "Read"]}}`},
	{"empty containers", `{"id": "a", "env": {}, "inputs": {}, "permissions": {}, "mount": {}}`,
		`{"id": "a", "env": {}, "mcpServers": {}, "permissions": {"allow": []}}`},
	{"flat over tiered", `{"id": "a", "systemPrompt": "top", "harnessSettings": {"reasoning": "low"},
 "tiers": {"best": {"harness": "claude", "model": "m", "harnessSettings": {"reasoning": "high", "sandboxMode": "read-only"}, "claudeMdContent": "t", "claudeMdMode": "extend"},
           "minimum": {"harness": "codex", "model": "n"}}}`,
		`{"id": "a", "harness": "codex", "model": "x", "systemPrompt": "flat", "harnessSettings": {"reasoning": "medium", "webSearch": true},
 "claudeMdContent": "flat", "sandbox": true, "memory": {"scopes": ["user"]}, "capabilities": {"review": true}}`},
	{"tiered over flat", `{"id": "a", "harness": "codex", "model": "x", "harnessSettings": {"reasoning": "low", "timeoutSeconds": 5}, "cloud": true, "relay": false}`,
		`{"id": "a", "agentsMdContent": "over", "tiers": {"minimum": {"model": "y", "harnessSettings": {"reasoning": "high"}}}, "relay": {"enabled": true}}`},
}

func mustParse(t testing.TB, name, data string) *Spec {
	t.Helper()
	s, err := Parse(name, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func specJSON(t testing.TB, s any) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkMerge checks the two properties the cascade relies on to share
// storage between specs: merging src over dst writes into neither dst's
// values nor src's, and standalone gives what merging over nothing gives.
func checkMerge(t testing.TB, base, over *Spec) {
	t.Helper()
	o := Origin{Layer: "test", File: "test.json"}
	for _, s := range []*Spec{base, over} {
		var empty Spec
		mergeSpec(&empty, nil, s, o)
		if got, want := specJSON(t, standalone(s, o)), specJSON(t, &empty); got != want {
			t.Fatalf("standalone(%s)\n= %s\nwant what a merge over nothing gives\n  %s", specJSON(t, s), got, want)
		}
	}
	beforeBase, beforeOver := specJSON(t, base), specJSON(t, over)
	merged := *base
	mergeSpec(&merged, Provenance{}, over, o)
	// Merging again into the result must not reach the inputs either.
	again := merged
	mergeSpec(&again, nil, over, o)
	if got := specJSON(t, base); got != beforeBase {
		t.Fatalf("mergeSpec wrote into its base:\nbefore %s\nafter  %s", beforeBase, got)
	}
	if got := specJSON(t, over); got != beforeOver {
		t.Fatalf("mergeSpec wrote into its source:\nbefore %s\nafter  %s", beforeOver, got)
	}
}

func TestMergeSharesWithoutWriting(t *testing.T) {
	for _, tt := range mergePairs {
		t.Run(tt.name, func(t *testing.T) {
			checkMerge(t, mustParse(t, "base.json", tt.base), mustParse(t, "over.json", tt.over))
		})
	}
}

// TestCascadeKeepsBasesIntact loads a base persona together with an
// override and a persona extending it, and checks that the base, as seen
// through the catalog, is what it is when loaded on its own.
func TestCascadeKeepsBasesIntact(t *testing.T) {
	// withFields returns the JSON object doc with id and the given fields
	// added where it does not set them.
	withFields := func(doc, id string, fields map[string]any) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		m["id"] = id
		for k, v := range fields {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	standalone := map[string]any{"description": "d", "intent": "i",
		"tiers": map[string]any{"best": map[string]string{"harness": "claude", "model": "m"}}}
	for _, tt := range mergePairs {
		t.Run(tt.name, func(t *testing.T) {
			base := withFields(tt.base, "rev", standalone)
			child := withFields(tt.over, "child", map[string]any{"extends": "rev"})
			alone, _ := loadTree(t, "-- base/rev.json --\n"+base)
			cat, _ := loadTree(t, "-- base/rev.json --\n"+base+"\n-- user/child.json --\n"+child+
				"\n-- project/rev.json --\n"+withFields(tt.over, "rev", nil))
			if len(alone.Errors)+len(cat.Errors) > 0 {
				t.Fatalf("errors: %v %v", alone.Errors, cat.Errors)
			}
			a, _ := alone.Get("rev")
			c, _ := cat.Get("child")
			if a == nil || c == nil {
				t.Fatal("rev or child not loaded")
			}
			// The project's rev overrides the base; the child extends the
			// base as the user layer sees it, which is the base file alone.
			var fromBase Spec = *a.Spec
			mergeSpec(&fromBase, nil, mustParse(t, "child.json", child), Origin{})
			fromBase.Extends = ""
			if got, want := specJSON(t, c.Spec), specJSON(t, &fromBase); got != want {
				t.Errorf("child:\n%s\nwant the base alone with the child merged:\n%s", got, want)
			}
			if got, want := specJSON(t, a.Spec), specJSON(t, mustParseStandalone(t, base)); got != want {
				t.Errorf("base loaded alone:\n%s\nwant the file as parsed:\n%s", got, want)
			}
		})
	}
}

func mustParseStandalone(t *testing.T, doc string) *Spec {
	var s Spec
	mergeSpec(&s, nil, mustParse(t, "rev.json", doc), Origin{})
	return &s
}

// FuzzMerge checks the sharing properties of checkMerge on any two files
// that parse.
func FuzzMerge(f *testing.F) {
	for _, tt := range mergePairs {
		f.Add([]byte(tt.base), []byte(tt.over))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		base, err := Parse("base.json", a)
		if err != nil {
			return
		}
		over, err := Parse("over.json", b)
		if err != nil {
			return
		}
		checkMerge(t, base, over)
	})
}
