package sessions

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// want is a fixture's want.json: what its conversation must read as,
// written by the e2e test TestUsage from what the scripted model reported
// and what the harness printed, never from this package.
type want struct {
	Harness       string   `json:"harness"`
	SessionID     string   `json:"sessionId"`
	Dir           string   `json:"dir"`
	Models        []string `json:"models"`
	Tokens        Tokens   `json:"tokens"`
	CostUSD       *float64 `json:"costUsd"`
	CostEstimated bool     `json:"costEstimated"`
}

// fixture copies the store of harness h from testdata into a temporary
// directory (opencode's database and WAL gunzipped) and returns it with
// its want.json.
func fixture(t testing.TB, h string) (Store, want) {
	t.Helper()
	src := filepath.Join("testdata", h)
	dst := t.TempDir()
	var w want
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == "want.json" {
			return json.Unmarshal(data, &w)
		}
		if strings.HasSuffix(rel, ".gz") {
			data = gunzip(t, data)
			rel = strings.TrimSuffix(rel, ".gz")
		}
		p := filepath.Join(dst, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if w.Harness != h || w.SessionID == "" {
		t.Fatalf("testdata/%s/want.json is missing or names no conversation", h)
	}
	return Store{Harness: h, Dir: dst}, w
}

func gunzip(t testing.TB, data []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// check compares a record with a fixture's want.json.
func check(t *testing.T, r Record, w want) {
	t.Helper()
	if r.Harness != w.Harness || r.SessionID != w.SessionID || r.Dir != w.Dir {
		t.Errorf("record %s %s in %q, want %s %s in %q", r.Harness, r.SessionID, r.Dir, w.Harness, w.SessionID, w.Dir)
	}
	if !slices.Equal(r.Models, w.Models) {
		t.Errorf("models %q, want %q", r.Models, w.Models)
	}
	if r.Tokens != w.Tokens {
		t.Errorf("tokens %+v, want %+v", r.Tokens, w.Tokens)
	}
	switch {
	case (r.CostUSD == nil) != (w.CostUSD == nil):
		t.Errorf("cost %v, want %v (nil: unknown)", r.CostUSD, w.CostUSD)
	case r.CostUSD != nil && math.Abs(*r.CostUSD-*w.CostUSD) > 1e-9:
		t.Errorf("cost %v, want %v", *r.CostUSD, *w.CostUSD)
	}
	if r.CostEstimated != w.CostEstimated {
		t.Errorf("cost estimated %v, want %v", r.CostEstimated, w.CostEstimated)
	}
	if r.Start.IsZero() || r.End.Before(r.Start) {
		t.Errorf("start %v, end %v: want a start, and an end no earlier", r.Start, r.End)
	}
}

// TestReadFixtures reads the records each real harness made (a one-shot
// run with a tool call, resumed once) and finds the one conversation with
// the tokens the scripted model reported, and the harness's cost:
// claude's (written twice for its message of two blocks, once for each
// run's cost-state), none for codex, opencode's recorded 0.
func TestReadFixtures(t *testing.T) {
	for _, h := range []string{Claude, Codex, Opencode, Gemini} {
		t.Run(h, func(t *testing.T) {
			s, w := fixture(t, h)
			res := Read([]Store{s}, Options{})
			if len(res.Errors) > 0 || res.Skipped != 0 {
				t.Errorf("errors %v, %d skipped; want none", res.Errors, res.Skipped)
			}
			if len(res.Records) != 1 {
				t.Fatalf("%d records, want 1: %+v", len(res.Records), res.Records)
			}
			check(t, res.Records[0], w)
			if !strings.HasPrefix(res.Records[0].Source, s.Dir) {
				t.Errorf("source %q is not in the store %s", res.Records[0].Source, s.Dir)
			}
		})
	}
}

// TestReadOptions: Since leaves out conversations that ended before it,
// and does not open files modified before it; Dir keeps those that ran
// in it or below.
func TestReadOptions(t *testing.T) {
	for _, h := range []string{Claude, Codex, Opencode, Gemini} {
		s, w := fixture(t, h)
		all := Read([]Store{s}, Options{})
		if len(all.Records) != 1 {
			t.Fatalf("%s: %d records, want 1", h, len(all.Records))
		}
		r := all.Records[0]
		for _, c := range []struct {
			name string
			o    Options
			// mtime, when not 0, sets the files' times to the end of the
			// conversation plus mtime.
			mtime time.Duration
			n     int
		}{
			{"since before", Options{Since: r.Start.Add(-time.Hour)}, 0, 1},
			{"since during", Options{Since: r.End}, 0, 1},
			{"since after the end", Options{Since: r.End.Add(time.Millisecond)}, 0, 0},
			// The files are not opened: the conversation, which ended
			// after Since, is not seen.
			{"files older than since", Options{Since: r.End.Add(-time.Hour)}, -2 * time.Hour, 0},
			// ModifiedSince does not look at the records' times.
			{"modified since after the end", Options{ModifiedSince: r.End.Add(time.Hour)}, 2 * time.Hour, 1},
			{"files older than modified since", Options{ModifiedSince: r.End.Add(-time.Hour)}, -2 * time.Hour, 0},
			{"files older than since, modified since before", Options{Since: r.End.Add(-time.Hour), ModifiedSince: r.End.Add(-3 * time.Hour)}, -2 * time.Hour, 0},
			{"in its directory", Options{Dir: w.Dir}, 0, 1},
			{"below a parent", Options{Dir: filepath.Dir(w.Dir)}, 0, 1},
			{"another directory", Options{Dir: w.Dir + "-other"}, 0, 0},
			{"a subdirectory", Options{Dir: filepath.Join(w.Dir, "sub")}, 0, 0},
		} {
			t.Run(h+"/"+c.name, func(t *testing.T) {
				mtime := time.Now()
				if c.mtime != 0 {
					mtime = r.End.Add(c.mtime)
				}
				filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						os.Chtimes(path, mtime, mtime)
					}
					return nil
				})
				res := Read([]Store{s}, c.o)
				if len(res.Records) != c.n || len(res.Errors) > 0 {
					t.Errorf("Read(%+v) = %d records, %v; want %d", c.o, len(res.Records), res.Errors, c.n)
				}
			})
		}
	}
}

// TestReadDamage: damaged lines are skipped and counted, the rest read
// as before; a store that does not exist holds nothing; one that cannot
// be read is an error, the other stores still read.
func TestReadDamage(t *testing.T) {
	for _, h := range []string{Claude, Codex, Gemini} {
		for _, c := range []struct {
			name    string
			damage  func(data []byte) []byte
			skipped int
		}{
			{"a line that is not JSON", func(d []byte) []byte { return append([]byte("not json\n"), d...) }, 1},
			{"a cut last line", func(d []byte) []byte {
				return append(d, `{"type":"assistant","message":{"id":"x","usage":{"input_tokens":5`...)
			}, 1},
			{"a foreign JSON line", func(d []byte) []byte { return append(d, "{\"something\":\"else\"}\n[1,2]\n"...) }, 1},
			{"a line over the limit", func(d []byte) []byte {
				return append(d, "{\"type\":\"assistant\",\"x\":\""+strings.Repeat("a", 2<<20)+"\"}\n"...)
			}, 1},
			{"negative tokens", func(d []byte) []byte {
				return append(d, `{"type":"assistant","message":{"id":"neg","usage":{"input_tokens":-5}}}`+"\n"+
					`{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":-5}}}}`+"\n"+
					`{"id":"neg","type":"gemini","tokens":{"input":-5}}`+"\n"...)
			}, 1},
			{"NUL bytes and CRLF", func(d []byte) []byte {
				return append(bytes.ReplaceAll(d, []byte("\n"), []byte("\r\n")), "\x00\x00\n"...)
			}, 1},
		} {
			t.Run(h+"/"+c.name, func(t *testing.T) {
				defer func(n int) { maxLine = n }(maxLine)
				maxLine = 1 << 20
				s, w := fixture(t, h)
				damageFiles(t, s.Dir, c.damage)
				res := Read([]Store{s}, Options{})
				if res.Skipped != c.skipped || len(res.Errors) > 0 {
					t.Errorf("skipped %d, errors %v; want %d skipped, no error", res.Skipped, res.Errors, c.skipped)
				}
				if len(res.Records) != 1 {
					t.Fatalf("%d records, want 1", len(res.Records))
				}
				check(t, res.Records[0], w)
			})
		}
	}
	t.Run("absent stores", func(t *testing.T) {
		dir := t.TempDir()
		res := Read([]Store{{Claude, filepath.Join(dir, "no")}, {Codex, filepath.Join(dir, "no")}, {Opencode, filepath.Join(dir, "no")}, {Gemini, filepath.Join(dir, "no")}}, Options{})
		if len(res.Records)+len(res.Errors)+res.Skipped != 0 {
			t.Errorf("Read of absent stores = %+v, want nothing", res)
		}
	})
	t.Run("a store that is a file", func(t *testing.T) {
		s, w := fixture(t, Codex)
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, []byte("x"), 0o644)
		res := Read([]Store{{Claude, file}, s}, Options{})
		if len(res.Errors) != 0 || len(res.Records) != 1 {
			t.Fatalf("Read = %+v, want the codex conversation and nothing of the file", res)
		}
		check(t, res.Records[0], w)
	})
	t.Run("a codex file without session_meta", func(t *testing.T) {
		s, _ := fixture(t, Codex)
		damageFiles(t, s.Dir, func(d []byte) []byte {
			_, rest, _ := bytes.Cut(d, []byte("\n"))
			return rest
		})
		res := Read([]Store{s}, Options{})
		if len(res.Records) != 0 || res.Skipped != 1 {
			t.Errorf("Read = %d records, %d skipped; want none, 1 skipped", len(res.Records), res.Skipped)
		}
	})
	t.Run("an opencode database that is not one", func(t *testing.T) {
		s, w := fixture(t, Opencode)
		os.WriteFile(filepath.Join(s.Dir, "opencode-dev.db"), []byte("not a database"), 0o644)
		res := Read([]Store{s}, Options{})
		if len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error(), "opencode-dev.db") {
			t.Errorf("errors %v, want one naming opencode-dev.db", res.Errors)
		}
		if len(res.Records) != 1 {
			t.Fatalf("%d records, want opencode.db's", len(res.Records))
		}
		check(t, res.Records[0], w)
	})
}

// damageFiles rewrites each .jsonl file below dir with damage.
func damageFiles(t *testing.T, dir string, damage func([]byte) []byte) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".jsonl") {
			data, _ := os.ReadFile(path)
			os.WriteFile(path, damage(data), 0o644)
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no file to damage")
	}
}

// TestClaudeDedupe: a message written once a content block counts once;
// its last line's usage is the one counted. Lines without a message id
// count each.
func TestClaudeDedupe(t *testing.T) {
	lines := []string{
		`{"type":"user","sessionId":"s","cwd":"/p","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"a","usage":{"input_tokens":10,"output_tokens":1}}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m1","model":"a","usage":{"input_tokens":10,"output_tokens":4,"cache_read_input_tokens":3}}}`,
		`{"type":"assistant","sessionId":"s","message":{"id":"m2","model":"b","usage":{"input_tokens":1,"output_tokens":1,"cache_creation_input_tokens":2}}}`,
		`{"type":"assistant","sessionId":"s","message":{"model":"<synthetic>","usage":{"input_tokens":100}}}`,
		`{"type":"assistant","sessionId":"s","message":{"usage":{"input_tokens":100}}}`,
		`{"type":"assistant","sessionId":"t","cwd":"/q","message":{"id":"m1","model":"a","usage":{"input_tokens":7}},"timestamp":"2026-01-02T03:04:06Z"}`,
		`{"type":"cost-state","sessionId":"s","startTime":1,"totalCostUSD":0.5}`,
		`{"type":"cost-state","sessionId":"s","startTime":1,"totalCostUSD":0.75}`,
		`{"type":"cost-state","sessionId":"s","startTime":2,"totalCostUSD":0.25,"hasUnknownModelCost":true}`,
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "projects", "-p")
	os.MkdirAll(p, 0o755)
	os.WriteFile(filepath.Join(p, "s.jsonl"), []byte(strings.Join(lines, "\n")), 0o644)
	res := Read([]Store{{Claude, dir}}, Options{})
	if len(res.Records) != 2 || res.Skipped != 0 {
		t.Fatalf("Read = %+v, want 2 records", res)
	}
	s, other := res.Records[0], res.Records[1]
	if s.SessionID != "s" {
		s, other = other, s
	}
	wantTokens := Tokens{Input: 10 + 3 + 1 + 2 + 100 + 100, Output: 4 + 1, CacheRead: 3, CacheWrite: 2}
	if s.Tokens != wantTokens || !slices.Equal(s.Models, []string{"a", "b"}) || s.Dir != "/p" {
		t.Errorf("record s = %+v, want tokens %+v, models [a b], dir /p", s, wantTokens)
	}
	if s.CostUSD == nil || *s.CostUSD != 1 || !s.CostEstimated {
		t.Errorf("cost %v estimated %v, want 1 (0.75 + 0.25), estimated", s.CostUSD, s.CostEstimated)
	}
	if other.SessionID != "t" || other.Tokens.Input != 7 || other.CostUSD != nil || other.Dir != "/q" {
		t.Errorf("record t = %+v, want 7 input tokens, unknown cost, dir /q", other)
	}
}

// TestFoldOpencode: the sessions a task started count with the
// conversation they belong to.
func TestFoldOpencode(t *testing.T) {
	c := func(v float64) *float64 { return &v }
	at := func(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
	rows := []opencodeSession{
		{id: "child", parent: "root", dir: "/d/sub", model: "p/small", tokens: Tokens{Input: 5, Output: 1}, cost: c(0.5), start: at(20), end: at(90)},
		{id: "grandchild", parent: "child", dir: "/d", model: "p/big", tokens: Tokens{Input: 1}, cost: c(0.25), start: at(30), end: at(40)},
		{id: "root", dir: "/d", model: "p/big", tokens: Tokens{Input: 10, Output: 2, CacheRead: 4}, cost: c(1), start: at(10), end: at(50)},
		{id: "orphan", parent: "gone", dir: "/e", tokens: Tokens{Output: 3}, start: at(60), end: at(70)},
		{id: "loop1", parent: "loop2"}, {id: "loop2", parent: "loop1"},
	}
	got := foldOpencode(rows, "db")
	byID := map[string]Record{}
	for _, r := range got {
		byID[r.SessionID] = r
	}
	root := byID["root"]
	if len(got) != 4 || root.Tokens != (Tokens{Input: 16, Output: 3, CacheRead: 4}) || root.Dir != "/d" ||
		!slices.Equal(root.Models, []string{"p/big", "p/small"}) || *root.CostUSD != 1.75 || !root.Start.Equal(at(10)) || !root.End.Equal(at(90)) {
		t.Errorf("foldOpencode = %+v", got)
	}
	if o := byID["orphan"]; o.Tokens.Output != 3 || o.CostUSD != nil {
		t.Errorf("orphan = %+v, want its own record, cost unknown", o)
	}
}

func TestStores(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want []Store
	}{
		{map[string]string{"HOME": "/h"}, []Store{{Claude, "/h/.claude"}, {Codex, "/h/.codex"}, {Opencode, "/h/.local/share/opencode"}, {Gemini, "/h/.gemini"}}},
		{map[string]string{"HOME": "/h", "CLAUDE_CONFIG_DIR": "/c/", "CODEX_HOME": "/x", "XDG_DATA_HOME": "/d", "GEMINI_CLI_HOME": "/g/"},
			[]Store{{Claude, "/c"}, {Codex, "/x"}, {Opencode, "/d/opencode"}, {Gemini, "/g/.gemini"}}},
		{map[string]string{"HOME": "/h", "CODEX_HOME": "relative", "GEMINI_CLI_HOME": "g"},
			[]Store{{Claude, "/h/.claude"}, {Codex, "/h/.codex"}, {Opencode, "/h/.local/share/opencode"}, {Gemini, "/h/.gemini"}}},
		{map[string]string{"CODEX_HOME": "/x"}, []Store{{Codex, "/x"}}},
		{map[string]string{"GEMINI_CLI_HOME": "/g"}, []Store{{Gemini, "/g/.gemini"}}},
		{map[string]string{"HOME": "rel"}, nil},
	} {
		got := Stores(func(k string) string { return c.env[k] })
		if !slices.Equal(got, c.want) {
			t.Errorf("Stores(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/b/c", "/a/b/", true},
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"", "/a", false},
		{"/a", "", false},
		{"/a/b/../c", "/a/b", false},
		{"/x", "/", true},
	} {
		if got := Within(c.path, c.dir); got != c.want {
			t.Errorf("Within(%q, %q) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}

// FuzzParseClaudeLine: any line reads without panicking; a line that
// reads has counts in range, its input no less than its cache's parts.
func FuzzParseClaudeLine(f *testing.F) {
	seedLines(f, Claude)
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := parseClaudeLine(line)
		if err != nil {
			return
		}
		if m := l.Message; m != nil && m.Usage != nil {
			tk := m.Usage.tokens()
			if !validCounts(tk.Output, tk.CacheRead, tk.CacheWrite) || tk.Input < tk.CacheRead+tk.CacheWrite {
				t.Errorf("tokens %+v of %q", tk, line)
			}
		}
		s := &claudeSession{messages: map[string]Tokens{}, costs: map[int64]claudeCost{}}
		s.add(l)
		s.record()
	})
}

// FuzzParseCodexLine: any line reads without panicking; a line that
// reads has counts in range.
func FuzzParseCodexLine(f *testing.F) {
	seedLines(f, Codex)
	f.Fuzz(func(t *testing.T, line []byte) {
		l, err := parseCodexLine(line)
		if err != nil {
			return
		}
		if i := l.Payload.Info; i != nil && i.Total != nil && !validCounts(i.Total.Input, i.Total.Output, i.Total.Cached, i.Total.Write) {
			t.Errorf("tokens out of range %+v of %q", i.Total, line)
		}
	})
}

// seedLines adds the lines of harness h's fixture, short ones whole, and
// a few damaged ones, to the corpus.
func seedLines(f *testing.F, h string) {
	filepath.WalkDir(filepath.Join("testdata", h), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(path, ".jsonl") {
			return nil
		}
		data, _ := os.ReadFile(path)
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(l) < 4096 {
				f.Add(l)
			}
		}
		return nil
	})
	for _, s := range []string{"", "{", "null", "[]", `{"type":"assistant","message":null}`, `{"message":{"usage":{"input_tokens":1e30}}}`,
		`{"type":"event_msg","payload":{"type":"token_count","info":null}}`, `{"timestamp":"not a time"}`} {
		f.Add([]byte(s))
	}
}

// TestOpencodeLeavesTheStoreAlone: reading opencode's database writes
// nothing of the store (no checkpoint of the WAL into the database, no
// -shm, no lock file) and leaves nothing in the temporary directory it
// copies the database to.
func TestOpencodeLeavesTheStoreAlone(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s, w := fixture(t, Opencode)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	before := map[string]string{}
	filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(path, old, old)
			b, _ := os.ReadFile(path)
			before[path] = string(b)
		}
		return nil
	})
	if len(before) != 2 {
		t.Fatalf("the fixture has %d files, want the database and its WAL", len(before))
	}
	res := Read([]Store{s}, Options{})
	if len(res.Errors) > 0 || len(res.Records) != 1 {
		t.Fatalf("Read = %+v", res)
	}
	check(t, res.Records[0], w)
	after := 0
	filepath.WalkDir(s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		after++
		b, _ := os.ReadFile(path)
		fi, _ := d.Info()
		if was, ok := before[path]; !ok || was != string(b) || !fi.ModTime().Equal(old) {
			t.Errorf("%s was written (known before: %v)", path, ok)
		}
		return nil
	})
	if after != len(before) {
		t.Errorf("%d files in the store after the read, want %d", after, len(before))
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}

// TestSnapshotDB: the copy of a database without a WAL has none, even
// where an earlier copy left one; a database that is not a regular file
// is refused.
func TestSnapshotDB(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db")
	os.WriteFile(src, []byte("db"), 0o644)
	os.WriteFile(dst+"-wal", []byte("stale"), 0o644)
	if err := snapshotDB(src, dst); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "db" {
		t.Errorf("copy = %q, want %q", b, "db")
	}
	if _, err := os.Stat(dst + "-wal"); !os.IsNotExist(err) {
		t.Errorf("a stale WAL is left beside the copy: %v", err)
	}
	if err := snapshotDB(dir, dst); err == nil {
		t.Error("a directory was copied as a database")
	}
}
