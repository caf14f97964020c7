package harness

import (
	"bytes"
	"encoding/json"
)

// claudeResult is claude's `result` object, the whole output of
// --output-format json and the last line of stream-json. Measured on
// 2.1.330: it exits 0 when a tool call was denied (permission_denials
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
		ToolInput json.RawMessage `json:"tool_input"`
	} `json:"permission_denials"`
}

// claudeStream is a line of --output-format stream-json before the result.
type claudeStream struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`
	Message   struct {
		Content []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	} `json:"message"`
}

func parseClaude(out []byte) (*Outcome, error) {
	o := &Outcome{}
	var res *claudeResult
	take := func(line []byte) {
		var s claudeStream
		if json.Unmarshal(line, &s) != nil {
			return
		}
		switch s.Type {
		case "result":
			var r claudeResult
			if json.Unmarshal(line, &r) == nil {
				res = &r
			}
		case "system":
			if s.Subtype == "init" && s.SessionID != "" {
				o.Events = append(o.Events, Event{Type: EventStarted, SessionID: s.SessionID})
			}
		case "assistant":
			for _, c := range s.Message.Content {
				switch c.Type {
				case "text":
					o.Events = append(o.Events, Event{Type: EventMessage, Text: c.Text})
				case "tool_use":
					o.Events = append(o.Events, Event{Type: EventToolUse, Tool: c.Name, Detail: detailOf(c.Input)})
				}
			}
		}
	}
	if t := bytes.TrimSpace(out); json.Valid(t) && !bytes.ContainsRune(t, '\n') {
		take(t)
	} else {
		jsonLines(out, take)
	}
	if res == nil || res.SessionID == "" {
		return o, ErrNoResult
	}
	o.SessionID = res.SessionID
	o.Final = res.Result
	o.Usage = Usage{
		Input:   res.Usage.Input + res.Usage.CacheCreation + res.Usage.CacheRead,
		Output:  res.Usage.Output,
		Cached:  res.Usage.CacheRead,
		CostUSD: res.TotalCostUSD,
		Turns:   res.NumTurns,
	}
	for _, d := range res.Denials {
		o.Denials = append(o.Denials, Denial{Tool: d.ToolName, Detail: detailOf(d.ToolInput)})
	}
	if res.IsError || (res.Subtype != "" && res.Subtype != "success") {
		o.Error = true
		o.ErrorText = res.Result
		if len(res.Errors) > 0 {
			o.ErrorText = joinLines(res.Errors)
		}
		if o.ErrorText == "" {
			o.ErrorText = res.Subtype
		}
	}
	if len(o.Events) == 0 || o.Events[0].Type != EventStarted {
		o.Events = append([]Event{{Type: EventStarted, SessionID: res.SessionID}}, o.Events...)
	}
	if o.Final != "" && !o.Error {
		if n := len(o.Events); o.Events[n-1].Type != EventMessage || o.Events[n-1].Text != o.Final {
			o.Events = append(o.Events, Event{Type: EventMessage, Text: o.Final})
		}
	}
	for _, d := range o.Denials {
		o.Events = append(o.Events, Event{Type: EventToolUse, Tool: d.Tool, Detail: d.Detail, Status: "denied"})
	}
	u := o.Usage
	o.Events = append(o.Events, Event{Type: EventUsage, Usage: &u})
	if o.Error {
		o.Events = append(o.Events, Event{Type: EventError, Text: o.ErrorText})
	}
	return o, nil
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
