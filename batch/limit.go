package batch

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/proctree"
	"github.com/seed-3bc194a6/workforce/report"
)

// The pool's own hold on a task's time limit. A run enforces its task's
// timeout itself (run --timeout), with a timer in its own process: a run
// stopped with SIGSTOP (its agent can send it one) never sees it fire, and
// the pool, or a worker's slot, would wait for it for ever. So the pool
// holds the run to the limit too, from outside, on the run's whole
// process group (the run leads one, Command; its harness is in it) and
// every process below the run (the run adopts the orphans of its harness's
// processes: a process that left the group with setsid is below it all
// the same):
//
//   - from the task's timeout on, the pool looks at the run every
//     limitPoll; found stopped, or still there LimitGrace after the
//     timeout, it is continued and stopped: SIGCONT, then SIGTERM, to its
//     process group. The run, continued, stops its harness (its own timer
//     has fired by then) and syncs the work back, as on any SIGTERM;
//   - found stopped again after that, or still there KillGrace later,
//     the run and everything below it are stopped and killed at once
//     (proctree.Kill): its work stays in its session (sessions sync).
//
// The task then ends timed_out, with a warning in its result (or, when the
// run was killed and printed none, its error) saying what the pool did. A
// task with no timeout of its own has no such limit: the persona's
// timeoutSeconds, when set, lives in the run alone.

// LimitGrace is how long past its task's timeout a run that is not found
// stopped may still be there before the pool stops it: the pool counts
// from the child's start, the run from its harness's (after the copy of
// the project), and the run gives its harness 5 s to exit, ends what it
// left, then syncs the work back.
const LimitGrace = time.Minute

// KillGrace is how long after it stopped a run (SIGTERM) the pool waits
// before it kills it, unless it finds it stopped again: sync-back of a
// large piece of work takes time.
const KillGrace = 5 * time.Minute

// limitPoll is how often the pool looks whether a run past its time limit
// is stopped.
const limitPoll = 250 * time.Millisecond

// limit holds one run to its task's time limit.
type limit struct {
	d, grace, killGrace time.Duration
	proc                *os.Process
	start               uint64 // the run's start, in clock ticks after boot
	done                chan struct{}
	wg                  sync.WaitGroup

	mu                   sync.Mutex
	held, termed, killed bool
	overdue              time.Duration // how long past the limit it was stopped
}

// watchLimit starts holding the run proc to d (the task's timeout).
func (p *Pool) watchLimit(proc *os.Process, d time.Duration) *limit {
	l := &limit{d: d, grace: p.LimitGrace, killGrace: p.KillGrace, proc: proc, done: make(chan struct{})}
	if l.grace <= 0 {
		l.grace = LimitGrace
	}
	if l.killGrace <= 0 {
		l.killGrace = KillGrace
	}
	if pr, ok := proctree.Look(proc.Pid); ok {
		l.start = pr.Start
	}
	began := time.Now()
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		select {
		case <-l.done:
			return
		case <-time.After(d):
		}
		tick := time.NewTicker(limitPoll)
		defer tick.Stop()
		termAt := time.After(l.grace)
	waitTerm:
		for {
			select {
			case <-l.done:
				return
			case <-termAt:
				break waitTerm
			case <-tick.C:
				if l.stopped() {
					l.mu.Lock()
					l.held = true
					l.mu.Unlock()
					break waitTerm
				}
			}
		}
		if !l.signalGroup(syscall.SIGCONT, syscall.SIGTERM) {
			return
		}
		l.mu.Lock()
		l.termed, l.overdue = true, time.Since(began)-d
		l.mu.Unlock()
		killAt := time.After(l.killGrace)
		for {
			select {
			case <-l.done:
				return
			case <-killAt:
			case <-tick.C:
				if !l.stopped() {
					continue
				}
				l.mu.Lock()
				l.held = true
				l.mu.Unlock()
			}
			break
		}
		if !l.ours() {
			return
		}
		pid := l.proc.Pid
		proctree.Kill(func() []int { return []int{pid} })
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		l.mu.Lock()
		l.killed = true
		l.mu.Unlock()
	}()
	return l
}

// ours reports whether the run is still the process it started as and
// has not been waited for: its process id, and the process group it leads,
// are still its own to signal.
func (l *limit) ours() bool {
	if l.proc.Signal(syscall.Signal(0)) != nil {
		return false // waited for: the id may be another's by now
	}
	pr, ok := proctree.Look(l.proc.Pid)
	return !ok || pr.Start == l.start
}

// stopped reports whether the run is stopped.
func (l *limit) stopped() bool {
	pr, ok := proctree.Look(l.proc.Pid)
	return ok && pr.Stopped() && pr.Start == l.start
}

// signalGroup sends sigs, in turn, to the run's process group, while it
// is the run's; it reports whether it did.
func (l *limit) signalGroup(sigs ...syscall.Signal) bool {
	if !l.ours() {
		return false
	}
	for _, sig := range sigs {
		_ = syscall.Kill(-l.proc.Pid, sig)
	}
	return true
}

// finish stops holding the run, which has ended as o, and returns the
// task's outcome: timed_out, with what the pool did, when the pool
// stopped it (interrupted is kept when the pool itself was stopping).
func (l *limit) finish(o Outcome, stopping bool) Outcome {
	close(l.done)
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.termed {
		return o
	}
	msg := fmt.Sprintf("its run was still there %s past its time limit of %s: the pool stopped it (SIGTERM to its process group)", l.overdue.Round(time.Second), l.d)
	if l.held {
		msg = fmt.Sprintf("its run was found stopped (SIGSTOP) past its time limit of %s: the pool continued it and stopped it (SIGTERM to its process group)", l.d)
	}
	if l.killed {
		msg += ", then killed it (SIGKILL), with every process below it; its work stays in its session"
	}
	status := report.StatusTimedOut
	if stopping {
		status = report.StatusInterrupted
	}
	if o.Result != nil {
		r := *o.Result
		r.Warnings = append(append([]string(nil), r.Warnings...), msg)
		if r.Status == report.StatusInterrupted || r.Status == report.StatusTimedOut {
			r.Status = status
		}
		o.Result, o.Status = &r, r.Status
		return o
	}
	o.Status = status
	if o.Error != "" {
		msg += "; " + o.Error
	}
	o.Error = msg
	return o
}
