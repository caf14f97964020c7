package batch

import (
	"os"
	"sync"
	"syscall"
)

// Pool runs tasks a few at a time.
type Pool struct {
	// Jobs is how many tasks run at once (at least 1).
	Jobs int

	mu       sync.Mutex
	procs    map[*os.Process]bool
	stopping os.Signal
}

// RunFunc runs one task to its end (RunTask): started must be called
// with its process once it runs, so that Signal reaches it.
type RunFunc func(t Task, started func(*os.Process)) Outcome

// Run runs tasks in their order, Jobs at a time, each with run, and calls
// done (from one goroutine at a time) as each ends. It returns when every
// task it started has ended; after Signal it starts no more, and the
// tasks it did not start are left out (stopped true).
func (p *Pool) Run(tasks []Task, run RunFunc, done func(Task, Outcome)) (stopped bool) {
	jobs := max(1, p.Jobs)
	p.mu.Lock()
	if p.procs == nil {
		p.procs = map[*os.Process]bool{}
	}
	p.mu.Unlock()
	next := make(chan Task)
	var wg sync.WaitGroup
	var doneMu sync.Mutex
	for range min(jobs, len(tasks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range next {
				if p.Stopping() {
					continue // stopped while it waited: not started
				}
				var proc *os.Process
				o := run(t, func(pr *os.Process) {
					proc = pr
					p.mu.Lock()
					p.procs[pr] = true
					sig := p.stopping
					p.mu.Unlock()
					if sig != nil { // stopped while it started
						pr.Signal(sig)
					}
				})
				if proc != nil {
					p.mu.Lock()
					delete(p.procs, proc)
					p.mu.Unlock()
				}
				doneMu.Lock()
				done(t, o)
				doneMu.Unlock()
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
	return stopped || p.Stopping()
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
