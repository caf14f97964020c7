package session

import "golang.org/x/sys/unix"

// adoptOrphans makes this process the reaper of its descendants' orphans
// (PR_SET_CHILD_SUBREAPER), so that a process the harness leaves running,
// however it detached itself (setsid, a double fork), stays below
// workforce, where leftovers and endLeftovers find it, and where a batch's
// pool finds it below the run (package batch).
func adoptOrphans() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }
