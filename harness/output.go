package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

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
	// OwnSandbox is the harness's own sandbox as it reports it (claude's
	// init line carries sandbox_enabled from 2.1.332 on); nil when it
	// says nothing. workforce turns the harness's sandbox off where it
	// confines the harness itself: true there says that did not work.
	OwnSandbox *bool `json:"ownSandbox,omitempty"`
	// Final is the agent's final message.
	Final string `json:"final,omitempty"`
	Usage Usage  `json:"usage"`
	// Denials are the tool calls the harness refused by its permissions.
	Denials []Denial `json:"denials,omitempty"`
	// Error is set when the harness reported an error (the run may still
	// have exited 0, or exited 1 with a result), ErrorText its text.
	Error     bool   `json:"error,omitempty"`
	ErrorText string `json:"errorText,omitempty"`
	// Retry is the first retry the harness reported (codex's
	// "Reconnecting... 2/5 (... why ...)"; the later ones say less), which
	// is no error by itself: what explains a run that never finished
	// (FailureText).
	Retry string `json:"retry,omitempty"`
	// HasUsage says the harness reported usage (a usage event came): a
	// codex turn that failed reports none, which is not 0 tokens.
	HasUsage bool `json:"hasUsage,omitempty"`
	// Warnings say what reading the output left out: lines longer than
	// MaxLine, denials beyond MaxDenials, a final message cut.
	Warnings []string `json:"warnings,omitempty"`
	// Events are the progress events read, in order: ParseOutput keeps
	// them; an OutputWriter passes them on as they come, and ReadOutput
	// drops them, so that their memory is bounded.
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

// FailureText is what the output says went wrong: the error it
// reported, else its first retry.
func (o *Outcome) FailureText() string {
	if o.ErrorText != "" {
		return o.ErrorText
	}
	return o.Retry
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
// which package session adds as sync-back writes a file back, and
// EventNetwork, which the network proxy adds for each denial.
const (
	EventStarted = "started"
	EventToolUse = "tool_use"
	EventMessage = "message"
	EventUsage   = "usage"
	EventError   = "error"
	EventNetwork = "network"
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
	// Host and Port, for network: the destination the proxy denied.
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
}

// MaxLine is the longest line of a harness's one-shot output that is
// read: a longer line is cut to its first MaxLine bytes, not read (a cut
// JSON object is no event), and the outcome says so (Outcome.Warnings).
// It bounds the memory of reading the output, whatever its size. The
// longest lines the harnesses print carry whole files: claude's user
// lines hold the file a tool read or wrote, before and after
// (tool_use_result's content and originalFile, harness/testdata/oneshot/
// claude-write.jsonl), its result line the input of every denied call (a
// denied Write's whole content) beside the final message, opencode's edit
// parts the file before and after, codex's and gemini's tool events a
// command's output or a written file. A final message is the model's
// output, some hundreds of KiB at most: 8 MiB holds it many times over,
// and a claude result line with dozens of denied writes of that size. A
// line cut loses one tool call's event; only a result line past 8 MiB
// would lose the run's result (it then reports none, and the warning
// says why).
const MaxLine = 8 << 20

// MaxDenials is the number of denials an outcome lists; it counts those
// beyond (Outcome.Warnings).
const MaxDenials = 1000

// OutputReader reads the standard output of a one-shot run line by line,
// as the harness prints it, so that its events can be passed on while it
// runs (NewOutputReader). It keeps what the outcome needs (the session
// id, the final message, usage, denials, the tool calls waiting for their
// result), within bounds, and not the events.
type OutputReader interface {
	// Line reads one line of the output, without its newline, and
	// returns the events it gave, in order. A line that is not one of
	// the harness's JSON objects (a warning, a truncated line) gives
	// none. It does not keep line.
	Line(line []byte) []Event
	// Finish ends the output and returns what it said, as ParseOutput
	// does, without the events (Outcome.Events is empty: Line returned
	// them). Call it once, after the last Line.
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
// harness, line by line as an OutputWriter does (a line longer than
// MaxLine is cut), and keeps its events in Outcome.Events. It returns
// ErrNoResult, with what it could read, when the output holds no result;
// it never fails otherwise.
func ParseOutput(harness string, out []byte) (*Outcome, error) {
	var events []Event
	w, err := NewOutputWriter(harness, func(e Event) { events = append(events, e) })
	if err != nil {
		return nil, err
	}
	w.Write(out)
	o, err := w.Finish()
	o.Events = events
	return o, err
}

// ReadOutput reads the standard output of a one-shot run of harness from
// r (a results directory's stdout.jsonl) as ParseOutput does, in bounded
// memory: its Outcome keeps no events. It returns ErrNoResult, with what
// it could read, when the output holds no result, and an error reading r,
// with what it read before.
func ReadOutput(harness string, r io.Reader) (*Outcome, error) {
	w, err := NewOutputWriter(harness, nil)
	if err != nil {
		return nil, err
	}
	_, rerr := io.Copy(w, r)
	o, err := w.Finish()
	if rerr != nil {
		return o, rerr
	}
	return o, err
}

// OutputWriter is an io.Writer that takes a one-shot run's standard output
// as the harness prints it, whatever the size of its writes and of its
// lines: it reads each whole line as it arrives (OutputReader) and passes
// its events on; it keeps neither the output nor the events (the caller
// keeps the raw output where it wants it). Each byte is scanned once; a
// line is held until its newline, up to MaxLine bytes: a longer line is
// cut there, its rest dropped, and is not read (Finish's outcome says so).
// Finish reads the last line when the output does not end with a
// newline. Write never fails. It is safe to call from several goroutines.
type OutputWriter struct {
	mu     sync.Mutex
	r      OutputReader
	emit   func(Event)
	lines  lineSplitter
	cut    []int // the numbers of the first lines cut
	cuts   int   // the lines cut
	done   bool
	out    *Outcome
	outErr error
}

// maxCutNamed is the number of cut lines a warning names.
const maxCutNamed = 5

// NewOutputWriter returns the writer of harness's one-shot output; emit,
// when not nil, gets each event as its line arrives. emit is called with
// the writer's lock held: it must not call the writer.
func NewOutputWriter(harness string, emit func(Event)) (*OutputWriter, error) {
	r, err := NewOutputReader(harness)
	if err != nil {
		return nil, err
	}
	return &OutputWriter{r: r, emit: emit, lines: lineSplitter{max: MaxLine}}, nil
}

// Write reads the lines p completes. After Finish it does nothing. It
// always returns len(p), nil.
func (w *OutputWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.lines.write(p, w.line)
	}
	return len(p), nil
}

// line reads the line n, cut when it was longer than MaxLine.
func (w *OutputWriter) line(n int, line []byte, cut bool) {
	if cut {
		w.cuts++
		if len(w.cut) < maxCutNamed {
			w.cut = append(w.cut, n)
		}
		return
	}
	for _, e := range w.r.Line(line) {
		if w.emit != nil {
			w.emit(e)
		}
	}
}

// Finish reads the last line, if the output does not end with a newline,
// ends the output, and returns what the output said, as ParseOutput
// does, without the events (they were passed on). Called again, it
// returns the same.
func (w *OutputWriter) Finish() (*Outcome, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.out, w.outErr
	}
	w.done = true
	w.lines.finish(w.line)
	w.lines = lineSplitter{}
	w.out, w.outErr = w.r.Finish()
	if w.cuts > 0 {
		w.out.Warnings = append([]string{cutWarning(w.cut, w.cuts)}, w.out.Warnings...)
	}
	return w.out, w.outErr
}

// cutWarning says which lines of the output were cut: the numbers of the
// first ones, of n in all.
func cutWarning(first []int, n int) string {
	nums := make([]string, len(first))
	for i, l := range first {
		nums[i] = strconv.Itoa(l)
	}
	if n == 1 {
		return fmt.Sprintf("line %s of the harness's stdout was longer than %s and was cut (not read)", nums[0], sizeName(MaxLine))
	}
	list := strings.Join(nums, ", ")
	if n > len(first) {
		list += fmt.Sprintf(" and %d more", n-len(first))
	}
	return fmt.Sprintf("lines %s of the harness's stdout were longer than %s and were cut (not read)", list, sizeName(MaxLine))
}

// sizeName names a size of whole MiB or KiB.
func sizeName(n int) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

// lineSplitter cuts a stream into lines as it arrives, whatever the size
// of its pieces: each byte is scanned once, a line is copied only when it
// spans pieces, and at most max bytes of it are held.
type lineSplitter struct {
	max int
	buf []byte // the unfinished line, its first max bytes
	// long: the unfinished line is longer than max; its bytes past max
	// are dropped.
	long bool
	n    int // the lines ended
}

// maxIdleBuf is the capacity of the buffer kept between lines; a larger
// one, left by a long line, is let go.
const maxIdleBuf = 64 << 10

// write splits p, calling line with the number of each line p ends (from
// 1), the line without its newline, and whether it was longer than max
// (then line holds its first max bytes). line must not keep its argument.
func (s *lineSplitter) write(p []byte, line func(n int, line []byte, cut bool)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.add(p)
			return
		}
		if len(s.buf) == 0 {
			// The whole line is in p: no copy.
			s.n++
			if l := p[:i]; len(l) > s.max {
				line(s.n, l[:s.max], true)
			} else {
				line(s.n, l, false)
			}
		} else {
			s.add(p[:i])
			s.end(line)
		}
		p = p[i+1:]
	}
}

// add appends b to the unfinished line, up to max bytes.
func (s *lineSplitter) add(b []byte) {
	if room := s.max - len(s.buf); len(b) > room {
		b, s.long = b[:room], true
	}
	if n := len(s.buf) + len(b); n > cap(s.buf) {
		// Doubled, not append's quarter more for large slices: a long
		// line costs twice its length in copies, not five times.
		buf := make([]byte, len(s.buf), min(max(n, 2*cap(s.buf), 4<<10), s.max))
		copy(buf, s.buf)
		s.buf = buf
	}
	s.buf = append(s.buf, b...)
}

// end ends the unfinished line.
func (s *lineSplitter) end(line func(int, []byte, bool)) {
	s.n++
	line(s.n, s.buf, s.long)
	s.buf, s.long = s.buf[:0], false
	if cap(s.buf) > maxIdleBuf {
		s.buf = nil
	}
}

// finish ends the last line, when the stream does not end with a
// newline.
func (s *lineSplitter) finish(line func(int, []byte, bool)) {
	if len(s.buf) > 0 {
		s.end(line)
	}
}

// jsonLine returns line without the spaces around it, and whether it may
// be a JSON object: the lines a parser reads; the others (a warning, a
// truncated last line) are skipped. json.Unmarshal, which the parser
// calls next, checks the whole line before it decodes any of it: a line
// that is not a JSON object gives no event.
func jsonLine(line []byte) ([]byte, bool) {
	line = bytes.TrimSpace(line)
	return line, len(line) > 0 && line[0] == '{'
}

// events collects the events of one line, and what a reader keeps for
// its outcome.
type events struct {
	o    Outcome
	got  []Event // the current line's
	last Event   // the last event added
	keep budget
	// moreDenials are the denials beyond MaxDenials, counted.
	moreDenials int
}

func (e *events) add(ev Event) {
	e.got = append(e.got, ev)
	e.last = ev
	if ev.Type == EventUsage {
		e.o.HasUsage = true
	}
}

// took returns the events the current line gave, and starts the next.
func (e *events) took() []Event {
	got := e.got
	e.got = nil
	return got
}

// deny adds d to the outcome's denials: the first MaxDenials, with their
// details cut short once the reader keeps keepBudget bytes; the others
// are counted.
func (e *events) deny(d Denial) {
	if len(e.o.Denials) >= MaxDenials {
		e.moreDenials++
		return
	}
	if !e.keep.take(len(d.Tool) + len(d.Detail)) {
		d.Tool, d.Detail = cutText(d.Tool, keptCut), cutText(d.Detail, keptCut)
	}
	e.o.Denials = append(e.o.Denials, d)
}

// finish adds the warnings of what the outcome left out.
func (e *events) finish() {
	if e.moreDenials > 0 {
		e.o.Warnings = append(e.o.Warnings, fmt.Sprintf("the harness reported %d more denials than the %d listed", e.moreDenials, MaxDenials))
	}
}

// keepBudget bounds the bytes a reader keeps from a line for later ones:
// the tool calls waiting for their result, the denials. Past it, a tool
// call is not followed (its result gives no event) and a denial's detail
// is cut to keptCut bytes.
const (
	keepBudget = 16 << 20
	keptCut    = 1 << 10
	// keptEntry is what one kept entry costs besides its strings.
	keptEntry = 64
)

// budget counts the bytes a reader keeps, up to max (0: keepBudget).
type budget struct{ used, max int }

func (b *budget) limit() int {
	if b.max > 0 {
		return b.max
	}
	return keepBudget
}

// take takes n bytes and an entry's cost, and reports whether they fit.
// A denial is kept either way (cut short): it takes them anyway.
func (b *budget) take(n int) bool {
	b.used += n + keptEntry
	return b.used <= b.limit()
}

// track takes n bytes and an entry's cost when they fit, and reports
// whether they did.
func (b *budget) track(n int) bool {
	if b.used+n+keptEntry > b.limit() {
		return false
	}
	b.used += n + keptEntry
	return true
}

// free gives back what track took.
func (b *budget) free(n int) { b.used -= n + keptEntry }

// cutText returns s, or its first bytes up to n (whole UTF-8 sequences)
// and "…", copied: a cut string does not hold the long one.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return strings.Clone(s[:i]) + "…"
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
