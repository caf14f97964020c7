package batch

import (
	"github.com/seed-3bc194a6/workforce/report"
	"os"
	"sync"
	"syscall"
	"time"
)

// Pool runs tasks a few at a time.
type Pool struct {
	// Jobs is how many tasks run at once (at least 1).
	Jobs int
	// LimitGrace and KillGrace, when positive, replace the package's
	// (limit.go) for this pool: how long past its task's timeout a run
	// may be there before the pool stops it, and how long after that
	// before it kills it.
	LimitGrace, KillGrace time.Duration

	mu       sync.Mutex
	procs    map[*os.Process]bool
	stopping os.Signal
}

// RunFunc runs one task to its end (RunTask): started must be called
// with its process once it runs, so that Signal reaches it and the pool
// holds it to the task's time limit (limit.go).
type RunFunc func(t Task, started func(*os.Process)) Outcome

// Run runs tasks in their order, Jobs at a time, each with run, and calls
// done as each ends, from one goroutine, in the order they end. It returns
// when every task it started has ended and done was called for it; after
// Signal it starts no more, and the tasks it did not start are left out
// (stopped true). A task with a timeout is held to it by the pool too,
// however its run fares (limit.go): past it, a run found stopped, or still
// there after a grace, is stopped, then killed, and ends timed_out.
//
// done runs apart from the tasks: a slot whose task ended starts the next
// one at once, without waiting for done (the caller writes the task's
// state and prints its line there, which a loaded disk can make slow).
func (p *Pool) Run(tasks []Task, run RunFunc, done func(Task, Outcome)) (stopped bool) {
	jobs := max(1, p.Jobs)
	p.mu.Lock()
	if p.procs == nil {
		p.procs = map[*os.Process]bool{}
	}
	p.mu.Unlock()
	type ended struct {
		t Task
		o Outcome
	}
	ends := make(chan ended, len(tasks)) // never full: a slot never waits
	reported := make(chan struct{})
	go func() {
		defer close(reported)
		for e := range ends {
			done(e.t, e.o)
		}
	}()
	next := make(chan Task)
	var wg sync.WaitGroup
	for range min(jobs, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				if p.Stopping() {
					continue // stopped while it waited: not started
				}
				var proc *os.Process
				var lim *limit
				o := run(t, func(pr *os.Process) {
					proc = pr
					if d := t.TimeoutDuration(); d > 0 {
						lim = p.watchLimit(pr, d)
					}
					p.mu.Lock()
					p.procs[pr] = true
					sig := p.stopping
					p.mu.Unlock()
					if sig != nil { // stopped while it started
						pr.Signal(sig)
					}
				})
				if lim != nil {
					o = lim.finish(o, p.Stopping())
				}
				o = stoppedEarly(o, p.Stopping())
				if proc != nil {
					p.mu.Lock()
					delete(p.procs, proc)
					p.mu.Unlock()
				}
				ends <- ended{t, o}
			}
		}()
	}
	for _, t := range tasks {
		if p.Stopping() {
			stopped = true
			break
		}
		next <- t
	}
	close(next)
	wg.Wait()
	close(ends)
	<-reported
	return stopped || p.Stopping()
}

// stoppedEarly is o, interrupted when the pool was stopping and the run
// died of a signal before it printed a result: the signal came while the
// child was starting, before it could take it as run does (stop the
// harness, end with a result). Such a task did not fail: it is pending
// again, and the next run of the batch runs it.
func stoppedEarly(o Outcome, stopping bool) Outcome {
	if !stopping || o.Result != nil || o.ExitCode <= 128 || o.Status != report.StatusFailed {
		return o
	}
	o.Status = report.StatusInterrupted
	o.Error = "stopped by the batch's signal before its run printed a result (" + o.Error + ")"
	return o
}

// Stopping reports whether Signal was called.
func (p *Pool) Stopping() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopping != nil
}

// Signal stops the pool: no task starts after it, and sig goes to every
// running task's process (the child run, which passes it on to its
// harness and syncs the work back). It may be called again (a second
// SIGTERM stops run's sync-back after the current file).
func (p *Pool) Signal(sig os.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopping = sig
	for pr := range p.procs {
		pr.Signal(sig)
	}
}

// Forwarded is the signal the pool passes on to its tasks for sig, a
// signal the pool got: SIGTERM for SIGINT (run leaves SIGINT to the
// terminal, and a child in its own process group has none), the signal
// itself otherwise.
func Forwarded(sig os.Signal) os.Signal {
	if sig == os.Interrupt {
		return syscall.SIGTERM
	}
	return sig
}
