package harness

import (
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/discover"
)

// gemini's per-session state. GEMINI_CLI_HOME moves its home, where it
// keeps all of its own files in .gemini/ (settings, instructions, skills,
// commands, extensions, policies, its login, its sessions in tmp/), and
// where it also looks for .agents/skills and .env. Seeded from the user's
// gemini home ($GEMINI_CLI_HOME, else ~): the allowlist below; never its
// history (tmp/, history/, projects.json), nor trustedFolders.json
// (workforce decides the trust: gemini.go). The invocation then writes
// the session's settings.json (the user's with the persona's settings)
// and GEMINI.md (the user's with the persona's prompt) over the copies
// (Invocation.StateFiles).

// geminiSeeds are the entries of the user's <home>/.gemini that
// configure gemini 0.61.0, besides its global instruction files (the
// names of context.fileName) and its login.
var geminiSeeds = []string{
	"settings.json", ".env", "keybindings.json", "google_accounts.json",
	"commands", "skills", "agents", "policies", "extensions", "acknowledgments",
	// MCP and agent-to-agent OAuth tokens (a JSON list), and the
	// encrypted credential store: copied, never written back (a token
	// refreshed in the session is lost; the user's stays).
	"mcp-oauth-tokens.json", "a2a-oauth-tokens.json", "gemini-credentials.json",
}

// geminiState fills l with gemini's state in the environment get.
func geminiState(l *StateLayout, get func(string) string) {
	src := discover.GeminiHome(get)
	if !filepath.IsAbs(src) {
		src = ""
	}
	under := func(name ...string) string {
		if src == "" {
			return ""
		}
		return filepath.Join(append([]string{src}, name...)...)
	}
	l.Vars = []StateVar{{"GEMINI_CLI_HOME", geminiHomeRel}}
	l.Dirs = []string{filepath.Join(geminiHomeRel, ".gemini")}
	names := append([]string(nil), geminiSeeds...)
	if src != "" {
		for _, n := range discover.LoadGeminiConfig(get, src).FileNames {
			if filepath.IsLocal(n) && filepath.Base(n) == n {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		l.Seeds = append(l.Seeds, StateSeed{From: under(".gemini", n), To: filepath.Join(geminiHomeRel, ".gemini", n)})
	}
	l.Seeds = append(l.Seeds,
		StateSeed{From: under(".agents", "skills"), To: filepath.Join(geminiHomeRel, ".agents", "skills")},
		StateSeed{From: under(".env"), To: filepath.Join(geminiHomeRel, ".env")},
		credentialSeed(under(".gemini", "oauth_creds.json"), filepath.Join(geminiHomeRel, ".gemini", "oauth_creds.json")),
	)
}
