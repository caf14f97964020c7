//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The per-session harness state, measured with the real harnesses run by
// workforce (not confined): each completes a scripted turn with its
// configuration directories in the session, reads the user's
// configuration there as seeded (a global instruction file reaches the
// model; claude's user-scope MCP server from ~/.claude.json starts, and
// its OAuth login from ~/.claude/.credentials.json is the one it sends),
// and leaves the user's home as it was. Codex refreshes its ChatGPT login
// on a 401 (measured on 0.169.0: POST to CODEX_REFRESH_TOKEN_URL_OVERRIDE,
// grant_type refresh_token, then auth.json rewritten with the new tokens
// and last_refresh, account_id kept): the refreshed login comes back to
// the user's auth.json after the run.

const stateTree = `
-- repo/.git/HEAD --
-- repo/main.go --
package main
`

// globalRules is where each harness reads the user's own instructions,
// below the home.
var globalRules = map[string]string{
	"claude":   ".claude/CLAUDE.md",
	"codex":    ".codex/AGENTS.md",
	"opencode": ".config/opencode/AGENTS.md",
}

const globalMarker = "User global rules of the e2e state test."

// homeSnapshot is snapshot of the home without workforce's own directory
// (sessions, results).
func homeSnapshot(t *testing.T, home string) map[string]string {
	t.Helper()
	out := snapshot(t, home)
	for k := range out {
		if strings.HasPrefix(k, ".agentworkforce"+string(filepath.Separator)) {
			delete(out, k)
		}
	}
	return out
}

// withoutVar returns vars without the variable name.
func withoutVar(vars []string, name string) []string {
	return slices.DeleteFunc(slices.Clone(vars), func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
}

func TestState(t *testing.T) {
	for _, h := range []string{"codex", "opencode", "claude"} {
		t.Run(h, func(t *testing.T) {
			root := makeTree(t, stateTree)
			dir := filepath.Join(root, "repo")
			s := newScripted(writeStep(h), step{Text: "finished"})
			e := newScriptedEnv(t, s)
			writePersona(t, e.home, h, "overwrite")
			rules := filepath.Join(e.home, globalRules[h])
			os.MkdirAll(filepath.Dir(rules), 0o755)
			if err := os.WriteFile(rules, []byte(globalMarker+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var auth []string
			var mu sync.Mutex
			mcpRan := filepath.Join(t.TempDir(), "mcp-ran")
			if h == "claude" {
				// A user-scope MCP server in ~/.claude.json, and an OAuth
				// login instead of the API key; a server in front of the
				// scripted model records the login claude sends.
				script := filepath.Join(t.TempDir(), "mcp.sh")
				os.WriteFile(script, []byte("#!/bin/sh\ntouch "+mcpRan+"\n"), 0o755)
				os.WriteFile(filepath.Join(e.home, ".claude.json"), []byte(fmt.Sprintf(`{"mcpServers":{"userscope":{"type":"stdio","command":%q}}}`, script)), 0o644)
				os.WriteFile(filepath.Join(e.home, ".claude", ".credentials.json"), []byte(`{"claudeAiOauth":{"accessToken":"sk-ant-oat01-e2e-state","refreshToken":"sk-ant-ort01-e2e","expiresAt":4102444800000,"scopes":["user:inference","user:profile"],"subscriptionType":"max"}}`), 0o600)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					auth = append(auth, r.Header.Get("Authorization"))
					mu.Unlock()
					s.ServeHTTP(w, r)
				}))
				t.Cleanup(srv.Close)
				e.vars = append(withoutVar(withoutVar(e.vars, "ANTHROPIC_API_KEY"), "ANTHROPIC_BASE_URL"), "ANTHROPIC_BASE_URL="+srv.URL)
			}
			before := homeSnapshot(t, e.home)
			e.vars = workforceEnv(e, dir, root)
			// Confined (the default): the MCP server's marker is
			// outside the sandbox, so the test allows its directory.
			out := e.run(t, dir, append([]string{workforce, "run", "e2e", "--sandbox-allow", filepath.Dir(mcpRan), "--"}, runArgs[h]...)...)

			if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
				t.Errorf("out.txt = %q, %v; want %q (the turn completed and synced back)\n%s", got, err, written, out)
			}
			var strs []string
			for _, body := range s.requests() {
				strs = append(strs, stringsOf(body)...)
			}
			sent := strings.Join(strs, "\n")
			if !strings.Contains(sent, globalMarker) {
				t.Errorf("the user's %s did not reach the model from the seeded state\n%s", globalRules[h], out)
			}
			if h == "claude" && !strings.Contains(sent, "/state/claude/CLAUDE.md") {
				t.Errorf("claude did not read CLAUDE.md from the session's state (CLAUDE_CONFIG_DIR)")
			}
			after := homeSnapshot(t, e.home)
			for _, d := range diffSnapshots(before, after) {
				t.Errorf("the user's home changed: %s\n%s", d, out)
			}
			if h == "claude" {
				if _, err := os.Stat(mcpRan); err != nil {
					t.Errorf("the user-scope MCP server of ~/.claude.json did not start: claude did not read the seeded .claude.json\n%s", out)
				}
				mu.Lock()
				if !slices.Contains(auth, "Bearer sk-ant-oat01-e2e-state") {
					t.Errorf("claude sent Authorization %q, want the seeded OAuth login", auth)
				}
				mu.Unlock()
			}
		})
	}
}

// jwt returns an unsigned JWT of a ChatGPT login for account, with n.
func jwt(account string, n int) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	return enc(map[string]any{"alg": "none", "typ": "JWT"}) + "." + enc(map[string]any{
		"email": "e2e@example.com", "exp": 4102444800, "n": n,
		"https://api.openai.com/auth": map[string]any{"chatgpt_plan_type": "pro", "chatgpt_account_id": account, "chatgpt_user_id": "u"},
	}) + ".sig"
}

// TestStateCodexRefresh: codex, logged in with ChatGPT tokens, gets a 401
// and refreshes its login in the session's CODEX_HOME; after the run the
// user's auth.json holds the refreshed tokens, written back by workforce.
func TestStateCodexRefresh(t *testing.T) {
	root := makeTree(t, stateTree)
	dir := filepath.Join(root, "repo")
	s := newScripted(writeStep("codex"), step{Text: "finished"})
	e := newScriptedEnv(t, s)
	writePersona(t, e.home, "codex", "overwrite")
	var mu sync.Mutex
	var refreshes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" {
			var body map[string]any
			json.NewDecoder(r.Body).Decode(&body)
			mu.Lock()
			refreshes = append(refreshes, fmt.Sprint(body["refresh_token"]))
			mu.Unlock()
			writeJSON(w, map[string]any{"id_token": jwt("acct-e2e", 2), "access_token": jwt("acct-e2e", 2), "refresh_token": "rt-2"})
			return
		}
		if !strings.Contains(r.Header.Get("Authorization"), strings.Split(jwt("acct-e2e", 2), ".")[1]) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"expired","code":"token_expired"}}`)
			return
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	codexHome := filepath.Join(e.home, ".codex")
	os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
requires_openai_auth = true
request_max_retries = 0
stream_max_retries = 0
`, srv.URL)), 0o644)
	auth := map[string]any{"OPENAI_API_KEY": nil, "last_refresh": "2020-01-01T00:00:00Z",
		"tokens": map[string]any{"id_token": jwt("acct-e2e", 1), "access_token": jwt("acct-e2e", 1), "refresh_token": "rt-1", "account_id": "acct-e2e"}}
	b, _ := json.Marshal(auth)
	authFile := filepath.Join(codexHome, "auth.json")
	if err := os.WriteFile(authFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars = append(withoutVar(e.vars, "OPENAI_API_KEY"), "CODEX_REFRESH_TOKEN_URL_OVERRIDE="+srv.URL+"/oauth/token")
	e.vars = workforceEnv(e, dir, root)
	out := e.run(t, dir, append([]string{workforce, "run", "e2e", "--"}, runArgs["codex"]...)...)

	if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
		t.Errorf("out.txt = %q, %v; want %q\n%s", got, err, written, out)
	}
	mu.Lock()
	if !slices.Equal(refreshes, []string{"rt-1"}) {
		t.Errorf("codex refreshed with %q, want once with the seeded rt-1", refreshes)
	}
	mu.Unlock()
	var now struct {
		Tokens struct {
			RefreshToken string `json:"refresh_token"`
			AccountID    string `json:"account_id"`
		} `json:"tokens"`
	}
	data, _ := os.ReadFile(authFile)
	if err := json.Unmarshal(data, &now); err != nil || now.Tokens.RefreshToken != "rt-2" || now.Tokens.AccountID != "acct-e2e" {
		t.Errorf("the user's auth.json after the run = %s (%v); want the refreshed rt-2 of acct-e2e\n%s", data, err, out)
	}
	if fi, err := os.Stat(authFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the user's auth.json: %v, %v; want mode 0600 kept", fi, err)
	}
	if _, err := os.Stat(filepath.Join(codexHome, "sessions")); err == nil {
		t.Errorf("codex wrote its conversation into the user's CODEX_HOME")
	}
	if strings.Contains(out, "not written back") || strings.Contains(out, "changed while the session ran") {
		t.Errorf("workforce did not write the login back:\n%s", out)
	}
}
