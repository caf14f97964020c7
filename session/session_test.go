package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	dir := mount.NewSessionDir(home, "p")
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
	for i := range files {
		must(t, os.WriteFile(filepath.Join(box.Tree, "f"+string(rune('a'+i))+".txt"), []byte("agent"), 0o644))
	}
	s.Close() // the process is gone
	return home, root, s
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
	rep, kept, err := o.Sync(context.Background(), mount.SyncOptions{}, false)
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

// TestSyncsAreSerialized: two syncs of one session at once: one does the
// work, the other waits and finds nothing left, and nothing fails.
func TestSyncsAreSerialized(t *testing.T) {
	home, root, s := staleSession(t, 20)
	var wg sync.WaitGroup
	reps := make([]int, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := Open(home, s.Record.ID)
			if err != nil {
				// The other sync removed the session already.
				errs[i] = nil
				return
			}
			rep, _, err := o.Sync(context.Background(), mount.SyncOptions{}, true)
			errs[i] = err
			if rep != nil {
				reps[i] = len(rep.Updated)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("a sync failed: %v", err)
		}
	}
	if reps[0]+reps[1] != 20 {
		t.Errorf("the two syncs updated %d and %d files; want 20 between them, each once", reps[0], reps[1])
	}
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(root, e.Name())); string(b) != "agent" {
			t.Errorf("%s = %q", e.Name(), b)
		}
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
	if _, _, err := o.Sync(context.Background(), mount.SyncOptions{}, false); !errors.Is(err, ErrLive) {
		t.Errorf("Sync of a live session = %v, want ErrLive", err)
	}
	if err := o.RemoveIdle(); !errors.Is(err, ErrLive) {
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
	dir := mount.NewSessionDir(home, "p") + "x"
	s, err := create(dir, Record{ID: filepath.Base(dir), Root: "/r", Cwd: "/r", Phase: Running})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
