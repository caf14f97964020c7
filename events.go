package main

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/urfave/cli/v2"
)

// run --events: a one-shot run's progress events on stdout, one
// report.Event a line, as they come; the last, finished, carries the
// result --json prints. Nothing else goes to stdout; warnings stay on
// stderr. A run that cannot start (its harness missing, a bad plan)
// prints no event, as --json prints no result: the error is on stderr.

// eventsFlag is run's --events.
var eventsFlag = &cli.BoolFlag{Name: "events", Usage: "with a task, print progress events on stdout as JSON lines while the run goes (started, tool_use, message, usage, error, sync), the last one, finished, carrying the result (implies --json; schema: report/schema/event.schema.json)"}

// checkEvents returns the usage error of --events given without a task,
// or with --dry-run.
func checkEvents(c *cli.Context, oneShot bool) error {
	switch {
	case !c.Bool("events"):
		return nil
	case !oneShot:
		return usageError(errors.New("--events goes with a task: it streams an unattended run's events"), "workforce run PERSONA TASK --events")
	case c.Bool("dry-run"):
		return usageError(errors.New("--events and --dry-run conflict: a dry run has no events"), "use --dry-run --json to print the plan as JSON")
	}
	return nil
}

// eventPrinter prints a run's events on w, one JSON object a line, each
// as it comes; it is safe to call from several goroutines.
type eventPrinter struct {
	mu        sync.Mutex
	w         io.Writer
	sessionID string
	now       func() time.Time
	rel       func(string) string // the sandbox's paths in a tool's detail, made relative (treeRelative)
	err       error               // the first write error
}

func newEventPrinter(w io.Writer, sessionID string, rel func(string) string) *eventPrinter {
	return &eventPrinter{w: w, sessionID: sessionID, now: time.Now, rel: rel}
}

// harness prints the event e of the harness or of sync-back.
func (p *eventPrinter) harness(e harness.Event) {
	if ev, ok := toEvent(e); ok {
		if p.rel != nil {
			ev.Detail = p.rel(ev.Detail)
		}
		p.print(ev)
	}
}

// finished prints the last event, with the run's result, and returns the
// first error writing any event.
func (p *eventPrinter) finished(r report.Result) error {
	p.print(report.Event{Type: report.EventFinished, Result: &r})
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *eventPrinter) print(e report.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e.Time, e.SessionID = p.now(), p.sessionID
	if err := writeJSONLine(p.w, e); err != nil && p.err == nil {
		p.err = err
	}
}

// toEvent is the report.Event of the harness event e, without its time
// and session id; false for one the schema has no place for (an empty
// message, an unknown kind).
func toEvent(e harness.Event) (report.Event, bool) {
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
		return report.Event{Type: report.EventUsage, Usage: toUsage(*e.Usage)}, true
	case harness.EventSync:
		return report.Event{Type: report.EventSync, Path: e.Path, Action: e.Action}, e.Path != ""
	case harness.EventNetwork:
		return report.Event{Type: report.EventNetwork, Host: e.Host, Port: e.Port}, e.Host != "" && e.Port > 0
	}
	return report.Event{}, false
}

// toUsage is the report's form of u: the token counts always, the cost
// when the harness reports it, the turns when it counts them.
func toUsage(u harness.Usage) *report.Usage {
	r := &report.Usage{InputTokens: &u.Input, OutputTokens: &u.Output, CachedTokens: &u.Cached, CostUSD: u.CostUSD}
	if u.Turns > 0 {
		r.Turns = &u.Turns
	}
	return r
}
