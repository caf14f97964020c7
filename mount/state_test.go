package mount

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestManifestRoundTrip: what Save writes, Open reads back the same.
func TestManifestRoundTrip(t *testing.T) {
	s, _ := fixture(t)
	if _, err := s.Materialize("AGENTS.md", "persona"); err != nil {
		t.Fatal(err)
	}
	must(t, s.Save())
	got, err := Open(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"root", got.Root, s.Root},
		{"tree", got.Tree, s.Tree},
		{"workdir", got.Workdir, s.Workdir},
		{"manifest", len(got.realFiles()), len(s.realFiles())},
		{"readonly", got.readonly, s.readonly},
		{"materialized", got.materialize, s.materialize},
		{"skipped", got.skipped, s.skipped},
		{"ignore patterns", got.rules.ignLines, s.rules.ignLines},
		{"hidden names", got.rules.hide, s.rules.hide},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	for rel, e := range s.realFiles() {
		g := got.realFiles()[rel]
		if g.size != e.size || g.mtime != e.mtime || g.mode != e.mode {
			t.Errorf("manifest[%s] = %+v, want %+v", rel, g, e)
		}
	}
}

func TestManifestErrors(t *testing.T) {
	s, _ := fixture(t)
	must(t, s.Save())
	good, err := os.ReadFile(filepath.Join(s.Dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(string(good), "\n")
	format := fmt.Sprintf(`"format":%d`, copyFormat)
	tests := []struct {
		name, data, want string
	}{
		{"empty", "", "not a session manifest"},
		{"not JSON", "hello", "not a session manifest"},
		{"truncated", string(good[:len(good)-10]), "truncated?"},
		{"a newer format", strings.Replace(header, format, fmt.Sprintf(`"format":%d`, manifestFormat+1), 1) + "\n", fmt.Sprintf("written by a newer workforce (format %d; this one reads format %d)", manifestFormat+1, manifestFormat)},
		{"an unknown field", strings.Replace(header, format, format+`,"x":1`, 1), "unknown field"},
		{"a path escaping", strings.Replace(string(good), `"p":"a.txt"`, `"p":"../a.txt"`, 1), `file "../a.txt" is not inside the project`},
		{"more files than announced", string(good) + `{"p":"z","s":1,"t":1,"m":420}` + "\n", "more files than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, os.WriteFile(filepath.Join(s.Dir, ManifestFile), []byte(tt.data), 0o600))
			_, err := Open(s.Dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), ManifestFile) {
				t.Errorf("Open() = %v, want an error naming %s and saying %q", err, ManifestFile, tt.want)
			}
		})
	}
}

// FuzzManifest: a manifest reader never panics, and what it accepts
// stays inside the sandbox.
func FuzzManifest(f *testing.F) {
	f.Add([]byte(`{"format":1,"root":"/r","workdir":".","files":1}` + "\n" + `{"p":"a","s":1,"t":5,"m":420}` + "\n"))
	f.Add([]byte(`{"format":1,"root":"/r","workdir":"a/b","materialized":["a/b/AGENTS.md"],"links":{"l":"/x"},"files":0}`))
	f.Add([]byte(`{"format":1,"root":"/r","workdir":"../x","files":0}`))
	f.Add([]byte(`{"format":2,"root":"/r","workdir":".","files":2}` + "\n" + `{"p":"a","s":1,"t":5,"m":420,"x":[2,6,420]}` + "\n" + `{"p":"l","s":1,"t":5,"m":134218239}` + "\n"))
	f.Add([]byte(`{"format":1,"root":"/r","workdir":".","files":1}` + "\n" + `{"p":"l","s":1,"t":5,"m":134218239}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := readManifest("/sessions/s", bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		if !strings.HasPrefix(s.Workdir+"/", s.Tree+"/") {
			t.Fatalf("workdir %s outside the tree %s", s.Workdir, s.Tree)
		}
		for _, m := range []map[string]entry{s.realFiles(), s.copyLinks(), s.boxBase} {
			for rel := range m {
				if !safeRel(rel) {
					t.Fatalf("unsafe path %q accepted", rel)
				}
			}
		}
		for rel, e := range s.copyLinks() {
			if _, file := s.realFiles()[rel]; file || e.mode.Type() != fs.ModeSymlink {
				t.Fatalf("link %q accepted as %v, a file too: %v", rel, e.mode, file)
			}
		}
		for rel, e := range s.boxBase {
			if _, file := s.realFiles()[rel]; !file || !e.mode.IsRegular() || e.size < 0 {
				t.Fatalf("sandbox side of %q accepted as %+v, a file of the manifest: %v", rel, e, file)
			}
		}
	})
}

// FuzzManifestLine: a manifest line decodes to the file it was written
// from, whatever bytes its path holds.
func FuzzManifestLine(f *testing.F) {
	f.Add("a.txt", int64(3), int64(1700000000123456789), uint32(0o644), false, false, int64(0), int64(0), uint32(0))
	f.Add("dir/\"quoted\"\\back\tslash\n", int64(0), int64(-1), uint32(0o755), true, false, int64(0), int64(0), uint32(0))
	f.Add("\xff\xfe not utf-8", int64(1<<40), int64(0), uint32(0o600), false, false, int64(0), int64(0), uint32(0))
	f.Add("<html>&\u2028", int64(7), int64(7), uint32(0o444), true, false, int64(0), int64(0), uint32(0))
	f.Add("applied.txt", int64(3), int64(5), uint32(0o644), false, true, int64(4), int64(-6), uint32(0o755))
	f.Fuzz(func(t *testing.T, rel string, size, mtime int64, mode uint32, ro, hasBox bool, bsize, bmtime int64, bmode uint32) {
		e := entry{size: size, mtime: mtime, mode: fs.FileMode(mode)}
		var box *entry
		if hasBox {
			box = &entry{size: bsize, mtime: bmtime, mode: fs.FileMode(bmode)}
		}
		line := appendManifestFile(nil, rel, e, ro, box)
		var m manifestFile
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%q does not decode: %v", line, err)
		}
		if m.Path == "" && len(m.PathBytes) > 0 {
			m.Path = string(m.PathBytes)
		}
		if m.Path != rel || m.Size != size || m.MTime != mtime || m.Mode != fs.FileMode(mode) || m.Readonly != ro {
			t.Fatalf("%q decodes to %+v", line, m)
		}
		if (m.Box != nil) != hasBox || hasBox && *m.Box != [3]int64{bsize, bmtime, int64(bmode)} {
			t.Fatalf("%q decodes to the sandbox side %v", line, m.Box)
		}
	})
}

// TestManifestRoundTripApplied: the real tree's links and what a sync
// applied (the manifest's entry and the sandbox's side) read back the
// same.
func TestManifestRoundTripApplied(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	must(t, os.MkdirAll(root, 0o755))
	must(t, os.Symlink("a.txt", filepath.Join(root, "l")))
	s, _ := syncTree(t, base, map[string]string{"a.txt": "a", "b.txt": "b"})
	write(t, filepath.Join(s.Tree, "a.txt"), "the agent's")
	write(t, filepath.Join(s.Tree, "new.txt"), "the agent's new")
	must(t, os.Remove(filepath.Join(s.Tree, "b.txt")))
	// The agent's files an hour old: the sync writes the real ones now, so
	// the two sides' times differ and the sandbox side is recorded (a side
	// the same in size, time and mode as the real one is not, and the
	// kernel's clock ticks coarsely enough for a fast sync to hit that).
	old := time.Now().Add(-time.Hour)
	for _, name := range []string{"a.txt", "new.txt"} {
		must(t, os.Chtimes(filepath.Join(s.Tree, name), old, old))
	}
	if _, err := s.Sync(context.Background(), SyncOptions{Deletes: true}); err != nil {
		t.Fatal(err)
	}
	if len(s.boxBase) != 2 || len(s.copyLinks()) != 1 {
		t.Fatalf("after the sync: sandbox side %v, links %v; want a.txt and new.txt, l", s.boxBase, s.copyLinks())
	}
	must(t, s.SaveApplied())
	got, err := Open(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want map[string]entry
	}{
		{"manifest", got.realFiles(), s.realFiles()},
		{"links", got.copyLinks(), s.copyLinks()},
		{"sandbox side", got.boxBase, s.boxBase},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if _, ok := got.realFiles()["b.txt"]; ok {
		t.Errorf("the deleted b.txt is still in the manifest")
	}
}
