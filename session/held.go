package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
)

// Policy files and executable configuration (mount's held.go). A
// sync-back never brings the agent's changes to policy files
// (mount.Report.Refused), and brings those to executable configuration
// (mount.Report.Held) only when asked (Options.SyncConfig,
// SyncOptions.SyncConfig: run --sync-config, sessions sync --sync-config,
// and sessions apply, which is the user's review). Either keeps the
// session, with the agent's versions in its sandbox, and a warning names
// each file. The session's phase stays Synced: the rest of the work is
// applied, and a resumed run syncs back as a run does (phase Review would
// hold all of its work). Neither changes how the run ended: its status
// and exit status are what they would be otherwise. Diff, Changed and a review's
// listing (Pending) show held configuration as the change sessions apply
// would bring; policy files are never a change to apply.

// warnKept warns of the policy files refused and the configuration held
// by the sync-back rep of s.
func (s *Session) warnKept(rep *mount.Report, warn func(string)) {
	tree := filepath.Join(s.Dir, mount.TreeDir)
	if len(rep.Refused) > 0 {
		warn(fmt.Sprintf("the agent changed policy files, which never sync back: %s; its versions stay in the session, in %s (workforce sessions rm %s drops them)",
			names(rep.Refused), quote.Name(tree), s.ID()))
	}
	if len(rep.Held) > 0 {
		warn(fmt.Sprintf("held for review, not synced back: %s: configuration a harness, an editor or a tool runs; workforce sessions diff %s shows it, workforce sessions apply %s applies it (--sync-config lets it sync back with the rest)",
			names(rep.Held), s.ID(), s.ID()))
	}
}

// names lists paths for a sentence, each quoted as a name.
func names(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = quote.Name(p)
	}
	return strings.Join(q, ", ")
}

// Pending returns what sessions apply --sync-deletes would bring now,
// held configuration included (a review's listing), without doing it.
func (s *Session) Pending() (*mount.Report, error) {
	box, err := mount.Open(s.Dir)
	if err != nil {
		return nil, err
	}
	return box.Sync(context.Background(), mount.SyncOptions{Deletes: true, DryRun: true, SyncConfig: true})
}

// gitConfigs are git's own configuration files and directory under the
// user's home: hooks path, aliases, fsmonitor and pager run code in any
// later git command.
var gitConfigs = []string{".config/git", ".gitconfig"}

// codeConfig is a path whose content runs code in the user's later
// sessions, and what it is, for a message.
type codeConfig struct {
	path, what string
}

// codeConfigs returns the paths, under the user's home h, whose content
// runs code in the user's later sessions: the harnesses' own
// configuration (harnessConfigs) and git's (gitConfigs).
func codeConfigs(h string) []codeConfig {
	var out []codeConfig
	for _, c := range harnessConfigs {
		out = append(out, codeConfig{filepath.Join(h, c), "a harness's own configuration"})
	}
	for _, c := range gitConfigs {
		out = append(out, codeConfig{filepath.Join(h, c), "git's own configuration"})
	}
	return out
}

// ConfigRootError is the error of a run in a sandbox whose project root
// is at or inside a harness's or git's own configuration in the user's
// home (codeConfigs): what the agent's work brings back there runs code
// in the user's later sessions, as --sandbox-allow of it would
// (CheckAllowIn).
type ConfigRootError struct {
	// Root is the project root; Config the configuration it is in.
	Root, Config string
	what         string
}

func (e *ConfigRootError) Error() string {
	return fmt.Sprintf("the project root %s is in %s, %s, which runs code in your later sessions: no run syncs work back there", e.Root, e.Config, e.what)
}

// checkRoot returns a *ConfigRootError when the project root root
// (canonical) is at or inside a harness's or git's own configuration, or
// where a link of it leads. A root above one (a home directory kept as a
// repository) is no error: the configuration in it is held
// (mount.HeldConfig).
func checkRoot(root string) error {
	h, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(h); err == nil {
		h = real
	}
	for _, c := range codeConfigs(h) {
		// The configuration where it is, and where a link leads (a
		// ~/.claude kept in a dotfiles repository).
		at := []string{c.path}
		if real, err := filepath.EvalSymlinks(c.path); err == nil && real != c.path {
			at = append(at, real)
		}
		for _, d := range at {
			if root == d || strings.HasPrefix(root, d+string(filepath.Separator)) {
				return &ConfigRootError{Root: root, Config: c.path, what: c.what}
			}
		}
	}
	return nil
}
