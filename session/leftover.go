package session

import (
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/proctree"
)

// Processes the harness leaves running. A run adopts the orphans of its
// descendants (adoptOrphans) while its harness runs: a process the
// harness started that detached itself (setsid, a double fork) becomes a
// child of workforce when its parent exits, instead of init's.
//
// An unattended run (one-shot: run PERSONA TASK, a batch's task, a
// worker's task) ends them when the harness exits (endLeftovers), before
// anything reads the sandbox (live sync's last pass, sync-back, the
// branch) and before the sandbox is removed, and says so in a warning
// (the result's warnings): nobody is there to see them, and one left
// running would go on writing the sandbox while sync-back reads it, or,
// on a worker, read the next task's checkout. An interactive run leaves
// them running (a user may have had the agent start a server), as
// before; with --reuse it only notes them (leftovers) and does not keep
// a sandbox they may still change warm.
//
// The session lookup of a one-shot run (the harness's session store read
// by starting the harness: opencode session list, which loads the
// project's plugins) runs once the harness exited and before the
// leftovers are ended (findEarly), so that what it leaves is ended with
// them; that of a resumed session, at plan time, ends what it leaves as
// it returns (lookupSession). Both run confined as the run's harness is
// (Plan.confineLookup, and the run's own invocation).

// leftoverGrace is how long the processes a harness left running have to
// exit after SIGTERM before they are killed.
const leftoverGrace = 2 * time.Second

// harnessChildren returns this process's children that have not exited
// and started no earlier than since (clock ticks after boot, the
// harness's start; 0: any): after the harness exited, the processes it
// left behind, which this process adopted.
func harnessChildren(since uint64) []int {
	if childless() {
		return nil
	}
	var pids []int
	for _, p := range proctree.Children(os.Getpid()) {
		if p.Start >= since {
			pids = append(pids, p.PID)
		}
	}
	return pids
}

// leftovers returns the process ids of this process's children that are
// still running (zombies do not count): after the harness exited, the
// processes it left behind.
func leftovers() []int { return harnessChildren(0) }

// endLeftovers ends the processes the harness, started at since (clock
// ticks after boot), left running, and every process below them
// (proctree.End: SIGCONT and SIGTERM, SIGKILL leftoverGrace later), and
// reaps those that were its children. A process of workforce's own,
// started while the harness ran, would count: workforce starts none then.
// It returns the processes it ended.
func endLeftovers(since uint64) []proctree.Proc {
	ended := proctree.End(func() []int { return harnessChildren(since) }, leftoverGrace)
	for _, p := range ended {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(p.PID, &ws, syscall.WNOHANG, nil)
	}
	return ended
}

// endedWarning is the warning of a run that ended the processes procs,
// which its agent left running.
func endedWarning(procs []proctree.Proc) string {
	n := "1 process"
	if len(procs) != 1 {
		n = fmt.Sprintf("%d processes", len(procs))
	}
	return fmt.Sprintf("ended %s the agent left running: %s", n, proctree.Describe(procs, 10))
}
