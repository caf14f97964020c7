package harness

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// TestPlanState: the per-session state's variables are set last, over
// the persona's env, with a note, and reach the harness's environment
// (which FindSession reads its store by).
func TestPlanState(t *testing.T) {
	tests := []struct {
		name    string
		harness string
		env     map[string]string // the persona's
		state   []string
		note    string
	}{
		{name: "codex", harness: "codex", state: []string{"CODEX_HOME=/s/state/codex", "GOCACHE=/s/state/cache/go-build"}},
		{name: "the persona's CODEX_HOME replaced", harness: "codex", env: map[string]string{"CODEX_HOME": "/elsewhere", "KEEP": "1"},
			state: []string{"CODEX_HOME=/s/state/codex"}, note: "the persona's env sets CODEX_HOME"},
		{name: "opencode keeps its OPENCODE_CONFIG", harness: "opencode", state: []string{"XDG_CONFIG_HOME=/s/state/opencode/config"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &persona.Resolved{ID: "p", Harness: tt.harness, Model: "m", Env: tt.env}
			inv, err := Plan(r, Options{ConfigDir: "/s/config", Env: []string{"HOME=/home/u", "CODEX_HOME=/home/u/.codex"}, State: tt.state})
			if err != nil {
				t.Fatal(err)
			}
			for _, kv := range tt.state {
				if !slices.Contains(inv.SetEnv, kv) || !slices.Contains(inv.Env(), kv) {
					t.Errorf("SetEnv %q, Env %q: want %s in both", inv.SetEnv, inv.Env(), kv)
				}
				k, _, _ := strings.Cut(kv, "=")
				n := 0
				for _, s := range inv.SetEnv {
					if strings.HasPrefix(s, k+"=") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("SetEnv %q sets %s %d times", inv.SetEnv, k, n)
				}
			}
			if tt.env["KEEP"] != "" && !slices.Contains(inv.SetEnv, "KEEP=1") {
				t.Errorf("SetEnv %q lost the persona's other variables", inv.SetEnv)
			}
			if tt.harness == "opencode" && !slices.Contains(inv.SetEnv, "OPENCODE_CONFIG="+filepath.Join("/s/config", "opencode.json")) {
				t.Errorf("SetEnv %q lacks OPENCODE_CONFIG", inv.SetEnv)
			}
			notes := strings.Join(inv.Notes, "\n")
			if tt.note == "" && strings.Contains(notes, "per-session state") || !strings.Contains(notes, tt.note) {
				t.Errorf("notes %q, want %q", inv.Notes, tt.note)
			}
		})
	}
}

// TestStateLayout: where each harness's seeds come from, as the user's
// environment locates them.
func TestStateLayout(t *testing.T) {
	tests := []struct {
		harness string
		env     []string
		from    map[string]string // To -> From
		creds   []string          // the To of the credentials
	}{
		{harness: "claude", env: []string{"HOME=/h"},
			from:  map[string]string{"claude/settings.json": "/h/.claude/settings.json", "claude/.claude.json": "/h/.claude.json", "claude/.credentials.json": "/h/.claude/.credentials.json"},
			creds: []string{"claude/.credentials.json"}},
		{harness: "claude", env: []string{"HOME=/h", "CLAUDE_CONFIG_DIR=/c", "CLAUDE_SECURESTORAGE_CONFIG_DIR=/sec"},
			from:  map[string]string{"claude/settings.json": "/c/settings.json", "claude/.claude.json": "/c/.claude.json", "claude/.credentials.json": "/sec/.credentials.json"},
			creds: []string{"claude/.credentials.json"}},
		{harness: "codex", env: []string{"HOME=/h", "CODEX_HOME=/x"},
			from:  map[string]string{"codex/config.toml": "/x/config.toml", "codex/auth.json": "/x/auth.json"},
			creds: []string{"codex/auth.json", "codex/.credentials.json", "codex/gateway_oauth.json"}},
		{harness: "opencode", env: []string{"HOME=/h", "XDG_DATA_HOME=/d"},
			from:  map[string]string{"opencode/config/opencode": "/h/.config/opencode", "opencode/config/git": "/h/.config/git", "opencode/data/opencode/auth.json": "/d/opencode/auth.json"},
			creds: []string{"opencode/data/opencode/auth.json", "opencode/data/opencode/mcp-auth.json"}},
		{harness: "codex", env: []string{"HOME=relative"},
			from: map[string]string{"codex/config.toml": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.harness+" "+strings.Join(tt.env, " "), func(t *testing.T) {
			l, err := State(tt.harness, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			var creds []string
			for _, s := range l.Seeds {
				got[s.To] = s.From
				if s.Credential {
					creds = append(creds, s.To)
				}
			}
			for to, from := range tt.from {
				if f, ok := got[to]; !ok || f != from {
					t.Errorf("seed %s from %q, want %q", to, f, from)
				}
			}
			if tt.creds != nil && !slices.Equal(creds, tt.creds) {
				t.Errorf("credentials %q, want %q", creds, tt.creds)
			}
		})
	}
	if _, err := State("vim", nil); err == nil {
		t.Error("State(vim) succeeded")
	}
}
