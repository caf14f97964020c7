package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/seed-3bc194a6/workforce/persona"
)

// ErrNoResult reports one-shot output that holds no result: empty,
// truncated (a harness killed before it finished) or not the harness's
// JSON. The caller marks the run failed with the harness's stderr.
var ErrNoResult = errors.New("the harness printed no result")

// Outcome is what a harness's one-shot output says, the same for every
// harness.
type Outcome struct {
	// SessionID is the harness's own session id: what its resume takes.
	SessionID string `json:"sessionId,omitempty"`
	// Model is the model the harness says it ran (claude's init line);
	// empty when it says none.
	Model string `json:"model,omitempty"`
	// Final is the agent's final message.
	Final string `json:"final,omitempty"`
	Usage Usage  `json:"usage"`
	// Denials are the tool calls the harness refused by its permissions.
	Denials []Denial `json:"denials,omitempty"`
	// Error is set when the harness reported an error (the run may still
	// have exited 0, or exited 1 with a result), ErrorText its text.
	Error     bool   `json:"error,omitempty"`
	ErrorText string `json:"errorText,omitempty"`
	// Events are the progress events read, in order.
	Events []Event `json:"events,omitempty"`
}

// Usage is what a run consumed. Input counts every input token, the
// cached ones included; Cached is the part read from the provider's cache.
type Usage struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cached int64 `json:"cached"`
	// CostUSD is the cost the harness reports (claude, opencode); nil
	// when it reports none (codex).
	CostUSD *float64 `json:"costUsd,omitempty"`
	// Turns is the number of turns the harness reports (claude); 0 when
	// it reports none.
	Turns int `json:"turns,omitempty"`
}

func (u *Usage) add(v Usage) {
	u.Input += v.Input
	u.Output += v.Output
	u.Cached += v.Cached
	if v.CostUSD != nil {
		c := *v.CostUSD
		if u.CostUSD != nil {
			c += *u.CostUSD
		}
		u.CostUSD = &c
	}
	u.Turns += v.Turns
}

// Denial is a tool call the harness's permissions refused.
type Denial struct {
	Tool string `json:"tool"`
	// Detail is what the call was for: a path, a command, or the reason.
	Detail string `json:"detail,omitempty"`
}

// The kinds of progress events. The parsers make all but EventSync,
// which package session adds as sync-back writes a file back.
const (
	EventStarted = "started"
	EventToolUse = "tool_use"
	EventMessage = "message"
	EventUsage   = "usage"
	EventError   = "error"
	EventSync    = "sync"
)

// The actions of a sync event.
const (
	SyncCreated  = "created"
	SyncUpdated  = "updated"
	SyncDeleted  = "deleted"
	SyncConflict = "conflict"
	SyncFailed   = "failed"
)

// Event is one normalized progress event.
type Event struct {
	Type string `json:"type"`
	// SessionID, for started: the harness's own session id.
	SessionID string `json:"sessionId,omitempty"`
	// Tool and Detail (path, command), and Status (completed, failed,
	// denied; empty when the harness does not say), for tool_use.
	Tool   string `json:"tool,omitempty"`
	Detail string `json:"detail,omitempty"`
	Status string `json:"status,omitempty"`
	// Text, for message and error.
	Text string `json:"text,omitempty"`
	// Usage, for usage: this step's. The usage events of an output add
	// up to its Outcome's Usage (claude reports its usage once, at the
	// end, so it has one).
	Usage *Usage `json:"usage,omitempty"`
	// Path (relative to the project's root) and Action (SyncCreated,
	// SyncUpdated, SyncDeleted, SyncConflict, SyncFailed), for sync.
	Path   string `json:"path,omitempty"`
	Action string `json:"action,omitempty"`
}

// OutputReader reads the standard output of a one-shot run line by line,
// as the harness prints it, so that its events can be passed on while it
// runs (NewOutputReader).
type OutputReader interface {
	// Line reads one line of the output, without its newline, and
	// returns the events it gave, in order. A line that is not one of
	// the harness's JSON objects (a warning, a truncated line) gives
	// none. It does not keep line.
	Line(line []byte) []Event
	// Finish ends the output and returns what it said, as ParseOutput
	// does. Outcome.Events holds every event: those Line returned, in
	// order, then those the end of the output gave (none for the three
	// harnesses today). Call it once, after the last Line.
	Finish() (*Outcome, error)
}

// NewOutputReader returns the reader of harness's one-shot output.
func NewOutputReader(harness string) (OutputReader, error) {
	switch harness {
	case persona.HarnessClaude:
		return &claudeReader{}, nil
	case persona.HarnessCodex:
		return &codexReader{}, nil
	case persona.HarnessOpencode:
		return &opencodeReader{}, nil
	case persona.HarnessGemini:
		return &geminiReader{}, nil
	}
	return nil, fmt.Errorf("unknown harness %q", harness)
}

// ParseOutput reads the whole standard output of a one-shot run of
// harness, line by line through its OutputReader. It returns ErrNoResult,
// with what it could read, when the output holds no result; it never
// fails otherwise.
func ParseOutput(harness string, out []byte) (*Outcome, error) {
	r, err := NewOutputReader(harness)
	if err != nil {
		return nil, err
	}
	for len(out) > 0 {
		line := out
		if i := bytes.IndexByte(out, '\n'); i >= 0 {
			line, out = out[:i], out[i+1:]
		} else {
			out = nil
		}
		r.Line(line)
	}
	return r.Finish()
}

// OutputWriter is an io.Writer that takes a one-shot run's standard output
// as the harness prints it, whatever the size of its writes and of its
// lines: it reads each whole line as it arrives (OutputReader) and passes
// its events on, and keeps the raw bytes. Finish reads the last line when
// the output does not end with a newline. It is safe to call from several
// goroutines.
type OutputWriter struct {
	mu     sync.Mutex
	r      OutputReader
	emit   func(Event)
	raw    []byte
	next   int // where the line not yet read starts in raw
	sent   int // the events passed on
	done   bool
	out    *Outcome
	outErr error
}

// NewOutputWriter returns the writer of harness's one-shot output; emit,
// when not nil, gets each event as its line arrives, and those of the end
// at Finish. emit is called with the writer's lock held: it must not call
// the writer.
func NewOutputWriter(harness string, emit func(Event)) (*OutputWriter, error) {
	r, err := NewOutputReader(harness)
	if err != nil {
		return nil, err
	}
	return &OutputWriter{r: r, emit: emit}, nil
}

// Write keeps p and reads the lines it completes. After Finish it only
// keeps p.
func (w *OutputWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.raw = append(w.raw, p...)
	if w.done {
		return len(p), nil
	}
	for {
		i := bytes.IndexByte(w.raw[w.next:], '\n')
		if i < 0 {
			break
		}
		line := w.raw[w.next : w.next+i]
		w.next += i + 1
		w.pass(w.r.Line(line))
	}
	return len(p), nil
}

func (w *OutputWriter) pass(events []Event) {
	w.sent += len(events)
	if w.emit == nil {
		return
	}
	for _, e := range events {
		w.emit(e)
	}
}

// Finish reads the last line, if the output does not end with a newline,
// ends the output, passes on the events of its end, and returns what the
// output said, as ParseOutput does. Called again, it returns the same.
func (w *OutputWriter) Finish() (*Outcome, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.out, w.outErr
	}
	w.done = true
	if w.next < len(w.raw) {
		line := w.raw[w.next:]
		w.next = len(w.raw)
		w.pass(w.r.Line(line))
	}
	w.out, w.outErr = w.r.Finish()
	if w.out != nil && w.sent < len(w.out.Events) {
		w.pass(w.out.Events[w.sent:])
	}
	return w.out, w.outErr
}

// Bytes returns the raw output written so far.
func (w *OutputWriter) Bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.raw
}

// jsonLine returns line without the spaces around it, and whether it is
// a JSON object: the lines a parser reads; the others (a warning, a
// truncated last line) are skipped.
func jsonLine(line []byte) ([]byte, bool) {
	line = bytes.TrimSpace(line)
	return line, len(line) > 0 && line[0] == '{' && json.Valid(line)
}

// events collects the events of one line into an Outcome's.
type events struct {
	o    Outcome
	line int // where the current line's events start in o.Events
}

func (e *events) add(ev Event) { e.o.Events = append(e.o.Events, ev) }

// took returns the events the current line gave, and starts the next.
func (e *events) took() []Event {
	got := e.o.Events[e.line:len(e.o.Events):len(e.o.Events)]
	e.line = len(e.o.Events)
	return got
}

// toolStatus is the status of a tool_use event for a harness's status of
// a call: completed, failed (codex's failed, opencode's error), denied
// (codex's declined); empty for any other (a call still running).
func toolStatus(s string) string {
	switch s {
	case "completed":
		return "completed"
	case "failed", "error":
		return "failed"
	case "declined":
		return "denied"
	}
	return ""
}

// detailOf names what a tool call was for, from its input: a path, a
// command, a pattern, a URL; else the input as JSON.
func detailOf(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"file_path", "filePath", "path", "command", "cmd", "pattern", "url"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	if len(m) == 0 {
		return ""
	}
	b, _ := json.Marshal(m)
	return string(b)
}
