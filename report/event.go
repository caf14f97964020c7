package report

import (
	_ "embed"
	"time"
)

// EventSchema is the JSON Schema of Event, as published in the repository
// at EventSchemaPath. It refers to the result's schema by its $id
// (ResultSchemaURL) for the result a finished event carries and for usage.
//
//go:embed schema/event.schema.json
var EventSchema []byte

// EventSchemaPath is where the JSON Schema of Event lives in the
// repository; EventSchemaURL is its $id.
const (
	EventSchemaPath = "report/schema/event.schema.json"
	EventSchemaURL  = "https://github.com/seed-3bc194a6/workforce/report/schema/event.schema.json"
)

// EventType is the kind of an Event.
type EventType string

// The kinds of events, in the order a run gives them first.
const (
	// EventStarted: the harness started its conversation
	// (HarnessSessionID), as its output says.
	EventStarted EventType = "started"
	// EventToolUse: a tool call of the agent (Tool, Detail, Status).
	EventToolUse EventType = "tool_use"
	// EventMessage: a message of the agent (Text).
	EventMessage EventType = "message"
	// EventUsage: what a step of the run consumed (Usage); the usage
	// events of a run add up to its result's usage.
	EventUsage EventType = "usage"
	// EventError: an error the harness reported (Text); the run may go
	// on.
	EventError EventType = "error"
	// EventNetwork: the proxy denied the harness a destination (Host,
	// Port); one event a denial.
	EventNetwork EventType = "network"
	// EventSync: sync-back wrote, deleted or left a file (Path,
	// Action).
	EventSync EventType = "sync"
	// EventFinished: the run ended (Result); always the last event.
	EventFinished EventType = "finished"
)

// EventTypes are the kinds of events.
var EventTypes = []EventType{EventStarted, EventToolUse, EventMessage, EventUsage, EventError, EventNetwork, EventSync, EventFinished}

// Event is one progress event of an unattended run: what `workforce run
// PERSONA TASK --events` prints, one JSON object a line, and what batch
// and the queue workers will carry. Every event has its Type, its Time
// and the run's SessionID; the other fields belong to one type each, and
// are absent from the others. The package documentation says what each
// means.
type Event struct {
	Type EventType `json:"type"`
	// Time is when workforce saw the event; it is printed in UTC, to the
	// millisecond (RFC 3339).
	Time time.Time `json:"time"`
	// TaskID is the id of the task in a batch or a queue; absent for a
	// single run.
	TaskID string `json:"taskId,omitempty"`
	// SessionID is workforce's session id, as in the result.
	SessionID string `json:"sessionId"`
	// HarnessSessionID is the harness's own session id (started).
	HarnessSessionID string `json:"harnessSessionId,omitempty"`
	// Tool is the tool as the harness names it, Detail what it was
	// called for (a path, a command), Status how it ended when the
	// harness says: completed, failed or denied (tool_use).
	Tool   string `json:"tool,omitempty"`
	Detail string `json:"detail,omitempty"`
	Status string `json:"status,omitempty"`
	// Text is the agent's message (message) or the harness's error
	// (error).
	Text string `json:"text,omitempty"`
	// Usage is what a step consumed (usage).
	Usage *Usage `json:"usage,omitempty"`
	// Path is a file, relative to the project's root, and Action what
	// became of it: created, updated, deleted, conflict or failed
	// (sync).
	Path   string `json:"path,omitempty"`
	Action string `json:"action,omitempty"`
	// Host and Port are the destination the proxy denied (network).
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// Result is the run's result, as --json prints it (finished).
	Result *Result `json:"result,omitempty"`
}

// EventTimeFormat is the layout of Event.Time: RFC 3339, in UTC, to the
// millisecond.
const EventTimeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON prints e with its time in UTC to the millisecond
// (EventTimeFormat), <, > and & as themselves.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	p := struct {
		Type EventType `json:"type"`
		Time string    `json:"time"`
		plain
	}{Type: e.Type, Time: e.Time.UTC().Format(EventTimeFormat), plain: plain(e)}
	return marshal(p)
}
