package history

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// TestMain runs the test binary as an appender when a test starts it so
// (TestAppendProcesses): many processes appending at once.
func TestMain(m *testing.M) {
	if home := os.Getenv("HISTORY_TEST_APPEND_HOME"); home != "" {
		n, _ := strconv.Atoi(os.Getenv("HISTORY_TEST_APPEND_N"))
		who := os.Getenv("HISTORY_TEST_APPEND_WHO")
		// Widen the window between deciding to rotate and rotating, which
		// the lock must close: without it, processes would rotate the
		// file one after the other and lose the records before.
		beforeRotate = func() { time.Sleep(50 * time.Millisecond) }
		for i := range n {
			if err := Append(home, rec(fmt.Sprintf("%s-%d", who, i))); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// rec is a record of persona id.
func rec(id string) Record {
	return Record{Time: t0, Persona: id, PersonaHash: strings.Repeat("ab", 32), Source: "user", Tier: "best",
		Harness: "claude", HarnessVersion: "2.0.0", Model: "m", Mode: ModeOneShot, Root: "/p", Cwd: "/p",
		SessionID: id + "-1", Sandbox: "/h/sessions/" + id + "-1", Workdir: "/h/sessions/" + id + "-1/tree",
		Status: "succeeded", DurationMS: 1200}
}

// lineOf is the history line of the record of persona id.
func lineOf(t testing.TB, id string) string {
	t.Helper()
	r := rec(id)
	r.Format = Format
	b, err := r.line()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRead(t *testing.T) {
	a, b, c := lineOf(t, "a"), lineOf(t, "b"), lineOf(t, "c")
	huge := `{"v":1,"persona":"x","pad":"` + strings.Repeat("x", MaxLine) + "\"}\n"
	tests := []struct {
		name    string
		content string
		want    []string
		// warns are "line: text" of the warnings, text a substring.
		warns []string
	}{
		{name: "empty"},
		{name: "records", content: a + b + c, want: []string{"a", "b", "c"}},
		{name: "blank lines", content: "\n" + a + "  \n\n" + b, want: []string{"a", "b"}},
		{name: "truncated in the middle", content: a + b[:len(b)/2] + "\n" + c, want: []string{"a", "c"}, warns: []string{"2: a damaged line"}},
		{name: "truncated last line is being written", content: a + b[:len(b)/2], want: []string{"a"}},
		{name: "last line without newline but whole", content: a + strings.TrimSuffix(b, "\n"), want: []string{"a", "b"}},
		{name: "foreign JSON", content: `{"foo":1}` + "\n" + a + "[1,2]\n\"x\"\nnull\n42\n", want: []string{"a"},
			warns: []string{`1: not a history record (no "v")`, "3: not a history record", "4: not a history record", `5: not a history record (no "v")`, "6: not a history record"}},
		{name: "foreign text", content: "hello world\n" + a, want: []string{"a"}, warns: []string{"1: a damaged line"}},
		{name: "newer format", content: strings.Replace(a, `"v":1`, `"v":2`, 1) + b, want: []string{"b"}, warns: []string{"1: a record of format 2"}},
		{name: "no persona", content: `{"v":1,"time":"2025-01-01T00:00:00Z"}` + "\n" + a, want: []string{"a"}, warns: []string{"1: a record without a persona"}},
		{name: "no time", content: `{"v":1,"persona":"p"}` + "\n", warns: []string{"1: a record without a time"}},
		{name: "wrong type", content: strings.Replace(a, `"durationMs":1200`, `"durationMs":"long"`, 1) + b, want: []string{"b"}, warns: []string{"1: not a history record"}},
		{name: "unknown fields are kept out, the record read", content: strings.Replace(a, `{"v":1,`, `{"v":1,"later":{"x":[1]},`, 1), want: []string{"a"}},
		{name: "duplicate member", content: strings.Replace(a, `{"v":1,`, `{"v":1,"persona":"z",`, 1) + b, want: []string{"b"}, warns: []string{"1: a damaged line"}},
		{name: "huge line", content: a + huge + b, want: []string{"a", "b"}, warns: []string{"2: a line longer than"}},
		{name: "huge last line", content: a + strings.TrimSuffix(huge, "\n"), want: []string{"a"}, warns: []string{"2: a line longer than"}},
		{name: "control bytes and CRLF", content: "\x1b[2J\x00\r\n" + strings.TrimSuffix(a, "\n") + "\r\n", want: []string{"a"}, warns: []string{"1: a damaged line"}},
		{name: "invalid UTF-8", content: strings.Replace(a, `"m"`, "\"\xff\"", 1) + b, want: []string{"b"}, warns: []string{"1: a damaged line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), FileName)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			recs, warns, err := Read(path)
			if err != nil {
				t.Fatalf("Read() error %v", err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Persona)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Read() personas = %q, want %q", got, tt.want)
			}
			if len(warns) != len(tt.warns) {
				t.Fatalf("Read() warnings = %v, want %d: %q", warns, len(tt.warns), tt.warns)
			}
			for i, w := range warns {
				line, text, _ := strings.Cut(tt.warns[i], ": ")
				if strconv.Itoa(w.Line) != line || !strings.Contains(w.Err, text) || w.File != path {
					t.Errorf("warning %d = %+v, want line %s in %s with %q", i, w, line, path, text)
				}
				if msg := w.Error(); !strings.HasPrefix(msg, path+":"+line+": ") || strings.ContainsAny(msg, "\x00\x1b\r\n") {
					t.Errorf("warning %d says %q, want it to name the file and line, without control bytes", i, msg)
				}
			}
		})
	}
}

func TestReadMissing(t *testing.T) {
	recs, warns, err := Read(filepath.Join(t.TempDir(), "none.jsonl"))
	if err != nil || recs != nil || warns != nil {
		t.Fatalf("Read(missing) = %v, %v, %v; want nothing", recs, warns, err)
	}
	if _, _, err := Read(t.TempDir()); err == nil {
		t.Fatal("Read(a directory) succeeded; want an error")
	}
}

func TestAppendRoundTrip(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home") // made by Append
	in := 12345.0
	tok := int64(1200)
	r := rec("code-reviewer")
	r.Usage = &report.Usage{InputTokens: &tok, CostUSD: &in}
	r.HarnessSessionID = "0199-abc"
	if err := Append(home, r); err != nil {
		t.Fatal(err)
	}
	if err := Append(home, rec("debugger")); err != nil {
		t.Fatal(err)
	}
	recs, warns, err := Read(Path(home))
	if err != nil || len(warns) > 0 || len(recs) != 2 {
		t.Fatalf("Read() = %d records, %v, %v; want 2", len(recs), warns, err)
	}
	got := recs[0]
	if got.Format != Format || got.Persona != "code-reviewer" || !got.Time.Equal(t0) || got.HarnessSessionID != "0199-abc" ||
		got.Usage == nil || *got.Usage.InputTokens != 1200 || *got.Usage.CostUSD != in || got.Usage.OutputTokens != nil {
		t.Errorf("read back %+v, want %+v", got, r)
	}
	fi, err := os.Stat(Path(home))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("history file mode = %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestAppendRefuses(t *testing.T) {
	home := t.TempDir()
	long := rec("x")
	long.Root = strings.Repeat("r", MaxLine)
	for name, r := range map[string]Record{"no persona": {Time: t0}, "no time": {Persona: "p"}, "too long": long} {
		if err := Append(home, r); err == nil {
			t.Errorf("Append(%s) succeeded; want an error", name)
		}
	}
	if _, err := os.Stat(Path(home)); err == nil {
		t.Error("a refused record left a history file")
	}
}

// TestAppendEndsCutLine: a line left without its newline (a process died
// writing it) stays one damaged line; the next record is whole.
func TestAppendEndsCutLine(t *testing.T) {
	home := t.TempDir()
	a := lineOf(t, "a")
	if err := os.WriteFile(Path(home), []byte(a+a[:20]), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Append(home, rec("b")); err != nil {
		t.Fatal(err)
	}
	recs, warns, err := Read(Path(home))
	if err != nil || len(recs) != 2 || recs[1].Persona != "b" || len(warns) != 1 || warns[0].Line != 2 {
		t.Fatalf("Read() = %v, %v, %v; want a and b, a warning for line 2", recs, warns, err)
	}
}

// fill writes records to the history of home, as many as fit in size
// bytes, and returns how many it wrote.
func fill(t *testing.T, home string, size int) int {
	t.Helper()
	line := lineOf(t, "old")
	n := size / len(line)
	if err := os.WriteFile(Path(home), []byte(strings.Repeat(line, n)), 0o600); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRotate(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(RotatedPath(home), []byte(lineOf(t, "older")), 0o600); err != nil {
		t.Fatal(err)
	}
	n := fill(t, home, MaxSize-1)
	// Below MaxSize: no rotation.
	if err := Append(home, rec("new1")); err != nil {
		t.Fatal(err)
	}
	if recs, _, _ := Read(Path(home)); len(recs) != n+1 {
		t.Fatalf("%d records before MaxSize, want %d: rotated too soon", len(recs), n+1)
	}
	// Past it: the file becomes history.1.jsonl, replacing the one before.
	if err := Append(home, rec("new2")); err != nil {
		t.Fatal(err)
	}
	cur, _, _ := Read(Path(home))
	old, _, _ := Read(RotatedPath(home))
	if len(cur) != 1 || cur[0].Persona != "new2" || len(old) != n+1 || old[n].Persona != "new1" {
		t.Fatalf("after rotation: %d current (%v), %d rotated; want new2 alone, and %d", len(cur), cur, len(old), n+1)
	}
	all, _, _ := ReadAll(home)
	if len(all) != n+2 || all[0].Persona != "old" || all[n+1].Persona != "new2" {
		t.Fatalf("ReadAll() = %d records, want %d, oldest first", len(all), n+2)
	}
}

// TestAppendProcesses: processes appending at once, across a rotation,
// lose no record and damage no line.
func TestAppendProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	home := t.TempDir()
	n := fill(t, home, MaxSize-1)
	const procs, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "HISTORY_TEST_APPEND_HOME="+home, "HISTORY_TEST_APPEND_N="+strconv.Itoa(each),
				"HISTORY_TEST_APPEND_WHO=p"+strconv.Itoa(p))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("appender %d: %v: %s", p, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, warns, err := ReadAll(home)
	if err != nil || len(warns) > 0 {
		t.Fatalf("ReadAll() warnings %v, error %v; want none", warns, err)
	}
	if len(all) != n+procs*each {
		t.Fatalf("%d records, want %d: records lost", len(all), n+procs*each)
	}
	if _, err := os.Stat(RotatedPath(home)); err != nil {
		t.Fatalf("no rotation happened: %v", err)
	}
	// Each process's records in its own order.
	next := map[string]int{}
	for _, r := range all[n:] {
		who, i, _ := strings.Cut(r.Persona, "-")
		if strconv.Itoa(next[who]) != i {
			t.Fatalf("record %s out of order, want %s-%d", r.Persona, who, next[who])
		}
		next[who]++
	}
}

func TestRecent(t *testing.T) {
	tests := []struct {
		name       string
		rotated    []string
		current    []string
		n          int
		want       []string
		wantWarned bool
	}{
		{name: "none", n: 3},
		{name: "newest first, distinct", current: []string{"a", "b", "a", "c", "b"}, n: 3, want: []string{"b", "c", "a"}},
		{name: "bounded", current: []string{"a", "b", "c", "d"}, n: 2, want: []string{"d", "c"}},
		{name: "rotated file fills in", rotated: []string{"x", "y"}, current: []string{"a", "a"}, n: 3, want: []string{"a", "y", "x"}},
		{name: "rotated file not needed", rotated: []string{"x"}, current: []string{"a", "b"}, n: 2, want: []string{"b", "a"}},
		{name: "damage skipped", current: []string{"a", "!", "b"}, n: 3, want: []string{"b", "a"}, wantWarned: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			write := func(path string, ids []string) {
				var b strings.Builder
				for _, id := range ids {
					if id == "!" {
						b.WriteString("{damaged\n")
						continue
					}
					b.WriteString(lineOf(t, id))
				}
				if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.rotated != nil {
				write(RotatedPath(home), tt.rotated)
			}
			if tt.current != nil {
				write(Path(home), tt.current)
			}
			got, warns, err := Recent(home, tt.n)
			if err != nil || !slices.Equal(got, tt.want) || (len(warns) > 0) != tt.wantWarned {
				t.Errorf("Recent(%d) = %q, %v, %v; want %q (warned: %v)", tt.n, got, warns, err, tt.want, tt.wantWarned)
			}
		})
	}
}

func TestEnabled(t *testing.T) {
	for v, want := range map[string]bool{"": true, "1": true, "true": true, "0": false, "false": false, " 0 ": false, "off": true, "yes": true} {
		got := Enabled(func(name string) string {
			if name == Env {
				return v
			}
			return ""
		})
		if got != want {
			t.Errorf("Enabled with %s=%q = %v, want %v", Env, v, got, want)
		}
	}
}

// FuzzRead: whatever a history file holds, reading it never fails and
// never panics; what it returns are records, each a line of its own, that
// write back as they read; every line is a record, a warning or blank.
func FuzzRead(f *testing.F) {
	a := lineOf(f, "a")
	f.Add([]byte(a + a))
	f.Add([]byte(a[:len(a)/2]))
	f.Add([]byte(a + a[:30] + "\n" + a))
	f.Add([]byte(`{"foo":1}` + "\n[]\nnull\n\"x\"\n"))
	f.Add([]byte(strings.Replace(a, `"v":1`, `"v":7`, 1)))
	f.Add([]byte(`{"v":1,"persona":"p","time":"2025-01-01T00:00:00Z","usage":{"inputTokens":-1,"costUsd":1e308}}` + "\n"))
	f.Add([]byte("{\"v\":1,\"persona\":\"\x1b[31m\",\"time\":\"2025-01-01T00:00:00+02:00\"}\r\n"))
	f.Add(append([]byte(a), bytes.Repeat([]byte("y"), MaxLine+10)...))
	f.Add([]byte("\n\n\x00\xff\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs []Record
		warns, err := scanReader(FileName, bytes.NewReader(data), func(r Record) bool {
			recs = append(recs, r)
			return true
		})
		if err != nil {
			t.Fatalf("scan error %v", err)
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		nonBlank := 0
		for l := range bytes.SplitSeq(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(recs)+len(warns) > nonBlank {
			t.Fatalf("%d records and %d warnings from %d lines", len(recs), len(warns), nonBlank)
		}
		prev := 0
		for _, w := range warns {
			if w.Line <= prev || w.Line > lines || w.File != FileName || strings.ContainsAny(w.Error(), "\x00\x1b\n\r") {
				t.Fatalf("warning %q: line out of order or range (%d lines), or control bytes", w.Error(), lines)
			}
			prev = w.Line
		}
		for _, r := range recs {
			if r.check() != nil {
				t.Fatalf("returned a record that fails its check: %+v", r)
			}
			b, err := r.line()
			if err != nil {
				continue // a record read can be longer once written (escapes)
			}
			back, w, _ := Read(writeTemp(t, b))
			if len(back) != 1 || len(w) != 0 {
				t.Fatalf("record %s reads back as %v, %v", b, back, w)
			}
			b2, _ := back[0].line()
			if !bytes.Equal(b, b2) {
				t.Fatalf("round trip changed the record:\n%s\n%s", b, b2)
			}
		}
	})
}

func writeTemp(t *testing.T, b []byte) string {
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// BenchmarkRecent reads the recent personas of a full history (MaxSize
// of records, the most the picker reads before it opens).
func BenchmarkRecent(b *testing.B) {
	home := b.TempDir()
	var buf strings.Builder
	for i := 0; buf.Len() < MaxSize; i++ {
		buf.WriteString(lineOf(b, fmt.Sprintf("persona-%d", i%500)))
	}
	if err := os.WriteFile(Path(home), []byte(buf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if ids, _, err := Recent(home, 20); err != nil || len(ids) != 20 {
			b.Fatalf("Recent() = %d ids, %v", len(ids), err)
		}
	}
}

// BenchmarkAppend appends a record: what every run pays at its end.
func BenchmarkAppend(b *testing.B) {
	home := b.TempDir()
	r := rec("code-reviewer")
	for range b.N {
		if err := Append(home, r); err != nil {
			b.Fatal(err)
		}
	}
}
