package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/persona"
)

// TestSeededSecrets reads the API keys, key helpers and base URLs of the
// user's files the state seeds: claude's settings env and apiKeyHelper
// (a provider key of another provider without a route), codex's
// auth.json, opencode's "api" entries (an oauth entry and a wellknown one
// are no keys; openrouter has no broker route, so the whole entry).
func TestSeededSecrets(t *testing.T) {
	tests := []struct {
		name, harness string
		env           []string          // H is the home
		files         map[string]string // below the home
		want          SeededAuth
	}{
		{name: "claude", harness: "claude", files: map[string]string{
			".claude/settings.json":       `{"env": {"ANTHROPIC_API_KEY": "sk-ant-1", "OPENAI_API_KEY": "sk-oa-1", "ANTHROPIC_BASE_URL": "https://gw.example", "KEEP": "x"}, "apiKeyHelper": "echo sk-helper"}`,
			".claude/settings.local.json": `{"env": {"ANTHROPIC_AUTH_TOKEN": "tok-2"}}`},
			want: SeededAuth{
				Secrets: []SeededSecret{
					{Seed: "claude/settings.json", Path: JSONPath{"env", "ANTHROPIC_API_KEY"}, Provider: "anthropic", Key: "sk-ant-1", Origin: "H/.claude/settings.json env.ANTHROPIC_API_KEY"},
					{Seed: "claude/settings.json", Path: JSONPath{"env", "OPENAI_API_KEY"}, Key: "sk-oa-1", Origin: "H/.claude/settings.json env.OPENAI_API_KEY"},
					{Seed: "claude/settings.json", Path: JSONPath{"apiKeyHelper"}, Provider: "anthropic", Helper: "echo sk-helper", Origin: "H/.claude/settings.json apiKeyHelper"},
					{Seed: "claude/settings.local.json", Path: JSONPath{"env", "ANTHROPIC_AUTH_TOKEN"}, Provider: "anthropic", Key: "tok-2", Origin: "H/.claude/settings.local.json env.ANTHROPIC_AUTH_TOKEN"},
				},
				BaseURLs: []SeededBaseURL{{Seed: "claude/settings.json", Path: JSONPath{"env", "ANTHROPIC_BASE_URL"}, Provider: "anthropic", URL: "https://gw.example", Origin: "H/.claude/settings.json env.ANTHROPIC_BASE_URL"}},
			}},
		{name: "claude's /login key and approved keys", harness: "claude", files: map[string]string{
			".claude.json": `{"primaryApiKey": "sk-ant-login-1", "customApiKeyResponses": {"approved": ["abc", 7], "rejected": ["x"]}, "numStartups": 3}`},
			want: SeededAuth{
				Secrets:  []SeededSecret{{Seed: "claude/.claude.json", Path: JSONPath{"primaryApiKey"}, Provider: "anthropic", Key: "sk-ant-login-1", Origin: "H/.claude.json primaryApiKey"}},
				Approved: []SeededList{{Seed: "claude/.claude.json", Path: JSONPath{"customApiKeyResponses", "approved"}, Values: []string{"abc"}}},
			}},
		{name: "claude damaged", harness: "claude", files: map[string]string{".claude/settings.json": `{"env": `}},
		{name: "codex api key", harness: "codex", files: map[string]string{".codex/auth.json": `{"auth_mode": "apikey", "OPENAI_API_KEY": "sk-oa-2"}`},
			want: SeededAuth{Secrets: []SeededSecret{{Seed: "codex/auth.json", Path: JSONPath{"OPENAI_API_KEY"}, Provider: "openai", Key: "sk-oa-2", Origin: "H/.codex/auth.json OPENAI_API_KEY"}}}},
		{name: "codex chatgpt login", harness: "codex", files: map[string]string{".codex/auth.json": `{"OPENAI_API_KEY": null, "tokens": {"access_token": "a"}}`}},
		{name: "opencode", harness: "opencode", files: map[string]string{".local/share/opencode/auth.json": `{
			"anthropic": {"type": "api", "key": "sk-ant-3"},
			"openrouter": {"type": "api", "key": "sk-or-3"},
			"openai": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1},
			"https://corp.example": {"type": "wellknown", "key": "CORP_TOKEN", "token": "t"}}`},
			want: SeededAuth{Secrets: []SeededSecret{
				{Seed: "opencode/data/opencode/auth.json", Path: JSONPath{"anthropic", "key"}, Provider: "anthropic", Key: "sk-ant-3", Origin: "H/.local/share/opencode/auth.json anthropic"},
				{Seed: "opencode/data/opencode/auth.json", Path: JSONPath{"openrouter"}, Key: "sk-or-3", Origin: "H/.local/share/opencode/auth.json openrouter"},
			}}},
		{name: "opencode's configuration", harness: "opencode", env: []string{"OPENCODE_CONFIG=H/oc.json", `OPENCODE_CONFIG_CONTENT={"provider": {"google": {"options": {"apiKey": "g-content"}}}}`}, files: map[string]string{
			".config/opencode/opencode.jsonc": "{// mine\n\"provider\": {\"anthropic\": {\"options\": {\"apiKey\": \"sk-ant-c\",}}, \"groq\": {\"options\": {\"apiKey\": \"gq\"}}}}",
			"oc.json":                         `{"provider": {"openai": {"options": {"apiKey": "{env:OPENAI_API_KEY}"}}, "anthropic": {"options": {"apiKey": "sk-ant-oc"}}, "local": {"options": {"apiKey": "ollama", "baseURL": "http://127.0.0.1:11434/v1"}}}}`},
			want: SeededAuth{Secrets: []SeededSecret{
				{Seed: "opencode/config/opencode/opencode.jsonc", Path: JSONPath{"provider", "anthropic", "options", "apiKey"}, Provider: "anthropic", Key: "sk-ant-c", Origin: "H/.config/opencode/opencode.jsonc provider.anthropic.options.apiKey"},
				{Seed: "opencode/config/opencode/opencode.jsonc", Path: JSONPath{"provider", "groq", "options", "apiKey"}, Key: "gq", Origin: "H/.config/opencode/opencode.jsonc provider.groq.options.apiKey"},
				{Path: JSONPath{"provider", "anthropic", "options", "apiKey"}, Provider: "anthropic", Key: "sk-ant-oc", Origin: "H/oc.json provider.anthropic.options.apiKey"},
				{Path: JSONPath{"provider", "google", "options", "apiKey"}, Provider: "google", Key: "g-content", Origin: "$OPENCODE_CONFIG_CONTENT provider.google.options.apiKey"},
			}}},
		{name: "gemini has no helper", harness: "gemini", files: map[string]string{".gemini/settings.json": `{"apiKeyHelper": "x"}`}},
		{name: "gemini's .env files", harness: "gemini", files: map[string]string{
			".gemini/.env": "# mine\nexport GEMINI_API_KEY=\"gk-1\"\nGOOGLE_GEMINI_BASE_URL=https://gw.example # gateway\n",
			".env":         "OPENAI_API_KEY='sk-oa'\nPATHLIKE=x\nGOOGLE_API_KEY=\n"},
			want: SeededAuth{
				Secrets: []SeededSecret{
					{Seed: "gemini/.env", Path: JSONPath{"OPENAI_API_KEY"}, Key: "sk-oa", Origin: "H/.env OPENAI_API_KEY"},
					{Seed: "gemini/.gemini/.env", Path: JSONPath{"GEMINI_API_KEY"}, Provider: "google", Key: "gk-1", Origin: "H/.gemini/.env GEMINI_API_KEY"},
				},
				BaseURLs: []SeededBaseURL{{Seed: "gemini/.gemini/.env", Path: JSONPath{"GOOGLE_GEMINI_BASE_URL"}, Provider: "google", URL: "https://gw.example", Origin: "H/.gemini/.env GOOGLE_GEMINI_BASE_URL"}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for rel, data := range tt.files {
				p := filepath.Join(home, rel)
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home}
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "H/", home+"/"))
			}
			got, err := SeededSecrets(tt.harness, env)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got.Secrets {
				got.Secrets[i].Origin = strings.ReplaceAll(got.Secrets[i].Origin, home, "H")
			}
			for i := range got.BaseURLs {
				got.BaseURLs[i].Origin = strings.ReplaceAll(got.BaseURLs[i].Origin, home, "H")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestSeedRewrite: the session's copy gets the placeholders and loses
// what is deleted; Restore gives the user's values back where the
// placeholders still are (so that an unchanged key is no new login and a
// refreshed token goes back), keeps what the harness changed, and
// refuses a placeholder copied elsewhere.
func TestSeedRewrite(t *testing.T) {
	rw := SeedRewrite{
		Set:    []SeedValue{{Path: JSONPath{"OPENAI_API_KEY"}, Value: "workforce-placeholder-1"}, {Path: JSONPath{"env", "ANTHROPIC_API_KEY"}, Value: "workforce-placeholder-2"}},
		Delete: []JSONPath{{"apiKeyHelper"}, {"or"}},
	}
	user := `{"OPENAI_API_KEY": "sk-real", "apiKeyHelper": "echo k", "or": {"type": "api", "key": "sk-or"}, "tokens": {"access_token": "a1"}, "n": 1.50}`
	copied, err := rw.Apply([]byte(user))
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"sk-real", "echo k", "sk-or"} {
		if strings.Contains(string(copied), leak) {
			t.Errorf("the copy %s holds %q", copied, leak)
		}
	}
	var c map[string]any
	json.Unmarshal(copied, &c)
	if c["OPENAI_API_KEY"] != "workforce-placeholder-1" || c["env"].(map[string]any)["ANTHROPIC_API_KEY"] != "workforce-placeholder-2" || !strings.Contains(string(copied), "1.50") {
		t.Errorf("the copy %s lacks the placeholders or changed a number", copied)
	}
	tests := []struct {
		name, now, want, err string
	}{
		{name: "unchanged", now: string(copied), want: user},
		{name: "a token refreshed", now: strings.Replace(string(copied), `"a1"`, `"a2"`, 1),
			want: strings.Replace(user, `"a1"`, `"a2"`, 1)},
		{name: "the key changed stays changed", now: strings.Replace(string(copied), "workforce-placeholder-1", "sk-agent", 1),
			want: strings.Replace(user, "sk-real", "sk-agent", 1)},
		{name: "a placeholder copied elsewhere", now: strings.Replace(string(copied), `"a1"`, `"workforce-placeholder-1"`, 1), err: "elsewhere"},
		{name: "not an object", now: `[]`, err: "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rw.Restore([]byte(user), []byte(tt.now))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Restore = %s, %v; want an error with %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal([]byte(tt.want), &w)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Restore = %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := (SeedRewrite{Set: []SeedValue{{Path: JSONPath{"env", "K"}, Value: "p"}}}).Apply([]byte(`{"env": 1}`)); err == nil || !strings.Contains(err.Error(), "env is not an object") {
		t.Errorf("setting below a number: %v", err)
	}
}

// TestClaudeKeySuffix: claude remembers an approved key by its last 20
// characters, trimmed.
func TestClaudeKeySuffix(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"sk-ant-api03-0123456789abcdefghijXYZ \n", "3456789abcdefghijXYZ"},
		{"short", "short"},
		{"", ""},
	} {
		if got := ClaudeKeySuffix(tt.key); got != tt.want {
			t.Errorf("ClaudeKeySuffix(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

// TestSeedRewriteDotenv: a .env file's copy gets the placeholder on the
// key's line (or a new line), loses a deleted variable's line, and keeps
// every other line as it was.
func TestSeedRewriteDotenv(t *testing.T) {
	rw := NewSeedRewrite("gemini/.gemini/.env")
	rw.Set = []SeedValue{{Path: JSONPath{"GEMINI_API_KEY"}, Value: "workforce-placeholder-g"}, {Path: JSONPath{"GOOGLE_GEMINI_BASE_URL"}, Value: "http://127.0.0.1:3128/_broker/gemini"}}
	rw.Delete = []JSONPath{{"OPENAI_API_KEY"}}
	got, err := rw.Apply([]byte("# keys\nexport GEMINI_API_KEY=\"gk-real\"\nOPENAI_API_KEY=sk-real\nKEEP=1 # x\n"))
	want := "# keys\nGEMINI_API_KEY=workforce-placeholder-g\nKEEP=1 # x\nGOOGLE_GEMINI_BASE_URL=http://127.0.0.1:3128/_broker/gemini\n"
	if err != nil || string(got) != want {
		t.Errorf("Apply = %q, %v\nwant %q", got, err, want)
	}
	if _, err := rw.Restore(nil, got); err == nil {
		t.Error("Restore of a dotenv file succeeded")
	}
}

// FuzzDotenv: any .env file is rewritten without a panic; afterwards the
// variable set parses to the placeholder alone, and the one deleted is
// gone.
func FuzzDotenv(f *testing.F) {
	f.Add("GEMINI_API_KEY=x\nOTHER='y'\n", "GEMINI_API_KEY", "OTHER")
	f.Add("export A=\"1\" # c\r\n#B=2\n", "B", "A")
	f.Add("", "K", "D")
	f.Fuzz(func(t *testing.T, data, set, del string) {
		if set == del || !dotenvName(set) || !dotenvName(del) {
			return // the names are the tables' variables
		}
		rw := SeedRewrite{Dotenv: true, Set: []SeedValue{{Path: JSONPath{set}, Value: "workforce-placeholder-f"}}, Delete: []JSONPath{{del}}}
		out, err := rw.Apply([]byte(data))
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for _, kv := range dotenvVars(out) {
			switch kv[0] {
			case set:
				vals = append(vals, kv[1])
			case del:
				t.Fatalf("Apply(%q) kept %s: %q", data, del, out)
			}
		}
		if len(vals) == 0 || slices.ContainsFunc(vals, func(v string) bool { return v != "workforce-placeholder-f" }) {
			t.Fatalf("Apply(%q) = %q: %s is %q", data, out, set, vals)
		}
	})
}

// FuzzSeedRewrite: any file is rewritten without a panic; a JSON object
// rewritten holds the placeholder and not the value it replaced, and is
// restored to the user's.
func FuzzSeedRewrite(f *testing.F) {
	f.Add(`{"OPENAI_API_KEY": "sk-real", "tokens": {"a": 1}}`, "OPENAI_API_KEY")
	f.Add(`{"env": {"K": "v"}, "apiKeyHelper": "x"}`, "env")
	f.Add(`[1]`, "a")
	f.Add(`{"a": "workforce-placeholder-f"}`, "b")
	f.Add("{// c\n\"a\": 1,}", "a")
	f.Fuzz(func(t *testing.T, data, key string) {
		const ph = "workforce-placeholder-f"
		if !utf8.ValidString(key) {
			return // a path comes from a decoded file: UTF-8
		}
		rw := SeedRewrite{Set: []SeedValue{{Path: JSONPath{key}, Value: ph}}, Delete: []JSONPath{{"apiKeyHelper"}}}
		out, err := rw.Apply([]byte(data))
		if err != nil {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(out, &obj); err != nil || obj[key] != ph {
			t.Fatalf("Apply(%q) = %s, %v: no placeholder at %q", data, out, err, key)
		}
		if _, ok := obj["apiKeyHelper"]; ok {
			t.Fatalf("Apply(%q) kept apiKeyHelper", data)
		}
		back, err := rw.Restore([]byte(data), out)
		if strings.Contains(data, ph) {
			return // the user's own file held it: refused or kept, either is fine
		}
		if err != nil {
			t.Fatalf("Restore of an untouched copy: %v", err)
		}
		u, _ := decodeLoose([]byte(data)) // JSONC too
		b, _ := decodeLoose(back)
		if !reflect.DeepEqual(u, b) {
			t.Fatalf("Restore(%q) = %s, not the user's", data, back)
		}
	})
}

// TestBrokerURLs: a run brokering codex's key points codex at the broker
// by its argument, and opencode's provider by the configuration workforce
// writes (the user's other options of it kept, outranking the project's).
func TestBrokerURLs(t *testing.T) {
	urls := map[string]string{"openai": "http://127.0.0.1:3128/_broker/openai/v1", "anthropic": "http://127.0.0.1:3128/_broker/anthropic/v1"}
	r := &persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5"}
	for _, oneShot := range []bool{false, true} {
		o := Options{Confined: true, ConfigDir: t.TempDir(), BrokerURLs: urls}
		var inv *Invocation
		var err error
		if oneShot {
			inv, err = PlanOneShot(r, o, OneShot{Task: "t"})
		} else {
			inv, err = Plan(r, o)
		}
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(inv.Args, `openai_base_url="http://127.0.0.1:3128/_broker/openai/v1"`)
		if i < 1 || inv.Args[i-1] != "-c" {
			t.Errorf("codex (one-shot %v) args %q: want -c openai_base_url at the broker", oneShot, inv.Args)
		}
	}
	if inv, err := Plan(r, Options{Confined: true, ConfigDir: t.TempDir()}); err != nil || strings.Contains(strings.Join(inv.Args, " "), "openai_base_url") {
		t.Errorf("codex without a broker: %q, %v", inv.Args, err)
	}
	// Its live web search (danger-full-access) would make the broker
	// refuse every request: off unless the network is open; the last -c
	// wins, over a persona's live.
	live := true
	for _, tt := range []struct {
		mode     string
		settings persona.HarnessSettings
		last     string // the last web_search argument, "" none
		note     bool
	}{
		{mode: "allowlist", last: `web_search="disabled"`},
		{mode: "none", last: `web_search="disabled"`},
		{mode: "open", last: ""},
		{mode: "allowlist", settings: persona.HarnessSettings{WebSearch: &live}, last: `web_search="disabled"`, note: true},
		{mode: "open", settings: persona.HarnessSettings{WebSearch: &live}, last: `web_search="live"`},
	} {
		rr := &persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5", HarnessSettings: tt.settings}
		inv, err := PlanOneShot(rr, Options{Confined: true, ConfigDir: t.TempDir(), BrokerURLs: urls, NetworkMode: tt.mode}, OneShot{Task: "t"})
		if err != nil {
			t.Fatal(err)
		}
		last := ""
		for _, a := range inv.Args {
			if strings.HasPrefix(a, "web_search=") {
				last = a
			}
		}
		notes := strings.Join(inv.Notes, "\n")
		if last != tt.last || strings.Contains(notes, "webSearch true") != tt.note {
			t.Errorf("mode %s, %+v: last %q, notes %q; want %q, a note %v", tt.mode, tt.settings, last, notes, tt.last, tt.note)
		}
	}

	// A model provider of the user's own: its base_url.
	inv, err := Plan(r, Options{Confined: true, ConfigDir: t.TempDir(), NetworkMode: "allowlist", BrokerURLs: map[string]string{"model_providers.my gw": "http://127.0.0.1:3128/_broker/openai/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(inv.Args, " "); !strings.Contains(args, `-c model_providers."my gw".base_url="http://127.0.0.1:3128/_broker/openai/v1"`) || !strings.Contains(args, `web_search="disabled"`) {
		t.Errorf("codex with its own provider brokered: args %q", inv.Args)
	}

	r = &persona.Resolved{ID: "rev", Harness: "opencode", Model: "anthropic/claude"}
	inv, err = Plan(r, Options{Confined: true, ConfigDir: t.TempDir(), BrokerURLs: urls,
		Env: []string{`OPENCODE_CONFIG_CONTENT={"provider": {"anthropic": {"options": {"timeout": 5, "baseURL": "https://gw.example/v1"}}}}`}})
	if err != nil {
		t.Fatal(err)
	}
	var content struct {
		Provider map[string]struct {
			Options map[string]any `json:"options"`
		} `json:"provider"`
	}
	for _, kv := range inv.SetEnv {
		if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG_CONTENT="); ok {
			if err := json.Unmarshal([]byte(v), &content); err != nil {
				t.Fatal(err)
			}
		}
	}
	for p, u := range urls {
		if got := content.Provider[p].Options["baseURL"]; got != u {
			t.Errorf("provider.%s.options.baseURL = %v, want %s", p, got, u)
		}
	}

	// Keys the user's configuration writes itself: the placeholders, in
	// the content and in the session's OPENCODE_CONFIG; "" removes one.
	userCfg := filepath.Join(t.TempDir(), "oc.json")
	os.WriteFile(userCfg, []byte(`{"provider": {"anthropic": {"options": {"apiKey": "sk-ant-real"}}, "groq": {"options": {"apiKey": "gq-real"}}}}`), 0o600)
	dir := t.TempDir()
	inv, err = Plan(r, Options{Confined: true, ConfigDir: dir, BrokerURLs: urls, OpencodeKeys: map[string]string{"anthropic": "workforce-placeholder-a", "groq": ""},
		Env: []string{"OPENCODE_CONFIG=" + userCfg, `OPENCODE_CONFIG_CONTENT={"provider": {"anthropic": {"options": {"apiKey": "sk-ant-content"}}}}`}})
	if err != nil {
		t.Fatal(err)
	}
	written := inv.Files[filepath.Join(dir, "opencode.json")]
	var env string
	for _, kv := range inv.SetEnv {
		if v, ok := strings.CutPrefix(kv, "OPENCODE_CONFIG_CONTENT="); ok {
			env = v
		}
	}
	for what, text := range map[string]string{"the session's OPENCODE_CONFIG": written, "OPENCODE_CONFIG_CONTENT": env} {
		if strings.Contains(text, "-real") || strings.Contains(text, "sk-ant-content") || !strings.Contains(text, "workforce-placeholder-a") {
			t.Errorf("%s holds a key or lacks the placeholder: %s", what, text)
		}
	}
	if content.Provider["anthropic"].Options["timeout"] != float64(5) {
		t.Errorf("the user's provider options were lost: %+v", content.Provider["anthropic"].Options)
	}
}
