package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// brokered is a broker of a plan as a test compares it: provider, key,
// upstream.
type brokered struct{ provider, key, upstream string }

// TestPlanBrokers: per harness, the keys of the environment and of the
// seeded files are brokered (placeholders in the environment and the
// rewrites, the real keys in the brokers), the base URL points at the
// broker (a variable, codex's and opencode's BrokerURLs), the user's own
// https base URL is the upstream, a plain-http one brokers nothing, and
// every other provider key is left out; the plan names each with its
// origin.
func TestPlanBrokers(t *testing.T) {
	const proxy = "http://127.0.0.1:3128/_broker/"
	tests := []struct {
		name, harness string
		env           []string
		files         map[string]string // below the home
		brokers       []brokered
		urls          map[string]string // BrokerURLs
		setEnv        map[string]string // in the harness's env ("" absent; "PH" a placeholder)
		helpers       int
		shown         []string          // in the plan's brokered
		dropped       []string          // in the plan's dropped
		rewrites      map[string]string // seed → its paths set and deleted, "set a.b del c"
	}{
		{name: "claude env", harness: "claude", env: []string{"ANTHROPIC_API_KEY=sk-ant", "OPENAI_API_KEY=sk-oa", "GROQ_API_KEY=gq", "KEEP=1"},
			brokers: []brokered{{"anthropic", "sk-ant", ""}},
			setEnv:  map[string]string{"ANTHROPIC_API_KEY": "PH", "ANTHROPIC_BASE_URL": proxy + "anthropic", "OPENAI_API_KEY": "", "GROQ_API_KEY": "", "KEEP": "1"},
			shown:   []string{"anthropic: $ANTHROPIC_API_KEY"}, dropped: []string{"OPENAI_API_KEY", "GROQ_API_KEY"}},
		{name: "claude env, the user's https base URL upstream", harness: "claude", env: []string{"ANTHROPIC_API_KEY=sk-ant", "ANTHROPIC_BASE_URL=https://gw.example/anthropic/"},
			brokers: []brokered{{"anthropic", "sk-ant", "https://gw.example/anthropic"}},
			setEnv:  map[string]string{"ANTHROPIC_BASE_URL": proxy + "anthropic"}},
		{name: "claude env, a local model server: nothing brokered", harness: "claude", env: []string{"ANTHROPIC_API_KEY=sk-ant", "ANTHROPIC_BASE_URL=http://localhost:11434"},
			setEnv: map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "ANTHROPIC_BASE_URL": "http://localhost:11434"}},
		{name: "claude settings", harness: "claude",
			files:    map[string]string{".claude/settings.json": `{"env": {"ANTHROPIC_API_KEY": "sk-file", "XAI_API_KEY": "xai", "ANTHROPIC_BASE_URL": "https://gw.example"}, "apiKeyHelper": "echo sk-helper"}`},
			brokers:  []brokered{{"anthropic", "sk-file", "https://gw.example"}},
			helpers:  1,
			shown:    []string{"anthropic: H/.claude/settings.json env.ANTHROPIC_API_KEY", "anthropic: H/.claude/settings.json apiKeyHelper (run once when the session starts, outside the sandbox)"},
			dropped:  []string{"H/.claude/settings.json env.XAI_API_KEY (no broker for it)"},
			setEnv:   map[string]string{"ANTHROPIC_BASE_URL": proxy + "anthropic"},
			rewrites: map[string]string{"claude/settings.json": "set env.ANTHROPIC_API_KEY env.ANTHROPIC_BASE_URL del apiKeyHelper env.XAI_API_KEY"}},
		{name: "codex env and auth.json", harness: "codex", env: []string{"CODEX_API_KEY=sk-env", "OPENAI_API_KEY=sk-env"},
			files:    map[string]string{".codex/auth.json": `{"auth_mode": "apikey", "OPENAI_API_KEY": "sk-file"}`},
			brokers:  []brokered{{"openai", "sk-env", ""}, {"openai", "sk-env", ""}, {"openai", "sk-file", ""}},
			urls:     map[string]string{"openai": proxy + "openai/v1"},
			setEnv:   map[string]string{"CODEX_API_KEY": "PH", "OPENAI_API_KEY": "PH", "OPENAI_BASE_URL": ""},
			shown:    []string{"openai: $CODEX_API_KEY", "openai: $OPENAI_API_KEY", "openai: H/.codex/auth.json OPENAI_API_KEY"},
			rewrites: map[string]string{"codex/auth.json": "set OPENAI_API_KEY"}},
		{name: "codex, config.toml's base URL upstream", harness: "codex", env: []string{"CODEX_API_KEY=sk-env"},
			files:   map[string]string{".codex/config.toml": `openai_base_url = "https://gw.example/openai/v1"`},
			brokers: []brokered{{"openai", "sk-env", "https://gw.example/openai"}}, urls: map[string]string{"openai": proxy + "openai/v1"}},
		{name: "codex, a model provider of the user's own with OPENAI_API_KEY", harness: "codex", env: []string{"OPENAI_API_KEY=sk-env"},
			files:   map[string]string{".codex/config.toml": "model_provider = \"gw\"\nopenai_base_url = \"https://other.example/v1\"\n[model_providers.gw]\nbase_url = \"https://gw.example/openai/v1\"\nenv_key = \"OPENAI_API_KEY\"\n"},
			brokers: []brokered{{"openai", "sk-env", "https://gw.example/openai"}},
			urls:    map[string]string{"openai": proxy + "openai/v1", "model_providers.gw": proxy + "openai/v1"}},
		{name: "codex, a model provider with a key of its own: not the broker's", harness: "codex", env: []string{"OPENAI_API_KEY=sk-env", "GW_KEY=gw"},
			files:   map[string]string{".codex/config.toml": "model_provider = \"gw\"\n[model_providers.gw]\nbase_url = \"https://gw.example/v1\"\nenv_key = \"GW_KEY\"\n"},
			brokers: []brokered{{"openai", "sk-env", ""}},
			urls:    map[string]string{"openai": proxy + "openai/v1"},
			setEnv:  map[string]string{"GW_KEY": "gw"}},
		{name: "codex, a base URL without /v1: left out", harness: "codex", env: []string{"CODEX_API_KEY=sk-env"},
			files:   map[string]string{".codex/config.toml": `openai_base_url = "https://gw.example/openai"`},
			setEnv:  map[string]string{"CODEX_API_KEY": ""},
			dropped: []string{"CODEX_API_KEY (your base URL does not end in /v1, the path the broker forwards below: H/.codex/config.toml openai_base_url)"}},
		{name: "opencode", harness: "opencode", env: []string{"GOOGLE_GENERATIVE_AI_API_KEY=g", "GEMINI_API_KEY=g", "MISTRAL_API_KEY=m"},
			files:    map[string]string{".local/share/opencode/auth.json": `{"anthropic": {"type": "api", "key": "sk-ant"}, "openrouter": {"type": "api", "key": "sk-or"}, "openai": {"type": "oauth", "access": "a"}}`},
			brokers:  []brokered{{"anthropic", "sk-ant", ""}, {"gemini", "g", ""}, {"gemini", "g", ""}},
			urls:     map[string]string{"anthropic": proxy + "anthropic/v1", "google": proxy + "gemini/v1beta"},
			setEnv:   map[string]string{"GOOGLE_GENERATIVE_AI_API_KEY": "PH", "GEMINI_API_KEY": "PH", "MISTRAL_API_KEY": ""},
			shown:    []string{"anthropic: H/.local/share/opencode/auth.json anthropic", "google: $GOOGLE_GENERATIVE_AI_API_KEY", "google: $GEMINI_API_KEY"},
			dropped:  []string{"H/.local/share/opencode/auth.json openrouter (no broker for it)", "MISTRAL_API_KEY"},
			rewrites: map[string]string{"opencode/data/opencode/auth.json": "set anthropic.key del openrouter"}},
		{name: "gemini's .env", harness: "gemini", env: []string{"GOOGLE_API_KEY=gk-env"},
			files:    map[string]string{".gemini/.env": "GEMINI_API_KEY=gk-file\nGOOGLE_GEMINI_BASE_URL=https://gw.example/\nXAI_API_KEY=x\n"},
			brokers:  []brokered{{"gemini", "gk-env", "https://gw.example"}, {"gemini", "gk-file", "https://gw.example"}},
			setEnv:   map[string]string{"GOOGLE_API_KEY": "PH", "GOOGLE_GEMINI_BASE_URL": proxy + "gemini"},
			dropped:  []string{"H/.gemini/.env XAI_API_KEY (no broker for it)"},
			rewrites: map[string]string{"gemini/.gemini/.env": "set GEMINI_API_KEY GOOGLE_GEMINI_BASE_URL del XAI_API_KEY"}},
		{name: "gemini", harness: "gemini", env: []string{"GEMINI_API_KEY=gk", "ANTHROPIC_API_KEY=a"},
			brokers: []brokered{{"gemini", "gk", ""}},
			setEnv:  map[string]string{"GEMINI_API_KEY": "PH", "GOOGLE_GEMINI_BASE_URL": proxy + "gemini", "ANTHROPIC_API_KEY": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			makeFiles(t, home, tt.files)
			env := append([]string{"HOME=" + home}, tt.env...)
			st, err := planState(t.TempDir(), tt.harness, env, nil)
			must(t, err)
			np, shown, got, err := planNetwork(&NetworkSettings{}, tt.harness, "m", env, filepath.Join(t.TempDir(), "n.jsonl"), st)
			must(t, err)
			get := envGetter(got)
			var bs []brokered
			for _, b := range np.brokers {
				bs = append(bs, brokered{b.Provider, b.Key, b.Upstream})
				if !strings.HasPrefix(b.Placeholder, "workforce-placeholder-") {
					t.Errorf("placeholder %q", b.Placeholder)
				}
			}
			if !slices.Equal(bs, tt.brokers) {
				t.Errorf("brokers %+v, want %+v", bs, tt.brokers)
			}
			if len(np.brokerURLs) != len(tt.urls) {
				t.Errorf("BrokerURLs %v, want %v", np.brokerURLs, tt.urls)
			}
			for p, u := range tt.urls {
				if np.brokerURLs[p] != u {
					t.Errorf("BrokerURLs[%s] = %q, want %q", p, np.brokerURLs[p], u)
				}
			}
			for k, want := range tt.setEnv {
				v := get(k)
				switch {
				case want == "PH" && !strings.HasPrefix(v, "workforce-placeholder-"):
					t.Errorf("$%s = %q, want a placeholder", k, v)
				case want != "PH" && v != want:
					t.Errorf("$%s = %q, want %q", k, v, want)
				}
			}
			for _, kv := range got {
				for _, b := range np.brokers {
					if strings.Contains(kv, b.Key) {
						t.Errorf("the harness's env holds a brokered key: %s", kv)
					}
				}
			}
			if len(np.helpers) != tt.helpers {
				t.Errorf("%d helpers, want %d", len(np.helpers), tt.helpers)
			}
			clean := func(ss []string) []string {
				var out []string
				for _, s := range ss {
					out = append(out, strings.ReplaceAll(s, home, "H"))
				}
				return out
			}
			if tt.shown != nil && !slices.Equal(clean(shown.Brokered), tt.shown) {
				t.Errorf("brokered %q, want %q", clean(shown.Brokered), tt.shown)
			}
			if tt.dropped != nil && !slices.Equal(clean(shown.Dropped), tt.dropped) {
				t.Errorf("dropped %q, want %q", clean(shown.Dropped), tt.dropped)
			}
			if len(st.rewrites) != len(tt.rewrites) {
				t.Errorf("rewrites %+v, want %v", st.rewrites, tt.rewrites)
			}
			for seed, want := range tt.rewrites {
				r := st.rewrites[seed]
				var sets, dels []string
				for _, v := range r.Set {
					sets = append(sets, strings.Join(v.Path, "."))
				}
				for _, p := range r.Delete {
					dels = append(dels, strings.Join(p, "."))
				}
				slices.Sort(sets)
				slices.Sort(dels)
				desc := "set " + strings.Join(sets, " ")
				if len(dels) > 0 {
					desc += " del " + strings.Join(dels, " ")
				}
				if desc != want {
					t.Errorf("rewrite of %s: %q, want %q", seed, desc, want)
				}
			}
		})
	}
}

// TestSeededKeysBrokered: the session's copies of the seeded files hold
// the placeholders, never the keys; the credential write-back puts the
// user's key back (a refreshed token goes back, the key unchanged, no
// warning), refuses a key the agent changed, and writes nothing when
// nothing changed; a resumed session's copies get the new run's
// placeholders.
func TestSeededKeysBrokered(t *testing.T) {
	const auth = `{"auth_mode":"apikey","OPENAI_API_KEY":"sk-real-file","tokens":{"account_id":"a","refresh_token":"r1"}}`
	tests := []struct {
		name     string
		agent    func(copy string) string
		wantUser string // "" the user's untouched
		warn     string
	}{
		{name: "unchanged", agent: func(c string) string { return c }},
		{name: "a token refreshed", agent: func(c string) string { return strings.Replace(c, `"r1"`, `"r2"`, 1) },
			wantUser: `"refresh_token": "r2"`},
		{name: "the key replaced", agent: func(c string) string {
			return strings.Replace(c, `"workforce-placeholder-`, `"sk-agent-`, 1)
		}, warn: "names another account (an entry (OPENAI_API_KEY) changed)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			makeFiles(t, home, map[string]string{".codex/auth.json": auth})
			env := []string{"HOME=" + home}
			dir := t.TempDir()
			st, err := planState(dir, "codex", env, nil)
			must(t, err)
			np, _, _, err := planNetwork(&NetworkSettings{}, "codex", "m", env, filepath.Join(t.TempDir(), "n.jsonl"), st)
			must(t, err)
			must(t, st.seed(func(s string) { t.Errorf("warning %q", s) }))
			copyPath := filepath.Join(st.Dir, "codex", "auth.json")
			data, err := os.ReadFile(copyPath)
			must(t, err)
			ph := np.brokers[0].Placeholder
			if strings.Contains(string(data), "sk-real-file") || !strings.Contains(string(data), ph) {
				t.Fatalf("the session's auth.json %s: want the placeholder %s, not the key", data, ph)
			}
			must(t, os.WriteFile(copyPath, []byte(tt.agent(string(data))), 0o600))
			before, _ := os.Stat(filepath.Join(home, ".codex", "auth.json"))
			var warnings []string
			st.WriteBack(func(s string) { warnings = append(warnings, s) })
			user, _ := os.ReadFile(filepath.Join(home, ".codex", "auth.json"))
			after, _ := os.Stat(filepath.Join(home, ".codex", "auth.json"))
			if tt.wantUser == "" {
				if string(user) != auth || !os.SameFile(before, after) {
					t.Errorf("the user's auth.json = %s, want it untouched", user)
				}
			} else if !strings.Contains(string(user), tt.wantUser) || !strings.Contains(string(user), `"OPENAI_API_KEY": "sk-real-file"`) || strings.Contains(string(user), "placeholder") {
				t.Errorf("the user's auth.json = %s, want %s and the real key", user, tt.wantUser)
			}
			joined := strings.Join(warnings, "\n")
			if tt.warn == "" && joined != "" || !strings.Contains(joined, tt.warn) {
				t.Errorf("warnings %q, want %q", warnings, tt.warn)
			}

			// Resumed: the new run's placeholder.
			again, err := planState(dir, "codex", env, nil)
			must(t, err)
			np2, _, _, err := planNetwork(&NetworkSettings{}, "codex", "m", env, filepath.Join(t.TempDir(), "n.jsonl"), again)
			must(t, err)
			must(t, again.refresh(func(s string) { t.Errorf("warning %q", s) }))
			data, _ = os.ReadFile(copyPath)
			if ph2 := np2.brokers[0].Placeholder; ph2 == ph || !strings.Contains(string(data), ph2) || strings.Contains(string(data), "sk-real") {
				t.Errorf("the resumed session's auth.json %s: want the new placeholder %s", data, ph2)
			}
		})
	}
}

// TestClaudeSettingsBrokered: the session's settings.json loses the
// apiKeyHelper and the keys, and gets the placeholder and the broker's
// base URL; so does a resumed session's, over what the agent wrote.
func TestClaudeSettingsBrokered(t *testing.T) {
	home := t.TempDir()
	const envKey, loginKey = "sk-ant-api03-env-0123456789abcdefghij", "sk-ant-api03-login-0123456789ABCDEFGHIJ"
	makeFiles(t, home, map[string]string{
		".claude/settings.json": `{"env": {"XAI_API_KEY": "sk-xai", "ANTHROPIC_BASE_URL": "https://gw.example", "KEEP": "1"}, "apiKeyHelper": "echo sk-helper-real", "model": "m"}`,
		".claude.json":          `{"primaryApiKey": "` + loginKey + `", "customApiKeyResponses": {"approved": ["` + envKey[len(envKey)-20:] + `", "other-approved-key"], "rejected": []}}`,
	})
	env := []string{"HOME=" + home, "ANTHROPIC_API_KEY=" + envKey}
	dir := t.TempDir()
	st, err := planState(dir, "claude", env, nil)
	must(t, err)
	np, _, _, err := planNetwork(&NetworkSettings{}, "claude", "m", env, filepath.Join(t.TempDir(), "n.jsonl"), st)
	must(t, err)
	must(t, st.seed(func(s string) { t.Errorf("warning %q", s) }))
	check := func(ph string) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(st.Dir, "claude", "settings.json"))
		must(t, err)
		s := string(data)
		for _, leak := range []string{"sk-xai", "echo sk-helper-real", "apiKeyHelper", "gw.example"} {
			if strings.Contains(s, leak) {
				t.Errorf("the session's settings.json holds %q:\n%s", leak, s)
			}
		}
		for _, want := range []string{`"ANTHROPIC_API_KEY": "` + ph + `"`, `"ANTHROPIC_BASE_URL": "http://127.0.0.1:3128/_broker/anthropic"`, `"KEEP": "1"`, `"model": "m"`} {
			if !strings.Contains(s, want) {
				t.Errorf("the session's settings.json lacks %s:\n%s", want, s)
			}
		}
	}
	if len(np.helpers) != 1 || np.helpers[0].upstream != "https://gw.example" {
		t.Fatalf("helpers %+v", np.helpers)
	}
	// The helper runs outside, with the user's environment: not the
	// proxy's variables, which name an address of the harness's namespace.
	if get := envGetter(np.env); get("HOME") != home || get("HTTPS_PROXY") != "" || get("https_proxy") != "" {
		t.Errorf("the helper's environment %q", np.env)
	}
	check(np.helpers[0].placeholder)
	// The /login key, and the approved suffix of the environment's key:
	// the placeholders', never the keys'.
	data, err := os.ReadFile(filepath.Join(st.Dir, "claude", ".claude.json"))
	must(t, err)
	phOf := map[string]string{}
	for _, b := range np.brokers {
		phOf[b.Key] = b.Placeholder
	}
	for _, leak := range []string{loginKey, envKey[len(envKey)-20:]} {
		if strings.Contains(string(data), leak) {
			t.Errorf("the session's .claude.json holds %q:\n%s", leak, data)
		}
	}
	for _, want := range []string{`"primaryApiKey": "` + phOf[loginKey] + `"`, `"` + phOf[envKey][len(phOf[envKey])-20:] + `"`, `"other-approved-key"`} {
		if phOf[loginKey] == "" || phOf[envKey] == "" || !strings.Contains(string(data), want) {
			t.Errorf("the session's .claude.json lacks %s:\n%s", want, data)
		}
	}
	brokers, err := np.startHelpers()
	must(t, err)
	if len(brokers) != 1 || brokers[0].Key != "sk-helper-real" || brokers[0].Placeholder != np.helpers[0].placeholder || brokers[0].Upstream != "https://gw.example" {
		t.Errorf("the helper's broker %+v", brokers)
	}

	must(t, os.WriteFile(filepath.Join(st.Dir, "claude", "settings.json"), []byte(`{"apiKeyHelper": "evil", "env": {"ANTHROPIC_API_KEY": "old"}, "model": "m", "env2": 1}`), 0o600))
	again, err := planState(dir, "claude", env, nil)
	must(t, err)
	np2, _, _, err := planNetwork(&NetworkSettings{}, "claude", "m", env, filepath.Join(t.TempDir(), "n.jsonl"), again)
	must(t, err)
	must(t, again.refresh(func(s string) { t.Errorf("warning %q", s) }))
	data, _ = os.ReadFile(filepath.Join(st.Dir, "claude", "settings.json"))
	if strings.Contains(string(data), "apiKeyHelper") || !strings.Contains(string(data), np2.helpers[0].placeholder) {
		t.Errorf("the resumed session's settings.json %s: want no helper and the new placeholder", data)
	}
}

// TestKeyHelper: a key helper's output, trimmed, is the key; one that
// fails, prints nothing or more than a line, or outlives its time, is an
// error that shows nothing it printed.
func TestKeyHelper(t *testing.T) {
	defer func(d time.Duration) { helperTimeout = d }(helperTimeout)
	helperTimeout = 500 * time.Millisecond
	if key, err := runKeyHelper(`printf '  sk-helper-1 \n'`, []string{"PATH=/usr/bin:/bin"}); err != nil || key != "sk-helper-1" {
		t.Errorf("runKeyHelper = %q, %v", key, err)
	}
	if key, err := runKeyHelper(`printf '%s' "$K"`, []string{"K=from-env"}); err != nil || key != "from-env" {
		t.Errorf("the helper's env: %q, %v", key, err)
	}
	for _, tt := range []struct{ cmd, want string }{
		{"echo sk-secret-x; exit 3", "failed"},
		{"true", "printed no key"},
		{"printf 'a\\nb\\n'", "more than one line"},
		{"sleep 5", "did not finish"},
	} {
		_, err := runKeyHelper(tt.cmd, []string{"PATH=/usr/bin:/bin"})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("runKeyHelper(%q) = %v, want an error with %q", tt.cmd, err, tt.want)
		}
	}
	np := &netPlan{helpers: []keyHelper{{provider: "anthropic", command: "exit 1", placeholder: "workforce-placeholder-h", origin: "settings.json apiKeyHelper"}}}
	if _, err := np.startHelpers(); err == nil || !strings.Contains(err.Error(), "settings.json apiKeyHelper: the key helper failed") {
		t.Errorf("startHelpers = %v", err)
	}
}

// TestOpencodeConfigKeys: keys opencode's configuration writes itself
// are brokered: the seeded copy of the global configuration (JSONC, in the
// directory seeded whole) holds the placeholder, and the configuration
// workforce writes gets the placeholder of the highest source
// (OPENCODE_CONFIG over the global file); a key of a provider without a
// broker is left out.
func TestOpencodeConfigKeys(t *testing.T) {
	home := t.TempDir()
	makeFiles(t, home, map[string]string{
		".config/opencode/opencode.jsonc": "{\n// mine\n\"provider\": {\"anthropic\": {\"options\": {\"apiKey\": \"sk-ant-global\", \"baseURL\": \"https://gw.example/v1\"}},\n \"groq\": {\"options\": {\"apiKey\": \"gq-global\"}}},\n}\n",
		"oc.json":                         `{"provider": {"anthropic": {"options": {"apiKey": "sk-ant-oc"}}}}`,
		".config/opencode/config.json":    `{"provider": {"anthropic": {"options": {"baseURL": "https://lower.example/v1"}}}}`,
	})
	env := []string{"HOME=" + home, "OPENCODE_CONFIG=" + filepath.Join(home, "oc.json")}
	st, err := planState(t.TempDir(), "opencode", env, nil)
	must(t, err)
	np, shown, _, err := planNetwork(&NetworkSettings{}, "opencode", "anthropic/m", env, filepath.Join(t.TempDir(), "n.jsonl"), st)
	must(t, err)
	phOf := map[string]string{}
	for _, b := range np.brokers {
		phOf[b.Key] = b.Placeholder
		if b.Upstream != "https://gw.example" {
			t.Errorf("broker %+v: want the upstream of the global file's baseURL", b)
		}
	}
	if phOf["sk-ant-global"] == "" || phOf["sk-ant-oc"] == "" {
		t.Fatalf("brokers %+v: want both anthropic keys", np.brokers)
	}
	if np.opencodeKeys["anthropic"] != phOf["sk-ant-oc"] || np.opencodeKeys["groq"] != "" {
		t.Errorf("opencodeKeys %v: want OPENCODE_CONFIG's placeholder for anthropic, groq's removed", np.opencodeKeys)
	}
	if !slices.ContainsFunc(shown.Dropped, func(s string) bool { return strings.Contains(s, "provider.groq.options.apiKey (no broker for it)") }) {
		t.Errorf("dropped %q", shown.Dropped)
	}
	must(t, st.seed(func(s string) { t.Errorf("warning %q", s) }))
	data, err := os.ReadFile(filepath.Join(st.Dir, "opencode", "config", "opencode", "opencode.jsonc"))
	must(t, err)
	if strings.Contains(string(data), "sk-ant-global") || strings.Contains(string(data), "gq-global") || !strings.Contains(string(data), phOf["sk-ant-global"]) {
		t.Errorf("the seeded opencode.jsonc %s: want the placeholder, no key", data)
	}
}

// TestPlaceholderFor: a placeholder never holds its key, however short,
// nor the key it: the broker refuses such a pair and the run would not
// start.
func TestPlaceholderFor(t *testing.T) {
	for _, key := range []string{"e", "e2e", "0", "workforce", "workforce-placeholder-", "-", "sk-ant-api03-0123456789abcdefghij"} {
		for range 200 {
			p := placeholderFor(key)
			if strings.Contains(p, key) || strings.Contains(key, p) || len(p) < 8 {
				t.Fatalf("placeholderFor(%q) = %q", key, p)
			}
		}
	}
}
