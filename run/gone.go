package run

import (
	"errors"
	"fmt"
	"os"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/session"
)

// goneError adds to err, the error of a session id that names no session
// of home (*session.NoSessionError), what the history knows of why it is
// gone (history.WhyGone), and where its result is, as hints; err as it
// is otherwise. It stays a failure (exit 1), as before.
func goneError(home string, err error) error {
	var ns *session.NoSessionError
	if !errors.As(err, &ns) {
		return err
	}
	recs, _, rerr := history.ReadAll(home)
	last, ok := history.Last(recs, ns.ID)
	if rerr != nil || !ok {
		return refused(err, "workforce history lists the recent runs and whether their session can be resumed")
	}
	if last.SessionID == ns.ID {
		err = fmt.Errorf("%w: %s", err, history.WhyGone(last))
	} else {
		err = fmt.Errorf("%w: the last of its sessions, %s: %s", err, last.SessionID, history.WhyGone(last))
	}
	var hints []string
	if last.Mode == history.ModeOneShot {
		if _, serr := os.Stat(session.ResultDir(home, last.SessionID)); serr == nil {
			hints = append(hints, fmt.Sprintf("its result is kept: workforce sessions show %s", last.SessionID))
		} else {
			hints = append(hints, "its result was pruned since (workforce sessions prune-results, or by age and count after each one-shot run)")
		}
	}
	hints = append(hints, fmt.Sprintf("workforce run %s TASK --keep starts a new conversation whose session stays", last.Persona))
	return refused(err, hints...)
}
