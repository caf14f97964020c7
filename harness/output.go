package harness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

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

// The kinds of progress events.
const (
	EventStarted = "started"
	EventToolUse = "tool_use"
	EventMessage = "message"
	EventUsage   = "usage"
	EventError   = "error"
)

// Event is one normalized progress event.
type Event struct {
	Type string `json:"type"`
	// SessionID, for started.
	SessionID string `json:"sessionId,omitempty"`
	// Tool and Detail (path, command), and Status (completed, failed,
	// denied), for tool_use.
	Tool   string `json:"tool,omitempty"`
	Detail string `json:"detail,omitempty"`
	Status string `json:"status,omitempty"`
	// Text, for message and error.
	Text string `json:"text,omitempty"`
	// Usage, for usage: this step's.
	Usage *Usage `json:"usage,omitempty"`
}

// ParseOutput reads the standard output of a one-shot run of harness. It
// returns ErrNoResult, with what it could read, when the output holds no
// result; it never fails otherwise.
func ParseOutput(harness string, out []byte) (*Outcome, error) {
	switch harness {
	case persona.HarnessClaude:
		return parseClaude(out)
	case persona.HarnessCodex:
		return parseCodex(out)
	case persona.HarnessOpencode:
		return parseOpencode(out)
	}
	return nil, fmt.Errorf("unknown harness %q", harness)
}

// jsonLines calls f with each line of out that is a JSON object. A line
// that is not (a truncated last line, a warning) is skipped.
func jsonLines(out []byte, f func(line []byte)) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), len(out)+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' || !json.Valid(line) {
			continue
		}
		f(line)
	}
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
