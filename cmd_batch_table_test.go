package main

import (
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestBatchTableQuotes: a result's status and session id, which on a
// queue a worker wrote, reach the terminal quoted: an escape sequence in
// them is shown, not sent.
func TestBatchTableQuotes(t *testing.T) {
	for _, tt := range []struct {
		name          string
		status        report.Status
		session, want string
	}{
		{"plain", report.StatusSucceeded, "editor-20261125-101500-1a2b3c4d", "succeeded  -         editor-20261125-101500-1a2b3c4d"},
		{"an escape in the session", report.StatusSucceeded, "s\x1b]0;owned\x07", `"s\033]0;owned\a"`},
		{"an escape in the status", report.Status("ok\x1b[2J"), "s", `"ok\033[2J"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := batch.TaskState{ID: "t", Phase: batch.PhaseDone, Status: tt.status,
				Result: &report.Result{Status: tt.status, SessionID: tt.session}}
			var b strings.Builder
			printBatchTable(&b, []string{"t"}, map[string]batch.TaskState{"t": ts})
			out := b.String()
			if strings.ContainsAny(out, "\x1b\x07") {
				t.Errorf("the table holds a raw control character:\n%q", out)
			}
			if !strings.Contains(out, tt.want) {
				t.Errorf("the table lacks %q:\n%s", tt.want, out)
			}
		})
	}
}
