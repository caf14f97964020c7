package harness

import (
	"bytes"
	"encoding/json"
)

// claudeResult is claude's `result` object, the whole output of
// --output-format json and the last line of stream-json. Measured on
// 2.1.330 and 2.1.332: it exits 0 when a tool call was denied (permission_denials
// alone says so) and 1 with subtype "success" and is_error true after an
// HTTP 400 from the model; killed by SIGTERM it prints nothing.
type claudeResult struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	SessionID      string   `json:"session_id"`
	NumTurns       int      `json:"num_turns"`
	TotalCostUSD   *float64 `json:"total_cost_usd"`
	Errors         []string `json:"errors"`
	TerminalReason string   `json:"terminal_reason"`
	Usage          struct {
		Input         int64 `json:"input_tokens"`
		CacheCreation int64 `json:"cache_creation_input_tokens"`
		CacheRead     int64 `json:"cache_read_input_tokens"`
		Output        int64 `json:"output_tokens"`
	} `json:"usage"`
	Denials []struct {
		ToolName  string          `json:"tool_name"`
		ToolUseID string          `json:"tool_use_id"`
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
}

// claudeStream is a line of --output-format stream-json (measured on
// 2.1.330 and 2.1.332, harness/testdata/oneshot/claude-*.jsonl): system init, with
// the session id, first; then assistant lines (text and tool_use
// blocks, each call with its id), user lines (a tool_result block for
// each call, is_error when it failed), a system permission_denied line
// (tool_name, tool_use_id) before the result of a call the permissions
// refused; the result object last. Every line carries the session id.
type claudeStream struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	ToolUseID string `json:"tool_use_id"`
	// Model is the model the run uses, on the init line.
	Model string `json:"model"`
	// SandboxEnabled is Claude Code's own sandbox, on the init line
	// (2.1.332 on).
	SandboxEnabled *bool `json:"sandbox_enabled"`
	// Message is an object for assistant and user lines (its content a
	// list of blocks, or a user's text), a string for permission_denied.
	Message json.RawMessage `json:"message"`
}

// claudeBlock is a block of a message's content.
type claudeBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
}

// claudeReader reads --output-format stream-json, one object a line, as
// claude prints it, and --output-format json, the result object alone
// (one line). The first line that names the session id gives started;
// assistant text gives message; a tool call gives tool_use when its
// result comes (status completed, failed, or denied when a
// permission_denied line named it); the result gives the final message
// when no message said it, the denials not reported yet (all of them in
// the json format), the run's usage, and the error it reports. The
// outcome is the last result's.
type claudeReader struct {
	events
	started bool
	res     *claudeResult
	// calls are the tool calls waiting for their result, by id; denied
	// those of them refused, and deniedSent those a tool_use reported
	// denied. They are kept within the reader's budget.
	calls              map[string]Event
	denied, deniedSent map[string]bool
}

func (c *claudeReader) Line(line []byte) []Event {
	line, ok := jsonLine(line)
	if !ok {
		return nil
	}
	var s claudeStream
	if json.Unmarshal(line, &s) != nil {
		return nil
	}
	o := &c.o
	if s.SessionID != "" && !c.started {
		c.started = true
		o.SessionID = s.SessionID
		c.add(Event{Type: EventStarted, SessionID: s.SessionID})
	}
	var blocks []claudeBlock
	if s.Type == "assistant" || s.Type == "user" {
		var m struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(s.Message, &m) == nil {
			_ = json.Unmarshal(m.Content, &blocks) // a string holds none
		}
	}
	switch s.Type {
	case "result":
		var r claudeResult
		if json.Unmarshal(line, &r) == nil {
			c.res = &r
			c.result(&r)
		}
	case "system":
		if s.Subtype == "permission_denied" && s.ToolUseID != "" {
			c.mark(&c.denied, s.ToolUseID)
		}
		if s.Subtype == "init" && s.Model != "" {
			o.Model = s.Model
		}
		if s.Subtype == "init" && s.SandboxEnabled != nil {
			o.OwnSandbox = s.SandboxEnabled
		}
	case "assistant":
		for _, b := range blocks {
			switch b.Type {
			case "text":
				c.add(Event{Type: EventMessage, Text: b.Text})
			case "tool_use":
				call := Event{Type: EventToolUse, Tool: b.Name, Detail: detailOf(b.Input)}
				if prev, ok := c.calls[b.ID]; ok {
					delete(c.calls, b.ID)
					c.keep.free(len(b.ID) + len(prev.Tool) + len(prev.Detail))
				}
				if !c.keep.track(len(b.ID) + len(call.Tool) + len(call.Detail)) {
					continue
				}
				if c.calls == nil {
					c.calls = map[string]Event{}
				}
				c.calls[b.ID] = call
			}
		}
	case "user":
		for _, b := range blocks {
			call, ok := c.calls[b.ToolUseID]
			if b.Type != "tool_result" || !ok {
				continue
			}
			delete(c.calls, b.ToolUseID)
			c.keep.free(len(b.ToolUseID) + len(call.Tool) + len(call.Detail))
			call.Status = "completed"
			switch {
			case c.denied[b.ToolUseID]:
				call.Status = "denied"
				delete(c.denied, b.ToolUseID)
				c.keep.free(len(b.ToolUseID))
				c.mark(&c.deniedSent, b.ToolUseID)
			case b.IsError:
				call.Status = "failed"
			}
			c.add(call)
		}
	}
	return c.took()
}

// mark adds id to the set *m, within the reader's budget.
func (c *claudeReader) mark(m *map[string]bool, id string) {
	if (*m)[id] || !c.keep.track(len(id)) {
		return
	}
	if *m == nil {
		*m = map[string]bool{}
	}
	(*m)[id] = true
}

// result adds the events of a result line.
func (c *claudeReader) result(r *claudeResult) {
	if r.SessionID == "" {
		return
	}
	failed, text := claudeError(r)
	if r.Result != "" && !failed {
		if c.last.Type != EventMessage || c.last.Text != r.Result {
			c.add(Event{Type: EventMessage, Text: r.Result})
		}
	}
	for _, d := range r.Denials {
		if d.ToolUseID == "" || !c.deniedSent[d.ToolUseID] {
			c.add(Event{Type: EventToolUse, Tool: d.ToolName, Detail: detailOf(d.ToolInput), Status: "denied"})
		}
	}
	u := claudeUsage(r)
	c.add(Event{Type: EventUsage, Usage: &u})
	if failed {
		c.add(Event{Type: EventError, Text: text})
	}
}

func (c *claudeReader) Finish() (*Outcome, error) {
	o, res := &c.o, c.res
	if res == nil || res.SessionID == "" {
		c.finish()
		return o, ErrNoResult
	}
	o.SessionID = res.SessionID
	o.Final = res.Result
	o.Usage = claudeUsage(res)
	for _, d := range res.Denials {
		c.deny(Denial{Tool: d.ToolName, Detail: detailOf(d.ToolInput)})
	}
	o.Error, o.ErrorText = claudeError(res)
	c.finish()
	return o, nil
}

func claudeUsage(r *claudeResult) Usage {
	return Usage{
		Input:   r.Usage.Input + r.Usage.CacheCreation + r.Usage.CacheRead,
		Output:  r.Usage.Output,
		Cached:  r.Usage.CacheRead,
		CostUSD: r.TotalCostUSD,
		Turns:   r.NumTurns,
	}
}

// claudeError says whether the result reports an error, and its text.
func claudeError(r *claudeResult) (bool, string) {
	if !r.IsError && (r.Subtype == "" || r.Subtype == "success") {
		return false, ""
	}
	text := r.Result
	if len(r.Errors) > 0 {
		text = joinLines(r.Errors)
	}
	if text == "" {
		text = r.Subtype
	}
	return true, text
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(x)
	}
	return b.String()
}
