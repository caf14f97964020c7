package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// codexLine is what is read of a line of a codex rollout file.
type codexLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   struct {
		Type string `json:"type"`
		// session_meta
		ID  string `json:"id"`
		Cwd string `json:"cwd"`
		// turn_context
		Model string `json:"model"`
		// token_count
		Info *struct {
			Total *codexUsage `json:"total_token_usage"`
		} `json:"info"`
	} `json:"payload"`
}

type codexUsage struct {
	Input  int64 `json:"input_tokens"`
	Cached int64 `json:"cached_input_tokens"`
	Write  int64 `json:"cache_write_input_tokens"`
	Output int64 `json:"output_tokens"`
}

// codexWanted are the lines read whole; of the others only the time is
// read.
var codexWanted = []string{`"session_meta"`, `"turn_context"`, `"token_count"`}

// parseCodexLine reads a line of a codex rollout file.
func parseCodexLine(line []byte) (codexLine, error) {
	var l codexLine
	whole := false
	for _, w := range codexWanted {
		if bytes.Contains(line, []byte(w)) {
			whole = true
			break
		}
	}
	if !whole {
		var head struct {
			Timestamp string `json:"timestamp"`
			Type      string `json:"type"`
		}
		err := json.Unmarshal(line, &head)
		l.Timestamp, l.Type = head.Timestamp, head.Type
		return l, err
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return codexLine{}, err
	}
	if i := l.Payload.Info; i != nil && i.Total != nil {
		u := i.Total
		if !validCounts(u.Input, u.Cached, u.Write, u.Output) {
			return codexLine{}, fmt.Errorf("token counts out of range")
		}
	}
	return l, nil
}

// readCodex reads the rollout files of codex's home dir: sessions/ and
// archived_sessions/, at any depth.
func readCodex(dir string, since time.Time, res *Result) []Record {
	var out []Record
	for _, sub := range []string{"sessions", "archived_sessions"} {
		root := filepath.Join(dir, sub)
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path == root && notExist(err) {
					return nil
				}
				res.Errors = append(res.Errors, err)
				if d != nil && d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			name := d.Name()
			if !d.Type().IsRegular() || !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				res.Errors = append(res.Errors, err)
				return nil
			}
			if !modifiedSince(info, since) {
				return nil
			}
			if r, ok := readCodexFile(path, res); ok {
				out = append(out, r)
			}
			return nil
		})
		if err != nil {
			res.Errors = append(res.Errors, err)
		}
	}
	return out
}

// readCodexFile reads one rollout file: a conversation, unless the file
// has no session_meta.
func readCodexFile(path string, res *Result) (Record, bool) {
	f, err := os.Open(path)
	if err != nil {
		res.Errors = append(res.Errors, err)
		return Record{}, false
	}
	defer f.Close()
	r := Record{Harness: Codex, Source: path, Models: []string{}}
	long, err := eachLine(f, func(line []byte) {
		l, err := parseCodexLine(line)
		if err != nil {
			res.Skipped++
			return
		}
		if t, err := time.Parse(time.RFC3339Nano, l.Timestamp); err == nil {
			r.Start, r.End = earliest(r.Start, t), latest(r.End, t)
		}
		p := l.Payload
		switch {
		case l.Type == "session_meta" && r.SessionID == "":
			r.SessionID = p.ID
			if filepath.IsAbs(p.Cwd) {
				r.Dir = filepath.Clean(p.Cwd)
			}
		case l.Type == "turn_context" && p.Model != "" && !slices.Contains(r.Models, p.Model):
			r.Models = append(r.Models, p.Model)
		case l.Type == "event_msg" && p.Type == "token_count" && p.Info != nil && p.Info.Total != nil:
			// The running total: the last one is the conversation's.
			u := p.Info.Total
			r.Tokens = Tokens{Input: u.Input, Output: u.Output, CacheRead: u.Cached, CacheWrite: u.Write}
		}
	})
	res.Skipped += long
	if err != nil {
		res.Errors = append(res.Errors, fmt.Errorf("%s: %w", path, err))
	}
	if r.SessionID == "" {
		res.Skipped++ // a file without its session_meta names no conversation
		return Record{}, false
	}
	return r, true
}
