package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Per-session state. Each harness keeps its configuration, its login and
// its history in the user's home; a sandboxed run moves all of it into a
// state directory of the session, by the variables each harness reads,
// seeded from the user's own configuration so that their settings, MCP
// servers and login keep working (package session makes, seeds and
// discards it, and writes a refreshed credential back). Measured on
// claude 2.1.330 and 2.1.332, codex 0.169.0 and 0.171.0 and opencode
// 1.18.33 (docs/sandbox.md;
// the e2e test TestState runs each with it):
//
//   - claude: CLAUDE_CONFIG_DIR moves ~/.claude and ~/.claude.json, which
//     it then reads and writes as $CLAUDE_CONFIG_DIR/.claude.json (a
//     user-scope MCP server in that file starts, the one in ~/.claude.json
//     does not). The login is .credentials.json in the same directory, or
//     in $CLAUDE_SECURESTORAGE_CONFIG_DIR when the user set it.
//   - codex: CODEX_HOME moves ~/.codex; the login is auth.json (MCP OAuth
//     tokens in .credentials.json, the gateway's in gateway_oauth.json),
//     unless codex keeps it in the system keyring.
//   - opencode: its four XDG directories (XDG_CONFIG_HOME, XDG_DATA_HOME,
//     XDG_STATE_HOME, XDG_CACHE_HOME), each with an opencode directory that
//     must exist before it starts; the login is auth.json and mcp-auth.json
//     in $XDG_DATA_HOME/opencode.
//   - gemini (0.61.0, state_gemini.go): GEMINI_CLI_HOME moves ~/.gemini (and
//     the ~/.agents/skills and ~/.env it reads below its home); the login is
//     .gemini/oauth_creds.json.
//
// What is copied is an allowlist, per harness: the files that configure
// it, never its history. The directories mix both, and the history is
// the part that grows (claude's projects/, sessions/, file-history/,
// todos/, shell-snapshots/, ...; codex's sessions/, sqlite databases,
// packages/) and whose names change from version to version: a denylist
// would copy a new kind of history into every session (gigabytes, and
// every past conversation), an allowlist misses a new kind of
// configuration, which shows as a setting missing in a session and is
// one line here to fix. opencode's configuration directory holds only
// configuration and is copied whole.

// StateVar is a variable that moves a harness's state: its name, and the
// directory it names, relative to the session's state directory.
type StateVar struct {
	Name, Rel string
}

// StateSeed is a file or directory of the user's copied into the
// session's state directory.
type StateSeed struct {
	// From is the user's, absolute (it may not exist); To where it goes,
	// relative to the state directory.
	From, To string
	// Credential says it is a login the harness may refresh during the
	// run: a regular file, written back to the user's after the run when
	// the harness changed it.
	Credential bool
	// Refresh, for a credential, are the fields a refresh of the login
	// changes (CheckRefresh): only those may differ for the session's
	// copy to be written back.
	Refresh []JSONPath
	// Identity, for a credential, are the fields that name the account
	// (never in Refresh): a change there is reported as another account.
	Identity []JSONPath
}

// JSONPath is the path of a value in a JSON object, key by key; "*" is
// any key.
type JSONPath []string

// StateLayout is how a harness's state moves into a session: the
// variables to set, the directories to make, the seeds to copy.
type StateLayout struct {
	Harness, Measured string
	Vars              []StateVar
	// Dirs are directories to make (relative), empty unless seeded: the
	// harness needs them to exist.
	Dirs  []string
	Seeds []StateSeed
}

// claudeSeeds are the entries of claude's configuration directory that
// configure it (measured on 2.1.330; names from its code): settings,
// instructions, agents, commands, skills, plugins, output styles, hooks,
// rules, workflows, key bindings, and .claude.json (MCP servers, the
// account, onboarding) with its legacy name .config.json.
var claudeSeeds = []string{
	"settings.json", "settings.local.json", "CLAUDE.md", "keybindings.json", ".claude.json", ".config.json",
	"agents", "commands", "skills", "plugins", "output-styles", "hooks", "rules", "workflows",
}

// codexSeeds are the entries of CODEX_HOME that configure codex
// (measured on 0.169.0): its configuration, instructions, hooks,
// agents, exec-policy rules, prompts, skills, plugins and themes.
var codexSeeds = []string{
	"config.toml", "AGENTS.md", "AGENTS.override.md", "hooks.json",
	"agents", "hooks", "rules", "prompts", "skills", "plugins", "themes",
}

// opencodeConfigSeeds are what is copied of the user's XDG configuration
// directory for opencode: its own directory whole, and the configuration
// of the agent's commands that moving XDG_CONFIG_HOME would otherwise
// hide: git's (user.name for the agent's commits, ignores, attributes)
// and go's `go env -w` settings. Not gh's directory (hosts.yml holds the
// user's GitHub token) nor git's credentials file: a login the harness
// does not need stays out of the session (issue 41).
var opencodeConfigSeeds = []string{"opencode", filepath.Join("git", "config"), filepath.Join("git", "ignore"),
	filepath.Join("git", "attributes"), filepath.Join("go", "env")}

// Credentials written back. A credential goes back to the user's file
// only when it is a refresh of the same login (CheckRefresh): the same
// entries, each of the same type and naming the same account, only its
// tokens and their expiry changed. The fields a refresh changes, per
// file (the formats of the measured versions; "*" is any key: a
// provider, a server):
//
//   - claude .credentials.json: claudeAiOauth's accessToken,
//     refreshToken, expiresAt; the same of each mcpOAuth server.
//   - codex auth.json: tokens.id_token, tokens.access_token,
//     tokens.refresh_token, last_refresh (the account: auth_mode,
//     OPENAI_API_KEY, tokens.account_id, unchanged, present or absent
//     alike); .credentials.json (MCP OAuth, one entry a server):
//     access_token, refresh_token, expires_at; gateway_oauth.json: the
//     same and id_token, at the top or in an entry.
//   - opencode auth.json (one entry a provider: oauth, api or
//     wellknown): an oauth entry's access, refresh, expires (an api
//     key, a wellknown entry's key and token never); mcp-auth.json (one
//     entry an MCP server): tokens.accessToken, tokens.refreshToken,
//     tokens.expiresAt.
//
// Anything else that differs (an entry added or removed, a type, an api
// key, an account, a server's address) is a new or different login,
// which the agent may have chosen: an opencode wellknown entry names a
// URL whose configuration opencode fetches and runs, an api key another
// account. Such a file is not written back.
//
// A credential holding an API key a confined run brokers (codex's
// auth.json OPENAI_API_KEY, an opencode "api" entry: SeededSecrets) is
// seeded with the run's placeholder in its place, and an entry without a
// broker route left out (SeedRewrite). Write-back compares the session's
// copy with what was seeded into it, not with the user's file; when it
// changed, the user's key goes back where the placeholder still is and
// the entries left out come back (SeedRewrite.Restore) before
// CheckRefresh compares it with the user's file: a refresh of the login
// beside the key is written back with the user's key, never the
// placeholder, and the unchanged key is not taken for another account;
// a key the agent changed is, and is not written back; a copy holding
// the placeholder anywhere else is not written back at all.
var credentialFields = map[string]struct{ refresh, identity []JSONPath }{
	"claude/.credentials.json": {refresh: []JSONPath{
		{"claudeAiOauth", "accessToken"}, {"claudeAiOauth", "refreshToken"}, {"claudeAiOauth", "expiresAt"},
		{"mcpOAuth", "*", "accessToken"}, {"mcpOAuth", "*", "refreshToken"}, {"mcpOAuth", "*", "expiresAt"},
	}},
	"codex/auth.json": {
		refresh: []JSONPath{
			{"tokens", "id_token"}, {"tokens", "access_token"}, {"tokens", "refresh_token"}, {"last_refresh"},
		},
		identity: []JSONPath{{"auth_mode"}, {"OPENAI_API_KEY"}, {"tokens", "account_id"}},
	},
	"codex/.credentials.json": {refresh: []JSONPath{
		{"*", "access_token"}, {"*", "refresh_token"}, {"*", "expires_at"},
	}},
	"codex/gateway_oauth.json": {refresh: []JSONPath{
		{"access_token"}, {"refresh_token"}, {"expires_at"}, {"id_token"},
		{"*", "access_token"}, {"*", "refresh_token"}, {"*", "expires_at"}, {"*", "id_token"},
	}},
	"opencode/data/opencode/auth.json": {
		refresh:  []JSONPath{{"*", "access"}, {"*", "refresh"}, {"*", "expires"}},
		identity: []JSONPath{{"*", "key"}, {"*", "accountId"}, {"*", "enterpriseUrl"}},
	},
	"opencode/data/opencode/mcp-auth.json": {refresh: []JSONPath{
		{"*", "tokens", "accessToken"}, {"*", "tokens", "refreshToken"}, {"*", "tokens", "expiresAt"},
	}},
	// gemini's Google login (google-auth-library's credentials); the
	// account is in google_accounts.json, which is copied, not written
	// back.
	"gemini/.gemini/oauth_creds.json": {refresh: []JSONPath{
		{"access_token"}, {"refresh_token"}, {"expiry_date"}, {"id_token"},
	}},
}

// credentialSeed is the credential seed from -> to, with the fields a
// refresh of it changes.
func credentialSeed(from, to string) StateSeed {
	f, ok := credentialFields[filepath.ToSlash(to)]
	if !ok {
		panic("harness: no refresh fields for the credential " + to)
	}
	return StateSeed{From: from, To: to, Credential: true, Refresh: f.refresh, Identity: f.identity}
}

// CheckRefresh says why the session's copy now of credential s cannot
// replace the user's, which held seeded: nil when now is seeded with
// only the fields of s.Refresh changed, each to a string, a number or
// null (a token, an expiry time). Both must be JSON objects in UTF-8;
// numbers are compared as written.
func (s StateSeed) CheckRefresh(seeded, now []byte) error {
	was, err := decodeObject(seeded)
	if err != nil {
		return errors.New("yours was not a JSON object when the session started")
	}
	is, err := decodeObject(now)
	if err != nil {
		return errors.New("it is not a JSON object")
	}
	return s.compare(nil, was, is)
}

// decodeObject decodes a JSON object, its numbers as written.
func decodeObject(data []byte) (map[string]any, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var obj map[string]any
	if err := d.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("null")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("more after the object")
	}
	return obj, nil
}

// compare checks the value is at path against was, as CheckRefresh says.
func (s StateSeed) compare(path JSONPath, was, is any) error {
	wasObj, ok1 := was.(map[string]any)
	isObj, ok2 := is.(map[string]any)
	if ok1 && ok2 {
		for _, k := range sortedKeys(wasObj) {
			if _, ok := isObj[k]; !ok {
				return fmt.Errorf("%s was removed", fieldName(append(path, k)))
			}
		}
		for _, k := range sortedKeys(isObj) {
			if _, ok := wasObj[k]; !ok {
				return fmt.Errorf("%s was added", fieldName(append(path, k)))
			}
		}
		for _, k := range sortedKeys(wasObj) {
			if err := s.compare(append(path[:len(path):len(path)], k), wasObj[k], isObj[k]); err != nil {
				return err
			}
		}
		return nil
	}
	if matchAny(s.Refresh, path) && scalar(was) && scalar(is) {
		return nil
	}
	if reflect.DeepEqual(was, is) {
		return nil
	}
	switch {
	case matchAny(s.Identity, path):
		return fmt.Errorf("it names another account (%s changed)", fieldName(path))
	case len(path) > 0 && path[len(path)-1] == "type":
		return fmt.Errorf("the type of %s changed", fieldName(path[:len(path)-1]))
	}
	return fmt.Errorf("%s changed, which a refresh does not change", fieldName(path))
}

// fieldName names the value at path for a message: "an entry" at the
// top, "the field" below, with the path quoted (its keys are the
// agent's).
func fieldName(path JSONPath) string {
	q := quote.Name(strings.Join(path, "."))
	if len(path) == 1 {
		return "an entry (" + q + ")"
	}
	return "the field " + q
}

// scalar reports whether v is a string, a number or null.
func scalar(v any) bool {
	switch v.(type) {
	case nil, string, json.Number:
		return true
	}
	return false
}

// matchAny reports whether path is one of paths.
func matchAny(paths []JSONPath, path JSONPath) bool {
outer:
	for _, p := range paths {
		if len(p) != len(path) {
			continue
		}
		for i := range p {
			if p[i] != "*" && p[i] != path[i] {
				continue outer
			}
		}
		return true
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// State returns how harness h's state moves into a session, seeded from
// the user's configuration as env (the caller's environment) locates it.
func State(h string, env []string) (*StateLayout, error) {
	get := envLookup(env)
	home := get("HOME")
	if !filepath.IsAbs(home) {
		home = "" // nothing of the user's to seed
	}
	// under returns dir/name, or "" when dir is unknown.
	under := func(dir string, name ...string) string {
		if dir == "" {
			return ""
		}
		return filepath.Join(append([]string{dir}, name...)...)
	}
	userDir := func(v string, homeRel ...string) string {
		if d := get(v); filepath.IsAbs(d) {
			return filepath.Clean(d)
		}
		return under(home, homeRel...)
	}
	l := &StateLayout{Harness: h, Measured: Measured[h]}
	switch h {
	case persona.HarnessClaude:
		src := userDir("CLAUDE_CONFIG_DIR", ".claude")
		l.Vars = []StateVar{{"CLAUDE_CONFIG_DIR", "claude"}}
		l.Dirs = []string{"claude"}
		for _, name := range claudeSeeds {
			from := under(src, name)
			if name == ".claude.json" && !filepath.IsAbs(get("CLAUDE_CONFIG_DIR")) {
				from = under(home, ".claude.json")
			}
			l.Seeds = append(l.Seeds, StateSeed{From: from, To: filepath.Join("claude", name)})
		}
		creds := src
		if d := get("CLAUDE_SECURESTORAGE_CONFIG_DIR"); filepath.IsAbs(d) {
			creds = filepath.Clean(d)
			l.Vars = append(l.Vars, StateVar{"CLAUDE_SECURESTORAGE_CONFIG_DIR", "claude"})
		}
		l.Seeds = append(l.Seeds, credentialSeed(under(creds, ".credentials.json"), filepath.Join("claude", ".credentials.json")))
	case persona.HarnessCodex:
		src := userDir("CODEX_HOME", ".codex")
		l.Vars = []StateVar{{"CODEX_HOME", "codex"}}
		l.Dirs = []string{"codex"}
		for _, name := range codexSeeds {
			l.Seeds = append(l.Seeds, StateSeed{From: under(src, name), To: filepath.Join("codex", name)})
		}
		for _, name := range []string{"auth.json", ".credentials.json", "gateway_oauth.json"} {
			l.Seeds = append(l.Seeds, credentialSeed(under(src, name), filepath.Join("codex", name)))
		}
	case persona.HarnessOpencode:
		config := userDir("XDG_CONFIG_HOME", ".config")
		data := userDir("XDG_DATA_HOME", ".local", "share")
		l.Vars = []StateVar{
			{"XDG_CONFIG_HOME", filepath.Join("opencode", "config")},
			{"XDG_DATA_HOME", filepath.Join("opencode", "data")},
			{"XDG_STATE_HOME", filepath.Join("opencode", "state")},
			{"XDG_CACHE_HOME", "cache"},
		}
		for _, v := range l.Vars {
			l.Dirs = append(l.Dirs, filepath.Join(v.Rel, "opencode"))
		}
		for _, name := range opencodeConfigSeeds {
			l.Seeds = append(l.Seeds, StateSeed{From: under(config, name), To: filepath.Join("opencode", "config", name)})
		}
		for _, name := range []string{"auth.json", "mcp-auth.json"} {
			l.Seeds = append(l.Seeds, credentialSeed(under(data, "opencode", name), filepath.Join("opencode", "data", "opencode", name)))
		}
	case persona.HarnessGemini:
		geminiState(l, get)
	default:
		return nil, fmt.Errorf("unknown harness %q; want one of %s", h, strings.Join(persona.Harnesses, ", "))
	}
	return l, nil
}

// applyState sets the variables of the per-session state (Options.State)
// over the persona's and the harness's own, with a note for each
// variable of the persona's env it replaces: the harness must keep its
// state where workforce made it.
func applyState(inv *Invocation, r *persona.Resolved, state []string) {
	if len(state) == 0 {
		return
	}
	names := map[string]bool{}
	for _, kv := range state {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
		if _, set := r.Env[k]; set {
			inv.Notes = append(inv.Notes, fmt.Sprintf("the persona's env sets %s: the run's per-session state replaces it", k))
		}
	}
	inv.SetEnv = slices.DeleteFunc(inv.SetEnv, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return names[k]
	})
	inv.SetEnv = append(inv.SetEnv, state...)
}
