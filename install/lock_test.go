package install

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadLock: the lock reader never panics, and a lock it accepts is
// written and read back the same.
func FuzzReadLock(f *testing.F) {
	f.Add([]byte(`{"lockfileVersion": 1, "packs": [{"source": "git+file:///r.git#main", "resolved": "abc", "personas": ["a"], "files": {"a.json": "sha256-00"}}]}`))
	f.Add([]byte(`{"lockfileVersion": 2, "packs": []}`))
	f.Add([]byte(`{"lockfileVersion": 1, "packs": [{"source": ""}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, LockFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := ReadLock(dir)
		if err != nil {
			return
		}
		if err := l.write(dir); err != nil {
			t.Fatal(err)
		}
		back, err := ReadLock(dir)
		if err != nil {
			t.Fatalf("cannot read what was written: %v", err)
		}
		if !reflect.DeepEqual(l, back) {
			t.Fatalf("written and read again:\n%+v\nwant\n%+v", back, l)
		}
	})
}

// TestLockRecord: an install's entry replaces its source's, adds to it
// what an install of some of its personas left out, and takes its
// personas from the other sources' entries.
func TestLockRecord(t *testing.T) {
	l := &Lock{Version: lockVersion}
	l.record(LockEntry{Source: "s", Resolved: "c1", Personas: []string{"a", "b"}, Files: map[string]string{"a.json": "1", "b.json": "2"}})
	l.record(LockEntry{Source: "t", Resolved: "d1", Personas: []string{"c"}, Files: map[string]string{"c.json": "3"}})
	l.record(LockEntry{Source: "s", Resolved: "c2", Personas: []string{"a"}, Files: map[string]string{"a.json": "4"}})
	l.record(LockEntry{Source: "u", Personas: []string{"c"}, Files: map[string]string{"c.json": "5"}})
	want := []LockEntry{
		{Source: "s", Resolved: "c2", Personas: []string{"a", "b"}, Files: map[string]string{"a.json": "4", "b.json": "2"}},
		{Source: "u", Personas: []string{"c"}, Files: map[string]string{"c.json": "5"}},
	}
	if !reflect.DeepEqual(l.Packs, want) {
		t.Errorf("lock = %+v\nwant %+v", l.Packs, want)
	}
	l.forget([]string{"b"}, "")
	if got := l.Entry("s"); got == nil || !reflect.DeepEqual(got.Personas, []string{"a"}) || got.Files["b.json"] != "" {
		t.Errorf("after forgetting b: %+v", got)
	}
}

// TestReadLockErrors: a lock file of the wrong shape is reported at the
// place, by the file's own names, never by Go's.
func TestReadLockErrors(t *testing.T) {
	tests := []struct{ data, want string }{
		{`{"lockfileVersion": "1", "packs": []}`, "workforce.lock:1:21: lockfileVersion: must be a whole number"},
		{`{"lockfileVersion": 1, "packs": [{"source": "s", "personas": "a"}]}`, "workforce.lock:1:62: packs.0.personas: must be a list, not string"},
		{`{"lockfileVersion": 1, "packs": [], "extra": 1}`, "workforce.lock:1:37: extra: unknown field"},
		{`{"lockfileVersion": 1, `, "workforce.lock:1:24: invalid JSON"},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, LockFile), []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadLock(dir)
		if err == nil {
			t.Fatalf("ReadLock(%s) = nil error", tt.data)
		}
		msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		if !strings.HasPrefix(msg, tt.want) {
			t.Errorf("ReadLock(%s) error = %q, want %q", tt.data, msg, tt.want)
		}
		if strings.Contains(msg, "Go struct") || strings.Contains(msg, "json: ") || strings.Contains(msg, "LockEntry") {
			t.Errorf("ReadLock(%s) error = %q, names Go's types", tt.data, msg)
		}
	}
}
