package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
)

// API keys never enter the sandbox. A harness in namespaces that
// authenticates with an API key gets a placeholder in its place, and a
// base URL at workforce's proxy, whose broker adds the real key on the
// way to the provider (egress.Broker). planBrokers does it for each row
// of harness.APIKeys of the run's harness:
//
//   - a key of the user's environment (ANTHROPIC_API_KEY for claude,
//     CODEX_API_KEY and OPENAI_API_KEY for codex, ANTHROPIC_API_KEY,
//     OPENAI_API_KEY and GOOGLE_GENERATIVE_AI_API_KEY for opencode,
//     GEMINI_API_KEY for gemini): the variable holds the placeholder;
//   - a key of a file seeded into the session's state
//     (harness.SeededSecrets: claude's settings env, codex's auth.json,
//     opencode's auth.json "api" entries): the session's copy holds the
//     placeholder (harnessState.rewrites), and the credential write-back
//     puts the user's key back before it compares and writes
//     (harness.SeedRewrite.Restore);
//   - claude's apiKeyHelper, a command of the user's own settings: left
//     out of the session's copy (which the agent can write), run once by
//     workforce when the network starts (keyHelper), outside the sandbox,
//     its output brokered; the copy gets the placeholder as
//     env.ANTHROPIC_API_KEY;
//   - the base URL: claude's ANTHROPIC_BASE_URL and gemini's
//     GOOGLE_GEMINI_BASE_URL variables (and claude's settings env, which
//     outranks the variable), codex's -c openai_base_url, opencode's
//     provider.ID.options.baseURL in OPENCODE_CONFIG_CONTENT
//     (harness.Options.BrokerURLs). The user's own https base URL (the
//     variable, claude's settings env, codex's config.toml
//     openai_base_url, opencode's provider options) is the broker's
//     upstream, the harness's path past the API's root
//     (harness.APIKey.BasePath) taken off; a plain-http one (a local model
//     server) is not brokered, and its key goes as it is.
//
// Every other provider key workforce knows (harness.ProviderKeyVar) is
// left out of the environment, and every other key of a seeded file
// (an opencode "api" entry of a provider without a broker route, a
// provider key in claude's settings env) out of the session's copy.
// The plan shows each brokered key with where it came from, and each one
// left out.

// helperTimeout bounds a key helper's run.
var helperTimeout = 30 * time.Second

// planBrokers brokers the API keys of harness h's run, as the comment
// above says: np gets the brokers, helpers and base URLs, shown what the
// plan shows, st (nil without a state) the rewrites of its seeds; it
// returns env as the harness gets it. addr is the proxy's address inside,
// up the user's own harness configuration.
func planBrokers(np *netPlan, shown *NetworkPlan, st *harnessState, h, addr string, env []string, up harness.UserPolicy) ([]string, error) {
	get := envGetter(env)
	var auth harness.SeededAuth
	if st != nil {
		var err error
		if auth, err = harness.SeededSecrets(h, env); err != nil {
			return nil, err
		}
	}
	phs := map[string]string{} // key → its placeholder
	phFor := func(key string) string {
		if p, ok := phs[key]; ok {
			return p
		}
		p := placeholderFor(key)
		phs[key] = p
		return p
	}
	rewrites := map[string]*harness.SeedRewrite{}
	rw := func(seed string) *harness.SeedRewrite {
		if rewrites[seed] == nil {
			rewrites[seed] = harness.NewSeedRewrite(seed)
		}
		return rewrites[seed]
	}
	kept := map[string]bool{}     // variables whose key goes as it is
	reason := map[string]string{} // why a variable is left out, when not as every other
	brokered := map[string]bool{}
	for _, row := range harness.APIKeys {
		if row.Harness != h {
			continue
		}
		base, baseOrigin := userBaseURL(h, row, env, up, auth)
		var secrets []harness.SeededSecret
		for _, s := range auth.Secrets {
			if s.Provider == row.Provider {
				secrets = append(secrets, s)
			}
		}
		upstream, why := brokerUpstream(base, row.BasePath)
		if why == "plain" {
			// A local model server: nothing to broker.
			for _, kv := range row.KeyVars {
				kept[kv] = true
			}
			continue
		}
		if why != "" {
			for _, kv := range row.KeyVars {
				reason[kv] = " (" + why + ": " + baseOrigin + ")"
			}
			for _, s := range secrets {
				if isOpencodeConfigKey(s) {
					opencodeKey(np, row.Provider, "")
				}
				if s.Seed != "" {
					rw(s.Seed).Delete = append(rw(s.Seed).Delete, s.Path)
				}
				shown.Dropped = append(shown.Dropped, s.Origin+" ("+why+": "+baseOrigin+")")
			}
			continue
		}
		any := false
		for _, kv := range row.KeyVars {
			key := get(kv)
			if key == "" {
				continue
			}
			ph := phFor(key)
			np.brokers = append(np.brokers, egress.Broker{Provider: row.Broker, Key: key, Placeholder: ph, Upstream: upstream})
			env = setEnv(env, kv, ph)
			brokered[kv] = true
			shown.Brokered = append(shown.Brokered, row.Provider+": $"+kv)
			any = true
		}
		set := map[string]bool{}
		for _, s := range secrets {
			if s.Helper != "" {
				continue
			}
			ph := phFor(s.Key)
			np.brokers = append(np.brokers, egress.Broker{Provider: row.Broker, Key: s.Key, Placeholder: ph, Upstream: upstream})
			if isOpencodeConfigKey(s) {
				// In the configuration workforce writes, which outranks
				// the seeded copies: the highest source's placeholder.
				opencodeKey(np, row.Provider, ph)
			}
			if s.Seed == "" {
				shown.Brokered = append(shown.Brokered, row.Provider+": "+s.Origin)
				any = true
				continue
			}
			rw(s.Seed).Set = append(rw(s.Seed).Set, harness.SeedValue{Path: s.Path, Value: ph})
			set[s.Seed+"\x00"+strings.Join(s.Path, "\x00")] = true
			shown.Brokered = append(shown.Brokered, row.Provider+": "+s.Origin)
			any = true
		}
		for _, s := range secrets {
			if s.Helper == "" {
				continue
			}
			ph := placeholder()
			np.helpers = append(np.helpers, keyHelper{provider: row.Broker, command: s.Helper, placeholder: ph, upstream: upstream, origin: s.Origin})
			r := rw(s.Seed)
			r.Delete = append(r.Delete, s.Path)
			if p := (harness.JSONPath{"env", "ANTHROPIC_API_KEY"}); !set[s.Seed+"\x00"+strings.Join(p, "\x00")] {
				r.Set = append(r.Set, harness.SeedValue{Path: p, Value: ph})
			}
			shown.Brokered = append(shown.Brokered, row.Provider+": "+s.Origin+" (run once when the session starts, outside the sandbox)")
			any = true
		}
		if !any {
			continue
		}
		burl := "http://" + addr + egress.BrokerPrefix + row.Broker + row.BasePath
		if isEnvName(row.BaseURL) {
			env = setEnv(env, row.BaseURL, burl)
		} else {
			if np.brokerURLs == nil {
				np.brokerURLs = map[string]string{}
			}
			np.brokerURLs[row.Provider] = burl
			if p, ok := harness.CodexProviderOf(np.env); ok && h == persona.HarnessCodex && slices.Contains(row.KeyVars, p.EnvKey) {
				// codex talks to the user's own provider, with its
				// env_key: its base_url at the broker.
				np.brokerURLs["model_providers."+p.ID] = burl
			}
		}
		for _, b := range auth.BaseURLs {
			if b.Provider == row.Provider {
				rw(b.Seed).Set = append(rw(b.Seed).Set, harness.SeedValue{Path: b.Path, Value: burl})
			}
		}
		if h == persona.HarnessClaude {
			approveClaude(auth.Approved, phs, rw)
		}
	}
	for _, s := range auth.Secrets {
		if s.Provider == "" {
			if isOpencodeConfigKey(s) {
				opencodeKey(np, s.Path[1], "")
			}
			if s.Seed != "" {
				rw(s.Seed).Delete = append(rw(s.Seed).Delete, s.Path)
			}
			shown.Dropped = append(shown.Dropped, s.Origin+" (no broker for it)")
		}
	}
	env = dropEnv(env, func(k string) bool {
		if harness.ProviderKeyVar(k) && !brokered[k] && !kept[k] {
			shown.Dropped = append(shown.Dropped, k+reason[k])
			return true
		}
		return false
	})
	if st != nil && len(rewrites) > 0 {
		st.rewrites = map[string]harness.SeedRewrite{}
		for seed, r := range rewrites {
			st.rewrites[seed] = *r
		}
	}
	return env, nil
}

// isOpencodeConfigKey reports whether s is a key an opencode
// configuration writes itself (provider.ID.options.apiKey).
func isOpencodeConfigKey(s harness.SeededSecret) bool {
	p := s.Path
	return len(p) == 4 && p[0] == "provider" && p[2] == "options" && p[3] == "apiKey"
}

// opencodeKey records the placeholder ("" none) opencode's configuration
// gets for provider id's key (harness.Options.OpencodeKeys).
func opencodeKey(np *netPlan, id, ph string) {
	if np.opencodeKeys == nil {
		np.opencodeKeys = map[string]string{}
	}
	np.opencodeKeys[id] = ph
}

// approveClaude rewrites claude's lists of approved keys: the suffix of
// each brokered key becomes its placeholder's (harness.ClaudeKeySuffix).
func approveClaude(lists []harness.SeededList, phs map[string]string, rw func(string) *harness.SeedRewrite) {
	for _, l := range lists {
		out := make([]string, 0, len(l.Values))
		changed := false
		for _, v := range l.Values {
			for key, ph := range phs {
				if v == harness.ClaudeKeySuffix(key) {
					v, changed = harness.ClaudeKeySuffix(ph), true
					break
				}
			}
			out = append(out, v)
		}
		if changed {
			rw(l.Seed).Set = append(rw(l.Seed).Set, harness.SeedValue{Path: l.Path, List: out})
		}
	}
}

// userBaseURL is the base URL the user's own environment or harness
// configuration gives harness h for the provider of row, and where it
// comes from: "" when none does.
func userBaseURL(h string, row harness.APIKey, env []string, up harness.UserPolicy, auth harness.SeededAuth) (string, string) {
	get := envGetter(env)
	switch h {
	case persona.HarnessClaude:
		// The settings env outranks the variable; the local settings the
		// user's.
		for i := len(auth.BaseURLs) - 1; i >= 0; i-- {
			if b := auth.BaseURLs[i]; b.Provider == row.Provider {
				return b.URL, b.Origin
			}
		}
	case persona.HarnessCodex:
		if p, ok := harness.CodexProviderOf(env); ok && slices.Contains(row.KeyVars, p.EnvKey) {
			return p.BaseURL, p.Origin
		}
		for _, e := range up.BaseURLs {
			if strings.HasSuffix(e.Origin, " openai_base_url") {
				return e.Value, e.Origin
			}
		}
		return "", ""
	case persona.HarnessGemini:
		// The variable outranks gemini's .env files (dotenv does not
		// override), its home's .gemini/.env the home's .env.
		if v := get(row.BaseURL); v != "" {
			return v, "$" + row.BaseURL
		}
		for _, dir := range []string{"/.gemini/", "/"} {
			for _, b := range auth.BaseURLs {
				if b.Provider == row.Provider && strings.HasSuffix(b.Seed, dir+".env") {
					return b.URL, b.Origin
				}
			}
		}
		return "", ""
	case persona.HarnessOpencode:
		// opencode's rank: OPENCODE_CONFIG over its global files,
		// opencode.jsonc over opencode.json over config.json.
		rank := func(origin string) int {
			switch {
			case get("OPENCODE_CONFIG") != "" && strings.HasPrefix(origin, get("OPENCODE_CONFIG")+" "):
				return 4
			case strings.Contains(origin, "opencode.jsonc "):
				return 3
			case strings.Contains(origin, "opencode.json "):
				return 2
			}
			return 1
		}
		best, origin, r := "", "", 0
		for _, e := range up.BaseURLs {
			if strings.HasSuffix(e.Origin, " provider."+row.Provider+".options.baseURL") && rank(e.Origin) > r {
				best, origin, r = e.Value, e.Origin, rank(e.Origin)
			}
		}
		return best, origin
	}
	if isEnvName(row.BaseURL) {
		if v := get(row.BaseURL); v != "" {
			return v, "$" + row.BaseURL
		}
	}
	return "", ""
}

// brokerUpstream is the broker's upstream for the user's base URL base
// of a harness whose base URL holds basePath past the API's root: "" for
// the provider's own. why is "plain" for a plain-http base URL (nothing
// to broker), or says why the base URL cannot be the broker's upstream.
func brokerUpstream(base, basePath string) (upstream, why string) {
	if base == "" {
		return "", ""
	}
	u, err := url.Parse(base)
	switch {
	case err == nil && u.Scheme == "http":
		return "", "plain"
	case err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return "", "your base URL is not an https URL of a host the broker can forward to"
	}
	p := strings.TrimSuffix(u.Path, "/")
	if basePath != "" {
		var ok bool
		if p, ok = strings.CutSuffix(p, basePath); !ok {
			return "", "your base URL does not end in " + basePath + ", the path the broker forwards below"
		}
	}
	u.Path, u.RawPath = p, ""
	return u.String(), ""
}

// startHelpers runs the key helpers of np, once each, and returns the
// brokers of the keys they print.
func (np *netPlan) startHelpers() ([]egress.Broker, error) {
	var out []egress.Broker
	for _, kh := range np.helpers {
		key, err := runKeyHelper(kh.command, np.env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kh.origin, err)
		}
		out = append(out, egress.Broker{Provider: kh.provider, Key: key, Placeholder: kh.placeholder, Upstream: kh.upstream})
	}
	return out, nil
}

// runKeyHelper runs command with sh -c in env, at most helperTimeout,
// and returns what it printed, trimmed: an error when it fails or prints
// nothing. Its error output is not shown (it could hold the key).
func runKeyHelper(command string, env []string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), helperTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Env = env
	cmd.WaitDelay = time.Second
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("the key helper did not finish in %s", helperTimeout)
	case err != nil:
		return "", fmt.Errorf("the key helper failed: %v", err)
	}
	key := strings.TrimSpace(out.String())
	if key == "" || strings.ContainsAny(key, "\r\n") {
		return "", errors.New("the key helper printed no key (or more than one line)")
	}
	return key, nil
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(a, b []byte) bool {
	var x, y any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	return da.Decode(&x) == nil && db.Decode(&y) == nil && reflect.DeepEqual(x, y)
}

// applyRewrite rewrites the state's copy of the seed rel (relative to the
// state directory), and of the files below it (a directory seed: opencode's
// configuration), when the run has a rewrite for them.
func (st *harnessState) applyRewrite(rel string) error {
	key := filepath.ToSlash(rel)
	for seed := range st.rewrites {
		if strings.HasPrefix(seed, key+"/") {
			if err := st.rewriteOne(seed); err != nil {
				return err
			}
		}
	}
	return st.rewriteOne(key)
}

// rewriteOne rewrites the state's copy of the seed rel, when the run has a
// rewrite for it.
func (st *harnessState) rewriteOne(rel string) error {
	r, ok := st.rewrites[rel]
	if !ok {
		return nil
	}
	rel = filepath.FromSlash(rel)
	data, err := readStateFile(st.Dir, rel)
	if err != nil {
		return nil // not seeded: nothing of the user's in it
	}
	out, err := r.Apply(data)
	if err != nil {
		return fmt.Errorf("cannot put the placeholders into the session's %s: %w", rel, err)
	}
	return writeStateFile(st.Dir, rel, out)
}
