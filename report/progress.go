package report

import (
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// ProgressWidth is the most runes of an agent's message or a tool's detail
// a progress line shows.
const ProgressWidth = 100

// ProgressText is e as a line of a one-shot run's progress on a terminal
// (run PERSONA TASK with stderr on a terminal), without the time: what
// started, which tool the agent called and for what, the first line of
// what it says, what came back, a denied connection. What the agent wrote
// is escaped (quote.Text) and cut to ProgressWidth. ok is false for an
// event a person need not see (usage: the result sums it).
func (e Event) ProgressText() (text string, ok bool) {
	cut := func(s string) string { return quote.Text(quote.Line(strings.TrimSpace(s), ProgressWidth)) }
	switch e.Type {
	case EventStarted:
		return "started, the harness's session " + quote.Name(e.HarnessSessionID), true
	case EventToolUse:
		s := quote.Text(e.Tool)
		if e.Detail != "" {
			s += " " + cut(e.Detail)
		}
		if e.Status == "failed" || e.Status == "denied" {
			s += " (" + e.Status + ")"
		}
		return s, true
	case EventMessage:
		return "says: " + cut(e.Text), true
	case EventError:
		return "error: " + cut(e.Text), true
	case EventSync:
		return e.Action + " " + quote.Name(e.Path), true
	case EventNetwork:
		return fmt.Sprintf("denied a connection to %s:%d", quote.Name(e.Host), e.Port), true
	}
	return "", false
}
