package discover

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// makeTree writes a txtar archive into a new directory. Besides files,
// "link:PATH" sections make a symlink to their (trimmed) content, "dir:PATH"
// an empty directory and "fifo:PATH" a named pipe.
func makeTree(t *testing.T, archive string) string {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for _, f := range txtar.Parse([]byte(archive)).Files {
		kind, name, ok := strings.Cut(f.Name, ":")
		if !ok {
			kind, name = "file", f.Name
		}
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch kind {
		case "file":
			err = os.WriteFile(path, f.Data, 0o644)
		case "link":
			err = os.Symlink(strings.TrimSpace(string(f.Data)), path)
		case "dir":
			err = os.MkdirAll(path, 0o755)
		case "fifo":
			err = syscall.Mkfifo(path, 0o644)
		default:
			t.Fatalf("unknown section kind %q", kind)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// failingFS makes reads of files named bad.md fail as if unreadable.
type failingFS struct{ FS }

func (f failingFS) ReadFile(name string, limit int) ([]byte, int64, error) {
	if filepath.Base(name) == "AGENTS.md" && strings.Contains(name, "locked") {
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return f.FS.ReadFile(name, limit)
}

func TestChain(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		tree    string
		dir     string // start directory, relative to the tree
		opts    func(root string) Options
		want    []string // "scope rel" of loaded files, in order; "+t" when truncated
		text    string   // exact rendered text, $ROOT for the tree; empty: not checked
		dropped []string
		problem string
	}{
		{
			name: "codex root to dir with global", profile: "codex", dir: "repo/a/b",
			tree: `
-- repo/.git/HEAD --
-- repo/AGENTS.md --
root
-- repo/a/AGENTS.md --
middle
-- repo/a/b/AGENTS.md --
leaf
-- codex/AGENTS.md --
global
-- AGENTS.md --
above the root
`,
			opts: func(root string) Options { return Options{CodexHome: filepath.Join(root, "codex")} },
			want: []string{"global codex/AGENTS.md", "project repo/AGENTS.md", "project repo/a/AGENTS.md", "project repo/a/b/AGENTS.md"},
			text: "# AGENTS.md instructions for $ROOT/repo/a/b\n\n<INSTRUCTIONS>\nglobal\n\n\n--- project-doc ---\n\nroot\n\n\nmiddle\n\n\nleaf\n\n</INSTRUCTIONS>",
		},
		{
			name: "codex no root marker: the start directory alone", profile: "codex", dir: "x/y",
			tree: "-- x/AGENTS.md --\nparent\n-- x/y/AGENTS.md --\nhere\n",
			want: []string{"project x/y/AGENTS.md"},
		},
		{
			name: "codex nested git roots: the nearest wins", profile: "codex", dir: "outer/inner/src",
			tree: "-- outer/.git/HEAD --\n-- outer/AGENTS.md --\nouter\n-- outer/inner/.git/HEAD --\n-- outer/inner/AGENTS.md --\ninner\n-- outer/inner/src/x --\n",
			want: []string{"project outer/inner/AGENTS.md"},
		},
		{
			name: ".git as a file marks the root", profile: "codex", dir: "wt/sub",
			tree: "-- AGENTS.md --\nabove\n-- wt/.git --\ngitdir: ../main/.git/worktrees/wt\n-- wt/AGENTS.md --\nworktree\n-- wt/sub/x --\n",
			want: []string{"project wt/AGENTS.md"},
		},
		{
			name: "a dangling .git symlink is not a marker", profile: "codex", dir: "repo/sub",
			tree: "-- repo/AGENTS.md --\nrepo\n-- link:repo/.git --\n/nonexistent/git\n-- repo/sub/AGENTS.md --\nsub\n",
			want: []string{"project repo/sub/AGENTS.md"},
		},
		{
			name: "codex AGENTS.override.md wins over AGENTS.md", profile: "codex", dir: "r",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\nplain\n-- r/AGENTS.override.md --\noverride\n",
			want: []string{"project r/AGENTS.override.md"},
		},
		{
			name: "codex fallback names after the profile's", profile: "codex", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/TEAM.md --\nteam\n-- r/a/AGENTS.md --\nagents\n-- r/a/TEAM.md --\nnot reached\n",
			opts: func(string) Options { return Options{Fallbacks: []string{"TEAM.md"}} },
			want: []string{"project r/TEAM.md", "project r/a/AGENTS.md"},
		},
		{
			name: "codex blank override: no fallback in that directory", profile: "codex", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.override.md --\n  \n\t\n-- r/AGENTS.md --\nshadowed\n-- r/a/AGENTS.md --\nkept\n",
			want: []string{"project r/a/AGENTS.md"},
		},
		{
			name: "opencode: an empty AGENTS.md wins the name and loads nothing", profile: "opencode", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\n-- r/CLAUDE.md --\nroot claude\n-- r/a/CLAUDE.md --\na claude\n",
			want: nil,
			text: "",
		},
		{
			name: "opencode: a whitespace-only AGENTS.md is a block", profile: "opencode", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\n  \n-- r/a/CLAUDE.md --\na claude\n",
			want: []string{"project r/AGENTS.md"},
			text: "Instructions from: $ROOT/r/AGENTS.md\n  \n",
		},
		{
			name: "codex budget cuts inside a multi-byte character", profile: "codex", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\n12345\n-- r/a/AGENTS.md --\nabé-rest\n-- r/a/b/AGENTS.md --\nnot read\n",
			opts: func(string) Options { return Options{MaxBytes: 9} },
			want: []string{"project r/AGENTS.md", "project r/a/AGENTS.md+t"},
			text: "# AGENTS.md instructions for $ROOT/r/a\n\n<INSTRUCTIONS>\n12345\n\n\nab\uFFFD\n</INSTRUCTIONS>",
		},
		{
			name: "invalid UTF-8, CRLF and BOM", profile: "codex", dir: "r",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\n\xef\xbb\xbfline one\r\nbad \xff byte\r\n",
			want: []string{"project r/AGENTS.md"},
			text: "# AGENTS.md instructions for $ROOT/r\n\n<INSTRUCTIONS>\n\uFEFFline one\r\nbad \uFFFD byte\r\n\n</INSTRUCTIONS>",
		},
		{
			name: "a symlinked instruction file loads", profile: "codex", dir: "r",
			tree: "-- r/.git/HEAD --\n-- shared/AGENTS.md --\nshared\n-- link:r/AGENTS.md --\n../shared/AGENTS.md\n",
			want: []string{"project r/AGENTS.md"},
		},
		{
			name: "dangling symlink, directory and FIFO are not files", profile: "codex", dir: "r/a/b",
			tree: "-- r/.git/HEAD --\n-- link:r/AGENTS.md --\nmissing.md\n-- dir:r/a/AGENTS.md --\n-- r/a/AGENTS.override.md --\n-- fifo:r/a/b/AGENTS.md --\n",
			want: nil,
		},
		{
			name: "directory named AGENTS.md falls back to the next name", profile: "opencode", dir: "r",
			tree: "-- r/.git/HEAD --\n-- dir:r/AGENTS.md --\n-- r/CLAUDE.md --\nclaude\n",
			want: []string{"project r/CLAUDE.md"},
		},
		{
			name: "an unreadable file is skipped and reported", profile: "codex", dir: "r/locked",
			tree:    "-- r/.git/HEAD --\n-- r/AGENTS.md --\nok\n-- r/locked/AGENTS.md --\nsecret\n",
			opts:    func(string) Options { return Options{FS: failingFS{OS}} },
			want:    []string{"project r/AGENTS.md"},
			problem: "locked/AGENTS.md: permission denied",
		},
		{
			name: "a symlinked working directory is canonicalized", profile: "codex", dir: "alias/sub",
			tree: "-- real/.git/HEAD --\n-- real/AGENTS.md --\nreal\n-- real/sub/AGENTS.md --\nsub\n-- link:alias --\nreal\n",
			want: []string{"project real/AGENTS.md", "project real/sub/AGENTS.md"},
		},
		{
			name: "sibling directories sharing a prefix", profile: "agents", dir: "app2/src",
			tree: "-- .git/HEAD --\n-- app/AGENTS.md --\napp\n-- app2/AGENTS.md --\napp2\n-- app2/src/x --\n",
			opts: func(root string) Options { return Options{Root: root} },
			want: []string{"project app2/AGENTS.md"},
		},
		{
			name: "opencode: first name with a match wins, all its matches, nearest first", profile: "opencode", dir: "r/a/b",
			tree: "-- r/.git/HEAD --\n-- r/CLAUDE.md --\nroot claude\n-- r/a/b/CLAUDE.md --\nleaf claude\n-- r/a/AGENTS.md --\nagents\n-- home/.claude/CLAUDE.md --\nglobal\n",
			opts: func(root string) Options { return Options{Home: filepath.Join(root, "home")} },
			want: []string{"project r/a/AGENTS.md", "global home/.claude/CLAUDE.md"},
			text: "Instructions from: $ROOT/r/a/AGENTS.md\nagents\n\nInstructions from: $ROOT/home/.claude/CLAUDE.md\nglobal\n",
		},
		{
			name: "opencode: only CLAUDE.md files", profile: "opencode", dir: "r/a/b",
			tree: "-- r/.git/HEAD --\n-- r/CLAUDE.md --\nroot\n-- r/a/b/CLAUDE.md --\nleaf\n-- home/.config/opencode/AGENTS.md --\nglobal agents\n-- home/.claude/CLAUDE.md --\nnot used\n",
			opts: func(root string) Options { return Options{Home: filepath.Join(root, "home")} },
			want: []string{"project r/a/b/CLAUDE.md", "project r/CLAUDE.md", "global home/.config/opencode/AGENTS.md"},
		},
		{
			name: "opencode-nearest: one file, names in order", profile: "opencode-nearest", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\nroot agents\n-- r/a/CLAUDE.md --\nnear claude\n-- r/a/CONTEXT.md --\ncontext\n",
			want: []string{"project r/AGENTS.md"},
		},
		{
			name: "claude: every level, all three names, global first", profile: "claude", dir: "r/a",
			tree: "-- CLAUDE.md --\nabove the repo\n-- r/.git/HEAD --\n-- r/CLAUDE.md --\nroot\n-- r/.claude/CLAUDE.md --\ndot claude\n-- r/CLAUDE.local.md --\nlocal\n-- r/a/CLAUDE.md --\nleaf\n-- r/a/b/CLAUDE.md --\nbelow, on demand\n-- home/.claude/CLAUDE.md --\nglobal\n",
			opts: func(root string) Options { return Options{Home: filepath.Join(root, "home")} },
			want: []string{"global home/.claude/CLAUDE.md", "project CLAUDE.md", "project r/CLAUDE.md", "project r/.claude/CLAUDE.md", "project r/CLAUDE.local.md", "project r/a/CLAUDE.md"},
		},
		{
			name: "claude: text trimmed, blank files skipped", profile: "claude", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/CLAUDE.md --\n  \n lead space\n\n-- r/a/CLAUDE.md --\n   \n-- r/a/CLAUDE.local.md --\nlocal rule\n",
			want: []string{"project r/CLAUDE.md", "project r/a/CLAUDE.local.md"},
			text: "Contents of $ROOT/r/CLAUDE.md (project instructions, checked into the codebase):\n\nlead space\n\nContents of $ROOT/r/a/CLAUDE.local.md (user's private project instructions, not checked in):\n\nlocal rule",
		},
		{
			name: "claude: AGENTS.md only when there is no CLAUDE.md at all", profile: "claude", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\nr agents\n-- r/a/AGENTS.md --\na agents\n",
			want: []string{"project r/AGENTS.md", "project r/a/AGENTS.md"},
		},
		{
			name: "claude: one CLAUDE.md anywhere shadows every AGENTS.md", profile: "claude", dir: "r/a",
			tree: "-- r/.git/HEAD --\n-- r/AGENTS.md --\nr agents\n-- r/a/AGENTS.md --\na agents\n-- r/a/CLAUDE.local.md --\nlocal\n",
			want: []string{"project r/a/CLAUDE.local.md"},
		},
		{
			name: "claude: global reached as a project file loads once", profile: "claude", dir: "home/proj",
			tree: "-- home/.claude/CLAUDE.md --\nglobal\n-- home/proj/CLAUDE.md --\nproj\n",
			opts: func(root string) Options { return Options{Home: filepath.Join(root, "home")} },
			want: []string{"global home/.claude/CLAUDE.md", "project home/proj/CLAUDE.md"},
		},
		{
			name: "agents: maxFiles keeps the nearest files", profile: "agents", dir: "r/a/b/c",
			tree:    "-- r/.jj/x --\n-- r/AGENTS.md --\n0\n-- r/a/AGENTS.md --\n1\n-- r/a/b/AGENTS.md --\n2\n-- r/a/b/c/AGENTS.md --\n3\n",
			opts:    func(string) Options { return Options{} },
			want:    []string{"project r/a/AGENTS.md", "project r/a/b/AGENTS.md", "project r/a/b/c/AGENTS.md"},
			dropped: []string{"r/AGENTS.md"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := makeTree(t, tt.tree)
			p, ok := Lookup(tt.profile)
			if !ok {
				t.Fatalf("no profile %q", tt.profile)
			}
			if tt.name == "agents: maxFiles keeps the nearest files" {
				p.MaxFiles = 3
			}
			var o Options
			if tt.opts != nil {
				o = tt.opts(root)
			}
			if o.Home == "" {
				o.Home = filepath.Join(root, "no-home")
			}
			res, err := Chain(p, filepath.Join(root, tt.dir), o)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Files {
				rel, _ := filepath.Rel(root, f.Path)
				s := f.Scope + " " + rel
				if f.Truncated {
					s += "+t"
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("files:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if tt.text != "" {
				want := strings.ReplaceAll(tt.text, "$ROOT", root)
				if res.Text != want {
					t.Errorf("text:\n%q\nwant:\n%q", res.Text, want)
				}
			}
			var dropped []string
			for _, f := range res.Dropped {
				rel, _ := filepath.Rel(root, f.Path)
				dropped = append(dropped, rel)
			}
			if strings.Join(dropped, ",") != strings.Join(tt.dropped, ",") {
				t.Errorf("dropped = %v, want %v", dropped, tt.dropped)
			}
			if tt.problem != "" && (len(res.Problems) != 1 || !strings.Contains(res.Problems[0], tt.problem)) {
				t.Errorf("problems = %v, want one containing %q", res.Problems, tt.problem)
			}
			for _, f := range res.Files {
				if f.Scope == ScopeProject && !pathutil.Within(res.Root, f.Path) && res.Root != "/" {
					t.Errorf("%s loaded from outside the root %s", f.Path, res.Root)
				}
			}
		})
	}
}

func TestChainErrors(t *testing.T) {
	root := makeTree(t, "-- file --\nx\n")
	if _, err := Chain(Profiles["codex"], filepath.Join(root, "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing dir: error = %v", err)
	}
	if _, err := Chain(Profiles["codex"], filepath.Join(root, "file"), Options{}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("file as dir: error = %v", err)
	}
	if _, err := Chain(Profiles["agents"], root, Options{Root: filepath.Join(root, "file", "..", "elsewhere")}); err == nil {
		t.Error("a root that does not exist should fail")
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"HOME": "/h", "CODEX_HOME": "/c", "CODELIA_AGENTS_ROOT": "/r", "CODELIA_AGENTS_MARKERS": "a, b,,"}
	o := FromEnv(Profiles["agents"], func(k string) string { return env[k] })
	if o.Home != "/h" || o.CodexHome != "/c" || o.Root != "/r" || strings.Join(o.Markers, ",") != "a,b" {
		t.Errorf("FromEnv(agents) = %+v", o)
	}
	o = FromEnv(Profiles["codex"], func(k string) string { return env[k] })
	if o.Root != "" || o.Markers != nil {
		t.Errorf("FromEnv(codex) took agents variables: %+v", o)
	}
}

func TestForHarness(t *testing.T) {
	for _, h := range []string{"claude", "opencode", "codex"} {
		if p, ok := ForHarness(h); !ok || p.Harness != h {
			t.Errorf("ForHarness(%q) = %+v, %v", h, p, ok)
		}
	}
	if _, ok := ForHarness("agents"); ok {
		t.Error("agents is not a harness")
	}
}

func TestForVersion(t *testing.T) {
	tests := []struct {
		harness, version string
		want             string
		note             string // substring; "" means no note
	}{
		{"claude", "2.1.330 (Claude Code)", "claude", ""},
		{"claude", "2.1.331 (Claude Code)", "claude", ""},
		{"claude", "2.1.332 (Claude Code)", "claude", ""},
		{"claude", "2.1.333 (Claude Code)", "claude", "claude 2.1.333 is newer than any measured version (2.1.332)"},
		{"claude", "2.1.197 (Claude Code)", "claude-2.1.197", ""},
		{"claude", "2.1.250 (Claude Code)", "claude-2.1.197", "claude 2.1.250 was not measured; using profile claude-2.1.197, measured on 2.1.197"},
		{"claude", "1.0.0", "claude-2.1.197", "was not measured"},
		{"claude", "2.2.0 (Claude Code)", "claude", "claude 2.2.0 is newer than any measured version (2.1.332)"},
		{"claude", "", "claude", ""},
		{"claude", "unknown", "claude", ""},
		{"codex", "codex-cli 0.169.0", "codex", ""},
		{"codex", "codex-cli 0.171.0", "codex", ""},
		{"codex", "codex-cli 0.170.0", "codex", "codex 0.170.0 was not measured; using profile codex, measured on 0.169.0, 0.171.0"},
		{"codex", "codex-cli 0.200.1", "codex", "newer than any measured version (0.171.0)"},
		{"opencode", "1.18.33", "opencode", ""},
		{"opencode", "1.18.33-beta.1", "opencode", "was not measured"},
	}
	for _, tt := range tests {
		t.Run(tt.harness+" "+tt.version, func(t *testing.T) {
			p, note := ForVersion(tt.harness, tt.version)
			if p.Name != tt.want {
				t.Errorf("ForVersion(%q, %q) = %s, want %s", tt.harness, tt.version, p.Name, tt.want)
			}
			if tt.note == "" && note != "" || !strings.Contains(note, tt.note) {
				t.Errorf("ForVersion(%q, %q) note = %q, want %q", tt.harness, tt.version, note, tt.note)
			}
		})
	}
}

// TestProfilesHaveVersions: every profile of a harness, but the seed's
// opencode-nearest variant, is a measured version family.
func TestProfilesHaveVersions(t *testing.T) {
	for name, p := range Profiles {
		if p.Harness == "" || name == "opencode-nearest" {
			continue
		}
		if len(p.Measured) == 0 {
			t.Errorf("profile %s has no measured version", name)
		}
		for _, m := range p.Measured {
			if ParseVersion(m) != m {
				t.Errorf("profile %s: measured version %q is not x.y.z", name, m)
			}
		}
	}
}
