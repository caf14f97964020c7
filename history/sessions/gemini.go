package sessions

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// geminiLine is what is read of a line of a gemini conversation file:
// the metadata (the first line), a message, an update ($set) or a rewind
// ($rewindTo: the messages it takes out were consumed all the same, and
// still count).
type geminiLine struct {
	// The metadata.
	SessionID   string `json:"sessionId"`
	StartTime   string `json:"startTime"`
	LastUpdated string `json:"lastUpdated"`
	// A message.
	geminiMessage
	// An update: the file's metadata, or its whole list of messages.
	Set *struct {
		SessionID   string          `json:"sessionId"`
		LastUpdated string          `json:"lastUpdated"`
		Messages    []geminiMessage `json:"messages"`
	} `json:"$set"`
}

// geminiMessage is a message of a conversation: the model's (type
// "gemini") carries the tokens of the request that answered it.
type geminiMessage struct {
	ID        string        `json:"id"`
	Timestamp string        `json:"timestamp"`
	Type      string        `json:"type"`
	Model     string        `json:"model"`
	Tokens    *geminiTokens `json:"tokens"`
}

// geminiTokens are a response's usageMetadata as gemini records it:
// input is the prompt's tokens, the cached ones among them; output the
// candidates' (the answer's), without the thoughts, which gemini records
// apart and leaves out of its own one-shot stats too.
type geminiTokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts"`
	Tool     int64 `json:"tool"`
}

// parseGeminiLine reads a line of a gemini conversation file. A line
// that is not a JSON object, or whose token counts are out of range (or
// cached ones above the input), is damage; an object of another kind is
// passed over.
func parseGeminiLine(line []byte) (geminiLine, error) {
	var l geminiLine
	if err := json.Unmarshal(line, &l); err != nil {
		return geminiLine{}, err
	}
	msgs := []geminiMessage{l.geminiMessage}
	if l.Set != nil {
		msgs = append(msgs, l.Set.Messages...)
	}
	for _, m := range msgs {
		if t := m.Tokens; t != nil && (!validCounts(t.Input, t.Output, t.Cached, t.Thoughts, t.Tool) || t.Cached > t.Input) {
			return geminiLine{}, fmt.Errorf("token counts out of range in message %q", m.ID)
		}
	}
	return l, nil
}

// geminiSession gathers the files of one gemini conversation.
type geminiSession struct {
	rec Record
	// messages are the model's messages by id, the last version of each,
	// in the order first seen: a message is written again when its tool
	// calls come, and every message again when a resumed run rewrites
	// the list.
	messages map[string]geminiMessage
	order    []string
	// sourceEnd is the time of the latest thing recorded in rec.Source.
	sourceEnd time.Time
}

func (s *geminiSession) message(m geminiMessage) {
	if m.ID == "" || m.Type != "gemini" {
		return
	}
	if old, ok := s.messages[m.ID]; !ok {
		s.order = append(s.order, m.ID)
	} else if m.Tokens == nil {
		m.Tokens = old.Tokens
	}
	s.messages[m.ID] = m
}

// record sums the session's messages.
func (s *geminiSession) record() Record {
	r := s.rec
	r.Models = []string{}
	// The models in the order they answered, whatever the order of the
	// files (a subagent's directory is read before its parent's file).
	at := func(id string) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, s.messages[id].Timestamp)
		return t
	}
	slices.SortStableFunc(s.order, func(a, b string) int { return at(a).Compare(at(b)) })
	for _, id := range s.order {
		m := s.messages[id]
		if m.Model != "" && !slices.Contains(r.Models, m.Model) {
			r.Models = append(r.Models, m.Model)
		}
		if t := m.Tokens; t != nil {
			r.Tokens.Add(Tokens{Input: t.Input, Output: t.Output, CacheRead: t.Cached})
		}
	}
	return r
}

// readGemini reads the conversations of gemini's directory dir
// (<gemini-home>/.gemini): tmp/<project>/chats/session-*.jsonl, and the
// subagents' <parent session id>/*.jsonl there, whose messages count in
// their parent's conversation. The files of one session id (a resumed
// run starts a file of its own beside the one it goes on writing) are
// one conversation, each message counted once.
func readGemini(dir string, since time.Time, res *Result) []Record {
	root := filepath.Join(dir, "tmp")
	projects, err := os.ReadDir(root)
	if err != nil {
		if !notExist(err) {
			res.Errors = append(res.Errors, err)
		}
		return nil
	}
	bySession := map[string]*geminiSession{}
	var ids []string
	session := func(id string) *geminiSession {
		s, ok := bySession[id]
		if !ok {
			s = &geminiSession{rec: Record{Harness: Gemini, SessionID: id}, messages: map[string]geminiMessage{}}
			bySession[id] = s
			ids = append(ids, id)
		}
		return s
	}
	for _, p := range projects {
		if !p.IsDir() {
			continue
		}
		chats := filepath.Join(root, p.Name(), "chats")
		entries, err := os.ReadDir(chats)
		if err != nil {
			if !notExist(err) {
				res.Errors = append(res.Errors, err)
			}
			continue
		}
		projectDir := geminiProjectRoot(filepath.Join(root, p.Name()))
		for _, e := range entries {
			switch {
			case e.Type().IsRegular() && strings.HasPrefix(e.Name(), "session-") && strings.HasSuffix(e.Name(), ".jsonl"):
				readGeminiFile(filepath.Join(chats, e.Name()), "", projectDir, since, session, res)
			case e.IsDir():
				// A subagent's conversations, in its parent's directory.
				sub := filepath.Join(chats, e.Name())
				files, err := os.ReadDir(sub)
				if err != nil {
					res.Errors = append(res.Errors, err)
					continue
				}
				for _, f := range files {
					if f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".jsonl") {
						readGeminiFile(filepath.Join(sub, f.Name()), e.Name(), projectDir, since, session, res)
					}
				}
			}
		}
	}
	out := make([]Record, 0, len(ids))
	for _, id := range ids {
		out = append(out, bySession[id].record())
	}
	return out
}

// geminiProjectRoot is the directory a project directory of gemini's
// tmp/ is for, as its .project_root names it; "" when it does not.
func geminiProjectRoot(dir string) string {
	f, err := os.Open(filepath.Join(dir, ".project_root"))
	if err != nil {
		return ""
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err != nil || len(b) > 4096 {
		return ""
	}
	p := strings.TrimSpace(string(b))
	if !filepath.IsAbs(p) {
		return ""
	}
	return filepath.Clean(p)
}

// readGeminiFile reads one conversation file into the session its
// metadata names (or, for a subagent's file, its parent's session
// parent). A file that names no session is skipped.
func readGeminiFile(path, parent, projectDir string, since time.Time, session func(string) *geminiSession, res *Result) {
	info, err := os.Stat(path)
	if err != nil {
		res.Errors = append(res.Errors, err)
		return
	}
	if !modifiedSince(info, since) {
		return
	}
	f, err := os.Open(path)
	if err != nil {
		res.Errors = append(res.Errors, err)
		return
	}
	defer f.Close()
	var id string
	var start, end time.Time
	var msgs []geminiMessage
	at := func(s string) {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			start, end = earliest(start, t), latest(end, t)
		}
	}
	long, err := eachLine(f, func(line []byte) {
		l, err := parseGeminiLine(line)
		if err != nil {
			res.Skipped++
			return
		}
		switch {
		case l.Set != nil:
			if l.Set.SessionID != "" {
				id = l.Set.SessionID
			}
			at(l.Set.LastUpdated)
			for _, m := range l.Set.Messages {
				at(m.Timestamp)
				msgs = append(msgs, m)
			}
		case l.ID != "":
			at(l.Timestamp)
			msgs = append(msgs, l.geminiMessage)
		case l.SessionID != "":
			if id == "" {
				id = l.SessionID
			}
			at(l.StartTime)
			at(l.LastUpdated)
		}
	})
	res.Skipped += long
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("%s: %w", path, err))
	}
	if parent != "" {
		id = parent
	}
	if id == "" {
		res.Skipped++ // a file without its metadata names no conversation
		return
	}
	s := session(id)
	for _, m := range msgs {
		s.message(m)
	}
	r := &s.rec
	if parent == "" && !end.Before(s.sourceEnd) {
		r.Source, s.sourceEnd = path, end
	}
	if r.Source == "" {
		r.Source = path
	}
	if r.Dir == "" {
		r.Dir = projectDir
	}
	if !start.IsZero() {
		r.Start = earliest(r.Start, start)
	}
	r.End = latest(r.End, end)
}
