//go:build !linux

package session

// proc is what the system says of a process.
type proc struct {
	exists bool
	start  *ProcStart
}

// lookProc knows only whether a process has the id.
func lookProc(pid int) proc { return proc{exists: alive(pid)} }

// procStart is unknown here.
func procStart(int) *ProcStart { return nil }

// groupMember is never called without a start time.
func groupMember(int, *ProcStart) int { return 0 }
