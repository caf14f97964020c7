package session

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/mount"
)

// deadPID is a process id no process has.
const deadPID = 1 << 22

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// staleSession makes a session as a run that died while its harness
// worked leaves it: record, manifest and sandbox on disk, the agent's
// edits in the sandbox, no process holding it.
func staleSession(t *testing.T, files int) (home, root string, s *Session) {
	t.Helper()
	home, root = t.TempDir(), t.TempDir()
	for i := range files {
		must(t, os.WriteFile(filepath.Join(root, "f"+string(rune('a'+i))+".txt"), []byte("real"), 0o644))
	}
	s = leaveSession(t, home, root, func(tree string) {
		for i := range files {
			must(t, os.WriteFile(filepath.Join(tree, "f"+string(rune('a'+i))+".txt"), []byte("agent"), 0o644))
		}
	})
	return home, root, s
}

// leaveSession makes a session of root as a run that died while its
// harness worked leaves it: record (phase running, its process gone),
// manifest and sandbox on disk, agent run in the sandbox tree.
func leaveSession(t *testing.T, home, root string, agent func(tree string)) *Session {
	t.Helper()
	dir := NewDir(home, "p")
	s, err := create(dir, Record{ID: filepath.Base(dir), Persona: "p", Root: root, Cwd: root, PID: deadPID, Started: time.Now(), Phase: Creating})
	if err != nil {
		t.Fatal(err)
	}
	box, err := mount.Create(context.Background(), mount.Options{Home: home, Persona: "p", Root: root, Cwd: root, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	must(t, box.Save())
	s.Record.Phase = Running
	must(t, s.save())
	agent(box.Tree)
	s.Close() // the process is gone
	return s
}

func TestStaleSessionIsListedAndSynced(t *testing.T) {
	home, root, s := staleSession(t, 3)
	infos, err := List(home)
	if err != nil || len(infos) != 1 || !infos[0].Stale || infos[0].Live {
		t.Fatalf("List() = %+v, %v; want one stale session", infos, err)
	}
	o, err := Open(home, "p") // by the start of its id
	if err != nil || o.Dir != s.Dir {
		t.Fatalf("Open(p) = %v, %v", o, err)
	}
	rep, kept, err := o.Sync(context.Background(), SyncOptions{})
	if err != nil || kept || len(rep.Updated) != 3 {
		t.Fatalf("Sync() = %+v, kept %v, %v; want 3 updated, removed", rep, kept, err)
	}
	for _, f := range []string{"fa.txt", "fb.txt", "fc.txt"} {
		if b, _ := os.ReadFile(filepath.Join(root, f)); string(b) != "agent" {
			t.Errorf("%s = %q after the sync", f, b)
		}
	}
	if _, err := os.Stat(s.Dir); err == nil {
		t.Error("the synced session is still there")
	}
}

// lockWaiters returns how many lock requests wait for the flock of the
// file path, as /proc/locks shows them ("->" lines); the test is skipped
// where the system does not say.
func lockWaiters(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path)
	must(t, err)
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skipf("no /proc/locks to see who waits for a lock: %v", err)
	}
	ino := ":" + strconv.FormatUint(fi.Sys().(*syscall.Stat_t).Ino, 10)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 6 && f[1] == "->" && f[2] == "FLOCK" && strings.HasSuffix(f[6], ino) {
			n++
		}
	}
	return n
}

// concurrentSyncs runs two syncs of s at once: both start while the test
// holds the session's lock, as a first sync would, and the lock is let go
// once both wait for it.
func concurrentSyncs(t *testing.T, home string, s *Session, keep bool) (reps [2]*mount.Report, kept [2]bool, errs [2]error) {
	t.Helper()
	holder := &Session{Dir: s.Dir}
	if ok, err := holder.TryLock(); !ok || err != nil {
		t.Fatalf("TryLock() = %v, %v", ok, err)
	}
	var wg sync.WaitGroup
	for i := range 2 {
		o, err := Open(home, s.Record.ID)
		if err != nil {
			holder.Close()
			t.Fatalf("Open(%s) = %v", s.Record.ID, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], kept[i], errs[i] = o.Sync(context.Background(), SyncOptions{Keep: keep})
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for lockWaiters(t, filepath.Join(s.Dir, lockFile)) < 2 {
		if time.Now().After(deadline) {
			holder.Close()
			wg.Wait()
			t.Fatalf("the two syncs did not both wait for the lock within 30 s: %v", errs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	holder.Close()
	wg.Wait()
	return reps, kept, errs
}

// TestSyncsAreSerialized: two syncs of one session at once: one does the
// work, the other waits and finds nothing left, and nothing fails.
func TestSyncsAreSerialized(t *testing.T) {
	home, root, s := staleSession(t, 20)
	reps, _, errs := concurrentSyncs(t, home, s, true)
	for i, err := range errs {
		if err != nil || reps[i] == nil {
			t.Fatalf("sync %d = %+v, %v; want a report and no error", i, reps[i], err)
		}
	}
	if n0, n1 := len(reps[0].Updated), len(reps[1].Updated); n0+n1 != 20 || n0*n1 != 0 {
		t.Errorf("the two syncs updated %d and %d files; want 20 by one, 0 by the other", n0, n1)
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(root, e.Name())); string(b) != "agent" {
			t.Errorf("%s = %q", e.Name(), b)
		}
	}
}

// TestConcurrentSyncsWithoutKeep: of two syncs at once that remove the
// session when done, the one that waited finds it gone and says so.
func TestConcurrentSyncsWithoutKeep(t *testing.T) {
	home, _, s := staleSession(t, 20)
	reps, kept, errs := concurrentSyncs(t, home, s, false)
	done, gone := -1, -1
	for i := range 2 {
		switch {
		case errs[i] == nil && reps[i] != nil && len(reps[i].Updated) == 20 && !kept[i]:
			done = i
		case errors.Is(errs[i], ErrGone) && !kept[i]:
			gone = i
		}
	}
	if done < 0 || gone < 0 {
		for i := range 2 {
			n := -1
			if reps[i] != nil {
				n = len(reps[i].Updated)
			}
			t.Errorf("sync %d: %d updated, kept %v, %v", i, n, kept[i], errs[i])
		}
		t.Fatal("want one sync that synced 20 files and removed the session, one that found it gone")
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the session directory is still there: %v", err)
	}
}

// TestLiveSessionIsRefused: a session its process still holds is neither
// synced nor removed by another.
func TestLiveSessionIsRefused(t *testing.T) {
	home, _, s := staleSession(t, 1)
	holder := &Session{Dir: s.Dir}
	ok, err := holder.TryLock()
	s.Record.PID = os.Getpid() // the run, alive
	must(t, s.save())
	if !ok || err != nil {
		t.Fatalf("TryLock() = %v, %v", ok, err)
	}
	defer holder.Close()
	infos, _ := List(home)
	if len(infos) != 1 || !infos[0].Live || infos[0].Stale {
		t.Fatalf("List() = %+v; want one live session", infos)
	}
	o, _ := Open(home, s.Record.ID)
	if _, _, err := o.Sync(context.Background(), SyncOptions{}); !errors.Is(err, ErrLive) {
		t.Errorf("Sync of a live session = %v, want ErrLive", err)
	}
	if err := o.RemoveIdle(false); !errors.Is(err, ErrLive) {
		t.Errorf("RemoveIdle of a live session = %v, want ErrLive", err)
	}
}

func TestOpenErrors(t *testing.T) {
	home, _, _ := staleSession(t, 1)
	staleSessionIn(t, home)
	for _, tt := range []struct{ id, want string }{
		{"nope", "no session nope"},
		{"p", "p names 2 sessions"},
		{"../x", "is not a session id"},
		{"", "is not a session id"},
	} {
		if _, err := Open(home, tt.id); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%q) = %v, want %q", tt.id, err, tt.want)
		}
	}
}

func staleSessionIn(t *testing.T, home string) {
	t.Helper()
	dir := NewDir(home, "p") + "x"
	s, err := create(dir, Record{ID: filepath.Base(dir), Root: "/r", Cwd: "/r", Phase: Running})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// TestRemoveUnreadable: a session whose record cannot be read is removed
// all the same; one whose removal was cut short (no record, no lock) too.
func TestRemoveUnreadable(t *testing.T) {
	home, _, s := staleSession(t, 1)
	must(t, os.WriteFile(filepath.Join(s.Dir, RecordFile), []byte(`{"format": 1, "id": "s`), 0o600))
	f, err := Find(home, "p")
	if err != nil || f.Dir != s.Dir {
		t.Fatalf("Find() = %v, %v", f, err)
	}
	var re *RecordError
	if err := f.ReadRecord(); !errors.As(err, &re) {
		t.Fatalf("ReadRecord() = %v, want a *RecordError", err)
	}
	if err := f.RemoveIdle(false); err != nil {
		t.Fatalf("RemoveIdle() = %v", err)
	}
	if _, err := os.Stat(s.Dir); err == nil {
		t.Error("the session is still there")
	}

	_, _, s = staleSession(t, 1)
	must(t, os.Remove(filepath.Join(s.Dir, RecordFile)))
	must(t, os.Remove(filepath.Join(s.Dir, lockFile)))
	if err := s.RemoveIdle(false); err != nil {
		t.Fatalf("RemoveIdle() of a half-removed session = %v", err)
	}
	if _, err := os.Stat(s.Dir); err == nil {
		t.Error("the half-removed session is still there")
	}
}

// TestSettled: a session loses no work when removed only when it synced
// back and its sandbox holds no change; one held for review, left
// running, or whose sandbox cannot be read is not settled.
func TestSettled(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("real"), 0o644))
	clean := leaveSession(t, home, root, func(string) {})
	changed := leaveSession(t, home, root, func(tree string) {
		must(t, os.WriteFile(filepath.Join(tree, "a.txt"), []byte("agent"), 0o644))
	})
	tests := []struct {
		name  string
		s     *Session
		phase Phase
		want  bool
	}{
		{"synced, no change", clean, Synced, true},
		{"synced, a change left", changed, Synced, false},
		{"held for review, no change", clean, Review, false},
		{"running, no change", clean, Running, false},
		{"synced, no sandbox", &Session{Dir: filepath.Join(home, "gone")}, Synced, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Record.Phase = tc.phase
			if got := tc.s.Settled(); got != tc.want {
				t.Errorf("Settled() = %v, want %v", got, tc.want)
			}
		})
	}
}
