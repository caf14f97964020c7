package harness

import (
	"encoding/json"
	"strings"
)

// codexEvent is a line of codex exec --json. Measured on 0.169.0 and 0.171.0:
// thread.started (thread_id), turn.started, item.started, item.updated
// and item.completed (item: agent_message with text, command_execution
// with command and status, file_change, mcp_tool_call, reasoning, error),
// then turn.completed with usage, or turn.failed with an error, or a
// top-level error. No cost.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Message  string `json:"message"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Usage *struct {
		Input  int64 `json:"input_tokens"`
		Cached int64 `json:"cached_input_tokens"`
		Output int64 `json:"output_tokens"`
	} `json:"usage"`
	Item *struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Message string `json:"message"`
		Command string `json:"command"`
		Status  string `json:"status"`
		Server  string `json:"server"`
		Tool    string `json:"tool"`
		Changes []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

// codexReader reads codex exec --json: thread.started gives started,
// each completed item a message or a tool_use (status completed, failed,
// or denied when declined) or an error, each completed turn its usage; a
// failed turn or a top-level error is an error. The run has a result once
// a turn completed or failed.
type codexReader struct {
	events
	done bool
}

func (c *codexReader) Line(line []byte) []Event {
	line, ok := jsonLine(line)
	if !ok {
		return nil
	}
	var e codexEvent
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	c.take(&e)
	return c.took()
}

func (c *codexReader) take(e *codexEvent) {
	o := &c.o
	switch e.Type {
	case "thread.started":
		o.SessionID = e.ThreadID
		c.add(Event{Type: EventStarted, SessionID: e.ThreadID})
	case "item.completed":
		if e.Item == nil {
			return
		}
		it := e.Item
		ev := Event{Type: EventToolUse, Status: toolStatus(it.Status)}
		switch it.Type {
		case "agent_message":
			o.Final = it.Text
			c.add(Event{Type: EventMessage, Text: it.Text})
			return
		case "command_execution":
			ev.Tool, ev.Detail = "exec_command", it.Command
		case "file_change":
			var paths []string
			for _, ch := range it.Changes {
				paths = append(paths, ch.Path)
			}
			ev.Tool, ev.Detail = "apply_patch", strings.Join(paths, " ")
		case "mcp_tool_call":
			ev.Tool = "mcp__" + it.Server + "__" + it.Tool
		case "web_search":
			ev.Tool = "web_search"
		case "error":
			c.add(Event{Type: EventError, Text: it.Message})
			return
		default:
			return
		}
		if it.Status == "declined" {
			ev.Status = "denied"
			c.deny(Denial{Tool: ev.Tool, Detail: ev.Detail})
		}
		c.add(ev)
	case "turn.completed":
		c.done = true
		if e.Usage != nil {
			u := Usage{Input: e.Usage.Input, Output: e.Usage.Output, Cached: e.Usage.Cached}
			o.Usage.add(u)
			c.add(Event{Type: EventUsage, Usage: &u})
		}
	case "turn.failed", "error":
		msg := e.Message
		if e.Error != nil && e.Error.Message != "" {
			msg = e.Error.Message
		}
		if e.Type == "turn.failed" {
			c.done = true
		}
		if e.Type == "error" && strings.HasPrefix(msg, "Reconnecting... ") {
			// A retry codex makes, not a failure (0.169.0: five of its
			// Responses websocket, refused by workforce's broker, before it
			// falls back to HTTPS); a turn that fails after them ends with
			// turn.failed.
			if c.o.Retry == "" {
				c.o.Retry = cutText(msg, maxEvidence)
			}
			c.add(Event{Type: EventError, Text: msg})
			return
		}
		o.Error = true
		if o.ErrorText == "" || e.Type == "turn.failed" {
			o.ErrorText = msg
		}
		c.add(Event{Type: EventError, Text: msg})
	}
}

func (c *codexReader) Finish() (*Outcome, error) {
	c.finish()
	if !c.done || c.o.SessionID == "" {
		return &c.o, ErrNoResult
	}
	return &c.o, nil
}
