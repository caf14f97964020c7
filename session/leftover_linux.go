package session

import (
	"errors"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this process the reaper of its descendants' orphans
// (PR_SET_CHILD_SUBREAPER), so that a process the harness leaves running,
// however it detached itself (setsid, a double fork), stays below
// workforce, where leftovers and endLeftovers find it, and where a batch's
// pool finds it below the run (package batch).
func adoptOrphans() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// childless reports whether this process has no child, dead or alive:
// waitid says so at once, the common case, which then needs no look at
// every process of the system.
func childless() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD)
}
