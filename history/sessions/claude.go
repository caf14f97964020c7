package sessions

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// claudeLine is what is read of a line of a claude conversation file.
type claudeLine struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	Timestamp string `json:"timestamp"`
	Message   *struct {
		ID    string       `json:"id"`
		Model string       `json:"model"`
		Usage *claudeUsage `json:"usage"`
	} `json:"message"`
	// The cost-state line: the run's cost, whether a model had no
	// known price, and the process's start (Unix milliseconds), which
	// tells the cost-state lines of one run from those of another.
	TotalCostUSD        *float64 `json:"totalCostUSD"`
	HasUnknownModelCost bool     `json:"hasUnknownModelCost"`
	StartTime           int64    `json:"startTime"`
}

type claudeUsage struct {
	Input         int64 `json:"input_tokens"`
	Output        int64 `json:"output_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
}

func (u claudeUsage) tokens() Tokens {
	return Tokens{
		Input:      u.Input + u.CacheRead + u.CacheCreation,
		Output:     u.Output,
		CacheRead:  u.CacheRead,
		CacheWrite: u.CacheCreation,
	}
}

// parseClaudeLine reads a line of a claude conversation file.
func parseClaudeLine(line []byte) (claudeLine, error) {
	var l claudeLine
	if err := json.Unmarshal(line, &l); err != nil {
		return claudeLine{}, err
	}
	if m := l.Message; m != nil && m.Usage != nil {
		u := m.Usage
		if !validCounts(u.Input, u.Output, u.CacheRead, u.CacheCreation) {
			return claudeLine{}, fmt.Errorf("token counts out of range in message %q", m.ID)
		}
	}
	return l, nil
}

// claudeSession gathers the lines of one claude conversation.
type claudeSession struct {
	rec      Record
	messages map[string]Tokens // usage by message id: the last line of each
	order    []string          // message ids, in order
	loose    Tokens            // usage of messages without an id
	costs    map[int64]claudeCost
}

type claudeCost struct {
	usd       float64
	estimated bool
}

// readClaude reads the conversations of claude's configuration
// directory dir: projects/*/*.jsonl and their subagents' files.
func readClaude(dir string, since time.Time, res *Result) []Record {
	projects := filepath.Join(dir, "projects")
	entries, err := os.ReadDir(projects)
	if err != nil {
		if !notExist(err) {
			res.Errors = append(res.Errors, err)
		}
		return nil
	}
	sessions := map[string]*claudeSession{}
	var ids []string
	for _, p := range entries {
		if !p.IsDir() {
			continue
		}
		pdir := filepath.Join(projects, p.Name())
		files, err := os.ReadDir(pdir)
		if err != nil {
			res.Errors = append(res.Errors, err)
			continue
		}
		var paths []string
		for _, f := range files {
			switch {
			case f.Type().IsRegular() && strings.HasSuffix(f.Name(), ".jsonl"):
				paths = append(paths, filepath.Join(pdir, f.Name()))
			case f.IsDir():
				sub, _ := filepath.Glob(filepath.Join(pdir, f.Name(), "subagents", "*.jsonl"))
				paths = append(paths, sub...)
			}
		}
		for _, path := range paths {
			info, err := os.Stat(path)
			if err != nil {
				res.Errors = append(res.Errors, err)
				continue
			}
			if !info.Mode().IsRegular() || !modifiedSince(info, since) {
				continue
			}
			fallback := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			if filepath.Base(filepath.Dir(path)) == "subagents" {
				fallback = filepath.Base(filepath.Dir(filepath.Dir(path)))
			}
			readClaudeFile(path, fallback, sessions, &ids, res)
		}
	}
	out := make([]Record, 0, len(ids))
	for _, id := range ids {
		out = append(out, sessions[id].record())
	}
	return out
}

// readClaudeFile adds the lines of a conversation file to sessions; a
// line without a session id belongs to fallback, the conversation the
// file is named for.
func readClaudeFile(path, fallback string, sessions map[string]*claudeSession, ids *[]string, res *Result) {
	f, err := os.Open(path)
	if err != nil {
		res.Errors = append(res.Errors, err)
		return
	}
	defer f.Close()
	long, err := eachLine(f, func(line []byte) {
		l, err := parseClaudeLine(line)
		if err != nil {
			res.Skipped++
			return
		}
		id := l.SessionID
		if id == "" {
			id = fallback
		}
		s := sessions[id]
		if s == nil {
			s = &claudeSession{rec: Record{Harness: Claude, SessionID: id, Source: path},
				messages: map[string]Tokens{}, costs: map[int64]claudeCost{}}
			sessions[id] = s
			*ids = append(*ids, id)
		}
		s.add(l)
	})
	res.Skipped += long
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("%s: %w", path, err))
	}
}

func (s *claudeSession) add(l claudeLine) {
	if t, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
		s.rec.Start, s.rec.End = earliest(s.rec.Start, t), latest(s.rec.End, t)
	}
	if s.rec.Dir == "" && filepath.IsAbs(l.Cwd) {
		s.rec.Dir = filepath.Clean(l.Cwd)
	}
	if l.Type == "cost-state" && l.TotalCostUSD != nil {
		// The last cost-state line of a run holds its total.
		s.costs[l.StartTime] = claudeCost{*l.TotalCostUSD, l.HasUnknownModelCost}
		return
	}
	m := l.Message
	if l.Type != "assistant" || m == nil {
		return
	}
	if m.Model != "" && m.Model != "<synthetic>" && !slices.Contains(s.rec.Models, m.Model) {
		s.rec.Models = append(s.rec.Models, m.Model)
	}
	if m.Usage == nil {
		return
	}
	if m.ID == "" {
		s.loose.Add(m.Usage.tokens())
		return
	}
	if _, ok := s.messages[m.ID]; !ok {
		s.order = append(s.order, m.ID)
	}
	s.messages[m.ID] = m.Usage.tokens()
}

func (s *claudeSession) record() Record {
	r := s.rec
	r.Tokens = s.loose
	for _, id := range s.order {
		r.Tokens.Add(s.messages[id])
	}
	if len(s.costs) > 0 {
		var usd float64
		for _, start := range slices.Sorted(maps.Keys(s.costs)) {
			c := s.costs[start]
			usd += c.usd
			r.CostEstimated = r.CostEstimated || c.estimated
		}
		r.CostUSD = &usd
	}
	if r.Models == nil {
		r.Models = []string{}
	}
	return r
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
