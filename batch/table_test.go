package batch

import (
	"strings"
	"testing"

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
			ts := TaskState{ID: "t", Phase: PhaseDone, Status: tt.status,
				Result: &report.Result{Status: tt.status, SessionID: tt.session}}
			var b strings.Builder
			WriteTable(&b, []string{"t"}, map[string]TaskState{"t": ts})
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

// TestBatchTableNetwork: the summary names, per task, the destinations
// the network proxy denied its run, quoted; a task without any, nothing.
func TestBatchTableNetwork(t *testing.T) {
	states := map[string]TaskState{
		"a": {ID: "a", Phase: PhaseDone, Status: report.StatusSucceeded, Result: &report.Result{Status: report.StatusSucceeded, SessionID: "s1",
			Network: &report.Network{Mode: "allowlist", Denied: []report.NetworkDenied{{Host: "evil.example", Port: 443, Count: 2}, {Host: "::1", Port: 22, Count: 1}}}}},
		"b": {ID: "b", Phase: PhaseDone, Status: report.StatusSucceeded, Result: &report.Result{Status: report.StatusSucceeded, SessionID: "s2",
			Network: &report.Network{Mode: "allowlist"}}},
		"c": {ID: "c", Phase: PhaseDone, Status: report.StatusFailed, Result: &report.Result{Status: report.StatusFailed, SessionID: "s3",
			Network: &report.Network{Mode: "none", Denied: []report.NetworkDenied{{Host: "x\x1b[2J.example", Port: 80, Count: 1}}}}},
	}
	var b strings.Builder
	WriteTable(&b, []string{"a", "b", "c"}, states)
	out := b.String()
	for _, want := range []string{"\na: network denied: evil.example:443, [::1]:22\n", `c: network denied: "x\033[2J.example:80"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "b: network") || strings.ContainsAny(out, "\x1b") {
		t.Errorf("the summary names a denial of b, or holds a raw escape:\n%s", out)
	}
}
