package sessions

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// readOpencode reads the conversations of opencode's data directory
// dir: the table session of opencode*.db (opencode.db; other release
// channels name theirs opencode-<channel>.db).
func readOpencode(dir string, since time.Time, res *Result) []Record {
	paths, _ := filepath.Glob(filepath.Join(dir, "opencode*.db"))
	var out []Record
	for _, path := range paths {
		recs, err := readOpencodeDB(path, since, res)
		if err != nil {
			res.Errors = append(res.Errors, fmt.Errorf("%s: %w", path, err))
		}
		out = append(out, recs...)
	}
	return out
}

// opencodeSession is a row of opencode's table session.
type opencodeSession struct {
	id, parent, dir, model string
	tokens                 Tokens
	cost                   *float64
	start, end             time.Time
}

// readOpencodeDB reads the sessions of one database, unless neither it
// nor its WAL was modified since. A session a task of another started
// (its parent_id set) is folded into the conversation it belongs to.
func readOpencodeDB(path string, since time.Time, res *Result) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	var wal io.ReaderAt
	var walSize int64
	fresh := modifiedSince(info, since)
	if w, err := os.Open(path + "-wal"); err == nil {
		defer w.Close()
		if wi, err := w.Stat(); err == nil && wi.Mode().IsRegular() {
			wal, walSize = w, wi.Size()
			fresh = fresh || modifiedSince(wi, since)
		}
	}
	if !fresh {
		return nil, nil
	}
	db, err := openSQLite(f, info.Size(), wal, walSize)
	if err != nil {
		return nil, err
	}
	t, err := db.table("session")
	if err != nil {
		return nil, err
	}
	var rows []opencodeSession
	err = db.each(t, func(row map[string]any, err error) error {
		if err != nil {
			res.Skipped++
			return nil
		}
		s, err := parseOpencodeSession(row)
		if err != nil {
			res.Skipped++
			return nil
		}
		rows = append(rows, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return foldOpencode(rows, path), nil
}

// parseOpencodeSession reads a row of the table session.
func parseOpencodeSession(row map[string]any) (opencodeSession, error) {
	var s opencodeSession
	var ok bool
	if s.id, ok = row["id"].(string); !ok || s.id == "" {
		return s, fmt.Errorf("a session without an id")
	}
	s.parent, _ = row["parent_id"].(string)
	if d, _ := row["directory"].(string); filepath.IsAbs(d) {
		s.dir = filepath.Clean(d)
	}
	if m, _ := row["model"].(string); m != "" {
		var model struct {
			ID         string `json:"id"`
			ProviderID string `json:"providerID"`
		}
		if json.Unmarshal([]byte(m), &model) == nil && model.ID != "" {
			s.model = model.ID
			if model.ProviderID != "" {
				s.model = model.ProviderID + "/" + model.ID
			}
		}
	}
	n := func(col string) (int64, error) {
		switch v := row[col].(type) {
		case int64:
			if !validCounts(v) {
				return 0, fmt.Errorf("%s is out of range", col)
			}
			return v, nil
		case nil:
			return 0, nil // a column the row predates
		}
		return 0, fmt.Errorf("%s is not an integer", col)
	}
	var err error
	var in, read, write int64
	for _, c := range []struct {
		col string
		to  *int64
	}{{"tokens_input", &in}, {"tokens_cache_read", &read}, {"tokens_cache_write", &write}, {"tokens_output", &s.tokens.Output}} {
		if *c.to, err = n(c.col); err != nil {
			return s, err
		}
	}
	s.tokens.Input, s.tokens.CacheRead, s.tokens.CacheWrite = in+read+write, read, write
	switch v := row["cost"].(type) {
	case float64:
		s.cost = &v
	case int64: // SQLite stores a whole REAL as an integer
		c := float64(v)
		s.cost = &c
	}
	if ms, ok := row["time_created"].(int64); ok {
		s.start = time.UnixMilli(ms).UTC()
	}
	if ms, ok := row["time_updated"].(int64); ok {
		s.end = time.UnixMilli(ms).UTC()
	}
	return s, nil
}

// foldOpencode makes a record of each conversation, the sessions
// started by its tasks folded into it.
func foldOpencode(rows []opencodeSession, path string) []Record {
	parent := map[string]string{}
	for _, s := range rows {
		parent[s.id] = s.parent
	}
	root := func(id string) string {
		for hops := 0; hops <= len(rows); hops++ {
			p, ok := parent[id]
			if !ok || p == "" {
				return id
			}
			if _, known := parent[p]; !known {
				return id
			}
			id = p
		}
		return id // a loop: where it stopped
	}
	at := map[string]int{}
	var out []Record
	// Roots first, so that each record takes its conversation's own
	// directory and model first.
	slices.SortStableFunc(rows, func(a, b opencodeSession) int {
		return compareBool(a.parent != "", b.parent != "")
	})
	for _, s := range rows {
		id := root(s.id)
		i, ok := at[id]
		if !ok {
			i = len(out)
			at[id] = i
			out = append(out, Record{Harness: Opencode, SessionID: id, Dir: s.dir, Models: []string{}, Source: path})
		}
		r := &out[i]
		r.Tokens.Add(s.tokens)
		if s.model != "" && !slices.Contains(r.Models, s.model) {
			r.Models = append(r.Models, s.model)
		}
		if s.cost != nil {
			c := *s.cost
			if r.CostUSD != nil {
				c += *r.CostUSD
			}
			r.CostUSD = &c
		}
		if !s.start.IsZero() {
			r.Start = earliest(r.Start, s.start)
		}
		r.End = latest(r.End, s.end)
	}
	return out
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
