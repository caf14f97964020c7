package session

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTail checks that tail holds the last max bytes written, whatever
// the writes, in a buffer that does not grow with them.
func TestTail(t *testing.T) {
	many := slices.Repeat([]string{"abc"}, 10000)
	tests := []struct {
		name   string
		writes []string
	}{
		{"nothing", nil},
		{"less than max", []string{"a", "b"}},
		{"exactly max", []string{"ab", "cd"}},
		{"over max in pieces", []string{"ab", "cd", "ef"}},
		{"one write over max", []string{"abcdefgh"}},
		{"a long write after short ones", []string{"x", "y", "0123456789"}},
		{"many short writes", many},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := &tail{max: 4}
			for _, w := range tt.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			all := strings.Join(tt.writes, "")
			want := all[max(0, len(all)-4):]
			if got := string(tl.bytes()); got != want {
				t.Errorf("bytes() = %q, want %q", got, want)
			}
			if cap(tl.buf) > 4*tl.max {
				t.Errorf("the buffer's capacity is %d, want at most %d", cap(tl.buf), 4*tl.max)
			}
		})
	}
}

// TestSaveOutput checks the raw output's files: written to their .part
// names while the harness runs, given their names at the end after an
// earlier run's files moved to 1/; removed, with the directory, when the
// run never started; and a directory that cannot be made is an error
// whose writers still take everything.
func TestSaveOutput(t *testing.T) {
	t.Run("saved after an earlier run", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), ResultsDir, "s1")
		must(t, os.MkdirAll(dir, 0o700))
		for _, name := range outputFiles {
			must(t, os.WriteFile(filepath.Join(dir, name), []byte("earlier "+name), 0o600))
		}
		raw, err := openOutput(dir)
		must(t, err)
		raw.stdout.Write([]byte("{}\n"))
		raw.stderr.Write([]byte("warning\n"))
		if _, err := os.Stat(filepath.Join(dir, "stdout.jsonl.part")); err != nil {
			t.Errorf("while the harness runs: %v", err)
		}
		must(t, saveOutput(dir, raw))
		for name, want := range map[string]string{
			"stdout.jsonl": "{}\n", "stderr.txt": "warning\n",
			"1/result.json": "earlier result.json", "1/stdout.jsonl": "earlier stdout.jsonl", "1/stderr.txt": "earlier stderr.txt",
		} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
				t.Errorf("%s = %q, %v; want %q", name, b, err, want)
			}
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), partSuffix) || e.Name() == "result.json" {
				t.Errorf("%s left at the top", e.Name())
			}
		}
		if raw.writeErr() != nil {
			t.Errorf("writeErr = %v, want nil", raw.writeErr())
		}
	})
	t.Run("never started", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), ResultsDir, "s2")
		raw, err := openOutput(dir)
		must(t, err)
		raw.stdout.Write([]byte("x"))
		raw.discard()
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Errorf("the results directory is still there (%v)", err)
		}
	})
	t.Run("cannot be made", func(t *testing.T) {
		home := t.TempDir()
		must(t, os.WriteFile(filepath.Join(home, ResultsDir), nil, 0o600))
		raw, err := openOutput(filepath.Join(home, ResultsDir, "s3"))
		if err == nil {
			t.Fatal("openOutput under a file: nil error")
		}
		big := bytes.Repeat([]byte("x"), 1<<16)
		if n, err := raw.stdout.Write(big); n != len(big) || err != nil {
			t.Errorf("Write = %d, %v; want all taken", n, err)
		}
	})
	t.Run("a write that fails", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), ResultsDir, "s4")
		raw, err := openOutput(dir)
		must(t, err)
		raw.stdout.f.Close() // the next write fails
		if n, err := raw.stdout.Write([]byte("lost")); n != 4 || err != nil {
			t.Errorf("Write = %d, %v; want all taken", n, err)
		}
		if raw.writeErr() == nil {
			t.Error("writeErr = nil after a write failed")
		}
	})
}

// TestEarlierOutputs checks the outputs of a session's earlier runs: each
// numbered directory's stdout.jsonl, the latest (highest) first, after
// three runs saved one after the other; nothing else of the directory.
func TestEarlierOutputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ResultsDir, "s1")
	must(t, os.MkdirAll(dir, 0o700))
	for run := range 3 {
		raw, err := openOutput(dir)
		must(t, err)
		fmt.Fprintf(raw.stdout, "run %d\n", run)
		must(t, saveOutput(dir, raw))
	}
	for _, name := range []string{"01", "0", "-1", "x"} {
		must(t, os.Mkdir(filepath.Join(dir, name), 0o700))
	}
	must(t, os.WriteFile(filepath.Join(dir, "7"), nil, 0o600)) // a file, not a run's directory
	got := EarlierOutputs(dir)
	want := []string{filepath.Join(dir, "2", OutputFile), filepath.Join(dir, "1", OutputFile)}
	if !slices.Equal(got, want) {
		t.Fatalf("EarlierOutputs = %q, want %q", got, want)
	}
	for i, p := range got {
		if b, err := os.ReadFile(p); err != nil || string(b) != fmt.Sprintf("run %d\n", 1-i) {
			t.Errorf("%s = %q, %v; want run %d", p, b, err, 1-i)
		}
	}
	if got := EarlierOutputs(filepath.Join(dir, "none")); got != nil {
		t.Errorf("EarlierOutputs of a missing directory = %q", got)
	}
	if got := EarlierOutputs(""); got != nil {
		t.Errorf("EarlierOutputs(\"\") = %q", got)
	}
}

// TestSpillLimit checks that a spill with a limit keeps the first limit
// bytes, then a line saying how much was left out and the last bytes,
// whatever the writes; and everything when under the limit.
func TestSpillLimit(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"under the limit", []string{"abc", "de"}, "abcde"},
		{"exactly the limit", []string{"0123456789"}, "0123456789"},
		{"one write over", []string{"0123456789ABCDEFGHIJ"},
			"0123456789\n[workforce: 6 bytes of the harness's stderr left out here; the last 4 follow]\nGHIJ"},
		{"many writes over", []string{"01234", "56789A", "BC", "DEFGHIJ"},
			"0123456789\n[workforce: 6 bytes of the harness's stderr left out here; the last 4 follow]\nGHIJ"},
		{"over by less than the end", []string{"0123456789", "AB"},
			"0123456789\n[workforce: 0 bytes of the harness's stderr left out here; the last 2 follow]\nAB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "stderr.txt")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			s := &spill{f: f, limit: 10, end: &tail{max: 4}}
			for _, w := range tt.writes {
				if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want %d, nil", w, n, err, len(w))
				}
			}
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("file = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestEscapedLines checks that what the harness writes on stderr reaches
// the terminal a line at a time, with what is not text escaped, whatever
// the writes' boundaries.
func TestEscapedLines(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"plain lines", []string{"one\ntwo\n"}, "one\ntwo\n"},
		{"a line in pieces", []string{"o", "ne\ntw", "o\n"}, "one\ntwo\n"},
		{"terminal control", []string{"a\x1b[31mred\n"}, `a\033[31mred` + "\n"},
		{"a cursor move and a bell", []string{"x\x1b[2J\a\n"}, `x\033[2J\a` + "\n"},
		{"a UTF-8 letter split across writes", []string{"caf\xc3", "\xa9\n"}, "café\n"},
		{"a last line without its newline", []string{"end"}, "end\n"},
		{"a tab kept", []string{"a\tb\n"}, "a\tb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			e := &escapedLines{w: &b}
			for _, w := range tt.writes {
				e.Write([]byte(w))
			}
			e.flush()
			if b.String() != tt.want {
				t.Errorf("shown %q, want %q", b.String(), tt.want)
			}
		})
	}
}
