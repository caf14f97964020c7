package harness

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// geminiEvent is a line of gemini -p TASK -o stream-json. Measured on
// 0.61.0 (harness/testdata/oneshot/gemini-*.jsonl): init (session_id,
// model) first; message (role user: the task; role assistant: the
// answer, in pieces with delta true); tool_use (tool_name, tool_id,
// parameters); tool_result (tool_id, status success or error, error.type
// and error.message); error (severity, message: what the run reports and
// goes on from); result last (status success or error, error.type and
// error.message, stats: input_tokens, counting the cached ones, cached,
// output_tokens). A tool the model called that the run does not offer
// (the approval mode, a deny rule) fails with error.type
// tool_not_registered, one a policy rule refuses on its arguments with
// policy_violation; gemini exits 0 either way. An HTTP error from the
// model ends with a result of status error ("[API Error: " and the API's
// error JSON: geminiAPIError says it in a line) and exits with the HTTP
// status modulo 256 (400: 144). No cost, no turn count.
type geminiEvent struct {
	Type       string          `json:"type"`
	SessionID  string          `json:"session_id"`
	Model      string          `json:"model"`
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Delta      bool            `json:"delta"`
	ToolName   string          `json:"tool_name"`
	ToolID     string          `json:"tool_id"`
	Parameters json.RawMessage `json:"parameters"`
	Status     string          `json:"status"`
	Message    string          `json:"message"`
	Severity   string          `json:"severity"`
	Error      *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	Stats *struct {
		Input  int64 `json:"input_tokens"`
		Output int64 `json:"output_tokens"`
		Cached int64 `json:"cached"`
	} `json:"stats"`
}

// geminiDenied are the error types of a tool_result that say the
// permissions refused the call.
var geminiDenied = map[string]bool{"tool_not_registered": true, "policy_violation": true}

// geminiReader reads gemini's stream-json: init gives started, the
// assistant's pieces one message once the next event comes, tool_result
// a tool_use (status completed, failed, or denied when gemini did not
// offer the tool or a policy refused the call), result the run's usage
// and, when its status is error, the error. The run has a result once
// the result line came. The assistant's message being written is kept up
// to MaxLine bytes; the calls waiting for their result within the
// reader's budget.
type geminiReader struct {
	events
	calls map[string]Event
	text  strings.Builder
	// textCut: the message being written was longer than MaxLine;
	// finalCut: the final message was.
	textCut, finalCut bool
	done              bool
}

func (c *geminiReader) Line(line []byte) []Event {
	line, ok := jsonLine(line)
	if !ok {
		return nil
	}
	var e geminiEvent
	if json.Unmarshal(line, &e) != nil {
		return nil
	}
	c.take(&e)
	return c.took()
}

// flush ends the assistant's message being written, if any.
func (c *geminiReader) flush() {
	if c.text.Len() == 0 {
		return
	}
	t := c.text.String()
	c.text.Reset()
	c.o.Final, c.finalCut, c.textCut = t, c.textCut, false
	c.add(Event{Type: EventMessage, Text: t})
}

// write adds a piece of the assistant's message being written, up to
// MaxLine bytes in all.
func (c *geminiReader) write(s string) {
	if room := MaxLine - c.text.Len(); len(s) > room {
		i := room
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s, c.textCut = s[:i], true
	}
	c.text.WriteString(s)
}

func (c *geminiReader) take(e *geminiEvent) {
	o := &c.o
	if e.Type == "message" && e.Role == "assistant" {
		c.write(e.Content)
		return
	}
	if e.Type != "message" {
		c.flush()
	}
	switch e.Type {
	case "init":
		if e.SessionID != "" && o.SessionID == "" {
			o.SessionID = e.SessionID
			c.add(Event{Type: EventStarted, SessionID: e.SessionID})
		}
		if e.Model != "" {
			o.Model = e.Model
		}
	case "tool_use":
		call := Event{Type: EventToolUse, Tool: e.ToolName, Detail: detailOf(e.Parameters)}
		if prev, ok := c.calls[e.ToolID]; ok {
			delete(c.calls, e.ToolID)
			c.keep.free(len(e.ToolID) + len(prev.Tool) + len(prev.Detail))
		}
		if !c.keep.track(len(e.ToolID) + len(call.Tool) + len(call.Detail)) {
			return
		}
		if c.calls == nil {
			c.calls = map[string]Event{}
		}
		c.calls[e.ToolID] = call
	case "tool_result":
		call, ok := c.calls[e.ToolID]
		if !ok {
			return
		}
		delete(c.calls, e.ToolID)
		c.keep.free(len(e.ToolID) + len(call.Tool) + len(call.Detail))
		call.Status = "completed"
		if e.Status == "error" {
			call.Status = "failed"
			if e.Error != nil && geminiDenied[e.Error.Type] {
				call.Status = "denied"
				c.deny(Denial{Tool: call.Tool, Detail: call.Detail})
			}
		}
		c.add(call)
	case "error":
		if e.Message != "" {
			c.add(Event{Type: EventError, Text: e.Message})
		}
	case "result":
		c.done = true
		if s := e.Stats; s != nil {
			u := Usage{Input: s.Input, Output: s.Output, Cached: s.Cached}
			o.Usage = u
			c.add(Event{Type: EventUsage, Usage: &u})
		}
		if e.Status == "error" {
			msg := "error"
			if e.Error != nil && e.Error.Message != "" {
				msg = geminiAPIError(e.Error.Message)
			}
			o.Error, o.ErrorText = true, msg
			c.add(Event{Type: EventError, Text: msg})
		}
	}
}

func (c *geminiReader) Finish() (*Outcome, error) {
	if c.text.Len() > 0 {
		// Cut before its end (a signal, the time limit): the message
		// being written is the last word, though no event said it.
		c.o.Final, c.finalCut = c.text.String(), c.textCut
	}
	if c.finalCut {
		c.o.Warnings = append(c.o.Warnings, fmt.Sprintf("the agent's final message was longer than %s and was cut", sizeName(MaxLine)))
	}
	c.finish()
	if !c.done || c.o.SessionID == "" {
		return &c.o, ErrNoResult
	}
	return &c.o, nil
}

// geminiAPIError returns gemini's message for an HTTP error of the model
// ("[API Error: " and the API's error JSON "]") as a line: "API error"
// with the status code and name, then the API's message (escaped by
// internal/quote: a line, no control characters); any other message as
// it is.
func geminiAPIError(msg string) string {
	body, ok := strings.CutPrefix(msg, "[API Error: ")
	if !ok {
		return msg
	}
	body, ok = strings.CutSuffix(body, "]")
	if !ok {
		return msg
	}
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Error.Message == "" {
		return msg
	}
	s := "API error"
	if e.Error.Code != 0 {
		s += " " + strconv.Itoa(e.Error.Code)
	}
	if e.Error.Status != "" {
		s += " " + e.Error.Status
	}
	// The API's message, decoded from JSON, may hold any character:
	// escaped, on one line.
	return s + ": " + quote.Text(e.Error.Message)
}
