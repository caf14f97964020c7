package harness

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Per-session state. Each harness keeps its configuration, its login and
// its history in the user's home; a sandboxed run moves all of it into a
// state directory of the session, by the variables each harness reads,
// seeded from the user's own configuration so that their settings, MCP
// servers and login keep working (package session makes, seeds and
// discards it, and writes a refreshed credential back). Measured on
// claude 2.1.330, codex 0.169.0 and opencode 1.18.33 (docs/sandbox.md;
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
	// Identity, for a credential, is the path of a JSON value that names
	// the account, which a refresh keeps: a credential whose account
	// changed is not written back.
	Identity []string
}

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
// hide: git's (user.name for the agent's commits, ignores, attributes),
// gh's, and go's `go env -w` settings.
var opencodeConfigSeeds = []string{"opencode", "git", "gh", filepath.Join("go", "env")}

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
		l.Seeds = append(l.Seeds, StateSeed{From: under(creds, ".credentials.json"), To: filepath.Join("claude", ".credentials.json"), Credential: true})
	case persona.HarnessCodex:
		src := userDir("CODEX_HOME", ".codex")
		l.Vars = []StateVar{{"CODEX_HOME", "codex"}}
		l.Dirs = []string{"codex"}
		for _, name := range codexSeeds {
			l.Seeds = append(l.Seeds, StateSeed{From: under(src, name), To: filepath.Join("codex", name)})
		}
		l.Seeds = append(l.Seeds,
			StateSeed{From: under(src, "auth.json"), To: filepath.Join("codex", "auth.json"), Credential: true, Identity: []string{"tokens", "account_id"}},
			StateSeed{From: under(src, ".credentials.json"), To: filepath.Join("codex", ".credentials.json"), Credential: true},
			StateSeed{From: under(src, "gateway_oauth.json"), To: filepath.Join("codex", "gateway_oauth.json"), Credential: true})
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
			l.Seeds = append(l.Seeds, StateSeed{From: under(data, "opencode", name), To: filepath.Join("opencode", "data", "opencode", name), Credential: true})
		}
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
