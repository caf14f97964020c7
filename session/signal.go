package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/proctree"
)

// This file is the one signal handler of workforce: a run (Run, Plan.Run,
// the fetch of its skills) and a sync (Session.Sync) each install it for
// their time, and the harness is started through it, so that it is the one that passes
// signals on to the harness. It catches signals through the caller's
// Notify (the program's one signal source, in package main), never by
// itself: without one, signals keep their default action. The package documentation says what each
// signal does; a signal that asks to stop at once calls the caller's
// Abort, which ends the process (the command line decides with what
// status), and nothing else here ends it.

// ParentDeathSignal is the signal a run started by a batch's pool or a
// queue worker (package batch) gets from the kernel when that parent dies
// without passing a signal on (SIGKILL, a crash). The kernel sends it
// again each time the orphan passes on to the next exiting thread of the
// dead parent: a few times within a millisecond or so (measured). So it is
// a signal of its own, which a run takes once, ever, as SIGTERM (it stops
// its harness and syncs the work back); had it been SIGTERM, its repeats
// would count as the second SIGTERM, which stops sync-back, and the work
// of a run whose pool was killed would stay in its session.
const ParentDeathSignal = syscall.SIGUSR1

// Notify starts catching sigs on c, as signal.Notify does, until the
// stop it returns is called: the program's one signal source, which its
// command layer hands to a run (Options.Signals and the like).
type Notify func(c chan<- os.Signal, sigs ...os.Signal) (stop func())

// orphaned is set once the parent-death signal came.
var orphaned atomic.Bool

// The phases of a run, for its signals.
const (
	phaseCreate   int32 = iota // the sandbox is made: any signal stops it
	phaseHarness               // the harness runs: the signals are its own
	phaseSync                  // sync-back: a signal stops it, a second SIGINT aborts
	phaseSyncOnly              // a sync alone: one signal stops it, a second aborts
)

// signals is the signal handler of a run or a sync.
type signals struct {
	ch     chan os.Signal
	abort  func(os.Signal)
	unwire func() // stops catching
	phase  atomic.Int32
	stops  atomic.Int32 // SIGTERM and SIGHUP received
	ints   atomic.Int32 // SIGINT received while syncing
	all    atomic.Int32 // every signal, in phaseSyncOnly
	hup    atomic.Bool
	last   atomic.Value // os.Signal

	mu     sync.Mutex
	cancel context.CancelFunc // of the current phase, when it can stop
	// creating says a signal came while the sandbox was made (or the
	// skills fetched): it stops the making, and the run.
	creating bool
	proc     *harness.Process // the harness, while it runs
	queued   []os.Signal      // for the harness, come before it started

	done chan struct{}
}

// watchSignals installs the handler for SIGINT, SIGTERM, SIGHUP and the
// parent-death signal through notify, in phase; abort, when set, is
// called with a signal that asks to stop at once. stop removes it. With a
// nil notify nothing is caught.
func watchSignals(phase int32, abort func(os.Signal), notify Notify) *signals {
	s := &signals{ch: make(chan os.Signal, 8), abort: abort, done: make(chan struct{}), unwire: func() {}}
	s.phase.Store(phase)
	if notify != nil {
		s.unwire = notify(s.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, ParentDeathSignal)
	}
	go func() {
		defer close(s.done)
		for sig := range s.ch {
			s.handle(sig)
		}
	}()
	return s
}

func (s *signals) handle(sig os.Signal) {
	if sig == ParentDeathSignal {
		if orphaned.Swap(true) {
			return // the kernel's repeat
		}
		sig = syscall.SIGTERM
	}
	s.last.Store(sig)
	// The phase is read, and a signal of phaseCreate noted, under mu:
	// enter changes the phase under it, so that once the run entered
	// the next phase, every signal of this one is noted (stoppedCreating).
	s.mu.Lock()
	phase := s.phase.Load()
	if phase == phaseCreate {
		s.creating = true
	}
	s.mu.Unlock()
	stop := false
	switch sig {
	case syscall.SIGHUP:
		s.hup.Store(true)
		stop = s.stops.Add(1) >= 2
	case syscall.SIGTERM:
		stop = s.stops.Add(1) >= 2
	case os.Interrupt:
		if phase == phaseSync {
			if s.ints.Add(1) >= 2 {
				s.abortWith(sig)
			}
			stop = true
		}
	}
	switch phase {
	case phaseCreate:
		stop = true // any signal stops the copy
	case phaseHarness:
		stop = false // the harness's to handle
		// Ctrl-C reaches the harness from the terminal, which signals
		// the whole process group; SIGTERM and SIGHUP sent to workforce
		// alone are passed on.
		if sig != os.Interrupt {
			s.mu.Lock()
			if s.proc != nil {
				_ = s.proc.Signal(sig)
			} else {
				s.queued = append(s.queued, sig)
			}
			s.mu.Unlock()
		}
	case phaseSyncOnly:
		if s.all.Add(1) >= 2 {
			s.abortWith(sig)
		}
		stop = true
	}
	if stop {
		s.mu.Lock()
		if s.cancel != nil {
			s.cancel()
		}
		s.mu.Unlock()
	}
}

func (s *signals) abortWith(sig os.Signal) {
	if s.abort != nil {
		s.abort(sig)
	}
}

// enter starts phase p and returns its context, from parent, cancelled
// by the signals that stop it.
func (s *signals) enter(parent context.Context, p int32) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	s.mu.Lock()
	s.cancel = cancel
	s.phase.Store(p)
	creating := s.creating
	s.mu.Unlock()
	switch {
	case p == phaseSync && s.stops.Load() >= 2:
		cancel()
	case p == phaseCreate && creating:
		// Any signal stops the making of the sandbox, also one that
		// came before it began: during the fetch of the skills, whose
		// handler the run took over (Options.sigs), once the fetch was
		// done.
		cancel()
	}
	return ctx, cancel
}

// stoppedCreating reports whether a signal came in phaseCreate: called
// once the run entered its next phase, it sees every one, also one that
// came after the making of the sandbox last looked at its context.
func (s *signals) stoppedCreating() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creating
}

// lastSignal is the last signal received, nil when none was.
func (s *signals) lastSignal() os.Signal {
	sig, _ := s.last.Load().(os.Signal)
	return sig
}

func (s *signals) stop() {
	s.unwire()
	close(s.ch)
	<-s.done
}

// harnessRun is how a harness that runHarness started ended.
type harnessRun struct {
	exit harness.Exit
	// timedOut says the time limit stopped it.
	timedOut bool
	// ended are the processes it left running that were ended as it
	// exited (a one-shot run's: endLeftovers).
	ended []proctree.Proc
	// network is what the proxy of a harness in namespaces saw, nil
	// for one without.
	network *egress.Summary
}

// runHarness starts inv in dir, stopped at timeout when it is positive,
// passes it the signals of phaseHarness while it runs, calls started with
// its process id once it started, and waits for it; it reports whether
// the timeout stopped it. A one-shot harness (inv.OneShot: nobody is
// there) has the processes it leaves running ended as it exits, before
// anything reads the sandbox: this process adopts them while it runs
// (adoptOrphans), and ends them (endLeftovers) once it exited. exited,
// when set, is called once the harness exited and before they are ended:
// what it starts (the session lookup of findEarly) is ended with them.
//
// With nw's plan (a harness in namespaces), the proxy serves the
// listeners the launcher handed over while the harness runs (egress.go),
// and r.network is what it saw.
//
// early, when set, is inv's launcher, started before the sandbox was made
// (spawnHarness): it is launched in dir, with the streams it was started
// with.
func (s *signals) runHarness(early *harness.Spawned, inv *harness.Invocation, dir string, timeout time.Duration, stdin io.Reader, stdout, stderr io.Writer, started func(pid int), exited func(), nw netHooks) (r harnessRun, err error) {
	ctx := context.Background()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	if inv.OneShot {
		adoptOrphans()
	}
	var p *harness.Process
	if early != nil {
		p, err = early.Start(ctx, dir)
	} else {
		p, err = harness.Start(ctx, inv, dir, stdin, stdout, stderr)
	}
	if err != nil {
		return r, err
	}
	proxy, err := startNetwork(nw.plan, p.Listeners(), nw.denied)
	if err != nil {
		// No way out but the proxy: without it, the harness does not
		// run.
		_ = p.Signal(syscall.SIGKILL)
		_, _ = p.Wait()
		return r, fmt.Errorf("cannot start the network proxy: %w", err)
	}
	var since uint64
	if hp, ok := proctree.Look(p.Pid()); ok {
		since = hp.Start
	}
	if started != nil {
		started(p.Pid())
	}
	s.mu.Lock()
	s.proc = p
	for _, sig := range s.queued {
		_ = p.Signal(sig)
	}
	s.queued = nil
	s.mu.Unlock()
	r.exit, err = p.Wait()
	r.network = proxy.stop()
	s.mu.Lock()
	s.proc = nil
	s.mu.Unlock()
	r.timedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	if exited != nil {
		exited()
	}
	// In namespaces, the launcher ended what the harness left as it
	// exited (harness.Process.Left); nothing could leave them.
	for _, l := range p.Left() {
		r.ended = append(r.ended, proctree.Proc{PID: l.PID, Comm: l.Comm})
	}
	if inv.OneShot {
		r.ended = append(r.ended, endLeftovers(since)...)
	}
	return r, err
}
