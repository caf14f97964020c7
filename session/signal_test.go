package session

import (
	"context"
	"os"
	"syscall"
	"testing"
)

// TestSignalsParentDeath: during sync-back a second SIGTERM or SIGHUP
// stops it; the parent-death signal counts as a SIGTERM once, however
// many times the kernel sends it, and a SIGTERM after it is the second.
func TestSignalsParentDeath(t *testing.T) {
	tests := []struct {
		name    string
		sigs    []os.Signal
		stopped bool // the sync's context is cancelled
		aborted bool
		last    os.Signal
	}{
		{"one SIGTERM", []os.Signal{syscall.SIGTERM}, false, false, syscall.SIGTERM},
		{"two SIGTERMs", []os.Signal{syscall.SIGTERM, syscall.SIGTERM}, true, false, syscall.SIGTERM},
		{"SIGTERM then SIGHUP", []os.Signal{syscall.SIGTERM, syscall.SIGHUP}, true, false, syscall.SIGHUP},
		{"the parent's death", []os.Signal{ParentDeathSignal}, false, false, syscall.SIGTERM},
		{"the parent's death, sent four times", []os.Signal{ParentDeathSignal, ParentDeathSignal, ParentDeathSignal, ParentDeathSignal}, false, false, syscall.SIGTERM},
		{"the parent's death, then SIGTERM", []os.Signal{ParentDeathSignal, ParentDeathSignal, syscall.SIGTERM}, true, false, syscall.SIGTERM},
		{"SIGINT stops at once", []os.Signal{os.Interrupt}, true, false, os.Interrupt},
		{"a second SIGINT aborts", []os.Signal{os.Interrupt, os.Interrupt}, true, true, os.Interrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			orphaned.Store(false) // a new process
			var aborted os.Signal
			s := &signals{abort: func(sig os.Signal) { aborted = sig }}
			ctx, cancel := s.enter(context.Background(), phaseSync)
			defer cancel()
			for _, sig := range tt.sigs {
				s.handle(sig)
			}
			if got := ctx.Err() != nil; got != tt.stopped {
				t.Errorf("sync stopped %v, want %v", got, tt.stopped)
			}
			if got := aborted != nil; got != tt.aborted {
				t.Errorf("aborted %v, want %v", got, tt.aborted)
			}
			if s.lastSignal() != tt.last {
				t.Errorf("last signal %v, want %v", s.lastSignal(), tt.last)
			}
		})
	}
}

// TestSignalsCreate: any signal stops the making of the sandbox, also one
// that came while the skills were fetched, in the same handler, once the
// fetch was done: the run's creation phase then begins stopped. Without a
// signal it does not.
func TestSignalsCreate(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sigs    []os.Signal
		stopped bool
	}{
		{"no signal", nil, false},
		{"SIGTERM during the fetch", []os.Signal{syscall.SIGTERM}, true},
		{"SIGINT during the fetch", []os.Signal{os.Interrupt}, true},
		{"SIGHUP during the fetch", []os.Signal{syscall.SIGHUP}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orphaned.Store(false)
			s := &signals{}
			fetch, cancelFetch := s.enter(context.Background(), phaseCreate)
			for _, sig := range tt.sigs {
				s.handle(sig)
			}
			if got := fetch.Err() != nil; got != tt.stopped {
				t.Errorf("fetch stopped %v, want %v", got, tt.stopped)
			}
			cancelFetch() // the fetch is over, whatever it did
			create, cancel := s.enter(context.Background(), phaseCreate)
			defer cancel()
			if got := create.Err() != nil; got != tt.stopped {
				t.Errorf("creation begins stopped %v, want %v", got, tt.stopped)
			}
		})
	}
}

// TestSignalsStoppedCreating: a signal that came while the sandbox was
// made is seen once the run entered the harness's phase; one that came in
// that phase, or none, is not.
func TestSignalsStoppedCreating(t *testing.T) {
	for _, tt := range []struct {
		name     string
		creating []os.Signal // handled in phaseCreate
		harness  []os.Signal // handled in phaseHarness
		want     bool
	}{
		{"none", nil, nil, false},
		{"SIGTERM while making the sandbox", []os.Signal{syscall.SIGTERM}, nil, true},
		{"SIGINT while making the sandbox", []os.Signal{os.Interrupt}, nil, true},
		{"SIGTERM while the harness runs", nil, []os.Signal{syscall.SIGTERM}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orphaned.Store(false)
			s := &signals{}
			_, cancel := s.enter(context.Background(), phaseCreate)
			defer cancel()
			for _, sig := range tt.creating {
				s.handle(sig)
			}
			s.enter(context.Background(), phaseHarness)
			for _, sig := range tt.harness {
				s.handle(sig)
			}
			if got := s.stoppedCreating(); got != tt.want {
				t.Errorf("stoppedCreating() = %v, want %v", got, tt.want)
			}
		})
	}
}
