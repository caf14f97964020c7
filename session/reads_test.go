package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/persona"
)

// TestReadPolicy plans a confined run and checks its read policy: the
// defaults below $HOME, the workforce home and the real project denied,
// with their origins; the session, the git objects the sandbox borrows,
// the harness's install directory and its interpreter's (an npm install
// under a denied directory, run by node through env), git's configuration
// and the user's additions allowed; a default denial the user allows
// again is dropped, the user's own denial stays.
func TestReadPolicy(t *testing.T) {
	tmp := t.TempDir()
	home, wf, root := filepath.Join(tmp, "home"), filepath.Join(tmp, "home", ".wf"), filepath.Join(tmp, "repo")
	// The project's objects borrow from a cache, whose objects borrow
	// from another.
	cache, cache2 := filepath.Join(tmp, "cache", "objects"), filepath.Join(tmp, "cache2", "objects")
	for _, d := range []string{filepath.Join(root, ".git", "objects", "info"), filepath.Join(cache, "info"), cache2,
		filepath.Join(root, ".git", "modules", "sub", "objects")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(root, ".git", "objects", "info", "alternates"), []byte(cache+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(cache, "info", "alternates"), []byte("# comment\n../../cache2/objects\n"+filepath.Join(tmp, "missing")+"\n"), 0o644))
	// claude installed by npm below ~/.claude (denied), run by node.
	pkg := filepath.Join(home, ".claude", "local", "node_modules", "@anthropic-ai", "claude-code")
	nodeDir := filepath.Join(home, ".nvm", "versions", "node", "v20")
	bin := filepath.Join(tmp, "bin")
	for _, d := range []string{pkg, filepath.Join(nodeDir, "bin"), bin} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(pkg, "cli.js"), []byte("#!/usr/bin/env -S node --no-warnings\nconsole.log(1)\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(nodeDir, "bin", "node"), []byte("\x7fELF"), 0o755))
	must(t, os.Symlink(filepath.Join(pkg, "cli.js"), filepath.Join(bin, "claude")))
	// Your own Claude Code settings deny a path: the run denies it too.
	must(t, os.WriteFile(filepath.Join(home, ".claude", "settings.json"), []byte(`{"sandbox": {"filesystem": {"denyRead": ["~/private", "*.pem"]}}}`), 0o644))
	env := []string{"HOME=" + home, "PATH=" + bin + ":" + filepath.Join(nodeDir, "bin") + ":/usr/bin:/bin", "CODEX_HOME=" + filepath.Join(tmp, "codex-home")}
	sb := Sandbox{Mode: confine.On,
		DenyRead:  []ReadEntry{{Path: filepath.Join(home, "notes"), Origin: OriginDenyReadFlag}, {Path: filepath.Join(home, ".gitconfig"), Origin: originConfigDeny}},
		AllowRead: []ReadEntry{{Path: filepath.Join(home, ".aws"), Origin: originConfigRead}, {Path: filepath.Join(home, ".gitconfig"), Origin: originConfigRead}},
	}
	p, err := NewPlan(PlanOptions{Home: wf, Persona: "p", Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m"},
		Root: root, Cwd: root, Env: env, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Confine.Reads
	if r == nil || p.Confine.Policy.Read == nil {
		t.Fatalf("no read policy: %+v", p.Confine)
	}
	origin := func(list []ReadEntry, path string) string {
		for _, e := range list {
			if e.Path == path {
				return e.Origin
			}
		}
		return "<none>"
	}
	for _, tt := range []struct {
		list       string
		path, want string
	}{
		{"deny", filepath.Join(home, ".ssh"), "default"},
		{"deny", filepath.Join(home, ".config/gh"), "default"},
		{"deny", filepath.Join(home, ".claude"), "default: claude's own configuration (the run uses its session's copy)"},
		{"deny", filepath.Join(home, ".local/share/opencode"), "default: opencode's own configuration (the run uses its session's copy)"},
		{"deny", filepath.Join(tmp, "codex-home"), "default: $CODEX_HOME, codex's own configuration"},
		{"deny", wf, "default: the workforce home (other sessions, results, history, the worker's credentials and clones)"},
		{"deny", root, "default: the real project (the sandbox is the agent's view)"},
		{"deny", filepath.Join(home, "notes"), "--sandbox-deny-read"},
		{"deny", filepath.Join(home, "private"), filepath.Join(home, ".claude", "settings.json") + " sandbox.filesystem.denyRead[0]"},
		{"deny", filepath.Join(home, ".gitconfig"), "config.json sandbox.denyRead"},
		{"deny", filepath.Join(home, ".aws"), "<none>"},
		{"allow", p.Sandbox, "this session"},
		{"allow", filepath.Join(root, ".git", "objects"), "git objects the sandbox borrows"},
		{"allow", filepath.Join(root, ".git", "modules", "sub", "objects"), "git objects the sandbox borrows"},
		{"allow", cache, "git objects the sandbox borrows"},
		{"allow", cache2, "git objects the sandbox borrows"},
		{"allow", filepath.Join(tmp, "missing"), "<none>"},
		{"allow", pkg, "harness claude install"},
		{"allow", nodeDir, "harness claude interpreter"},
		{"allow", filepath.Join(home, ".config/git/config"), "default: git's configuration"},
		{"allow", filepath.Join(home, ".aws"), "config.json sandbox.allowRead"},
	} {
		list := r.Deny
		if tt.list == "allow" {
			list = r.Allow
		}
		if got := origin(list, tt.path); got != tt.want {
			t.Errorf("%s %s: origin %q, want %q", tt.list, tt.path, got, tt.want)
		}
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, `"*.pem" left out`) }) {
		t.Errorf("notes %q: want the pattern left out", p.Notes)
	}
	if r.Strict || len(r.Roots) > 0 {
		t.Errorf("mode on: strict %v, roots %v", r.Strict, r.Roots)
	}
	// What the launcher gets: the paths, each once.
	pol := p.Confine.Policy.Read
	if !slices.Contains(pol.Deny, root) || !slices.Contains(pol.Allow, p.Sandbox) || pol.Strict {
		t.Errorf("Policy.Read = %+v", pol)
	}
	if err := p.Confine.Policy.Check(); err != nil {
		t.Errorf("Policy.Check: %v", err)
	}

	// Strict, and off.
	sb.Mode = confine.Strict
	p, err = NewPlan(PlanOptions{Home: wf, Persona: "p", Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m"},
		Root: root, Cwd: root, Env: env, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if r := p.Confine.Reads; r == nil || !r.Strict || !p.Confine.Policy.Read.Strict {
		t.Errorf("strict: reads %+v", r)
	}
	sb.Mode = confine.Off
	p, err = NewPlan(PlanOptions{Home: wf, Persona: "p", Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m"},
		Root: root, Cwd: root, Env: env, Sandbox: sb})
	if err != nil {
		t.Fatal(err)
	}
	if p.Confine.Reads != nil || p.Confine.Policy.Read != nil {
		t.Errorf("off: reads %+v", p.Confine.Reads)
	}
}

func TestPackageDir(t *testing.T) {
	for _, tt := range []struct{ file, want string }{
		{"/u/.npm-global/lib/node_modules/@anthropic-ai/claude-code/cli.js", "/u/.npm-global/lib/node_modules/@anthropic-ai/claude-code"},
		{"/u/.npm-global/lib/node_modules/opencode-ai/node_modules/opencode-linux-x64/bin/opencode", "/u/.npm-global/lib/node_modules/opencode-ai"},
		{"/u/.nvm/versions/node/v20.1.0/bin/node", "/u/.nvm/versions/node/v20.1.0"},
		{"/usr/bin/node", "/usr"},
		{"/bin/sh", "/bin"},
		{"/u/.local/share/claude/versions/2.1.330", "/u/.local/share/claude/versions"},
		{"/p/node_modules/x", "/p/node_modules"},
		{"/p/node_modules/@s/x", "/p/node_modules/@s"},
	} {
		if got := packageDir(tt.file); got != tt.want {
			t.Errorf("packageDir(%s) = %s, want %s", tt.file, got, tt.want)
		}
	}
}

func TestInterpreter(t *testing.T) {
	dir := t.TempDir()
	node := filepath.Join(dir, "node")
	must(t, os.WriteFile(node, []byte("\x7fELF"), 0o755))
	env := []string{"PATH=" + dir}
	for _, tt := range []struct{ script, want string }{
		{"#!/usr/bin/env node\n", node},
		{"#!/usr/bin/env -S node --flag\n", node},
		{"#! /usr/bin/env FOO=1 node", node},
		{"#!/bin/sh -e\n", "/bin/sh"},
		{"#!/usr/bin/env missing\n", ""},
		{"#!relative\n", ""},
		{"\x7fELF", ""},
		{"", ""},
	} {
		f := filepath.Join(dir, "script")
		must(t, os.WriteFile(f, []byte(tt.script), 0o755))
		if got := interpreter(f, env); got != tt.want {
			t.Errorf("interpreter(%q) = %q, want %q", tt.script, got, tt.want)
		}
	}
}

// TestGitObjectStores reads a linked worktree's stores: its common
// directory's objects, through a relative commondir.
func TestGitObjectStores(t *testing.T) {
	tmp := t.TempDir()
	main, wt := filepath.Join(tmp, "main"), filepath.Join(tmp, "wt")
	must(t, os.MkdirAll(filepath.Join(main, ".git", "objects"), 0o755))
	must(t, os.MkdirAll(filepath.Join(main, ".git", "worktrees", "wt"), 0o755))
	must(t, os.MkdirAll(wt, 0o755))
	must(t, os.WriteFile(filepath.Join(main, ".git", "worktrees", "wt", "commondir"), []byte("../..\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n"), 0o644))
	if got, want := gitObjectStores(wt), []string{filepath.Join(main, ".git", "objects")}; !slices.Equal(got, want) {
		t.Errorf("gitObjectStores(worktree) = %q, want %q", got, want)
	}
	if got := gitObjectStores(filepath.Join(tmp, "none")); len(got) != 0 {
		t.Errorf("gitObjectStores(no repository) = %q", got)
	}
	if got := strings.Join(gitObjectStores(main), " "); got != filepath.Join(main, ".git", "objects") {
		t.Errorf("gitObjectStores(main) = %q", got)
	}
}

// FuzzPackageDir: the install directory of a program is a clean
// absolute directory above it, never the root, unless the program lies
// there.
func FuzzPackageDir(f *testing.F) {
	for _, s := range []string{"/u/lib/node_modules/@a/b/cli.js", "/p/node_modules/x", "/bin/sh", "/x", "/node_modules/@s/n/f", "/a/bin/bin/node", "/a/node_modules/node_modules/x/y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		if !filepath.IsAbs(file) || filepath.Clean(file) != file || file == "/" {
			return
		}
		dir := packageDir(file)
		if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || dir == file || !strings.HasPrefix(file, strings.TrimSuffix(dir, "/")+"/") {
			t.Errorf("packageDir(%q) = %q, want a directory above it", file, dir)
		}
		if dir == "/" && filepath.Dir(file) != "/" {
			t.Errorf("packageDir(%q) = /", file)
		}
	})
}
