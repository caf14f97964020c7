package main

import (
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

func TestOneShotStatus(t *testing.T) {
	tests := []struct {
		name   string
		status report.Status
		sig    os.Signal
		want   int
	}{
		{"succeeded", report.StatusSucceeded, nil, exitOK},
		{"failed", report.StatusFailed, nil, exitFailure},
		{"denied", report.StatusDenied, nil, exitFailure},
		{"conflict", report.StatusConflict, nil, exitConflict},
		{"timed out", report.StatusTimedOut, nil, exitTimeout},
		{"timed out, the harness stopped by SIGTERM", report.StatusTimedOut, syscall.SIGTERM, exitTimeout},
		{"interrupted by Ctrl-C", report.StatusInterrupted, os.Interrupt, exitInterrupted},
		{"interrupted by SIGTERM", report.StatusInterrupted, syscall.SIGTERM, exitSignal + 15},
		{"interrupted by SIGHUP", report.StatusInterrupted, syscall.SIGHUP, exitSignal + 1},
		{"interrupted, no signal known", report.StatusInterrupted, nil, exitInterrupted},
		{"a status this build does not know", report.Status("paused"), nil, exitFailure},
		{"no status", "", nil, exitFailure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := oneShotStatus(tt.status, tt.sig); got != tt.want {
				t.Errorf("oneShotStatus(%q, %v) = %d, want %d", tt.status, tt.sig, got, tt.want)
			}
		})
	}
}

// TestOneShotStatusPrecedence checks that the exit statuses follow the
// order of precedence of the statuses: a status that comes first never
// exits lower than one after it.
func TestOneShotStatusPrecedence(t *testing.T) {
	want := []report.Status{report.StatusInterrupted, report.StatusTimedOut, report.StatusConflict,
		report.StatusDenied, report.StatusFailed, report.StatusSucceeded}
	if !slices.Equal(report.Statuses, want) {
		t.Fatalf("report.Statuses = %v, want %v", report.Statuses, want)
	}
	for i := 1; i < len(want); i++ {
		if a, b := oneShotStatus(want[i-1], nil), oneShotStatus(want[i], nil); a < b {
			t.Errorf("%s exits %d, below %s's %d", want[i-1], a, want[i], b)
		}
	}
}

// TestOneShotStatusFromOutcome runs the cases of the issue from how the
// harness ended to the exit status: the harness's own code never passes
// through.
func TestOneShotStatusFromOutcome(t *testing.T) {
	tests := []struct {
		name string
		o    report.Outcome
		sig  os.Signal
		want int
	}{
		{"claude exits 0 with a Write denied", report.Outcome{Started: true, Parsed: true, Denials: true}, nil, exitFailure},
		{"claude exits 1 with subtype success after an HTTP 400", report.Outcome{Started: true, Parsed: true, ExitCode: 1}, nil, exitFailure},
		{"a harness exits 144 after an HTTP 400, not signal 16", report.Outcome{Started: true, Parsed: true, ExitCode: 144}, nil, exitFailure},
		{"opencode exits 0 with a permission rejected", report.Outcome{Started: true, Parsed: true, Denials: true}, nil, exitFailure},
		{"no parsable result", report.Outcome{Started: true}, nil, exitFailure},
		{"the harness killed by SIGKILL", report.Outcome{Started: true, Signal: 9}, nil, exitFailure},
		{"SIGTERM to workforce during the run", report.Outcome{Started: true, Signal: 15, Interrupted: true}, syscall.SIGTERM, exitSignal + 15},
		{"the time limit", report.Outcome{Started: true, Signal: 15, TimedOut: true}, nil, exitTimeout},
		{"conflicts after a denial", report.Outcome{Started: true, Parsed: true, Denials: true, Conflicts: true}, nil, exitConflict},
		{"success", report.Outcome{Started: true, Parsed: true}, nil, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := report.DecideStatus(tt.o)
			if got := oneShotStatus(st, tt.sig); got != tt.want {
				t.Errorf("oneShotStatus(DecideStatus(%+v) = %s) = %d, want %d", tt.o, st, got, tt.want)
			}
		})
	}
}
