package session

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// makeFiles makes files below root: a value "-> TARGET" is a symbolic
// link, "fifo" a FIFO, "x:TEXT" an executable file, "dir" a directory;
// anything else a file with that text.
func makeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := files[name]
		p := filepath.Join(root, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		switch {
		case strings.HasPrefix(v, "-> "):
			must(t, os.Symlink(strings.TrimPrefix(v, "-> "), p))
		case v == "fifo":
			must(t, syscall.Mkfifo(p, 0o644))
		case v == "dir":
			must(t, os.MkdirAll(p, 0o755))
		case strings.HasPrefix(v, "x:"):
			must(t, os.WriteFile(p, []byte(strings.TrimPrefix(v, "x:")), 0o755))
		default:
			must(t, os.WriteFile(p, []byte(v), 0o644))
		}
	}
}

// listTree maps every entry below root to "dir MODE", "file MODE TEXT" or
// "link": what seeding made.
func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			out[rel] = "link"
		case d.IsDir():
			out[rel] = "dir " + fi.Mode().Perm().String()
		default:
			b, err := os.ReadFile(path)
			must(t, err)
			out[rel] = "file " + fi.Mode().Perm().String() + " " + string(b)
		}
		return nil
	})
	must(t, err)
	return out
}

// TestSeed seeds the state of each harness from a user's configuration
// and compares what is in the state with what the allowlists and the
// rules on links say.
func TestSeed(t *testing.T) {
	const (
		f = "file -rw------- "
		x = "file -rwx------ "
		d = "dir -rwx------"
	)
	tests := []struct {
		name    string
		harness string
		home    map[string]string // below the user's home ($H in links)
		env     []string          // extra variables, $H the home
		want    map[string]string // below the state directory
		warn    string            // a warning that must come
	}{
		{
			name: "claude: configuration, not history", harness: "claude",
			home: map[string]string{
				".claude/settings.json": `{"hooks":{}}`, ".claude/CLAUDE.md": "mine", ".claude/agents/a.md": "agent",
				".claude/hooks/h.sh": "x:#!/bin/sh", ".claude/.credentials.json": `{"claudeAiOauth":{}}`,
				".claude/projects/p/s.jsonl": "history", ".claude/sessions/1.json": "s", ".claude/todos/t.json": "t",
				".claude/shell-snapshots/s.sh": "s", ".claude/statsig/x": "x", ".claude/file-history/f": "f",
				".claude/history.jsonl": "h", ".claude.json": `{"mcpServers":{}}`,
			},
			want: map[string]string{
				"claude": d, "cache": d,
				"claude/settings.json": f + `{"hooks":{}}`, "claude/CLAUDE.md": f + "mine",
				"claude/agents": d, "claude/agents/a.md": f + "agent",
				"claude/hooks": d, "claude/hooks/h.sh": x + "#!/bin/sh",
				"claude/.credentials.json": f + `{"claudeAiOauth":{}}`, "claude/.claude.json": f + `{"mcpServers":{}}`,
			},
		},
		{
			name: "claude: CLAUDE_CONFIG_DIR holds .claude.json", harness: "claude",
			home: map[string]string{"cfg/CLAUDE.md": "cfg", "cfg/.claude.json": `{"in":"cfg"}`, ".claude.json": `{"in":"home"}`, ".claude/CLAUDE.md": "default"},
			env:  []string{"CLAUDE_CONFIG_DIR=$H/cfg"},
			want: map[string]string{"claude": d, "cache": d, "claude/CLAUDE.md": f + "cfg", "claude/.claude.json": f + `{"in":"cfg"}`},
		},
		{
			name: "codex: configuration, not sessions, logs or databases", harness: "codex",
			home: map[string]string{
				".codex/config.toml": "model = 'm'", ".codex/auth.json": `{"tokens":{}}`, ".codex/AGENTS.md": "rules",
				".codex/rules/default.rules": "r", ".codex/prompts/p.md": "p", ".codex/skills/s/SKILL.md": "s",
				".codex/sessions/2026/01/01/rollout.jsonl": "x", ".codex/log/codex-tui.log": "l", ".codex/state_5.sqlite": "db",
				".codex/packages/app-server-daemon/bin": "x:bin", ".codex/history.jsonl": "h",
			},
			want: map[string]string{
				"codex": d, "cache": d,
				"codex/config.toml": f + "model = 'm'", "codex/auth.json": f + `{"tokens":{}}`, "codex/AGENTS.md": f + "rules",
				"codex/rules": d, "codex/rules/default.rules": f + "r", "codex/prompts": d, "codex/prompts/p.md": f + "p",
				"codex/skills": d, "codex/skills/s": d, "codex/skills/s/SKILL.md": f + "s",
			},
		},
		{
			name: "opencode: its config whole, git's, the logins; its state and cache made empty", harness: "opencode",
			home: map[string]string{
				".config/opencode/opencode.json": "{}", ".config/opencode/agent/a.md": "a", ".config/git/config": "[user]",
				".config/go/env": "GOPRIVATE=x", ".config/go/telemetry/local/c": "c", ".config/other/x": "x",
				".local/share/opencode/auth.json": `{"p":{}}`, ".local/share/opencode/mcp-auth.json": `{}`,
				".local/share/opencode/opencode.db": "db", ".local/state/opencode/kv.json": "k", ".cache/opencode/bin/x": "x:x",
			},
			want: map[string]string{
				"opencode": d, "opencode/config": d, "opencode/config/opencode": d,
				"opencode/config/opencode/opencode.json": f + "{}", "opencode/config/opencode/agent": d, "opencode/config/opencode/agent/a.md": f + "a",
				"opencode/config/git": d, "opencode/config/git/config": f + "[user]", "opencode/config/go": d, "opencode/config/go/env": f + "GOPRIVATE=x",
				"opencode/data": d, "opencode/data/opencode": d, "opencode/data/opencode/auth.json": f + `{"p":{}}`, "opencode/data/opencode/mcp-auth.json": f + "{}",
				"opencode/state": d, "opencode/state/opencode": d, "cache": d, "cache/opencode": d,
			},
		},
		{
			name: "a missing configuration directory", harness: "codex",
			want: map[string]string{"codex": d, "cache": d},
		},
		{
			name: "links are copied as what they lead to, inside or out; dangling links, loops and FIFOs are skipped", harness: "claude",
			home: map[string]string{
				"dotfiles/CLAUDE.md": "from dotfiles", "dotfiles/skills/s/SKILL.md": "skill", "secret.json": `{"token":1}`,
				".claude/CLAUDE.md": "-> $H/dotfiles/CLAUDE.md", ".claude/skills": "-> $H/dotfiles/skills",
				".claude/agents/real.md": "real", ".claude/agents/alias.md": "-> real.md",
				".claude/agents/out.json": "-> $H/secret.json", ".claude/agents/gone.md": "-> $H/nowhere",
				".claude/agents/sub/loop": "-> ..", ".claude/agents/fifo": "fifo",
			},
			want: map[string]string{
				"claude": d, "cache": d, "claude/CLAUDE.md": f + "from dotfiles",
				"claude/skills": d, "claude/skills/s": d, "claude/skills/s/SKILL.md": f + "skill",
				"claude/agents": d, "claude/agents/sub": d, "claude/agents/real.md": f + "real", "claude/agents/alias.md": f + "real", "claude/agents/out.json": f + `{"token":1}`,
			},
		},
		{
			name: "a file over the limit is skipped with a warning", harness: "codex",
			home: map[string]string{".codex/AGENTS.md": strings.Repeat("x", 100), ".codex/config.toml": "small"},
			want: map[string]string{"codex": d, "cache": d, "codex/config.toml": f + "small"},
			warn: "AGENTS.md is larger than",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			files := map[string]string{}
			for k, v := range tt.home {
				files[k] = strings.ReplaceAll(v, "$H", home)
			}
			makeFiles(t, home, files)
			env := []string{"HOME=" + home}
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "$H", home))
			}
			if tt.warn != "" {
				old := maxSeedFile
				maxSeedFile = 50
				t.Cleanup(func() { maxSeedFile = old })
			}
			dir := t.TempDir()
			st, err := planState(dir, tt.harness, env, nil)
			must(t, err)
			var warnings []string
			must(t, st.seed(func(s string) { warnings = append(warnings, s) }))
			got := listTree(t, st.Dir)
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for k, v := range got {
				if _, ok := tt.want[k]; !ok {
					t.Errorf("unexpected %s (%q) in the state", k, v)
				}
			}
			if fi, err := os.Stat(st.Dir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("state directory mode: %v, %v; want 0700", fi, err)
			}
			joined := strings.Join(warnings, "\n")
			if tt.warn == "" && joined != "" || !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want %q", warnings, tt.warn)
			}
		})
	}
}

// TestSeedCopiesNotLinks: a seeded file is a new file, never a hard link
// to the user's, so writing it leaves the user's as it was.
func TestSeedCopiesNotLinks(t *testing.T) {
	home := t.TempDir()
	makeFiles(t, home, map[string]string{".codex/config.toml": "notify = []"})
	st, err := planState(t.TempDir(), "codex", []string{"HOME=" + home}, nil)
	must(t, err)
	must(t, st.seed(func(string) {}))
	user, _ := os.Stat(filepath.Join(home, ".codex/config.toml"))
	seeded, _ := os.Stat(filepath.Join(st.Dir, "codex/config.toml"))
	if os.SameFile(user, seeded) {
		t.Fatal("the seeded config.toml is the user's file")
	}
	must(t, os.WriteFile(filepath.Join(st.Dir, "codex/config.toml"), []byte(`notify = ["evil"]`), 0o600))
	if b, _ := os.ReadFile(filepath.Join(home, ".codex/config.toml")); string(b) != "notify = []" {
		t.Errorf("the user's config.toml = %q after the agent wrote the session's", b)
	}
}

// TestStateEnv: the variables each harness gets, the package caches
// moved into the session unless kept, Go's module cache read through
// GOPROXY, and the writable directories.
func TestStateEnv(t *testing.T) {
	home := t.TempDir()
	modcache := filepath.Join(home, "go", "pkg", "mod")
	must(t, os.MkdirAll(filepath.Join(modcache, "cache", "download"), 0o755))
	tests := []struct {
		name     string
		harness  string
		env      []string
		keep     []string
		want     []string // NAME=VALUE, $S the state directory, $H the home
		absent   []string // names that must not be set
		writable []string
	}{
		{
			name: "claude", harness: "claude",
			want: []string{"CLAUDE_CONFIG_DIR=$S/claude", "XDG_CACHE_HOME=$S/cache", "GOCACHE=$S/cache/go-build",
				"GOMODCACHE=$S/cache/go-mod", "GOPROXY=file://$H/go/pkg/mod/cache/download," + goDefaultProxy,
				"npm_config_cache=$S/cache/npm", "YARN_CACHE_FOLDER=$S/cache/yarn", "PIP_CACHE_DIR=$S/cache/pip", "UV_CACHE_DIR=$S/cache/uv"},
			absent:   []string{"CODEX_HOME", "XDG_CONFIG_HOME", "CLAUDE_SECURESTORAGE_CONFIG_DIR", "NPM_CONFIG_CACHE"},
			writable: []string{"$S/claude", "$S/cache"},
		},
		{
			name: "claude with its credentials moved by the user", harness: "claude",
			env:  []string{"CLAUDE_SECURESTORAGE_CONFIG_DIR=$H/secure"},
			want: []string{"CLAUDE_CONFIG_DIR=$S/claude", "CLAUDE_SECURESTORAGE_CONFIG_DIR=$S/claude"},
		},
		{
			name: "codex, the user's GOPROXY after the module cache", harness: "codex",
			env:      []string{"GOPROXY=https://corp.example/go,off", "NPM_CONFIG_CACHE=$H/npm"},
			want:     []string{"CODEX_HOME=$S/codex", "GOPROXY=file://$H/go/pkg/mod/cache/download,https://corp.example/go,off", "npm_config_cache=$S/cache/npm", "NPM_CONFIG_CACHE=$S/cache/npm"},
			writable: []string{"$S/codex", "$S/cache"},
		},
		{
			name: "opencode: its XDG directories, the cache once", harness: "opencode",
			want: []string{"XDG_CONFIG_HOME=$S/opencode/config", "XDG_DATA_HOME=$S/opencode/data", "XDG_STATE_HOME=$S/opencode/state",
				"XDG_CACHE_HOME=$S/cache", "GOCACHE=$S/cache/go-build"},
			writable: []string{"$S/opencode", "$S/cache"},
		},
		{
			name: "a cache the user chose is moved all the same", harness: "codex",
			env:  []string{"GOCACHE=$H/mycache", "XDG_CACHE_HOME=$H/xdg"},
			want: []string{"GOCACHE=$S/cache/go-build", "XDG_CACHE_HOME=$S/cache", "PIP_CACHE_DIR=$S/cache/pip"},
		},
		{
			name: "caches in kept directories stay the user's", harness: "codex",
			env:    []string{"GOCACHE=$H/mycache"},
			keep:   []string{"$H/mycache", "$H/go", "$H/.cache/pip"},
			want:   []string{"npm_config_cache=$S/cache/npm", "GOMODCACHE=$H/go/pkg/mod", "PIP_CACHE_DIR=$H/.cache/pip"},
			absent: []string{"GOCACHE", "GOPROXY"},
		},
		{
			name: "opencode: a kept cache is named, since XDG_CACHE_HOME moves", harness: "opencode",
			keep: []string{"$H/.cache"},
			want: []string{"XDG_CACHE_HOME=$S/cache", "GOCACHE=$H/.cache/go-build", "UV_CACHE_DIR=$H/.cache/uv", "npm_config_cache=$S/cache/npm"},
		},
		{
			name: "no module cache of the user's: GOPROXY untouched", harness: "codex",
			env:    []string{"GOMODCACHE=$H/none"},
			want:   []string{"GOMODCACHE=$S/cache/go-mod"},
			absent: []string{"GOPROXY"},
		},
		{
			name: "the go env file locates the module cache", harness: "codex",
			env:  []string{"GOENV=$H/goenv"},
			want: []string{"GOPROXY=file://$H/go/pkg/mod/cache/download,https://env-file.example"},
		},
	}
	must(t, os.WriteFile(filepath.Join(home, "goenv"), []byte("GOPROXY=https://env-file.example\nGOMODCACHE="+modcache+"\n"), 0o644))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := filepath.Join(dir, stateDir)
			sub := func(v string) string { return strings.ReplaceAll(strings.ReplaceAll(v, "$S", s), "$H", home) }
			env := []string{"HOME=" + home}
			for _, kv := range tt.env {
				env = append(env, sub(kv))
			}
			var keep []string
			for _, k := range tt.keep {
				keep = append(keep, sub(k))
			}
			st, err := planState(dir, tt.harness, env, keep)
			must(t, err)
			for _, w := range tt.want {
				if !slices.Contains(st.Env, sub(w)) {
					t.Errorf("Env %q lacks %s", st.Env, sub(w))
				}
			}
			seen := map[string]int{}
			for _, kv := range st.Env {
				k, _, _ := strings.Cut(kv, "=")
				seen[k]++
				if seen[k] > 1 {
					t.Errorf("%s set twice in %q", k, st.Env)
				}
			}
			for _, a := range tt.absent {
				if seen[a] > 0 {
					t.Errorf("Env %q sets %s", st.Env, a)
				}
			}
			if tt.writable != nil {
				var want []string
				for _, w := range tt.writable {
					want = append(want, sub(w))
				}
				if !slices.Equal(st.Writable, want) {
					t.Errorf("Writable = %q, want %q", st.Writable, want)
				}
			}
		})
	}
}

// TestWriteBack: a credential the harness changed goes back to the
// user's file; anything else stays where it is, with a warning where the
// user should know.
func TestWriteBack(t *testing.T) {
	const seeded = `{"tokens":{"account_id":"acct-1","refresh_token":"r1"}}`
	const refreshed = `{"tokens":{"account_id":"acct-1","refresh_token":"r2"}}`
	tests := []struct {
		name string
		// user's auth.json: a file (mode 0640) or, with link, a link the
		// user made to $H/real-auth.json.
		link bool
		// agent changes the session's copy (state is the codex dir of
		// the state, user the user's file) after seeding; meanwhile what
		// happens to the user's file before write-back.
		agent, meanwhile func(t *testing.T, state, user string)
		// during runs between the check and the swap.
		during   func(user string)
		wantUser string // the user's file after
		wantSame bool   // the user's file is the very file it was (not replaced)
		warn     string
	}{
		{name: "unchanged: nothing written", wantUser: seeded, wantSame: true},
		{name: "refreshed: written back", agent: write(refreshed), wantUser: refreshed},
		{
			name: "refreshed, through the user's own link: written to its target", link: true,
			agent: write(refreshed), wantUser: refreshed,
		},
		{
			name: "the user's changed meanwhile: kept, with a warning", agent: write(refreshed),
			meanwhile: func(t *testing.T, _, user string) { must(t, os.WriteFile(user, []byte(`{"mine":1}`), 0o640)) },
			wantUser:  `{"mine":1}`, wantSame: true, warn: "changed while the session ran",
		},
		{
			name: "the user's written between the check and the swap: put back", agent: write(refreshed),
			during:   func(user string) { _ = os.WriteFile(user, []byte(`{"late":1}`), 0o640) },
			wantUser: `{"late":1}`, wantSame: true, warn: "changed while the session ran",
		},
		{
			name: "a link the agent planted in place of the credential: not followed",
			agent: func(t *testing.T, state, _ string) {
				other := filepath.Join(t.TempDir(), "other.json")
				must(t, os.WriteFile(other, []byte(`{"tokens":{"account_id":"acct-1","refresh_token":"stolen"}}`), 0o600))
				must(t, os.Remove(filepath.Join(state, "auth.json")))
				must(t, os.Symlink(other, filepath.Join(state, "auth.json")))
			},
			wantUser: seeded, wantSame: true, warn: "symbolic link",
		},
		{
			name: "a directory the agent linked in place of the state's: not followed",
			agent: func(t *testing.T, state, _ string) {
				other := t.TempDir()
				must(t, os.WriteFile(filepath.Join(other, "auth.json"), []byte(refreshed), 0o600))
				must(t, os.RemoveAll(state))
				must(t, os.Symlink(other, state))
			},
			wantUser: seeded, wantSame: true, warn: "not a directory",
		},
		{name: "not JSON: not written back", agent: write("garbage"), wantUser: seeded, wantSame: true, warn: "not a JSON object"},
		{
			name: "another account: not written back", agent: write(`{"tokens":{"account_id":"acct-2","refresh_token":"r2"}}`),
			wantUser: seeded, wantSame: true, warn: "names another account (the field tokens.account_id changed); yours is kept",
		},
		{
			name: "an entry added (an api key): not written back", agent: write(`{"OPENAI_API_KEY":"sk-attacker","tokens":{"account_id":"acct-1","refresh_token":"r2"}}`),
			wantUser: seeded, wantSame: true, warn: "an entry (OPENAI_API_KEY) was added; yours is kept",
		},
		{
			name: "a field removed: not written back", agent: write(`{"tokens":{"refresh_token":"r2"}}`),
			wantUser: seeded, wantSame: true, warn: "the field tokens.account_id was removed",
		},
		{
			name:     "removed in the session: the user's stays",
			agent:    func(t *testing.T, state, _ string) { must(t, os.Remove(filepath.Join(state, "auth.json"))) },
			wantUser: seeded, wantSame: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(home, ".codex"), 0o755))
			user := filepath.Join(home, ".codex", "auth.json")
			target := user
			if tt.link {
				target = filepath.Join(home, "real-auth.json")
				must(t, os.Symlink(target, user))
			}
			must(t, os.WriteFile(target, []byte(seeded), 0o640))
			must(t, os.Chmod(target, 0o640))
			st, err := planState(t.TempDir(), "codex", []string{"HOME=" + home}, nil)
			must(t, err)
			must(t, st.seed(func(string) {}))
			before, _ := os.Stat(target)
			state := filepath.Join(st.Dir, "codex")
			if tt.agent != nil {
				tt.agent(t, state, user)
			}
			if tt.meanwhile != nil {
				tt.meanwhile(t, state, target)
				before, _ = os.Stat(target)
			}
			if tt.during != nil {
				beforeSwap = func() { tt.during(target) }
				t.Cleanup(func() { beforeSwap = func() {} })
			}
			var warnings []string
			st.WriteBack(func(s string) { warnings = append(warnings, s) })
			if b, err := os.ReadFile(target); err != nil || string(b) != tt.wantUser {
				t.Errorf("the user's file = %q, %v; want %q", b, err, tt.wantUser)
			}
			after, err := os.Stat(target)
			must(t, err)
			if same := os.SameFile(before, after); same != tt.wantSame {
				t.Errorf("the user's file replaced: %v, want %v", !same, !tt.wantSame)
			}
			if after.Mode().Perm() != 0o640 {
				t.Errorf("the user's file has mode %v, want 0640 kept", after.Mode().Perm())
			}
			if tt.link {
				if fi, err := os.Lstat(user); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
					t.Errorf("the user's link was replaced: %v, %v", fi, err)
				}
			}
			joined := strings.Join(warnings, "\n")
			if tt.warn == "" && joined != "" || !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want %q", warnings, tt.warn)
			}
			entries, _ := os.ReadDir(filepath.Dir(target))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".workforce-") {
					t.Errorf("a temporary file %s was left beside the user's", e.Name())
				}
			}
		})
	}
}

// write returns an agent that writes text to the session's auth.json.
func write(text string) func(t *testing.T, state, user string) {
	return func(t *testing.T, state, _ string) {
		must(t, os.WriteFile(filepath.Join(state, "auth.json"), []byte(text), 0o600))
	}
}

// TestWriteBackNeverCreates: a credential the user did not have when the
// session started is not made in the user's configuration.
func TestWriteBackNeverCreates(t *testing.T) {
	home := t.TempDir()
	st, err := planState(t.TempDir(), "claude", []string{"HOME=" + home}, nil)
	must(t, err)
	must(t, st.seed(func(string) {}))
	must(t, os.WriteFile(filepath.Join(st.Dir, "claude", ".credentials.json"), []byte(`{"claudeAiOauth":{}}`), 0o600))
	st.WriteBack(func(s string) { t.Errorf("warning %q", s) })
	if _, err := os.Lstat(filepath.Join(home, ".claude", ".credentials.json")); err == nil {
		t.Error("a credential the user never had was written into the user's configuration")
	}
}

// TestRefresh: a resumed session keeps its state and gets the user's
// current credentials.
func TestRefresh(t *testing.T) {
	home := t.TempDir()
	makeFiles(t, home, map[string]string{".claude/.credentials.json": `{"claudeAiOauth":{"refreshToken":"v1"}}`, ".claude/settings.json": "{}"})
	dir := t.TempDir()
	st, err := planState(dir, "claude", []string{"HOME=" + home}, nil)
	must(t, err)
	must(t, st.seed(func(string) {}))
	makeFiles(t, st.Dir, map[string]string{"claude/projects/p/conversation.jsonl": "kept"})
	must(t, os.WriteFile(filepath.Join(home, ".claude/.credentials.json"), []byte(`{"claudeAiOauth":{"refreshToken":"v2"}}`), 0o600))

	again, err := planState(dir, "claude", []string{"HOME=" + home}, nil)
	must(t, err)
	must(t, again.refresh(func(s string) { t.Errorf("warning %q", s) }))
	got := listTree(t, again.Dir)
	if got["claude/projects/p/conversation.jsonl"] != "file -rw-r--r-- kept" {
		t.Errorf("the conversation = %q, want it kept", got["claude/projects/p/conversation.jsonl"])
	}
	if got["claude/.credentials.json"] != `file -rw------- {"claudeAiOauth":{"refreshToken":"v2"}}` {
		t.Errorf("the credential = %q, want the user's current one", got["claude/.credentials.json"])
	}
	// The refreshed bytes are what write-back compares with.
	must(t, os.WriteFile(filepath.Join(again.Dir, "claude/.credentials.json"), []byte(`{"claudeAiOauth":{"refreshToken":"v3"}}`), 0o600))
	again.WriteBack(func(s string) { t.Errorf("warning %q", s) })
	if b, _ := os.ReadFile(filepath.Join(home, ".claude/.credentials.json")); string(b) != `{"claudeAiOauth":{"refreshToken":"v3"}}` {
		t.Errorf("the user's credential = %q, want the resumed session's refresh", b)
	}
}

// TestRefreshRefusesLinks: on resume, a link the agent left in place of
// one of the state's directories is refused, and nothing is made where
// it leads.
func TestRefreshRefusesLinks(t *testing.T) {
	for _, level := range []string{"opencode", "opencode/data", "opencode/data/opencode"} {
		t.Run(level, func(t *testing.T) {
			home := t.TempDir()
			makeFiles(t, home, map[string]string{".local/share/opencode/auth.json": `{"p":{"type":"api","key":"k"}}`})
			dir := t.TempDir()
			st, err := planState(dir, "opencode", []string{"HOME=" + home}, nil)
			must(t, err)
			must(t, st.seed(func(string) {}))
			outside := t.TempDir()
			must(t, os.RemoveAll(filepath.Join(st.Dir, level)))
			must(t, os.Symlink(outside, filepath.Join(st.Dir, level)))

			again, err := planState(dir, "opencode", []string{"HOME=" + home}, nil)
			must(t, err)
			err = again.refresh(func(s string) { t.Errorf("warning %q", s) })
			if err == nil || !strings.Contains(err.Error(), "not a directory (a symbolic link?)") {
				t.Errorf("refresh = %v, want the link refused", err)
			}
			if got := listTree(t, outside); len(got) != 0 {
				t.Errorf("made outside the state through the link: %q", got)
			}
		})
	}
}

// FuzzWriteBack: whatever the session's copy holds, write-back never
// panics, and writes it over the user's only when it passes the
// harness's check; a refusal leaves the user's file as it was.
func FuzzWriteBack(f *testing.F) {
	f.Add(true, []byte(`{"p":{"type":"oauth","refresh":"r1","access":"a1","expires":1}}`), []byte(`{"p":{"type":"oauth","refresh":"r2","access":"a2","expires":2}}`))
	f.Add(true, []byte(`{"p":{"type":"oauth","refresh":"r1"}}`), []byte(`{"p":{"type":"oauth","refresh":"r1"},"https://evil":{"type":"wellknown","key":"K","token":"t"}}`))
	f.Add(false, []byte(`{"tokens":{"account_id":"a","refresh_token":"r"}}`), []byte(`{"tokens":{"account_id":"a","refresh_token":"r2"}}`))
	f.Add(false, []byte(`{"tokens":{"account_id":"a"}}`), []byte(`{"tokens":{"account_id":"b"}}`))
	f.Add(false, []byte(`{"OPENAI_API_KEY":"k"}`), []byte(`{"OPENAI_API_KEY":"k2"}`))
	f.Add(true, []byte(`{}`), []byte(`null`))
	f.Add(true, []byte(`[1]`), []byte(`{"a":`))
	f.Fuzz(func(t *testing.T, opencode bool, seeded, now []byte) {
		home := t.TempDir()
		h, user, state := "codex", filepath.Join(home, ".codex", "auth.json"), "codex/auth.json"
		if opencode {
			h, user, state = "opencode", filepath.Join(home, ".local", "share", "opencode", "auth.json"), "opencode/data/opencode/auth.json"
		}
		must(t, os.MkdirAll(filepath.Dir(user), 0o700))
		must(t, os.WriteFile(user, seeded, 0o600))
		st, err := planState(t.TempDir(), h, []string{"HOME=" + home}, nil)
		must(t, err)
		must(t, st.seed(func(string) {}))
		if len(st.creds) == 0 {
			return // too large to seed
		}
		must(t, os.WriteFile(filepath.Join(st.Dir, state), now, 0o600))
		var warned bool
		st.WriteBack(func(string) { warned = true })
		got, err := os.ReadFile(user)
		must(t, err)
		refused := st.creds[0].seed.CheckRefresh(seeded, now) != nil && !bytes.Equal(seeded, now)
		switch {
		case refused && !bytes.Equal(got, seeded):
			t.Fatalf("refused (%q over %q), yet the user's file is now %q", now, seeded, got)
		case refused && !warned:
			t.Fatalf("refused (%q over %q) without a warning", now, seeded)
		case !refused && !bytes.Equal(got, now):
			t.Fatalf("passed (%q over %q), yet the user's file is %q", now, seeded, got)
		}
	})
}
