package report

import (
	"strings"
	"testing"
)

func TestProgressText(t *testing.T) {
	long := strings.Repeat("x", ProgressWidth+20)
	tests := []struct {
		e    Event
		want string
		ok   bool
	}{
		{Event{Type: EventStarted, HarnessSessionID: "ses_1"}, "started, the harness's session ses_1", true},
		{Event{Type: EventToolUse, Tool: "Write", Detail: "out.txt", Status: "completed"}, "Write out.txt", true},
		{Event{Type: EventToolUse, Tool: "Bash", Detail: "rm -rf /", Status: "denied"}, "Bash rm -rf / (denied)", true},
		{Event{Type: EventToolUse, Tool: "Bash", Detail: "printf '\x1b[2J'"}, `Bash printf '\033[2J'`, true},
		{Event{Type: EventMessage, Text: "  Done.\nSecond line"}, "says: Done.", true},
		{Event{Type: EventMessage, Text: long}, "says: " + strings.Repeat("x", ProgressWidth-1) + "…", true},
		{Event{Type: EventError, Text: "401 \x07unauthorized"}, `error: 401 \a` + "unauthorized", true},
		{Event{Type: EventSync, Path: "a\nb.txt", Action: "created"}, `created "a\nb.txt"`, true},
		{Event{Type: EventNetwork, Host: "evil.example", Port: 443}, "denied a connection to evil.example:443", true},
		{Event{Type: EventUsage}, "", false},
		{Event{Type: EventFinished}, "", false},
	}
	for _, tt := range tests {
		got, ok := tt.e.ProgressText()
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tt.e.Type, got, ok, tt.want, tt.ok)
		}
	}
}
