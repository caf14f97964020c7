package main

import (
	"testing"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestToEventNetwork: a denial the proxy reports becomes a network event
// of --events; one without its destination is none.
func TestToEventNetwork(t *testing.T) {
	tests := []struct {
		e    harness.Event
		want report.Event
		ok   bool
	}{
		{harness.Event{Type: harness.EventNetwork, Host: "evil.example", Port: 443}, report.Event{Type: report.EventNetwork, Host: "evil.example", Port: 443}, true},
		{harness.Event{Type: harness.EventNetwork, Host: "evil.example"}, report.Event{}, false},
		{harness.Event{Type: harness.EventNetwork, Port: 443}, report.Event{}, false},
	}
	for _, tt := range tests {
		got, ok := toEvent(tt.e)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("toEvent(%+v) = %+v, %v; want %+v, %v", tt.e, got, ok, tt.want, tt.ok)
		}
	}
}
