package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ncruces/go-sqlite3"
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
//
// SQLite (github.com/ncruces/go-sqlite3) reads a copy of the database
// and its WAL made in a temporary directory, never the user's files: a
// connection to them would take locks on them, write their -shm, and
// checkpoint the WAL into the database when it closes, under a running
// opencode too. The copy's -shm is not copied: in exclusive locking
// mode SQLite keeps the WAL's index in memory, rebuilt from the WAL.
func readOpencodeDB(path string, since time.Time, res *Result) ([]Record, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	fresh := modifiedSince(info, since)
	if wi, err := os.Stat(path + "-wal"); err == nil && wi.Mode().IsRegular() {
		fresh = fresh || modifiedSince(wi, since)
	}
	if !fresh {
		return nil, nil
	}
	tmp, err := os.MkdirTemp("", "workforce-opencode-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, "opencode.db")
	if err := snapshotDB(path, snap); err != nil {
		return nil, err
	}
	rows, skipped, err := querySessions(snap)
	res.Skipped += skipped
	if err != nil {
		return nil, err
	}
	return foldOpencode(rows, path), nil
}

// snapshotTries bounds the copies snapshotDB makes of a database that
// changes while it is copied.
const snapshotTries = 3

// snapshotDB copies the database path and its WAL, if any, to dst and
// dst-wal. A database that changed while it was copied (opencode wrote
// to it) is copied again, snapshotTries times at most; the last copy is
// kept: SQLite reads of a WAL the frames up to the last whole
// transaction, and a torn copy of the file is an error of the query.
func snapshotDB(path, dst string) error {
	var err error
	for try := 0; try < snapshotTries; try++ {
		before := fileStamps(path)
		if err = copyFile(path, dst); err != nil {
			return err
		}
		if err = copyFile(path+"-wal", dst+"-wal"); errors.Is(err, fs.ErrNotExist) {
			err = os.Remove(dst + "-wal")
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		}
		if err != nil {
			return err
		}
		if fileStamps(path) == before {
			return nil
		}
	}
	return nil
}

// fileStamps are the sizes and modification times of a database and its
// WAL: what changes when either is written.
func fileStamps(path string) [2]string {
	var out [2]string
	for i, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			out[i] = fmt.Sprint(fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return out
}

// copyFile copies the regular file src to dst, replacing it.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil {
		return err
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// querySessions reads the rows of the table session of the database
// path (a copy), every column by its name, so that a column an older
// opencode did not have is absent rather than an error. A row that
// cannot be read as a session is skipped and counted.
func querySessions(path string) (rows []opencodeSession, skipped int, err error) {
	conn, err := sqlite3.OpenFlags(path, sqlite3.OPEN_READWRITE)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	// Before the first read: the WAL's index in memory, no -shm.
	if err := conn.Exec("PRAGMA locking_mode=EXCLUSIVE"); err != nil {
		return nil, 0, err
	}
	stmt, _, err := conn.Prepare("SELECT * FROM session")
	if err != nil {
		return nil, 0, err
	}
	defer stmt.Close()
	n := stmt.ColumnCount()
	for stmt.Step() {
		row := make(map[string]any, n)
		for i := 0; i < n; i++ {
			var v any
			switch stmt.ColumnType(i) {
			case sqlite3.INTEGER:
				v = stmt.ColumnInt64(i)
			case sqlite3.FLOAT:
				v = stmt.ColumnFloat(i)
			case sqlite3.TEXT:
				v = stmt.ColumnText(i)
			case sqlite3.BLOB:
				v = stmt.ColumnBlob(i, nil)
			}
			row[stmt.ColumnName(i)] = v
		}
		s, err := parseOpencodeSession(row)
		if err != nil {
			skipped++
			continue
		}
		rows = append(rows, s)
	}
	if err := stmt.Err(); err != nil {
		return nil, skipped, err
	}
	return rows, skipped, nil
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
