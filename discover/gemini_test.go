package discover

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// geminiEnv is an environment for the gemini profile: HOME and extra
// variables.
func geminiEnv(home string, kv ...string) func(string) string {
	m := map[string]string{"HOME": home}
	for _, x := range kv {
		k, v, _ := strings.Cut(x, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// TestGeminiChain checks the gemini profile's rules, measured on Gemini
// CLI 0.61.0 (e2e/gemini_test.go): GEMINI.md from the git root down to
// the working directory, the names of context.fileName, files sorted by
// path, each file once, the global files of every name, imports inlined.
func TestGeminiChain(t *testing.T) {
	p := Profiles["gemini"]
	tests := []struct {
		name, archive, dir string
		env                []string
		want               []string // the loaded files, relative to the tree
		text               string   // when set, the whole text, with ROOT for the tree
	}{
		{name: "root to working directory, nothing below, not .gemini", dir: "repo/a", archive: `
-- dir:repo/.git --
-- repo/GEMINI.md --
root
-- repo/.gemini/GEMINI.md --
dot
-- repo/a/GEMINI.md --
a
-- repo/a/b/GEMINI.md --
b
`, want: []string{"repo/GEMINI.md", "repo/a/GEMINI.md"},
			text: "--- Context from: ROOT/repo/GEMINI.md ---\nroot\n--- End of Context from: ROOT/repo/GEMINI.md ---\n\n--- Context from: ROOT/repo/a/GEMINI.md ---\na\n--- End of Context from: ROOT/repo/a/GEMINI.md ---"},
		{name: "without a marker, the working directory alone", dir: "plain/sub", archive: `
-- plain/GEMINI.md --
plain
-- plain/sub/GEMINI.md --
sub
`, want: []string{"plain/sub/GEMINI.md"}},
		{name: "context.fileName, sorted by path", dir: "repo/A", archive: `
-- dir:repo/.git --
-- home/.gemini/settings.json --
// comments are allowed
{"context": {"fileName": ["AGENTS.md", "CLAUDE.md"]}}
-- repo/CLAUDE.md --
root claude
-- repo/GEMINI.md --
root gemini
-- repo/A/AGENTS.md --
A agents
`, want: []string{"repo/A/AGENTS.md", "repo/CLAUDE.md", "repo/GEMINI.md"}},
		{name: "blank files skipped, text trimmed", dir: "repo", archive: `
-- dir:repo/.git --
-- home/.gemini/settings.json --
{"context": {"fileName": "AGENTS.md"}}
-- repo/AGENTS.md --
   

-- repo/GEMINI.md --

  spaced  

`, want: []string{"repo/GEMINI.md"},
			text: "--- Context from: ROOT/repo/GEMINI.md ---\nspaced\n--- End of Context from: ROOT/repo/GEMINI.md ---"},
		{name: "two links to one file load once", dir: "repo", archive: `
-- dir:repo/.git --
-- home/.gemini/settings.json --
{"context": {"fileName": ["AGENTS.md"]}}
-- repo/docs/shared.md --
shared
-- link:repo/AGENTS.md --
docs/shared.md
-- link:repo/GEMINI.md --
docs/shared.md
`, want: []string{"repo/AGENTS.md"}},
		{name: "global files of every name, first", dir: "repo", archive: `
-- dir:repo/.git --
-- home/.gemini/settings.json --
{"context": {"fileName": ["AGENTS.md"]}}
-- home/.gemini/AGENTS.md --
global agents
-- home/.gemini/GEMINI.md --
global gemini
-- repo/GEMINI.md --
project
`, want: []string{"home/.gemini/AGENTS.md", "home/.gemini/GEMINI.md", "repo/GEMINI.md"}},
		{name: "GEMINI_CLI_HOME moves the settings and the globals", dir: "repo", env: []string{"GEMINI_CLI_HOME=ghome"}, archive: `
-- dir:repo/.git --
-- home/.gemini/GEMINI.md --
not read
-- ghome/.gemini/settings.json --
{"context": {"fileName": "NOTES.md"}}
-- ghome/.gemini/GEMINI.md --
read
-- repo/NOTES.md --
notes
`, want: []string{"ghome/.gemini/GEMINI.md", "repo/NOTES.md"}},
		{name: "boundary markers of the settings", dir: "up/repo", archive: `
-- up/ROOT --
-- up/GEMINI.md --
up
-- dir:up/repo/.git --
-- up/repo/GEMINI.md --
repo
-- home/.gemini/settings.json --
{"context": {"memoryBoundaryMarkers": ["ROOT"]}}
`, want: []string{"up/GEMINI.md", "up/repo/GEMINI.md"}},
		{name: "an empty marker list keeps the working directory", dir: "repo/a", archive: `
-- dir:repo/.git --
-- repo/GEMINI.md --
root
-- repo/a/GEMINI.md --
a
-- home/.gemini/settings.json --
{"context": {"memoryBoundaryMarkers": []}}
`, want: []string{"repo/a/GEMINI.md"}},
		{name: "the project's settings apply when trusted", dir: "repo", env: []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, archive: `
-- dir:repo/.git --
-- repo/.gemini/settings.json --
{"context": {"fileName": "TEAM.md"}}
-- repo/TEAM.md --
team
`, want: []string{"repo/TEAM.md"}},
		{name: "the project's settings do not apply untrusted", dir: "repo", archive: `
-- dir:repo/.git --
-- repo/.gemini/settings.json --
{"context": {"fileName": "TEAM.md"}}
-- repo/TEAM.md --
team
`, want: nil},
		{name: "trusted by trustedFolders.json", dir: "repo/a", archive: `
-- dir:repo/.git --
-- home/.gemini/trustedFolders.json --
{"TREE/repo": "TRUST_FOLDER", "TREE/repo/a/b": "DO_NOT_TRUST"}
-- repo/a/.gemini/settings.json --
{"context": {"fileName": "TEAM.md"}}
-- repo/a/TEAM.md --
team
`, want: []string{"repo/a/TEAM.md"}},
		{name: "distrusted by a longer rule", dir: "repo/a", archive: `
-- dir:repo/.git --
-- home/.gemini/trustedFolders.json --
{"TREE/repo": "TRUST_FOLDER", "TREE/repo/a": "DO_NOT_TRUST"}
-- repo/a/.gemini/settings.json --
{"context": {"fileName": "TEAM.md"}}
-- repo/a/TEAM.md --
team
`, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := makeTree(t, tt.archive)
			if data, err := os.ReadFile(filepath.Join(root, "home/.gemini/trustedFolders.json")); err == nil {
				os.WriteFile(filepath.Join(root, "home/.gemini/trustedFolders.json"), []byte(strings.ReplaceAll(string(data), "TREE", root)), 0o644)
			}
			var env []string
			for _, kv := range tt.env {
				if k, v, _ := strings.Cut(kv, "="); k == "GEMINI_CLI_HOME" {
					kv = k + "=" + filepath.Join(root, v)
				}
				env = append(env, kv)
			}
			o := FromEnv(p, geminiEnv(filepath.Join(root, "home"), env...))
			res, err := Chain(p, filepath.Join(root, tt.dir), o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Files {
				rel, _ := filepath.Rel(root, f.Path)
				got = append(got, rel)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("files %q, want %q", got, tt.want)
			}
			if tt.text != "" {
				if want := strings.ReplaceAll(tt.text, "ROOT", root); res.Text != want {
					t.Errorf("text:\n%q\nwant\n%q", res.Text, want)
				}
			}
		})
	}
}

// TestGeminiImports checks the @path imports gemini inlines.
func TestGeminiImports(t *testing.T) {
	root := makeTree(t, `
-- dir:repo/.git --
-- repo/docs/a.md --
A, then @./b.md
-- repo/docs/b.md --
B, then @./a.md
-- repo/docs/deep1.md --
1 @./deep2.md
-- repo/docs/deep2.md --
2 @./deep3.md
-- repo/docs/deep3.md --
3 @./deep4.md
-- repo/docs/deep4.md --
4 @./deep5.md
-- repo/docs/deep5.md --
5 @./deep6.md
-- repo/docs/deep6.md --
6
-- outside.md --
out
-- dir:repo/adir --
`)
	repo := filepath.Join(root, "repo")
	markers := []string{".git"}
	// Each imported file's own last newline stays before the end marker.
	tests := []struct{ in, want string }{
		{"no imports: a@b.c, @ alone, @-flag", "no imports: a@b.c, @ alone, @-flag"},
		{"see @docs/a.md.", "see <!-- Imported from: docs/a.md. -->\n"}, // the dot is part of the path
		{"see @./docs/a.md", "see <!-- Imported from: ./docs/a.md -->\nA, then <!-- Imported from: ./b.md -->\nB, then <!-- File already processed: ./a.md -->\n\n<!-- End of import from: ./b.md -->\n\n<!-- End of import from: ./docs/a.md -->"},
		{"`@./docs/a.md` in code", "`@./docs/a.md` in code"},
		{"``@./docs/a.md`` in code", "``@./docs/a.md`` in code"},
		{"@../outside.md", "<!-- Import failed: ../outside.md - Path traversal attempt -->"},
		{"@https://example.com/x.md", "<!-- Import failed: https://example.com/x.md - Path traversal attempt -->"},
		{"@./adir", "<!-- Import failed: ./adir - EISDIR: illegal operation on a directory, read -->"},
		{"@./docs/deep1.md", "<!-- Imported from: ./docs/deep1.md -->\n1 <!-- Imported from: ./deep2.md -->\n2 <!-- Imported from: ./deep3.md -->\n3 <!-- Imported from: ./deep4.md -->\n4 <!-- Imported from: ./deep5.md -->\n5 @./deep6.md\n\n<!-- End of import from: ./deep5.md -->\n\n<!-- End of import from: ./deep4.md -->\n\n<!-- End of import from: ./deep3.md -->\n\n<!-- End of import from: ./deep2.md -->\n\n<!-- End of import from: ./docs/deep1.md -->"},
	}
	for _, tt := range tests {
		got := geminiImports(OS, tt.in, repo, markers)
		want := strings.ReplaceAll(tt.want, "ROOT", root)
		if tt.in == "see @docs/a.md." {
			want = "see <!-- Import failed: docs/a.md. - ENOENT: no such file or directory, access '" + filepath.Join(repo, "docs/a.md.") + "' -->"
		}
		if got != want {
			t.Errorf("imports of %q:\n%q\nwant\n%q", tt.in, got, want)
		}
	}
}

// FuzzGeminiImports: the scanner never panics, and text without an @ or
// a backtick comes back as it was.
func FuzzGeminiImports(f *testing.F) {
	for _, s := range []string{"", "@", "a @b", "`@x`", "```@./y``", "@./../../x", "@/etc/passwd", "x\n@./a.md\r\n", "``\u00e9@x`"} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		got := geminiImports(OS, s, dir, []string{".git"})
		if !strings.ContainsAny(s, "@") && got != s {
			t.Fatalf("%q changed to %q without an import", s, got)
		}
		for _, sp := range codeSpans(s) {
			if sp[0] < 0 || sp[1] > len(s) || sp[0] >= sp[1] || s[sp[0]] != '`' || s[sp[1]-1] != '`' {
				t.Fatalf("code span %v of %q", sp, s)
			}
		}
	})
}

// TestGeminiFileNames checks context.fileName's forms.
func TestGeminiFileNames(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
	}{
		{nil, "GEMINI.md"},
		{"AGENTS.md", "AGENTS.md GEMINI.md"},
		{[]any{"./AGENTS.md", " ", "GEMINI.md", "CLAUDE.md", "AGENTS.md"}, "AGENTS.md GEMINI.md CLAUDE.md"},
		{42.0, "GEMINI.md"},
	} {
		if got := strings.Join(geminiFileNames(tt.in), " "); got != tt.want {
			t.Errorf("geminiFileNames(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
