package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Keys in the seeded state. The files seeded into a session's harness
// state (State) can hold API keys: claude's settings.json and
// settings.local.json an "env" with ANTHROPIC_API_KEY (and any other
// variable the harness passes to its commands) and an "apiKeyHelper", a
// command printing the key; codex's auth.json its OPENAI_API_KEY (login
// with an API key); opencode's auth.json an entry of type "api" per
// provider. A confined run in namespaces brokers them as it brokers the
// environment's (package session): SeededSecrets finds them in the
// user's files, the session's copy gets a placeholder in their place
// (SeedRewrite), and workforce's proxy the real key. A key of a provider
// without a broker route (an opencode "api" entry for openrouter, a
// provider key in claude's settings env) is left out of the copy; the
// apiKeyHelper is left out too, its output brokered (the caller runs it,
// outside the sandbox). OAuth logins (claude's .credentials.json, codex's
// ChatGPT tokens, opencode's oauth entries, gemini's oauth_creds.json)
// are not keys the proxy could add: they stay in the copy, readable by
// the harness.

// SeededSecret is an API key, or a key helper, that a file seeded into a
// session's harness state holds.
type SeededSecret struct {
	// Seed is the file's StateSeed.To; Path where in it the value is.
	Seed string
	Path JSONPath
	// Provider is APIKey.Provider of the harness's row the key is for;
	// "" when workforce has no broker route for it: it stays out.
	Provider string
	// Key is the key; "" for a Helper.
	Key string
	// Helper is a command (claude's apiKeyHelper, run with sh -c) that
	// prints the key; the session's copy loses it and gets the
	// placeholder as env.ANTHROPIC_API_KEY.
	Helper string
	// Origin names the user's file and the field.
	Origin string
}

// SeededBaseURL is a base URL a seeded file sets for a provider (claude's
// settings env ANTHROPIC_BASE_URL, which outranks the environment's): the
// session's copy gets the broker's when the provider's key is brokered.
type SeededBaseURL struct {
	Seed     string
	Path     JSONPath
	Provider string
	URL      string
	Origin   string
}

// SeededAuth is what the user's files seeded into the state of a harness
// hold of API keys and base URLs.
type SeededAuth struct {
	Secrets  []SeededSecret
	BaseURLs []SeededBaseURL
	// Approved are claude's approved keys of the environment
	// (customApiKeyResponses.approved: each key's ClaudeKeySuffix): the
	// session's copy gets the suffix of each brokered key's placeholder
	// in place of the key's, so that claude takes the placeholder as the
	// key the user approved, and 20 characters of the key stay out.
	Approved []SeededList
}

// SeededList is a list of strings in a seeded file.
type SeededList struct {
	Seed   string
	Path   JSONPath
	Values []string
}

// ClaudeKeySuffix is how claude 2.1.330 remembers a key of the
// environment the user approved: its last 20 characters, trimmed.
func ClaudeKeySuffix(key string) string {
	key = strings.TrimSpace(key)
	if len(key) > 20 {
		return key[len(key)-20:]
	}
	return key
}

// claudeConfigSeeds are claude's global configuration files in the state.
var claudeConfigSeeds = []string{"claude/.claude.json", "claude/.config.json"}

func strs(list []any) []string {
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// claudeSettingsSeeds are claude's seeds that may hold an env and an
// apiKeyHelper.
var claudeSettingsSeeds = []string{"claude/settings.json", "claude/settings.local.json"}

// opencodeAuthSeed is opencode's login file in the state.
var opencodeAuthSeed = filepath.Join("opencode", "data", "opencode", "auth.json")

// SeededSecrets reads the API keys, key helpers and base URLs of the
// user's files that State(h, env) seeds. A file that is missing, or not a
// JSON object, holds none (the seeding copies it as it is; the harness
// says what is wrong with it).
func SeededSecrets(h string, env []string) (SeededAuth, error) {
	l, err := State(h, env)
	if err != nil {
		return SeededAuth{}, err
	}
	from := map[string]string{}
	for _, s := range l.Seeds {
		if s.From != "" {
			from[filepath.ToSlash(s.To)] = s.From
		}
	}
	read := func(to string) (string, map[string]any) {
		path := from[to]
		if path == "" {
			return "", nil
		}
		data, err := readOptional(path)
		if err != nil || data == nil {
			return path, nil
		}
		obj, err := decodeObject(data)
		if err != nil {
			return path, nil
		}
		return path, obj
	}
	var a SeededAuth
	switch h {
	case persona.HarnessClaude:
		row, _ := APIKeyOf(h, "anthropic")
		for _, to := range claudeSettingsSeeds {
			path, obj := read(to)
			if obj == nil {
				continue
			}
			envObj, _ := obj["env"].(map[string]any)
			for _, k := range sortedKeys(envObj) {
				v, ok := envObj[k].(string)
				switch {
				case !ok || v == "":
				case slices.Contains(row.KeyVars, k):
					a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{"env", k}, Provider: "anthropic", Key: v, Origin: path + " env." + k})
				case ProviderKeyVar(k):
					a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{"env", k}, Key: v, Origin: path + " env." + k})
				case k == row.BaseURL:
					a.BaseURLs = append(a.BaseURLs, SeededBaseURL{Seed: to, Path: JSONPath{"env", k}, Provider: "anthropic", URL: v, Origin: path + " env." + k})
				}
			}
			if v, ok := obj["apiKeyHelper"].(string); ok && strings.TrimSpace(v) != "" {
				a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{"apiKeyHelper"}, Provider: "anthropic", Helper: v, Origin: path + " apiKeyHelper"})
			}
		}
		// The key of a /login with a Console account, where claude keeps
		// it without a keychain (2.1.330: primaryApiKey of its global
		// configuration file), and the keys of the environment the user
		// approved, each by its last 20 characters.
		for _, to := range claudeConfigSeeds {
			path, obj := read(to)
			if v, ok := obj["primaryApiKey"].(string); ok && v != "" {
				a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{"primaryApiKey"}, Provider: "anthropic", Key: v, Origin: path + " primaryApiKey"})
			}
			if r, ok := obj["customApiKeyResponses"].(map[string]any); ok {
				if list, ok := r["approved"].([]any); ok {
					a.Approved = append(a.Approved, SeededList{Seed: to, Path: JSONPath{"customApiKeyResponses", "approved"}, Values: strs(list)})
				}
			}
		}
	case persona.HarnessGemini:
		row, _ := APIKeyOf(h, "google")
		for to, path := range from {
			if !isDotenv(to) {
				continue
			}
			data, err := readOptional(path)
			if err != nil || data == nil {
				continue
			}
			for _, kv := range dotenvVars(data) {
				k, v := kv[0], kv[1]
				switch {
				case v == "":
				case slices.Contains(row.KeyVars, k):
					a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{k}, Provider: "google", Key: v, Origin: path + " " + k})
				case ProviderKeyVar(k):
					a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{k}, Key: v, Origin: path + " " + k})
				case k == row.BaseURL:
					a.BaseURLs = append(a.BaseURLs, SeededBaseURL{Seed: to, Path: JSONPath{k}, Provider: "google", URL: v, Origin: path + " " + k})
				}
			}
		}
		slices.SortFunc(a.Secrets, func(x, y SeededSecret) int { return strings.Compare(x.Origin, y.Origin) })
		slices.SortFunc(a.BaseURLs, func(x, y SeededBaseURL) int { return strings.Compare(x.Origin, y.Origin) })
	case persona.HarnessCodex:
		to := "codex/auth.json"
		path, obj := read(to)
		if v, ok := obj["OPENAI_API_KEY"].(string); ok && v != "" {
			a.Secrets = append(a.Secrets, SeededSecret{Seed: to, Path: JSONPath{"OPENAI_API_KEY"}, Provider: "openai", Key: v, Origin: path + " OPENAI_API_KEY"})
		}
	case persona.HarnessOpencode:
		// Keys the configuration writes itself, lowest rank first: the
		// global files (seeded with opencode's directory), OPENCODE_CONFIG
		// and OPENCODE_CONFIG_CONTENT (in the configuration workforce
		// writes: no seed). "{env:VAR}" and "{file:PATH}" are no keys.
		get := envLookup(env)
		config := from["opencode/config/opencode"]
		for _, name := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
			to := filepath.ToSlash(filepath.Join("opencode", "config", "opencode", name))
			path := filepath.Join(config, name)
			if config == "" {
				continue
			}
			if data, err := readOptional(path); err == nil && data != nil {
				a.Secrets = append(a.Secrets, opencodeConfigKeys(h, to, path, data)...)
			}
		}
		if path := get("OPENCODE_CONFIG"); path != "" {
			if data, err := readOptional(path); err == nil && data != nil {
				a.Secrets = append(a.Secrets, opencodeConfigKeys(h, "", path, data)...)
			}
		}
		if c := get("OPENCODE_CONFIG_CONTENT"); c != "" {
			a.Secrets = append(a.Secrets, opencodeConfigKeys(h, "", "$OPENCODE_CONFIG_CONTENT", []byte(c))...)
		}
		to := filepath.ToSlash(opencodeAuthSeed)
		path, obj := read(to)
		for _, id := range sortedKeys(obj) {
			e, _ := obj[id].(map[string]any)
			key, _ := e["key"].(string)
			if e["type"] != "api" || key == "" {
				continue
			}
			s := SeededSecret{Seed: to, Path: JSONPath{id, "key"}, Key: key, Origin: path + " " + id}
			if _, ok := APIKeyOf(h, id); ok {
				s.Provider = id
			} else {
				// No broker route: the whole entry stays out.
				s.Path = JSONPath{id}
			}
			a.Secrets = append(a.Secrets, s)
		}
	}
	return a, nil
}

// CodexProvider is the model provider of the user's own codex
// configuration (config.toml's model_provider, one of its
// model_providers): its id, base_url, env_key, and where it comes from.
type CodexProvider struct {
	ID, BaseURL, EnvKey, Origin string
}

// CodexProviderOf returns the model provider the user's config.toml (in
// $CODEX_HOME, else ~/.codex) selects, when it is one of the user's own
// (not the built-in openai); ok false otherwise, or when the file cannot
// be read.
func CodexProviderOf(env []string) (CodexProvider, bool) {
	path := filepath.Join(codexHome(env), "config.toml")
	data, err := readOptional(path)
	if err != nil || data == nil {
		return CodexProvider{}, false
	}
	var c struct {
		ModelProvider  string `toml:"model_provider"`
		ModelProviders map[string]struct {
			BaseURL string `toml:"base_url"`
			EnvKey  string `toml:"env_key"`
		} `toml:"model_providers"`
	}
	if toml.Unmarshal(data, &c) != nil || c.ModelProvider == "" || c.ModelProvider == "openai" {
		return CodexProvider{}, false
	}
	p, ok := c.ModelProviders[c.ModelProvider]
	if !ok {
		return CodexProvider{}, false
	}
	return CodexProvider{ID: c.ModelProvider, BaseURL: p.BaseURL, EnvKey: p.EnvKey,
		Origin: fmt.Sprintf("%s model_providers.%s.base_url", path, c.ModelProvider)}, true
}

// opencodeConfigKeys returns the keys an opencode configuration (JSON or
// JSONC) at path writes itself: provider.ID.options.apiKey, a literal.
func opencodeConfigKeys(h, to, path string, data []byte) []SeededSecret {
	obj, err := decodeLoose(data)
	if err != nil {
		return nil
	}
	providers, _ := obj["provider"].(map[string]any)
	var out []SeededSecret
	for _, id := range sortedKeys(providers) {
		p, _ := providers[id].(map[string]any)
		opts, _ := p["options"].(map[string]any)
		key, _ := opts["apiKey"].(string)
		if key == "" || strings.HasPrefix(key, "{env:") || strings.HasPrefix(key, "{file:") {
			continue
		}
		if base, _ := opts["baseURL"].(string); strings.HasPrefix(strings.ToLower(base), "http://") {
			// A local model server's (an openai-compatible one at
			// loopback): nothing to broker, the key goes as it is.
			continue
		}
		s := SeededSecret{Seed: to, Path: JSONPath{"provider", id, "options", "apiKey"}, Key: key, Origin: fmt.Sprintf("%s provider.%s.options.apiKey", path, id)}
		if _, ok := APIKeyOf(h, id); ok {
			s.Provider = id
		}
		out = append(out, s)
	}
	return out
}

// decodeLoose decodes a JSON object, or a JSONC one (comments, trailing
// commas), its numbers as written.
func decodeLoose(data []byte) (map[string]any, error) {
	obj, err := decodeObject(data)
	if err == nil {
		return obj, nil
	}
	std, serr := hujson.Standardize(data)
	if serr != nil {
		return nil, err
	}
	return decodeObject(std)
}

// SeedRewrite is what the session's copy of a seeded JSON file gets in
// place of the user's values: Set replaces (or adds) the value at each
// path, Delete removes each path. Dotenv marks a dotenv file (gemini's
// .env files: NAME=VALUE lines), whose paths are a variable's name.
type SeedRewrite struct {
	Set    []SeedValue
	Delete []JSONPath
	Dotenv bool
}

// NewSeedRewrite returns an empty rewrite of the seed to (StateSeed.To),
// in its format.
func NewSeedRewrite(to string) *SeedRewrite {
	return &SeedRewrite{Dotenv: isDotenv(to)}
}

// isDotenv reports whether the seed to is a dotenv file.
func isDotenv(to string) bool { return filepath.Base(to) == ".env" }

// SeedValue is a value a SeedRewrite sets: Value, or List when it is
// not nil (a JSON array of strings; not restored).
type SeedValue struct {
	Path  JSONPath
	Value string
	List  []string
}

// Apply returns data, a JSON object, rewritten; its other members keep
// their values (numbers as written), in JSON indented by two spaces.
func (rw SeedRewrite) Apply(data []byte) ([]byte, error) {
	if rw.Dotenv {
		return rw.applyDotenv(data), nil
	}
	obj, err := decodeLoose(data)
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	for _, p := range rw.Delete {
		deletePath(obj, p)
	}
	for _, v := range rw.Set {
		var val any = v.Value
		if v.List != nil {
			list := make([]any, len(v.List))
			for i, s := range v.List {
				list[i] = s
			}
			val = list
		}
		if err := setValue(obj, v.Path, val); err != nil {
			return nil, err
		}
	}
	return encodeObject(obj)
}

// Restore returns the session's copy now of a credential rewritten by rw
// from the user's file user, as it would be had the harness written the
// user's file: each value rw set that still holds what rw set gets the
// user's back, each path rw deleted that is still absent gets the user's
// back. What the harness changed stays changed: CheckRefresh judges it.
// A rewritten value found anywhere else (the agent copied a placeholder
// into another field) is an error: the copy is not written back.
func (rw SeedRewrite) Restore(user, now []byte) ([]byte, error) {
	if rw.Dotenv {
		return nil, errors.New("a dotenv file is no credential")
	}
	was, err := decodeLoose(user)
	if err != nil {
		return nil, errors.New("yours was not a JSON object when the session started")
	}
	is, err := decodeLoose(now)
	if err != nil {
		return nil, errors.New("it is not a JSON object")
	}
	for _, v := range rw.Set {
		if v.List != nil {
			continue
		}
		cur, ok := getPath(is, v.Path)
		if s, isStr := cur.(string); !ok || !isStr || s != v.Value {
			continue
		}
		if orig, ok := getPath(was, v.Path); ok {
			if err := setValue(is, v.Path, orig); err != nil {
				return nil, err
			}
		} else {
			deletePath(is, v.Path)
			// And the objects Apply made on the way.
			for i := len(v.Path) - 1; i > 0; i-- {
				m, _ := getPath(is, v.Path[:i])
				if _, had := getPath(was, v.Path[:i]); had || !emptyObject(m) {
					break
				}
				deletePath(is, v.Path[:i])
			}
		}
	}
	for _, p := range rw.Delete {
		if _, ok := getPath(is, p); ok {
			continue
		}
		if orig, ok := getPath(was, p); ok {
			if err := setValue(is, p, orig); err != nil {
				return nil, err
			}
		}
	}
	out, err := encodeObject(is)
	if err != nil {
		return nil, err
	}
	for _, v := range rw.Set {
		if v.List == nil && bytes.Contains(out, []byte(v.Value)) {
			return nil, fmt.Errorf("it holds the run's placeholder %s elsewhere than where workforce put it", v.Value)
		}
	}
	return out, nil
}

func emptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// dotenvVars returns the NAME, VALUE pairs of a dotenv file, in order:
// "NAME=VALUE" lines, "export " before the name allowed, the value
// unquoted ('...', "...", `...`) or, unquoted, cut at " #"; blank lines
// and comments skipped.
func dotenvVars(data []byte) [][2]string {
	var out [][2]string
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := dotenvLine(line); ok {
			out = append(out, [2]string{k, v})
		}
	}
	return out
}

// dotenvLine parses one line of a dotenv file.
func dotenvLine(line string) (name, value string, ok bool) {
	line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
	if line == "" || strings.HasPrefix(line, "#") {
		return "", "", false
	}
	line = strings.TrimPrefix(line, "export ")
	name, value, ok = strings.Cut(line, "=")
	name = strings.TrimSpace(name)
	if !ok || !dotenvName(name) {
		return "", "", false
	}
	value = strings.TrimSpace(value)
	if n := len(value); n >= 2 && strings.ContainsRune(`"'`+"`", rune(value[0])) && value[n-1] == value[0] {
		return name, value[1 : n-1], true
	}
	if i := strings.Index(value, " #"); i >= 0 {
		value = strings.TrimSpace(value[:i])
	}
	return name, value, true
}

// dotenvName reports whether s is a variable's name as dotenv reads one.
func dotenvName(s string) bool {
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return s != ""
}

// applyDotenv rewrites a dotenv file: each line of a variable rw deletes
// goes, each of a variable it sets becomes NAME=VALUE; a variable set
// that had no line gets one at the end.
func (rw SeedRewrite) applyDotenv(data []byte) []byte {
	done := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		name, _, ok := dotenvLine(line)
		if !ok {
			out = append(out, line)
			continue
		}
		if slices.ContainsFunc(rw.Delete, func(p JSONPath) bool { return len(p) == 1 && p[0] == name }) {
			continue
		}
		if i := slices.IndexFunc(rw.Set, func(v SeedValue) bool { return len(v.Path) == 1 && v.Path[0] == name }); i >= 0 {
			out = append(out, name+"="+rw.Set[i].Value)
			done[name] = true
			continue
		}
		out = append(out, line)
	}
	text := strings.Join(out, "\n")
	for _, v := range rw.Set {
		if len(v.Path) == 1 && !done[v.Path[0]] {
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += v.Path[0] + "=" + v.Value + "\n"
			done[v.Path[0]] = true
		}
	}
	return []byte(text)
}

// encodeObject writes obj as indented JSON with a final newline.
func encodeObject(obj map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(obj); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func getPath(obj map[string]any, p JSONPath) (any, bool) {
	var cur any = obj
	for _, k := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func deletePath(obj map[string]any, p JSONPath) {
	if len(p) == 0 {
		return
	}
	parent, ok := getPath(obj, p[:len(p)-1])
	if m, isObj := parent.(map[string]any); ok && isObj {
		delete(m, p[len(p)-1])
	}
}

// setValue sets the value at p, making the objects above it that are
// missing; a member on the way that is not an object is an error.
func setValue(obj map[string]any, p JSONPath, v any) error {
	if len(p) == 0 {
		return errors.New("an empty path")
	}
	m := obj
	for i, k := range p[:len(p)-1] {
		next, ok := m[k]
		if !ok {
			n := map[string]any{}
			m[k] = n
			m = n
			continue
		}
		if m, ok = next.(map[string]any); !ok {
			return fmt.Errorf("%s is not an object", strings.Join(p[:i+1], "."))
		}
	}
	m[p[len(p)-1]] = v
	return nil
}
