package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "oneshot", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParseOutput reads the outputs the real harnesses printed in make
// e2e (TestOneShot), and hand-made damaged ones.
func TestParseOutput(t *testing.T) {
	tests := []struct {
		name, harness, file string
		data                string // instead of file
		wantErr             error
		session, final      string
		model               string // the model the output names
		denials             []Denial
		cost                bool
		turns               int
		errText             string
	}{
		{name: "claude writes", harness: "claude", file: "claude-write.json", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "finished", cost: true, turns: 2},
		{name: "claude resumes", harness: "claude", file: "claude-resume.json", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "resumed", cost: true, turns: 1},
		{name: "claude denied exits 0", harness: "claude", file: "claude-denied.json", final: "could not write", cost: true, turns: 2,
			denials: []Denial{{Tool: "Write", Detail: "/sandbox/out.txt"}}},
		{name: "claude stream-json writes", harness: "claude", file: "claude-write.jsonl", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "finished", model: "claude-e2e", cost: true, turns: 2},
		{name: "claude stream-json resumes", harness: "claude", file: "claude-resume.jsonl", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "resumed", model: "claude-e2e", cost: true, turns: 1},
		{name: "claude stream-json denied exits 0", harness: "claude", file: "claude-denied.jsonl", final: "could not write", model: "claude-e2e", cost: true, turns: 2,
			denials: []Denial{{Tool: "Write", Detail: "/sandbox/out.txt"}}},
		{name: "claude 2.1.332 stream-json writes", harness: "claude", file: "claude-2.1.332-write.jsonl", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "finished", model: "claude-e2e", cost: true, turns: 2},
		{name: "codex writes", harness: "codex", file: "codex-write.jsonl", final: "finished"},
		{name: "codex 0.171.0 writes", harness: "codex", file: "codex-0.171.0-write.jsonl", final: "finished"},
		{name: "codex resumes", harness: "codex", file: "codex-resume.jsonl", final: "resumed"},
		{name: "opencode writes", harness: "opencode", file: "opencode-write.jsonl", final: "finished", cost: true},
		{name: "opencode resumes", harness: "opencode", file: "opencode-resume.jsonl", final: "resumed", cost: true},
		{name: "opencode rejected exits 0", harness: "opencode", file: "opencode-denied.jsonl", cost: true,
			denials: []Denial{{Tool: "write", Detail: "/sandbox/out.txt"}}},

		{name: "claude HTTP 400 exits 1 with subtype success", harness: "claude",
			data:    `{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 bad request","session_id":"s1","num_turns":1,"total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}`,
			session: "s1", final: "API Error: 400 bad request", cost: true, turns: 1, errText: "API Error: 400 bad request"},
		{name: "claude max turns", harness: "claude",
			data:    `{"type":"result","subtype":"error_max_turns","is_error":true,"session_id":"s1","num_turns":3,"usage":{}}`,
			session: "s1", turns: 3, errText: "error_max_turns"},
		{name: "claude stream-json", harness: "claude",
			data: `{"type":"system","subtype":"init","session_id":"s2"}
{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"a"}}]}}
{"type":"assistant","message":{"content":[{"type":"text","text":"ok"}]}}
{"type":"result","subtype":"success","result":"ok","session_id":"s2","num_turns":2,"usage":{"input_tokens":3,"output_tokens":1}}
`, session: "s2", final: "ok", turns: 2},
		{name: "codex turn failed", harness: "codex",
			data: `{"type":"thread.started","thread_id":"t1"}
{"type":"turn.started"}
{"type":"error","message":"stream disconnected"}
{"type":"turn.failed","error":{"message":"unexpected status 400"}}
`, session: "t1", errText: "unexpected status 400"},
		{name: "codex reconnecting is no failure", harness: "codex",
			data: `{"type":"thread.started","thread_id":"t1"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 2/5 (unexpected status 403 Forbidden: Unknown error, url: ws://127.0.0.1:3128/_broker/openai/v1/responses)"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Falling back from WebSockets to HTTPS transport. unexpected status 403 Forbidden"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}
`, session: "t1", final: "done"},
		{name: "opencode error event", harness: "opencode",
			data: `{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Bad Request"}}}
`, session: "ses_1", errText: "Bad Request"},

		{name: "claude killed by SIGTERM prints nothing", harness: "claude", data: "", wantErr: ErrNoResult},
		{name: "claude truncated", harness: "claude", file: "claude-write.json", data: "cut", wantErr: ErrNoResult},
		{name: "claude stream-json truncated", harness: "claude", file: "claude-write.jsonl", data: "cut", wantErr: ErrNoResult},
		{name: "claude garbage", harness: "claude", data: "Error: something went wrong\n", wantErr: ErrNoResult},
		{name: "claude result without session", harness: "claude", data: `{"type":"result","result":"x"}`, wantErr: ErrNoResult},
		{name: "codex truncated", harness: "codex", file: "codex-write.jsonl", data: "cut", wantErr: ErrNoResult},
		{name: "codex without turn end", harness: "codex", data: "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n{\"type\":\"turn.started\"}\n", wantErr: ErrNoResult},
		{name: "codex garbage", harness: "codex", data: "\x00\xff{{{\n[1,2]\n\"x\"\n", wantErr: ErrNoResult},
		{name: "opencode truncated", harness: "opencode", file: "opencode-write.jsonl", data: "cut", wantErr: ErrNoResult},
		{name: "opencode stopped between steps", harness: "opencode", file: "opencode-write.jsonl", data: "steps", wantErr: ErrNoResult},
		{name: "opencode garbage", harness: "opencode", data: "null\n{\"type\":7}\n", wantErr: ErrNoResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.data)
			if tt.file != "" {
				data = fixture(t, tt.file)
				switch tt.data {
				case "cut": // the last line cut short
					data = bytes.TrimRight(data, "\n")
					data = data[:len(data)-10]
				case "steps": // up to the first step's end
					i := bytes.Index(data, []byte(`"reason":"tool-calls"`))
					data = data[:i+bytes.IndexByte(data[i:], '\n')+1]
				}
			}
			got, err := ParseOutput(tt.harness, data)
			if got == nil {
				t.Fatalf("ParseOutput returned no outcome (err %v)", err)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ParseOutput err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				return
			}
			if got.SessionID == "" || (tt.session != "" && got.SessionID != tt.session) {
				t.Errorf("SessionID = %q, want %q", got.SessionID, tt.session)
			}
			if got.Model != tt.model {
				t.Errorf("Model = %q, want %q", got.Model, tt.model)
			}
			if got.Final != tt.final {
				t.Errorf("Final = %q, want %q", got.Final, tt.final)
			}
			if tt.file != "" && (got.Usage.Input == 0 || got.Usage.Output == 0) {
				t.Errorf("Usage = %+v, want input and output above zero", got.Usage)
			}
			if (got.Usage.CostUSD != nil) != tt.cost {
				t.Errorf("CostUSD = %v, want reported: %v", got.Usage.CostUSD, tt.cost)
			}
			if got.Usage.Turns != tt.turns {
				t.Errorf("Turns = %d, want %d", got.Usage.Turns, tt.turns)
			}
			if len(got.Denials) != len(tt.denials) {
				t.Fatalf("Denials = %+v, want %+v", got.Denials, tt.denials)
			}
			for i := range tt.denials {
				if got.Denials[i] != tt.denials[i] {
					t.Errorf("Denials[%d] = %+v, want %+v", i, got.Denials[i], tt.denials[i])
				}
			}
			if got.Error != (tt.errText != "") || got.ErrorText != tt.errText {
				t.Errorf("Error = %v %q, want %q", got.Error, got.ErrorText, tt.errText)
			}
			if len(got.Events) == 0 || got.Events[0].Type != EventStarted || got.Events[0].SessionID != got.SessionID {
				t.Errorf("Events = %+v, want started with the session id first", got.Events)
			}
			types := map[string]bool{}
			for _, e := range got.Events {
				types[e.Type] = true
			}
			if got.HasUsage != types[EventUsage] {
				t.Errorf("HasUsage %v, want %v: whether a usage event came", got.HasUsage, types[EventUsage])
			}
			if tt.file != "" && !types[EventUsage] {
				t.Errorf("Events = %+v, want a usage event", got.Events)
			}
			if tt.final != "" && tt.errText == "" && !types[EventMessage] {
				t.Errorf("Events = %+v, want a message event", got.Events)
			}
			if len(tt.denials) > 0 && !types[EventToolUse] {
				t.Errorf("Events = %+v, want a tool_use event", got.Events)
			}
		})
	}
}

func TestParseOutputUnknownHarness(t *testing.T) {
	if _, err := ParseOutput("vim", nil); err == nil || !strings.Contains(err.Error(), "unknown harness") {
		t.Errorf("ParseOutput(vim) err = %v, want unknown harness", err)
	}
}

// TestOutputEvents checks the events each recorded output gives, in
// order, line by line as the harness printed it, and that the usage
// events add up to the outcome's usage.
func TestOutputEvents(t *testing.T) {
	tests := []struct {
		harness, file string
		want          []string
	}{
		{"claude", "claude-write.jsonl", []string{"started 5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", "tool_use Write /sandbox/out.txt completed", "message finished", "usage 2 2 0"}},
		{"claude", "claude-denied.jsonl", []string{"started d6565a45-978a-4e99-87e5-f893a8292652", "tool_use Write /sandbox/out.txt denied", "message could not write", "usage 2 2 0"}},
		{"claude", "claude-resume.jsonl", []string{"started 5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", "message resumed", "usage 1 1 0"}},
		{"claude", "claude-2.1.332-write.jsonl", []string{"started 5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", "tool_use Write /sandbox/out.txt completed", "message finished", "usage 2 2 0"}},
		// The json format: everything at its one line.
		{"claude", "claude-write.json", []string{"started 5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", "message finished", "usage 2 2 0"}},
		{"claude", "claude-denied.json", []string{"started a0656761-ae2c-4f20-bdf2-7e0a7448c18b", "message could not write", "tool_use Write /sandbox/out.txt denied", "usage 2 2 0"}},
		{"codex", "codex-write.jsonl", []string{"started 01a20fd4-efb4-7e21-b57e-874ab689a026", "tool_use apply_patch /sandbox/out.txt completed", "message finished", "usage 2 2 0"}},
		{"codex", "codex-resume.jsonl", []string{"started 01a20fd4-efb4-7e21-b57e-874ab689a026", "message resumed", "usage 3 3 0"}},
		{"codex", "codex-0.171.0-write.jsonl", []string{"started 01a22509-10cf-77b3-b669-b6a5f923f9a1", "tool_use apply_patch /sandbox/out.txt completed", "message finished", "usage 2 2 0"}},
		{"opencode", "opencode-write.jsonl", []string{"started ses_df02b08f5ffexKqnZS6q4UeZLH", "tool_use write /sandbox/out.txt completed", "usage 1 1 0", "message finished", "usage 1 1 0"}},
		{"opencode", "opencode-denied.jsonl", []string{"started ses_df02ae831ffeLcm9dZaGBt16dW", "tool_use write /sandbox/out.txt denied", "usage 1 1 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r, err := NewOutputReader(tt.harness)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			var lineEvents []Event
			for _, line := range bytes.Split(fixture(t, tt.file), []byte("\n")) {
				for _, e := range r.Line(line) {
					lineEvents = append(lineEvents, e)
					got = append(got, describe(e))
				}
			}
			out, err := r.Finish()
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("events line by line:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if len(out.Events) != 0 {
				t.Errorf("Outcome.Events %+v, want none: Line returned them", out.Events)
			}
			var sum Usage
			for _, e := range lineEvents {
				if e.Type == EventUsage {
					sum.add(*e.Usage)
				}
			}
			if !reflect.DeepEqual(sum, out.Usage) {
				t.Errorf("usage events add up to %+v, want the outcome's %+v", sum, out.Usage)
			}
			if !out.HasUsage {
				t.Errorf("HasUsage false, want true: usage events came")
			}
		})
	}
}

// TestClaudeStoppedEarly reads what a claude stopped before its end
// (SIGTERM, the time limit) printed in stream-json: no result, but the
// session id of its first line, which resume needs.
func TestClaudeStoppedEarly(t *testing.T) {
	data := fixture(t, "claude-write.jsonl")
	data = data[:bytes.LastIndex(bytes.TrimRight(data, "\n"), []byte("\n"))+1] // without the result
	out, err := ParseOutput("claude", data)
	if !errors.Is(err, ErrNoResult) {
		t.Fatalf("err = %v, want ErrNoResult", err)
	}
	if out.SessionID != "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11" {
		t.Errorf("SessionID = %q, want the one of the init line", out.SessionID)
	}
	if n := len(out.Events); n != 3 || out.Events[0].Type != EventStarted || out.Events[n-1].Type != EventMessage {
		t.Errorf("Events = %+v, want started, the tool_use and the message", out.Events)
	}
}

// TestClaudeOwnSandbox reads Claude Code's own sandbox from its init line
// (sandbox_enabled, 2.1.332 on): nothing from 2.1.330's line, which has
// no such field; false from 2.1.332's, run directly (no settings turn it
// on) and run confined by workforce (claude-confined.jsonl, kept from a
// confined `workforce run` of make e2e: workforce turns it off); and
// either value written into the 2.1.330 line.
func TestClaudeOwnSandbox(t *testing.T) {
	data := fixture(t, "claude-write.jsonl")
	out, err := ParseOutput("claude", data)
	if err != nil || out.OwnSandbox != nil {
		t.Fatalf("2.1.330: OwnSandbox = %v, %v; want nil", out.OwnSandbox, err)
	}
	for _, file := range []string{"claude-2.1.332-write.jsonl", "claude-confined.jsonl"} {
		out, err := ParseOutput("claude", fixture(t, file))
		if err != nil || out.OwnSandbox == nil || *out.OwnSandbox {
			t.Errorf("%s: OwnSandbox = %v, %v; want false", file, out.OwnSandbox, err)
		}
	}
	for _, on := range []bool{true, false} {
		field := fmt.Sprintf(`"subtype":"init","sandbox_enabled":%v,`, on)
		with := bytes.Replace(data, []byte(`"subtype":"init",`), []byte(field), 1)
		out, err := ParseOutput("claude", with)
		if err != nil || out.OwnSandbox == nil || *out.OwnSandbox != on {
			t.Errorf("sandbox_enabled %v: OwnSandbox = %v, %v", on, out.OwnSandbox, err)
		}
	}
}

func describe(e Event) string {
	switch e.Type {
	case EventStarted:
		return e.Type + " " + e.SessionID
	case EventToolUse:
		return strings.Join([]string{e.Type, e.Tool, e.Detail, e.Status}, " ")
	case EventMessage, EventError:
		return e.Type + " " + e.Text
	case EventUsage:
		return fmt.Sprintf("%s %d %d %d", e.Type, e.Usage.Input, e.Usage.Output, e.Usage.Cached)
	}
	return e.Type
}

// TestOutputWriter writes outputs to OutputWriter in pieces that cut
// lines anywhere: a long line (far above bufio.Scanner's 64 KiB), the
// last line without its newline, a line split byte by byte. The events
// must come as each line ends, and the outcome be ParseOutput's.
func TestOutputWriter(t *testing.T) {
	long := `{"type":"item.completed","item":{"type":"command_execution","command":"` + strings.Repeat("x", 200<<10) + `","status":"completed"}}`
	codex := "{\"type\":\"thread.started\",\"thread_id\":\"t1\"}\n" + long + "\n" +
		"{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}"
	var got []Event
	w, err := NewOutputWriter("codex", func(e Event) { got = append(got, e) })
	if err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		t.Helper()
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	first := strings.Index(codex, "\n")
	write(codex[:first-3])
	if len(got) != 0 {
		t.Fatalf("events before the first line ended: %+v", got)
	}
	write(codex[first-3 : first+1])
	if len(got) != 1 || got[0].Type != EventStarted || got[0].SessionID != "t1" {
		t.Fatalf("after the first line: %+v, want started t1", got)
	}
	second := first + 1 + len(long)
	for i := first + 1; i <= second; i++ { // the long line, a byte a write
		write(codex[i : i+1])
	}
	if len(got) != 2 || got[1].Type != EventToolUse || len(got[1].Detail) != 200<<10 {
		t.Fatalf("after the long line: %d events, want started and its tool_use", len(got))
	}
	write(codex[second+1:]) // the last line, without its newline
	if len(got) != 2 {
		t.Fatalf("events before Finish from a line without its newline: %+v", got[2:])
	}
	out, err := w.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	if len(got) != 3 || got[2].Type != EventUsage || got[2].Usage.Output != 2 {
		t.Fatalf("after Finish: %+v, want the last line's usage", got)
	}
	want, werr := ParseOutput("codex", []byte(codex))
	if werr != nil || !reflect.DeepEqual(withEvents(out, got), want) {
		t.Errorf("Finish = %+v, want ParseOutput's %+v (%v)", out, want, werr)
	}
	if len(out.Events) != 0 {
		t.Errorf("Finish kept the events %+v, want none: they were passed on", out.Events)
	}
	again, err := w.Finish()
	if again != out || err != nil || len(got) != 3 {
		t.Errorf("a second Finish = %p, %v and %d events; want the same outcome and no event", again, err, len(got))
	}
	write("{\"type\":\"turn.failed\",\"error\":{\"message\":\"late\"}}\n")
	if len(got) != 3 || out.Error {
		t.Errorf("a write after Finish: %d events and error %v, want none", len(got), out.Error)
	}
}

func TestNewOutputReaderUnknownHarness(t *testing.T) {
	if _, err := NewOutputReader("vim"); err == nil {
		t.Error("NewOutputReader(vim) = nil error")
	}
	if _, err := NewOutputWriter("vim", nil); err == nil {
		t.Error("NewOutputWriter(vim) = nil error")
	}
}

// fuzzOutput checks that the parser of harness never panics, that a
// result is read only from output that holds its end (any prefix of a
// recorded output that cuts into its last line gives ErrNoResult), and
// that reading the output as it arrives gives what ParseOutput gives:
// line by line through the OutputReader, and through the OutputWriter in
// two writes cut at any byte, and a byte a write, its events passed on
// being the outcome's.
func fuzzOutput(f *testing.F, harness string, files ...string) {
	for _, name := range files {
		data := fixture(f, name)
		f.Add(data, len(data))
		f.Add(data, len(bytes.TrimRight(data, "\n"))-1)
		f.Add(data, len(data)/2)
	}
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		o, err := ParseOutput(harness, data)
		if o == nil {
			t.Fatalf("no outcome (err %v)", err)
		}
		if err != nil && !errors.Is(err, ErrNoResult) {
			t.Fatalf("err = %v, want nil or ErrNoResult", err)
		}
		streamed(t, harness, data, cut, o, err)
		if err != nil {
			return
		}
		// data holds a result, which its last line ends (without it,
		// it holds none): cut into that line, it holds none either.
		end := len(bytes.TrimRight(data, " \t\r\n"))
		last := bytes.LastIndexByte(data[:end], '\n') + 1
		if cut <= last || cut >= end {
			return
		}
		if _, err := ParseOutput(harness, data[:last]); !errors.Is(err, ErrNoResult) {
			return
		}
		if _, err := ParseOutput(harness, data[:cut]); !errors.Is(err, ErrNoResult) {
			t.Fatalf("ParseOutput of the output cut at %d of %d: err = %v, want ErrNoResult", cut, end, err)
		}
	})
}

// streamed checks that data read as it arrives gives want and wantErr,
// ParseOutput's outcome.
func streamed(t *testing.T, harness string, data []byte, cut int, want *Outcome, wantErr error) {
	t.Helper()
	r, err := NewOutputReader(harness)
	if err != nil {
		t.Fatal(err)
	}
	var lineEvents []Event
	long := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) > MaxLine {
			long = true // ParseOutput does not read it
			continue
		}
		lineEvents = append(lineEvents, r.Line(line)...)
	}
	got, err := r.Finish()
	if !long && (err != wantErr || !reflect.DeepEqual(withEvents(got, lineEvents), want)) {
		t.Fatalf("line by line: %+v, %v\nParseOutput: %+v, %v", got, err, want, wantErr)
	}
	if !reflect.DeepEqual(lineEvents, want.Events) {
		t.Fatalf("Line returned %+v\nthe outcome has %+v", lineEvents, want.Events)
	}
	writes := [][][]byte{{data}}
	if cut >= 0 && cut <= len(data) {
		writes = append(writes, [][]byte{data[:cut], data[cut:]})
	}
	if len(data) <= 4<<10 {
		var bytewise [][]byte
		for i := range data {
			bytewise = append(bytewise, data[i:i+1])
		}
		writes = append(writes, bytewise)
	}
	for _, pieces := range writes {
		var passed []Event
		w, err := NewOutputWriter(harness, func(e Event) { passed = append(passed, e) })
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pieces {
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		got, err := w.Finish()
		if err != wantErr || !reflect.DeepEqual(withEvents(got, passed), want) {
			t.Fatalf("in %d writes: %+v, %v\nParseOutput: %+v, %v", len(pieces), got, err, want, wantErr)
		}
		if !reflect.DeepEqual(passed, want.Events) {
			t.Fatalf("in %d writes, passed on %+v\nthe outcome has %+v", len(pieces), passed, want.Events)
		}
	}
}

// withEvents returns a copy of o with events, which a reader or a writer
// does not keep: what ParseOutput returns.
func withEvents(o *Outcome, events []Event) *Outcome {
	c := *o
	c.Events = events
	return &c
}

func FuzzParseClaude(f *testing.F) {
	fuzzOutput(f, "claude", "claude-write.json", "claude-resume.json", "claude-denied.json",
		"claude-write.jsonl", "claude-resume.jsonl", "claude-denied.jsonl", "claude-2.1.332-write.jsonl")
}

func FuzzParseCodex(f *testing.F) {
	fuzzOutput(f, "codex", "codex-write.jsonl", "codex-resume.jsonl", "codex-0.171.0-write.jsonl")
}

func FuzzParseOpencode(f *testing.F) {
	fuzzOutput(f, "opencode", "opencode-write.jsonl", "opencode-resume.jsonl", "opencode-denied.jsonl")
}

// errReader gives data, then err.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReadOutput checks that ReadOutput, which reads a kept output as it
// streams, says what ParseOutput says of it, without the events, and
// returns an error reading it with what it read before.
func TestReadOutput(t *testing.T) {
	for _, tt := range []struct{ harness, file string }{
		{"claude", "claude-write.jsonl"}, {"claude", "claude-denied.json"}, {"codex", "codex-write.jsonl"},
		{"opencode", "opencode-denied.jsonl"}, {"gemini", "gemini-write.jsonl"},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data := fixture(t, tt.file)
			want, werr := ParseOutput(tt.harness, data)
			got, err := ReadOutput(tt.harness, bytes.NewReader(data))
			if err != werr || !reflect.DeepEqual(withEvents(got, want.Events), want) || len(got.Events) != 0 {
				t.Errorf("ReadOutput = %+v, %v\nParseOutput: %+v, %v", got, err, want, werr)
			}
			if !got.HasUsage {
				t.Error("HasUsage false, want true")
			}
			broken := errors.New("read error")
			got, err = ReadOutput(tt.harness, &errReader{data: data[:len(data)/2], err: broken})
			if !errors.Is(err, broken) || got == nil {
				t.Errorf("ReadOutput of a failing reader = %v, %v; want what it read and the error", got, err)
			}
		})
	}
}
