package session

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestSignalRepeats: during sync-back a second SIGTERM or SIGHUP stops
// it, but the same signal again within repeatWindow is the first one
// delivered again (the kernel's parent-death signal, once per thread of
// the dying parent) and counts once; SIGINT is never merged.
func TestSignalRepeats(t *testing.T) {
	type at struct {
		sig   os.Signal
		after time.Duration // since the previous signal
	}
	ms := time.Millisecond
	tests := []struct {
		name    string
		sigs    []at
		stopped bool // the sync's context is cancelled
		aborted bool
	}{
		{"one SIGTERM", []at{{syscall.SIGTERM, 0}}, false, false},
		{"SIGTERM repeated at once", []at{{syscall.SIGTERM, 0}, {syscall.SIGTERM, ms}, {syscall.SIGTERM, ms}}, false, false},
		{"SIGTERM repeated within the window", []at{{syscall.SIGTERM, 0}, {syscall.SIGTERM, repeatWindow - ms}}, false, false},
		{"a second SIGTERM after the window", []at{{syscall.SIGTERM, 0}, {syscall.SIGTERM, repeatWindow}}, true, false},
		{"the window runs from the signal counted", []at{{syscall.SIGTERM, 0}, {syscall.SIGTERM, 600 * ms}, {syscall.SIGTERM, 600 * ms}}, true, false},
		{"SIGHUP repeated at once", []at{{syscall.SIGHUP, 0}, {syscall.SIGHUP, ms}}, false, false},
		{"SIGTERM then SIGHUP", []at{{syscall.SIGTERM, 0}, {syscall.SIGHUP, ms}}, true, false},
		{"SIGINT stops at once", []at{{os.Interrupt, 0}}, true, false},
		{"a second SIGINT at once aborts", []at{{os.Interrupt, 0}, {os.Interrupt, ms}}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			var aborted os.Signal
			s := &signals{abort: func(sig os.Signal) { aborted = sig }, now: func() time.Time { return now }}
			ctx, cancel := s.enter(context.Background(), phaseSync)
			defer cancel()
			for _, a := range tt.sigs {
				now = now.Add(a.after)
				s.handle(a.sig)
			}
			if got := ctx.Err() != nil; got != tt.stopped {
				t.Errorf("sync stopped %v, want %v", got, tt.stopped)
			}
			if got := aborted != nil; got != tt.aborted {
				t.Errorf("aborted %v, want %v", got, tt.aborted)
			}
		})
	}
}
