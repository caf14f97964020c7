package run

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
)

func TestAnswer(t *testing.T) {
	q := Question{Resolved: &persona.Resolved{ID: "pick", Harness: "claude"}, Timeout: time.Minute}
	parsed := func(final string) *session.OneShotResult {
		return &session.OneShotResult{Parsed: true, Outcome: &harness.Outcome{Final: final}}
	}
	tests := []struct {
		name        string
		res         *session.Result
		err         error
		want        string // the answer
		wantErr     string // in the error
		interrupted bool
	}{
		{name: "an answer", res: &session.Result{OneShot: parsed("{}")}, want: "{}"},
		{name: "never started", err: errors.New("no harness"), wantErr: "no harness"},
		{name: "stopped", res: &session.Result{Stopped: true}, interrupted: true},
		{name: "a signal", res: &session.Result{Signal: syscall.SIGTERM, OneShot: parsed("{}")}, interrupted: true},
		{name: "timed out", res: &session.Result{TimedOut: true}, wantErr: "claude gave no answer within 1m0s"},
		{name: "an error after the run", res: &session.Result{OneShot: parsed("{}")}, err: errors.New("cleanup failed"), wantErr: "cleanup failed"},
		{name: "no result", res: &session.Result{Harness: harness.Exit{Code: 3},
			OneShot: &session.OneShotResult{Outcome: &harness.Outcome{}, Stderr: []byte("x\nquota exceeded\n")}},
			wantErr: "claude printed no answer; its stderr ends: quota exceeded (exit status 3)"},
		{name: "killed", res: &session.Result{Harness: harness.Exit{Signal: syscall.SIGKILL},
			OneShot: &session.OneShotResult{Outcome: &harness.Outcome{}}}, wantErr: "(exit status 137)"},
		{name: "the harness's error", res: &session.Result{OneShot: &session.OneShotResult{Parsed: true,
			Outcome: &harness.Outcome{Error: true, ErrorText: "overloaded\nretry later"}}}, wantErr: "claude failed: overloaded"},
		{name: "no credentials", res: &session.Result{Harness: harness.Exit{Code: 1}, OneShot: &session.OneShotResult{Parsed: true,
			Outcome: &harness.Outcome{Error: true, ErrorText: "Not logged in · Please run /login"}}},
			wantErr: "claude failed: Not logged in · Please run /login (exit status 1): claude has no credentials for anthropic: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, or run claude and /login"},
	}
	for _, tt := range tests {
		got, err := answer(q, tt.res, tt.err)
		var ie *InterruptedError
		switch {
		case tt.interrupted != errors.As(err, &ie):
			t.Errorf("%s: error %v, want an *InterruptedError: %v", tt.name, err, tt.interrupted)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: error %v, want one with %q", tt.name, err, tt.wantErr)
		case tt.wantErr == "" && !tt.interrupted && (err != nil || got != tt.want):
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
}

// TestAsk asks the stand-in, as claude, a question: its final message is
// the answer, and nothing of the run is kept.
func TestAsk(t *testing.T) {
	w := newWorld(t)
	r := &persona.Resolved{ID: "pick", Tier: "best", Harness: "claude", Model: "m",
		Permissions: persona.Permissions{Mode: "dontAsk", Deny: []string{"Bash", "Edit", "Write"}}}
	var rec recorder
	got, err := Ask(Question{Resolved: r, Prompt: "which persona?", Timeout: time.Minute, Env: w.env}, rec.hooks())
	if err != nil || got != "finished" {
		t.Fatalf("Ask: %q, %v; want the stand-in's final message, finished", got, err)
	}
	if infos, err := session.List(w.home); err != nil || len(infos) != 0 {
		t.Errorf("sessions left: %d (%v), want none", len(infos), err)
	}
	if kept, _ := filepath.Glob(filepath.Join(w.home, "results", "*")); len(kept) != 0 {
		t.Errorf("results kept: %q, want none (a question is no run of a persona)", kept)
	}
}
