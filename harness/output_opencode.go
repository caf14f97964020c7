package harness

import (
	"encoding/json"
	"strings"
)

// opencodeEvent is a line of opencode run --format json. Measured on
// 1.18.33: every event carries the sessionID; step_start, tool_use (part
// with tool and state: status, input, output, error), text (part.text),
// step_finish (part.reason, part.cost, part.tokens), error (error.name,
// error.data.message). There is no final event: the run ends with the
// step_finish of the last step, whose reason is "stop", or that of the
// step a rejected permission stopped (reason "tool-calls"). A permission that would ask is rejected
// and opencode still exits 0: the tool's state.error alone says so.
type opencodeEvent struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionID"`
	Error     *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
	Part struct {
		Type   string   `json:"type"`
		Text   string   `json:"text"`
		Tool   string   `json:"tool"`
		Reason string   `json:"reason"`
		Cost   *float64 `json:"cost"`
		Tokens *struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
		State struct {
			Status string          `json:"status"`
			Input  json.RawMessage `json:"input"`
			Error  string          `json:"error"`
		} `json:"state"`
	} `json:"part"`
}

// opencodeDenied are the starts of the state.error opencode gives a tool
// call its permissions refused: a rule that denies, an ask rejected.
var opencodeDenied = []string{
	"The user rejected permission",
	"The user has specified a rule which prevents",
	"Error: The user rejected permission",
	"Error: The user has specified a rule which prevents",
}

// opencodeReader reads opencode run --format json: the first event's
// sessionID gives started, text a message, tool_use a tool_use (status
// completed, failed, or denied when its permission was refused),
// step_finish its step's usage, error an error. The run has a result
// once its last step ended (a stop, or a refused permission) or an error
// came.
type opencodeReader struct {
	events
	// done: the last step ended the run, by a stop or by a rejected
	// permission (after which opencode runs no further step).
	done, denied bool
}

func (c *opencodeReader) Line(line []byte) []Event {
	line, ok := jsonLine(line)
	if !ok {
		return nil
	}
	var e opencodeEvent
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	c.take(&e)
	return c.took()
}

func (c *opencodeReader) take(e *opencodeEvent) {
	o := &c.o
	if e.SessionID != "" && o.SessionID == "" {
		o.SessionID = e.SessionID
		c.add(Event{Type: EventStarted, SessionID: e.SessionID})
	}
	switch e.Type {
	case "step_start":
		c.done, c.denied = false, false
	case "text":
		if t := e.Part.Text; t != "" {
			o.Final = t
			c.add(Event{Type: EventMessage, Text: t})
		}
	case "tool_use":
		st := e.Part.State
		ev := Event{Type: EventToolUse, Tool: e.Part.Tool, Detail: detailOf(st.Input), Status: toolStatus(st.Status)}
		if st.Status == "error" {
			ev.Status = "failed"
			for _, p := range opencodeDenied {
				if strings.HasPrefix(st.Error, p) {
					ev.Status = "denied"
					c.deny(Denial{Tool: e.Part.Tool, Detail: ev.Detail})
					c.denied = true
					break
				}
			}
		}
		c.add(ev)
	case "step_finish":
		u := Usage{CostUSD: e.Part.Cost}
		if t := e.Part.Tokens; t != nil {
			u.Input = t.Input + t.Cache.Read + t.Cache.Write
			u.Output = t.Output + t.Reasoning
			u.Cached = t.Cache.Read
		}
		o.Usage.add(u)
		c.add(Event{Type: EventUsage, Usage: &u})
		// A step that ends in tool calls is followed by another,
		// unless a permission was rejected.
		c.done = e.Part.Reason != "tool-calls" || c.denied
	case "error":
		msg := ""
		if e.Error != nil {
			msg = e.Error.Data.Message
			if msg == "" {
				msg = e.Error.Name
			}
		}
		o.Error, o.ErrorText = true, msg
		c.add(Event{Type: EventError, Text: msg})
		c.done = true
	}
}

func (c *opencodeReader) Finish() (*Outcome, error) {
	c.finish()
	if !c.done || c.o.SessionID == "" {
		return &c.o, ErrNoResult
	}
	return &c.o, nil
}
