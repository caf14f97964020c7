package harness

import (
	"path/filepath"
	"reflect"
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
			from:  map[string]string{"opencode/config/opencode": "/h/.config/opencode", "opencode/config/git/config": "/h/.config/git/config", "opencode/data/opencode/auth.json": "/d/opencode/auth.json"},
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
			for to := range got {
				if strings.Contains(to, "/gh") || strings.HasSuffix(to, "credentials") {
					t.Errorf("seed %s from %q: a login the harness does not need", to, got[to])
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

// TestCheckRefresh: a credential goes back only as a refresh of the
// seeded login, per harness and file.
func TestCheckRefresh(t *testing.T) {
	const (
		claude    = `{"claudeAiOauth":{"accessToken":"a1","refreshToken":"r1","expiresAt":1000,"scopes":["user:inference"],"subscriptionType":"max"},"mcpOAuth":{"s|1":{"serverName":"s","serverUrl":"https://mcp","accessToken":"m1","expiresAt":1}}}`
		codex     = `{"OPENAI_API_KEY":null,"tokens":{"id_token":"i1","access_token":"a1","refresh_token":"r1","account_id":"acct"},"last_refresh":"2020-01-01T00:00:00Z"}`
		codexKey  = `{"OPENAI_API_KEY":"sk-user","tokens":null,"last_refresh":null}`
		codexMCP  = `{"s|1":{"server_name":"s","server_url":"https://mcp","client_id":"c","access_token":"a1","expires_at":1,"refresh_token":"r1","scopes":["x"]}}`
		opencode  = `{"anthropic":{"type":"oauth","refresh":"r1","access":"a1","expires":1000},"openai":{"type":"api","key":"sk-user"}}`
		opencodeM = `{"srv":{"tokens":{"accessToken":"a1","refreshToken":"r1","expiresAt":1},"clientInfo":{"clientId":"c"},"serverUrl":"https://mcp"}}`
	)
	tests := []struct {
		name, to    string
		seeded, now string
		want        string // "" passes; else in the error
	}{
		{"claude refresh", "claude/.credentials.json", claude,
			`{"claudeAiOauth":{"accessToken":"a2","refreshToken":"r2","expiresAt":2000,"scopes":["user:inference"],"subscriptionType":"max"},"mcpOAuth":{"s|1":{"serverName":"s","serverUrl":"https://mcp","accessToken":"m2","expiresAt":2}}}`, ""},
		{"claude entry added", "claude/.credentials.json", claude, claude[:len(claude)-1] + `,"other":{}}`, `an entry (other) was added`},
		{"claude entry removed", "claude/.credentials.json", `{"claudeAiOauth":{"accessToken":"a1"},"mcpOAuth":{}}`, `{"claudeAiOauth":{"accessToken":"a2"}}`, `an entry (mcpOAuth) was removed`},
		{"claude nested field changed", "claude/.credentials.json", claude, strings.Replace(claude, `"max"`, `"pro"`, 1), `the field claudeAiOauth.subscriptionType changed`},
		{"claude field added", "claude/.credentials.json", claude, strings.Replace(claude, `"max"`, `"max","x":1`, 1), `the field claudeAiOauth.x was added`},
		{"claude MCP server's address changed", "claude/.credentials.json", claude, strings.Replace(claude, `https://mcp`, `https://evil`, 1), `serverUrl changed`},
		{"claude token made an object", "claude/.credentials.json", claude, strings.Replace(claude, `"a1"`, `{"x":1}`, 1), `accessToken changed`},
		{"codex refresh", "codex/auth.json", codex,
			`{"OPENAI_API_KEY":null,"tokens":{"id_token":"i2","access_token":"a2","refresh_token":"r2","account_id":"acct"},"last_refresh":"2030-01-01T00:00:00Z"}`, ""},
		{"codex account changed", "codex/auth.json", codex, strings.Replace(codex, `"acct"`, `"evil"`, 1), `it names another account (the field tokens.account_id changed)`},
		{"codex api key set", "codex/auth.json", codex, strings.Replace(codex, `"OPENAI_API_KEY":null`, `"OPENAI_API_KEY":"sk-attacker"`, 1), `another account (an entry (OPENAI_API_KEY) changed)`},
		{"codex api key changed, no account id", "codex/auth.json", codexKey, strings.Replace(codexKey, `sk-user`, `sk-attacker`, 1), `another account`},
		{"codex tokens added to an api key login", "codex/auth.json", codexKey,
			`{"OPENAI_API_KEY":"sk-user","tokens":{"account_id":"evil","access_token":"a"},"last_refresh":null}`, `an entry (tokens) changed`},
		{"codex account id added", "codex/auth.json", `{"tokens":{"access_token":"a1"}}`, `{"tokens":{"access_token":"a1","account_id":"evil"}}`, `the field tokens.account_id was added`},
		{"codex auth mode added", "codex/auth.json", codex, `{"auth_mode":"apikey",` + codex[1:], `an entry (auth_mode) was added`},
		{"codex MCP refresh", "codex/.credentials.json", codexMCP, strings.NewReplacer(`"a1"`, `"a2"`, `"r1"`, `"r2"`, `"expires_at":1`, `"expires_at":2`).Replace(codexMCP), ""},
		{"codex MCP client changed", "codex/.credentials.json", codexMCP, strings.Replace(codexMCP, `"c"`, `"evil"`, 1), `client_id changed`},
		{"opencode refresh", "opencode/data/opencode/auth.json", opencode,
			`{"openai":{"key":"sk-user","type":"api"},"anthropic":{"type":"oauth","refresh":"r2","access":"a2","expires":2000}}`, ""},
		{"opencode wellknown added", "opencode/data/opencode/auth.json", opencode,
			opencode[:len(opencode)-1] + `,"https://evil":{"type":"wellknown","key":"TOKEN","token":"t"}}`, `an entry (https://evil) was added`},
		{"opencode wellknown key changed", "opencode/data/opencode/auth.json", `{"https://corp":{"type":"wellknown","key":"TOKEN","token":"t"}}`,
			`{"https://corp":{"type":"wellknown","key":"LD_PRELOAD","token":"t"}}`, `another account`},
		{"opencode wellknown token changed", "opencode/data/opencode/auth.json", `{"https://corp":{"type":"wellknown","key":"TOKEN","token":"t"}}`,
			`{"https://corp":{"type":"wellknown","key":"TOKEN","token":"t2"}}`, `token changed`},
		{"opencode provider removed", "opencode/data/opencode/auth.json", opencode, `{"anthropic":{"type":"oauth","refresh":"r1","access":"a1","expires":1000}}`, `an entry (openai) was removed`},
		{"opencode type changed", "opencode/data/opencode/auth.json", opencode, strings.Replace(opencode, `"oauth"`, `"api"`, 1), `the type of an entry (anthropic) changed`},
		{"opencode api key changed", "opencode/data/opencode/auth.json", opencode, strings.Replace(opencode, `sk-user`, `sk-attacker`, 1), `another account (the field openai.key changed)`},
		{"opencode oauth account changed", "opencode/data/opencode/auth.json", `{"o":{"type":"oauth","refresh":"r","access":"a","expires":1,"accountId":"u"}}`,
			`{"o":{"type":"oauth","refresh":"r","access":"a","expires":1,"accountId":"evil"}}`, `another account`},
		{"opencode MCP refresh", "opencode/data/opencode/mcp-auth.json", opencodeM, strings.NewReplacer(`"a1"`, `"a2"`, `"r1"`, `"r2"`, `:1}`, `:2}`).Replace(opencodeM), ""},
		{"opencode MCP server's address changed", "opencode/data/opencode/mcp-auth.json", opencodeM, strings.Replace(opencodeM, `https://mcp`, `https://evil`, 1), `srv.serverUrl changed`},
		{"not an object", "opencode/data/opencode/auth.json", opencode, `[1]`, `it is not a JSON object`},
		{"null", "opencode/data/opencode/auth.json", opencode, `null`, `it is not a JSON object`},
		{"two objects", "opencode/data/opencode/auth.json", opencode, opencode + opencode, `it is not a JSON object`},
		{"not UTF-8", "opencode/data/opencode/auth.json", `{"a\u00ff":{}}`, "{\"a\xff\":{}}", `it is not a JSON object`},
		{"the user's not an object", "opencode/data/opencode/auth.json", `x`, opencode, `yours was not a JSON object`},
		{"a number written otherwise", "claude/.credentials.json", `{"claudeAiOauth":{"n":1}}`, `{"claudeAiOauth":{"n":1.0}}`, `claudeAiOauth.n changed`},
		{"a name that needs quoting", "opencode/data/opencode/auth.json", `{}`, "{\"a\\nb\":{}}", `an entry ("a\nb") was added`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := seedFor(t, tt.to)
			err := s.CheckRefresh([]byte(tt.seeded), []byte(tt.now))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("CheckRefresh refused a refresh: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("CheckRefresh = %v, want %q", err, tt.want)
			}
		})
	}
}

// seedFor returns the credential seed of the layout whose To is to.
func seedFor(t testing.TB, to string) StateSeed {
	h, _, _ := strings.Cut(to, "/")
	l, err := State(h, []string{"HOME=/h"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Seeds {
		if s.Credential && filepath.ToSlash(s.To) == to {
			return s
		}
	}
	t.Fatalf("no credential %s", to)
	return StateSeed{}
}

// FuzzCheckRefresh: whatever the two files hold, the check never panics,
// and what it passes is the seeded object with only refresh fields
// changed: blanking those fields in both gives equal objects.
func FuzzCheckRefresh(f *testing.F) {
	f.Add(0, []byte(`{"p":{"type":"oauth","refresh":"r1","access":"a1","expires":1}}`), []byte(`{"p":{"type":"oauth","refresh":"r2","access":"a2","expires":2}}`))
	f.Add(0, []byte(`{"p":{"type":"oauth"}}`), []byte(`{"p":{"type":"oauth"},"https://evil":{"type":"wellknown","key":"K","token":"t"}}`))
	f.Add(1, []byte(`{"tokens":{"account_id":"a","refresh_token":"r"}}`), []byte(`{"tokens":{"account_id":"b","refresh_token":"r"}}`))
	f.Add(1, []byte(`{"OPENAI_API_KEY":"k"}`), []byte(`{"OPENAI_API_KEY":"k2"}`))
	f.Add(2, []byte(`{"claudeAiOauth":{"accessToken":"a"}}`), []byte(`{"claudeAiOauth":{"accessToken":null}}`))
	f.Add(3, []byte(`{"s":{"tokens":{"accessToken":"a"}}}`), []byte(`{"s":{"tokens":{"accessToken":[1]}}}`))
	f.Add(0, []byte(`{}`), []byte(`null`))
	f.Add(0, []byte(``), []byte(`{"a":`))
	tos := []string{"opencode/data/opencode/auth.json", "codex/auth.json", "claude/.credentials.json", "opencode/data/opencode/mcp-auth.json", "codex/.credentials.json", "codex/gateway_oauth.json"}
	seeds := make([]StateSeed, len(tos))
	for i, to := range tos {
		seeds[i] = seedFor(f, to)
	}
	f.Fuzz(func(t *testing.T, which int, seeded, now []byte) {
		s := seeds[uint(which)%uint(len(seeds))]
		if s.CheckRefresh(seeded, now) != nil {
			return
		}
		was, err1 := decodeObject(seeded)
		is, err2 := decodeObject(now)
		if err1 != nil || err2 != nil {
			t.Fatalf("CheckRefresh(%q, %q) passed what is not a JSON object", seeded, now)
		}
		blank(s.Refresh, nil, was)
		blank(s.Refresh, nil, is)
		if !reflect.DeepEqual(was, is) {
			t.Fatalf("CheckRefresh(%q, %q) passed a change outside the refresh fields %q", seeded, now, s.Refresh)
		}
	})
}

// blank replaces the scalar values at the refresh fields of v with nil.
func blank(refresh []JSONPath, path JSONPath, v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, e := range obj {
		p := append(path[:len(path):len(path)], k)
		if matchAny(refresh, p) && scalar(e) {
			obj[k] = nil
			continue
		}
		blank(refresh, p, e)
	}
}
