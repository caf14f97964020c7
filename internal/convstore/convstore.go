// Package convstore says where each harness keeps its conversations (its
// session store), as the environment of the harness locates it: the one
// table that package harness (finding the conversation a run started)
// and history/sessions (reading what each conversation consumed) both
// read. What is in a store, and how it was measured, is in those
// packages' docs; this package holds only where.
//
// It imports nothing of workforce, so that any package may read it.
package convstore

import "path/filepath"

// Location is where a harness keeps its conversations: the directory
// the variable Var names, else Home below the user's home directory;
// then Sub below that.
type Location struct {
	// Harness is the harness, as workforce names it.
	Harness string
	// Var is the variable that moves the store's base directory.
	Var string
	// Home is the base directory relative to the user's home, when Var
	// is unset.
	Home []string
	// Sub is the store below the base directory ("" for the base itself).
	Sub string
}

// locations are the stores, by harness:
//
//   - claude: $CLAUDE_CONFIG_DIR, else ~/.claude;
//   - codex: $CODEX_HOME, else ~/.codex;
//   - opencode: $XDG_DATA_HOME/opencode, else ~/.local/share/opencode;
//   - gemini: $GEMINI_CLI_HOME/.gemini, else ~/.gemini.
var locations = [...]Location{
	{Harness: "claude", Var: "CLAUDE_CONFIG_DIR", Home: []string{".claude"}},
	{Harness: "codex", Var: "CODEX_HOME", Home: []string{".codex"}},
	{Harness: "opencode", Var: "XDG_DATA_HOME", Home: []string{".local", "share"}, Sub: "opencode"},
	{Harness: "gemini", Var: "GEMINI_CLI_HOME", Sub: ".gemini"},
}

// Locations returns the stores of all harnesses: claude, codex,
// opencode, gemini.
func Locations() []Location {
	out := make([]Location, len(locations))
	copy(out, locations[:])
	return out
}

// Of returns harness h's store; false when h keeps none workforce knows.
func Of(h string) (Location, bool) {
	for _, l := range locations {
		if l.Harness == h {
			return l, true
		}
	}
	return Location{}, false
}

// Dir is the store's directory as getenv locates it ("" is unset): the
// directory Var names when it is absolute, else Home below $HOME; then
// Sub. It is "" when neither is known (Var unset or relative, HOME not
// absolute).
func (l Location) Dir(getenv func(string) string) string {
	base := ""
	if d := getenv(l.Var); filepath.IsAbs(d) {
		base = filepath.Clean(d)
	} else if home := getenv("HOME"); filepath.IsAbs(home) {
		base = filepath.Join(append([]string{home}, l.Home...)...)
	}
	if base == "" {
		return ""
	}
	return filepath.Join(base, l.Sub)
}
