package sessions

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// writeGeminiStore writes files (relative to tmp/, each a list of lines)
// into a new gemini store and returns it.
func writeGeminiStore(t *testing.T, files map[string][]string) Store {
	t.Helper()
	dir := t.TempDir()
	for rel, lines := range files {
		p := filepath.Join(dir, "tmp", rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Store{Gemini, dir}
}

// TestGeminiConversation reads a conversation shaped as gemini 0.61.0
// writes one (the fixture's shape, with what the fixture lacks): a model
// message written twice (its tool calls came), the whole list rewritten
// by a resumed run, which also started a file of its own holding the
// first message, a rewind, a subagent's file; each model message counts
// once, the rewound one too, the subagent's in its parent's conversation.
func TestGeminiConversation(t *testing.T) {
	meta := func(start string) string {
		return `{"sessionId":"s1","projectHash":"h","startTime":"` + start + `","lastUpdated":"` + start + `","kind":"main"}`
	}
	first := `{"id":"u0","timestamp":"2026-01-02T03:04:00Z","type":"user","content":[{"text":"context"}]}`
	m1 := `{"id":"g1","timestamp":"2026-01-02T03:04:01Z","type":"gemini","content":"","tokens":{"input":100,"output":5,"cached":30,"thoughts":9,"tool":0,"total":105},"model":"gemini-2.5-pro"}`
	m1tools := strings.Replace(m1, `"model"`, `"toolCalls":[{"id":"c"}],"model"`, 1)
	m2 := `{"id":"g2","timestamp":"2026-01-02T03:04:02Z","type":"gemini","content":"finished","tokens":{"input":200,"output":7,"cached":60},"model":"gemini-2.5-pro"}`
	m3 := `{"id":"g3","timestamp":"2026-01-02T03:05:02Z","type":"gemini","content":"resumed","tokens":{"input":400,"output":3,"cached":120},"model":"gemini-2.5-flash"}`
	sub := `{"id":"a1","timestamp":"2026-01-02T03:04:30Z","type":"gemini","content":"sub","tokens":{"input":10,"output":1,"cached":0},"model":"gemini-2.5-flash"}`
	s := writeGeminiStore(t, map[string][]string{
		"proj/.project_root": {"/home/u/proj"},
		"proj/chats/session-2026-01-02T03-04-s1.jsonl": {
			meta("2026-01-02T03:04:00Z"),
			`{"$set":{"messages":[` + first + `]}}`,
			m1, `{"$set":{"lastUpdated":"2026-01-02T03:04:01Z"}}`, m1tools, m2,
			// The resumed run: the list rewritten, then its own message.
			`{"$set":{"sessionId":"s1"}}`,
			`{"$set":{"messages":[` + first + `,` + m1tools + `,` + m2 + `]}}`,
			m3, `{"$rewindTo":"g3"}`, `{"$set":{"lastUpdated":"2026-01-02T03:05:03Z"}}`,
		},
		"proj/chats/session-2026-01-02T03-05-s1.jsonl": {meta("2026-01-02T03:05:00Z"), `{"$set":{"messages":[` + first + `]}}`},
		"proj/chats/s1/sub1.jsonl":                     {`{"sessionId":"sub1","projectHash":"h","startTime":"2026-01-02T03:04:29Z","kind":"subagent"}`, sub},
		// Another conversation, in a project without .project_root.
		"other/chats/session-2026-01-02T04-00-s2.jsonl": {`{"sessionId":"s2","projectHash":"h2","startTime":"2026-01-02T04:00:00Z"}`, m2},
		// A file without its metadata names no conversation.
		"other/chats/session-2026-01-02T04-01-xx.jsonl": {m3},
		// Not a conversation file.
		"other/chats/notes.jsonl": {meta("2026-01-02T03:04:00Z"), m3},
	})
	res := Read([]Store{s}, Options{})
	if len(res.Errors) > 0 || res.Skipped != 1 {
		t.Errorf("errors %v, %d skipped; want none, 1 (the file without metadata)", res.Errors, res.Skipped)
	}
	if len(res.Records) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(res.Records), res.Records)
	}
	r := res.Records[0]
	want := Tokens{Input: 100 + 200 + 400 + 10, Output: 5 + 7 + 3 + 1, CacheRead: 30 + 60 + 120}
	if r.SessionID != "s1" || r.Tokens != want || r.Dir != "/home/u/proj" || r.CostUSD != nil {
		t.Errorf("record %+v; want s1 in /home/u/proj, tokens %+v, no cost", r, want)
	}
	if !slices.Equal(r.Models, []string{"gemini-2.5-pro", "gemini-2.5-flash"}) {
		t.Errorf("models %q", r.Models)
	}
	if !r.Start.Equal(time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)) || !r.End.Equal(time.Date(2026, 1, 2, 3, 5, 3, 0, time.UTC)) {
		t.Errorf("start %v, end %v", r.Start, r.End)
	}
	if filepath.Base(r.Source) != "session-2026-01-02T03-04-s1.jsonl" {
		t.Errorf("source %s, want the file the conversation went on in", r.Source)
	}
	if o := res.Records[1]; o.SessionID != "s2" || o.Dir != "" || o.Tokens != (Tokens{Input: 200, Output: 7, CacheRead: 60}) {
		t.Errorf("record %+v; want s2, no directory, m2's tokens", o)
	}
}

// FuzzParseGeminiLine: any line reads without panicking; a line that
// reads has counts in range, the cached ones within the input, and
// reading it into a session makes a record of counts in range.
func FuzzParseGeminiLine(f *testing.F) {
	seedLines(f, Gemini)
	for _, s := range []string{`{"id":"x","type":"gemini","tokens":{"input":1,"cached":2}}`, `{"$set":{"messages":[{"id":"x","type":"gemini","tokens":{"input":-1}}]}}`,
		`{"$set":{"messages":null}}`, `{"$rewindTo":"x"}`, `{"id":"x","type":"gemini","tokens":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := parseGeminiLine(line)
		if err != nil {
			return
		}
		s := &geminiSession{messages: map[string]geminiMessage{}}
		msgs := []geminiMessage{l.geminiMessage}
		if l.Set != nil {
			msgs = append(msgs, l.Set.Messages...)
		}
		for _, m := range msgs {
			if tk := m.Tokens; tk != nil && (!validCounts(tk.Input, tk.Output, tk.Cached) || tk.Cached > tk.Input) {
				t.Errorf("tokens %+v of %q", tk, line)
			}
			s.message(m)
		}
		r := s.record()
		if r.Tokens.Input < r.Tokens.CacheRead || r.Tokens.Input < 0 || r.Tokens.Output < 0 {
			t.Errorf("record tokens %+v of %q", r.Tokens, line)
		}
	})
}
