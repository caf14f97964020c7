package session

import (
	"fmt"
	"time"
)

// A run that dies (kill -9, a crash) leaves its harness behind: the
// harness is sent SIGTERM when workforce dies (package harness), but it may
// trap it and go on writing in the sandbox as an orphan. A sync then would
// bring back half-written work, and a removal would pull the sandbox from
// under it: Sync and RemoveIdle refuse while the harness, or a process of
// the process group it leads, still runs, unless forced.
//
// Process ids are reused. The record keeps when the harness started
// (Record.HarnessStart) where the system says it; a process with the
// harness's id but another start time is not the harness. A record
// without it (format 1, or a system without /proc) is judged by the id
// alone: --force is the way out of a wrong guess.

// harnessGrace is how long Sync and RemoveIdle give a harness that
// outlived its run to exit: sent SIGTERM as workforce died, most exit at
// once, but not always before the user's next command starts.
const harnessGrace = time.Second

// HarnessRunningError reports a session whose run is gone but whose
// harness, or a process of the process group it led, still runs.
type HarnessRunningError struct {
	// ID is the session, PID its harness's process id.
	ID  string
	PID int
	// Member, when not 0, is a process of the harness's process group
	// that still runs, the harness itself gone.
	Member int
}

func (e *HarnessRunningError) Error() string {
	if e.Member != 0 {
		return fmt.Sprintf("the harness of session %s (process %d) has exited, but process %d of its process group is still running and may still write in the sandbox", e.ID, e.PID, e.Member)
	}
	return fmt.Sprintf("the harness of session %s (process %d) is still running though its workforce process is gone; it may still write in the sandbox", e.ID, e.PID)
}

// HarnessRunning returns a *HarnessRunningError when the session's harness
// was started and never seen to exit (its run died first) and it, or a
// process of the process group it leads, still runs; nil otherwise.
func (s *Session) HarnessRunning() error { return harnessRunning(&s.Record) }

func harnessRunning(r *Record) error {
	if r.HarnessPID <= 0 || r.ExitCode != nil {
		return nil // never started, or its run saw it exit
	}
	pid := r.HarnessPID
	p := lookProc(pid)
	if p.exists {
		if r.HarnessStart == nil || p.start == nil || *p.start == *r.HarnessStart {
			return &HarnessRunningError{ID: r.ID, PID: pid}
		}
		// Another process has the id: the harness is gone, and so is
		// any group it led (the system reuses no id a group still has).
		return nil
	}
	if r.HarnessStart != nil {
		if m := groupMember(pid, r.HarnessStart); m != 0 {
			return &HarnessRunningError{ID: r.ID, PID: pid, Member: m}
		}
	}
	return nil
}

// awaitHarness waits, at most harnessGrace, for a harness that outlived
// its run to exit; it returns HarnessRunning's error after that.
func (s *Session) awaitHarness() error {
	deadline := time.Now().Add(harnessGrace)
	for {
		err := s.HarnessRunning()
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
