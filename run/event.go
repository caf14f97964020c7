package run

import (
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
)

// Event is the report.Event of the harness event e (of the harness, of
// sync-back, of the proxy), without its time and session id, which the
// printer adds; false for one the schema has no place for (an empty
// message, a usage without figures, a denial without its destination,
// an unknown kind).
func Event(e harness.Event) (report.Event, bool) {
	switch e.Type {
	case harness.EventStarted:
		return report.Event{Type: report.EventStarted, HarnessSessionID: e.SessionID}, e.SessionID != ""
	case harness.EventToolUse:
		tool := e.Tool
		if tool == "" {
			tool = "unknown"
		}
		return report.Event{Type: report.EventToolUse, Tool: tool, Detail: e.Detail, Status: e.Status}, true
	case harness.EventMessage:
		return report.Event{Type: report.EventMessage, Text: e.Text}, e.Text != ""
	case harness.EventError:
		text := e.Text
		if text == "" {
			text = "the harness reported an error without a message"
		}
		return report.Event{Type: report.EventError, Text: text}, true
	case harness.EventUsage:
		if e.Usage == nil {
			return report.Event{}, false
		}
		return report.Event{Type: report.EventUsage, Usage: reportUsage(*e.Usage)}, true
	case harness.EventSync:
		return report.Event{Type: report.EventSync, Path: e.Path, Action: e.Action}, e.Path != ""
	case harness.EventNetwork:
		return report.Event{Type: report.EventNetwork, Host: e.Host, Port: e.Port}, e.Host != "" && e.Port > 0
	}
	return report.Event{}, false
}

// reportUsage is the report's form of u: the token counts always, the
// cost when the harness reports it, the turns when it counts them.
func reportUsage(u harness.Usage) *report.Usage {
	r := &report.Usage{InputTokens: &u.Input, OutputTokens: &u.Output, CachedTokens: &u.Cached, CostUSD: u.CostUSD}
	if u.Turns > 0 {
		r.Turns = &u.Turns
	}
	return r
}
