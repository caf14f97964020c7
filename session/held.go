package session

import (
	"context"
	"fmt"
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
// each file; held configuration leaves the session in phase Review, for
// sessions apply. Neither changes how the run ended: its status and exit
// status are what they would be otherwise. Diff, Changed and a review's
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
