package main

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
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
	if ev, ok := run.Event(e); ok {
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
