package session

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
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
	// The agent's versions: the copy's tree, or the overlay's upper
	// layer (its tree is empty outside the harness's namespace).
	tree := filepath.Join(s.Dir, mount.TreeDir)
	if s.Record.Tree == TreeOverlay {
		tree = filepath.Join(s.Dir, mount.UpperDir)
	}
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
// (CheckAllowIn). It is also the error of a project root at or above the
// user's home directory (a home directory kept as a repository), where
// Config is the home directory: the shell's start files (.bashrc,
// .profile), ~/.ssh/authorized_keys and ~/.config/systemd/user are
// there, and whatever else runs code at the user's next login, which no
// table of held files can list.
type ConfigRootError struct {
	// Root is the project root; Config the configuration it is in, or
	// the home directory it holds.
	Root, Config string
	what         string
}

func (e *ConfigRootError) Error() string {
	if e.what == "" {
		return fmt.Sprintf("the project root %s holds your home directory %s, whose files (.bashrc, .profile, .ssh/authorized_keys, .config/systemd) run code in your later sessions: no run syncs work back there; run in a project below it, or pass --root DIR", e.Root, e.Config)
	}
	return fmt.Sprintf("the project root %s is in %s, %s, which runs code in your later sessions: no run syncs work back there", e.Root, e.Config, e.what)
}

// checkRoot returns a *ConfigRootError when the project root root
// (canonical) is at or inside a harness's or git's own configuration, or
// where a link of it leads, or at or above the user's home directory.
func checkRoot(root string) error {
	h, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(h); err == nil {
		h = real
	}
	if pathutil.Within(root, h) {
		return &ConfigRootError{Root: root, Config: h}
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

// startHooksDirs starts asking git for root's hooks directories
// (hooksDirs) on a goroutine, and returns the function that waits for
// the answer: git's start, 1 to 2 ms, goes by while the rest of the run
// is planned.
func startHooksDirs(root string) func() []string {
	ch := make(chan []string, 1)
	go func() { ch <- hooksDirs(root) }()
	return sync.OnceValue(func() []string { return <-ch })
}

// hooksDirs returns the git hooks directories of the real repository
// root is in (absolute): where core.hooksPath points, by the user's
// configuration and the repository's, and the git directory's hooks/,
// which git runs once core.hooksPath is unset; none when root is in no
// repository or git cannot say. Git runs under the Trusted policy, in
// the real repository: the sandbox's configuration is never read, and
// rev-parse runs nothing a configuration names.
func hooksDirs(root string) []string {
	out, err := git.Repo{Dir: root, Trust: git.Trusted, Limit: git.UntrustedLimit}.Run(context.Background(), nil, "rev-parse", "--git-path", "hooks", "--git-common-dir")
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if err != nil || len(lines) != 2 || lines[0] == "" || lines[1] == "" {
		return nil
	}
	lines[1] = filepath.Join(lines[1], "hooks")
	var dirs []string
	for _, d := range lines {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		if d = filepath.Clean(d); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}
