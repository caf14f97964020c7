package harness

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// seen is a line as lineSplitter gives it.
type seen struct {
	n    int
	line string
	cut  bool
}

// split runs lineSplitter with max over data written in pieces and
// returns the lines it gave.
func split(max int, pieces [][]byte) []seen {
	var got []seen
	s := lineSplitter{max: max}
	line := func(n int, l []byte, cut bool) { got = append(got, seen{n, string(l), cut}) }
	for _, p := range pieces {
		s.write(p, line)
	}
	s.finish(line)
	return got
}

// splits are ways to cut data into writes: whole, a byte a write, and in
// pieces of 3 bytes.
func splits(data []byte) map[string][][]byte {
	bytewise, threes := [][]byte{}, [][]byte{}
	for i := range data {
		bytewise = append(bytewise, data[i:i+1])
	}
	for p := data; len(p) > 0; p = p[min(3, len(p)):] {
		threes = append(threes, p[:min(3, len(p))])
	}
	return map[string][][]byte{"whole": {data}, "a byte a write": bytewise, "3 bytes a write": threes}
}

func TestLineSplitter(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		data   string
		pieces []string // writes, besides those of splits
		want   []seen
	}{
		{name: "lines", max: 16, data: "abc\ndef\n", want: []seen{{1, "abc", false}, {2, "def", false}}},
		{name: "a line split across many reads", max: 64, data: `{"type":"turn.started"}` + "\n",
			pieces: []string{`{"ty`, `pe":"tu`, `rn.sta`, `rted"`, "}", "\n"},
			want:   []seen{{1, `{"type":"turn.started"}`, false}}},
		{name: "longer than the limit: cut and noted", max: 4, data: "abcdefgh\nxy\n",
			want: []seen{{1, "abcd", true}, {2, "xy", false}}},
		{name: "longer than the limit across reads", max: 4, data: "abcdefgh\nz",
			pieces: []string{"ab", "cdef", "gh\nz"},
			want:   []seen{{1, "abcd", true}, {2, "z", false}}},
		{name: "exactly at the limit", max: 4, data: "abcd\nefgh",
			pieces: []string{"ab", "cd", "\nef", "gh"},
			want:   []seen{{1, "abcd", false}, {2, "efgh", false}}},
		{name: "one byte past the limit", max: 4, data: "abcde\nabcde",
			want: []seen{{1, "abcd", true}, {2, "abcd", true}}},
		{name: "CRLF", max: 16, data: "a\r\nb\r\n", want: []seen{{1, "a\r", false}, {2, "b\r", false}}},
		{name: "no final newline", max: 16, data: "a\nb", want: []seen{{1, "a", false}, {2, "b", false}}},
		{name: "NUL bytes", max: 16, data: "a\x00b\n\x00\n", want: []seen{{1, "a\x00b", false}, {2, "\x00", false}}},
		{name: "invalid UTF-8", max: 16, data: "\xff\xfe\xc3\n", want: []seen{{1, "\xff\xfe\xc3", false}}},
		{name: "invalid UTF-8 cut", max: 2, data: "\xe2\x82\xac\n", want: []seen{{1, "\xe2\x82", true}}},
		{name: "empty lines", max: 16, data: "\n\n", want: []seen{{1, "", false}, {2, "", false}}},
		{name: "nothing", max: 16, data: ""},
	}
	for _, tt := range tests {
		ways := splits([]byte(tt.data))
		if tt.pieces != nil {
			var p [][]byte
			for _, s := range tt.pieces {
				p = append(p, []byte(s))
			}
			ways["as given"] = p
		}
		for how, pieces := range ways {
			t.Run(tt.name+"/"+how, func(t *testing.T) {
				got := split(tt.max, pieces)
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("lines %+q, want %+q", fmt.Sprint(got), fmt.Sprint(tt.want))
				}
			})
		}
	}
}

// FuzzLineSplitter checks, for any output and any way of cutting it into
// writes, that the lines seen are bytes.Split's (without the empty one
// after a final newline), those longer than the limit cut to it and said
// to be, numbered from 1.
func FuzzLineSplitter(f *testing.F) {
	f.Add([]byte("abc\ndef\n"), []byte{1, 2, 3}, uint8(2))
	f.Add([]byte("a\r\n\x00\xff\n\nlonger line\nx"), []byte{5, 0, 7}, uint8(4))
	f.Add([]byte(strings.Repeat("x", 100)+"\n"+strings.Repeat("y", 50)), []byte{30, 30, 30, 1}, uint8(50))
	f.Fuzz(func(t *testing.T, data, cuts []byte, limitByte uint8) {
		limit := 1 + int(limitByte)%64
		var pieces [][]byte
		for p, i := data, 0; len(p) > 0; i++ {
			n := len(p)
			if len(cuts) > 0 {
				n = min(len(p), max(1, int(cuts[i%len(cuts)])))
			}
			pieces = append(pieces, p[:n])
			p = p[n:]
		}
		got := split(limit, pieces)
		var want []seen
		lines := bytes.Split(data, []byte("\n"))
		if len(lines[len(lines)-1]) == 0 {
			lines = lines[:len(lines)-1]
		}
		for i, l := range lines {
			s := seen{n: i + 1, line: string(l)}
			if len(l) > limit {
				s.line, s.cut = string(l[:limit]), true
			}
			want = append(want, s)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("limit %d, %d writes: lines %+q, want %+q", limit, len(pieces), fmt.Sprint(got), fmt.Sprint(want))
		}
	})
}

// codexMessage is a codex agent message line of n bytes, without its
// newline.
func codexMessage(n int) string {
	return strings.TrimSuffix(string(longLine(n+1)), "\n")
}

// TestOutputWriterLongLines checks what the OutputWriter makes of lines
// at and past MaxLine: one at the limit is read; one past it is cut, not
// read, and noted with its number; the events of the other lines all
// come; a final message that fits a line is never cut.
func TestOutputWriterLongLines(t *testing.T) {
	frame := len(messageHead) + len(messageTail) - 1 // a message's line less its text
	started := `{"type":"thread.started","thread_id":"t1"}`
	done := `{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}`
	denied := `{"type":"result","subtype":"success","is_error":false,"session_id":"s1","num_turns":3,"usage":{"input_tokens":1,"output_tokens":1},"result":"` +
		strings.Repeat("m", 4<<20) + `","permission_denials":[` +
		strings.TrimSuffix(strings.Repeat(`{"tool_name":"Write","tool_use_id":"x","tool_input":{"file_path":"f","content":"`+strings.Repeat("c", 256<<10)+`"}},`, 10), ",") + `]}`
	tests := []struct {
		name, harness string
		lines         []string
		messages      int
		final         string // its length, when long
		warning       string
	}{
		{name: "a line at the limit", harness: "codex", lines: []string{started, codexMessage(MaxLine), done},
			messages: 1, final: fmt.Sprint(MaxLine - frame)},
		{name: "a line past the limit", harness: "codex", lines: []string{started, codexMessage(MaxLine + 1), codexMessage(100), done},
			messages: 1, final: fmt.Sprint(100 - frame),
			warning: "line 2 of the harness's stdout was longer than 8 MiB and was cut (not read)"},
		{name: "many lines past the limit", harness: "codex",
			lines: []string{started, codexMessage(MaxLine + 1), "x", codexMessage(MaxLine + 2), "y", strings.Repeat("z", 3*MaxLine),
				"x", "x", codexMessage(9 << 20), "x", codexMessage(10 << 20), codexMessage(11 << 20), done},
			warning: "lines 2, 4, 6, 9, 11 and 1 more of the harness's stdout were longer than 8 MiB and were cut (not read)"},
		{name: "claude's result: a 4 MiB message and ten denied 256 KiB writes", harness: "claude", lines: []string{denied},
			messages: 1, final: fmt.Sprint(4 << 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []Event
			w, err := NewOutputWriter(tt.harness, func(e Event) { events = append(events, e) })
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range tt.lines {
				for p := []byte(l + "\n"); len(p) > 0; p = p[min(len(p), 32<<10):] {
					w.Write(p[:min(len(p), 32<<10)])
				}
			}
			out, err := w.Finish()
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			messages := 0
			for _, e := range events {
				if e.Type == EventMessage {
					messages++
				}
			}
			if messages != tt.messages {
				t.Errorf("%d message events, want %d", messages, tt.messages)
			}
			if tt.final != "" && fmt.Sprint(len(out.Final)) != tt.final {
				t.Errorf("final message of %d bytes, want %s", len(out.Final), tt.final)
			}
			var want []string
			if tt.warning != "" {
				want = []string{tt.warning}
			}
			if tt.harness == "claude" && len(out.Denials) != 10 {
				t.Errorf("%d denials, want 10", len(out.Denials))
			}
			if fmt.Sprint(out.Warnings) != fmt.Sprint(want) {
				t.Errorf("warnings %q, want %q", out.Warnings, want)
			}
		})
	}
}

// TestOutputKeptBounded checks that what a reader keeps for its outcome
// stays bounded however the output goes on, while every event is still
// passed on whole: denials past MaxDenials are counted, their details cut
// once keepBudget is spent, tool calls waiting for their result are not
// followed past it, and gemini's message being written stops at MaxLine.
func TestOutputKeptBounded(t *testing.T) {
	// The readers keep 1 MiB here, not keepBudget: the same bounds, at a
	// sixteenth of the test's cost.
	const budget = 1 << 20
	read := func(t *testing.T, harness string, lines func(yield func(string))) ([]Event, *Outcome) {
		t.Helper()
		var events []Event
		w, err := NewOutputWriter(harness, func(e Event) { events = append(events, e) })
		if err != nil {
			t.Fatal(err)
		}
		w.r.(interface{ setBudget(int) }).setBudget(budget)
		lines(func(l string) { w.Write([]byte(l + "\n")) })
		out, _ := w.Finish()
		return events, out
	}
	declined := func(cmd string) string {
		return `{"type":"item.completed","item":{"type":"command_execution","command":"` + cmd + `","status":"declined"}}`
	}

	t.Run("denials past MaxDenials", func(t *testing.T) {
		events, out := read(t, "codex", func(yield func(string)) {
			for i := range MaxDenials + 2 {
				yield(declined(fmt.Sprint("rm ", i)))
			}
		})
		if len(events) != MaxDenials+2 {
			t.Errorf("%d events, want %d", len(events), MaxDenials+2)
		}
		if len(out.Denials) != MaxDenials || out.Denials[MaxDenials-1].Detail != fmt.Sprint("rm ", MaxDenials-1) {
			t.Errorf("%d denials, want the first %d", len(out.Denials), MaxDenials)
		}
		want := fmt.Sprintf("the harness reported 2 more denials than the %d listed", MaxDenials)
		if fmt.Sprint(out.Warnings) != fmt.Sprint([]string{want}) {
			t.Errorf("warnings %q, want %q", out.Warnings, want)
		}
	})

	t.Run("denials past the budget", func(t *testing.T) {
		long := strings.Repeat("c", 64<<10)
		n := budget/len(long) + 3
		events, out := read(t, "codex", func(yield func(string)) {
			for range n {
				yield(declined(long))
			}
		})
		for i, e := range events {
			if e.Detail != long {
				t.Fatalf("event %d: a detail of %d bytes, want the whole command", i, len(e.Detail))
			}
		}
		if len(out.Denials) != n || out.Denials[0].Detail != long {
			t.Fatalf("%d denials, the first whole; want %d", len(out.Denials), n)
		}
		if last := out.Denials[n-1].Detail; len(last) > keptCut+len("…") || !strings.HasSuffix(last, "…") {
			t.Errorf("the last denial's detail is %d bytes, want cut to %d", len(last), keptCut)
		}
	})

	t.Run("claude's calls waiting past the budget", func(t *testing.T) {
		long := strings.Repeat("c", 7*budget/16)
		use := func(id string) string {
			return `{"type":"assistant","session_id":"s","message":{"content":[{"type":"tool_use","id":"` + id + `","name":"Bash","input":{"command":"` + long + `"}}]}}`
		}
		result := func(id string) string {
			return `{"type":"user","session_id":"s","message":{"content":[{"type":"tool_result","tool_use_id":"` + id + `"}]}}`
		}
		events, _ := read(t, "claude", func(yield func(string)) {
			for _, l := range []string{use("a"), use("b"), use("c"), result("a"), result("b"), result("c"), use("d"), result("d")} {
				yield(l)
			}
		})
		var got []string
		for _, e := range events {
			if e.Type == EventToolUse && e.Detail == long {
				got = append(got, e.Status)
			}
		}
		// a and b fit in the budget, c does not; d does once they came back.
		if len(got) != 3 {
			t.Errorf("%d tool_use events, want 3 (a, b and d)", len(got))
		}
	})

	t.Run("gemini's message past MaxLine", func(t *testing.T) {
		piece := strings.Repeat("g", 1<<20)
		events, out := read(t, "gemini", func(yield func(string)) {
			yield(`{"type":"init","session_id":"s","model":"m"}`)
			for range MaxLine>>20 + 2 {
				yield(`{"type":"message","role":"assistant","content":"` + piece + `","delta":true}`)
			}
			yield(`{"type":"result","status":"success","stats":{"input_tokens":1,"output_tokens":1}}`)
		})
		if len(out.Final) != MaxLine {
			t.Errorf("final message of %d bytes, want %d", len(out.Final), MaxLine)
		}
		if len(events) < 2 || events[1].Type != EventMessage || len(events[1].Text) != MaxLine {
			t.Errorf("events %d, want the message cut at %d after started", len(events), MaxLine)
		}
		want := "the agent's final message was longer than 8 MiB and was cut"
		if fmt.Sprint(out.Warnings) != fmt.Sprint([]string{want}) {
			t.Errorf("warnings %q, want %q", out.Warnings, want)
		}
	})
}

// setBudget makes the reader keep at most n bytes for later lines.
func (e *events) setBudget(n int) { e.keep.max = n }
