package harness

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
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
		denials             []Denial
		cost                bool
		turns               int
		errText             string
	}{
		{name: "claude writes", harness: "claude", file: "claude-write.json", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "finished", cost: true, turns: 2},
		{name: "claude resumes", harness: "claude", file: "claude-resume.json", session: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11", final: "resumed", cost: true, turns: 1},
		{name: "claude denied exits 0", harness: "claude", file: "claude-denied.json", final: "could not write", cost: true, turns: 2,
			denials: []Denial{{Tool: "Write", Detail: "/sandbox/out.txt"}}},
		{name: "codex writes", harness: "codex", file: "codex-write.jsonl", final: "finished"},
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
		{name: "opencode error event", harness: "opencode",
			data: `{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}
{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Bad Request"}}}
`, session: "ses_1", errText: "Bad Request"},

		{name: "claude killed by SIGTERM prints nothing", harness: "claude", data: "", wantErr: ErrNoResult},
		{name: "claude truncated", harness: "claude", file: "claude-write.json", data: "cut", wantErr: ErrNoResult},
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

// fuzzOutput checks that the parser of harness never panics, and that a
// result is read only from output that holds its end: any prefix of a
// recorded output that cuts into its last line gives ErrNoResult.
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

func FuzzParseClaude(f *testing.F) {
	fuzzOutput(f, "claude", "claude-write.json", "claude-resume.json", "claude-denied.json")
}

func FuzzParseCodex(f *testing.F) {
	fuzzOutput(f, "codex", "codex-write.jsonl", "codex-resume.jsonl")
}

func FuzzParseOpencode(f *testing.F) {
	fuzzOutput(f, "opencode", "opencode-write.jsonl", "opencode-resume.jsonl", "opencode-denied.jsonl")
}
