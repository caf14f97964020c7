package run

import (
	"reflect"
	"testing"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestEvent: each harness event as run --events prints it; those the
// schema has no place for are none (a denial the proxy reports without
// its destination among them).
func TestEvent(t *testing.T) {
	cost, turns := 0.5, 3
	in, out, cached, zero := int64(10), int64(2), int64(4), int64(0)
	tests := []struct {
		name string
		e    harness.Event
		want report.Event
		ok   bool
	}{
		{"started", harness.Event{Type: harness.EventStarted, SessionID: "h1"}, report.Event{Type: report.EventStarted, HarnessSessionID: "h1"}, true},
		{"started without an id", harness.Event{Type: harness.EventStarted}, report.Event{Type: report.EventStarted}, false},
		{"a tool", harness.Event{Type: harness.EventToolUse, Tool: "Bash", Detail: "ls", Status: "ok"}, report.Event{Type: report.EventToolUse, Tool: "Bash", Detail: "ls", Status: "ok"}, true},
		{"a tool without a name", harness.Event{Type: harness.EventToolUse}, report.Event{Type: report.EventToolUse, Tool: "unknown"}, true},
		{"a message", harness.Event{Type: harness.EventMessage, Text: "hi"}, report.Event{Type: report.EventMessage, Text: "hi"}, true},
		{"an empty message", harness.Event{Type: harness.EventMessage}, report.Event{Type: report.EventMessage}, false},
		{"an error without a message", harness.Event{Type: harness.EventError}, report.Event{Type: report.EventError, Text: "the harness reported an error without a message"}, true},
		{"usage", harness.Event{Type: harness.EventUsage, Usage: &harness.Usage{Input: 10, Output: 2, Cached: 4, CostUSD: &cost, Turns: 3}},
			report.Event{Type: report.EventUsage, Usage: &report.Usage{InputTokens: &in, OutputTokens: &out, CachedTokens: &cached, CostUSD: &cost, Turns: &turns}}, true},
		{"usage without turns or cost", harness.Event{Type: harness.EventUsage, Usage: &harness.Usage{}},
			report.Event{Type: report.EventUsage, Usage: &report.Usage{InputTokens: &zero, OutputTokens: &zero, CachedTokens: &zero}}, true},
		{"usage without figures", harness.Event{Type: harness.EventUsage}, report.Event{}, false},
		{"a sync", harness.Event{Type: harness.EventSync, Path: "a.go", Action: "created"}, report.Event{Type: report.EventSync, Path: "a.go", Action: "created"}, true},
		{"a network denial", harness.Event{Type: harness.EventNetwork, Host: "evil.example", Port: 443}, report.Event{Type: report.EventNetwork, Host: "evil.example", Port: 443}, true},
		{"a denial without a port", harness.Event{Type: harness.EventNetwork, Host: "evil.example"}, report.Event{}, false},
		{"a denial without a host", harness.Event{Type: harness.EventNetwork, Port: 443}, report.Event{}, false},
		{"an unknown kind", harness.Event{Type: "thinking"}, report.Event{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Event(tt.e)
			if ok != tt.ok || ok && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Event(%+v) = %+v, %v; want %+v, %v", tt.e, got, ok, tt.want, tt.ok)
			}
		})
	}
}
