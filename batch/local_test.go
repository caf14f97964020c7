package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// childEnv makes the test binary a stand-in for `workforce run PERSONA -
// --events` (TestMain): the task on its stdin says what it does.
const childEnv = "BATCH_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child runs a task as the stand-in: "succeed" and "conflict" print a
// finished event with that status (its message: $BATCH_TEST_NOTE), "fail"
// prints no result and exits 1, "wait" waits for a signal, then reports
// interrupted.
func child() int {
	task, _ := io.ReadAll(os.Stdin)
	finish := func(st report.Status) int {
		r := report.Result{Status: st, SessionID: "s-" + string(task), Message: os.Getenv("BATCH_TEST_NOTE")}
		line, _ := json.Marshal(report.Event{Type: report.EventFinished, Time: time.Now(), Result: &r})
		fmt.Printf("%s\n", line)
		return 0
	}
	switch string(task) {
	case "succeed":
		fmt.Printf("%s\n", `{"type":"message","text":"working"}`)
		return finish(report.StatusSucceeded)
	case "conflict":
		return finish(report.StatusConflict)
	case "wait":
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		fmt.Printf("%s\n", `{"type":"started"}`)
		select {
		case <-sigs:
			return finish(report.StatusInterrupted)
		case <-time.After(30 * time.Second):
			return finish(report.StatusSucceeded)
		}
	}
	fmt.Fprintln(os.Stderr, "the persona is not there")
	return 1
}

// recorder records the hooks a run calls.
type recorder struct {
	mu                            sync.Mutex
	skipped, running, done, order []string
	events                        []report.EventType
	planned                       [3]int
	stopping                      []os.Signal
	// onRunning, when set, is called as a task starts.
	onRunning func(id string)
}

func (r *recorder) hooks() Hooks {
	add := func(list *[]string, s string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if list != nil {
			*list = append(*list, s)
		}
		r.order = append(r.order, s)
	}
	return Hooks{
		Planned: func(toRun, before, jobs int) { r.planned = [3]int{toRun, before, jobs}; add(nil, "planned") },
		Skipped: func(ts TaskState) { add(&r.skipped, ts.ID) },
		Start:   func() { add(nil, "start") },
		Finish:  func() { add(nil, "finish") },
		Running: func(id string) {
			add(&r.running, id)
			if r.onRunning != nil {
				r.onRunning(id)
			}
		},
		Event: func(e report.Event) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.events = append(r.events, e.Type)
		},
		Done: func(ts TaskState) { add(&r.done, ts.ID+"="+string(ts.Status)) },
		Stopping: func(sig os.Signal) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.stopping = append(r.stopping, sig)
		},
	}
}

// openTasks writes a batch file of the entries (id: task text) in a
// project directory and opens its batch, in a home of its own.
func openTasks(t *testing.T, home string, entries ...[2]string) *Batch {
	t.Helper()
	dir := t.TempDir()
	var lines []string
	for _, e := range entries {
		lines = append(lines, fmt.Sprintf(`{"id": %q, "persona": "editor", "task": %q}`, e[0], e[1]))
	}
	file := filepath.Join(dir, "tasks.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := OpenFile(OpenOptions{ID: "b", Home: func() (string, error) { return home, nil },
		LoadOptions: LoadOptions{File: file, Catalog: func() (Lookup, error) {
			return func(string) (string, string, error) { return "best", "claude", nil }, nil
		}, KnownHarnesses: []string{"claude"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func childOptions(note string) LocalOptions {
	exe, _ := os.Executable()
	return LocalOptions{Exe: exe, Jobs: 2, Command: func(cmd *exec.Cmd) {
		cmd.Env = append(os.Environ(), childEnv+"=1", "BATCH_TEST_NOTE="+note)
	}}
}

// TestRunLocal: each task runs as a child through the hooks (planned,
// start, running, its events, done, finish), its state and events land
// in the batch's directory, and a second run skips what is done,
// running again only the failed task with RetryFailed.
func TestRunLocal(t *testing.T) {
	home := t.TempDir()
	entries := [][2]string{{"ok", "succeed"}, {"c", "conflict"}, {"bad", "fail"}}
	b := openTasks(t, home, entries...)
	var r recorder
	ended, err := b.RunLocal(childOptions("from the hook"), r.hooks())
	if err != nil {
		t.Fatal(err)
	}
	if ended.Signal != nil {
		t.Errorf("ended by %v, want no signal", ended.Signal)
	}
	want := map[string]report.Status{"ok": report.StatusSucceeded, "c": report.StatusConflict, "bad": report.StatusFailed}
	for id, st := range want {
		ts := ended.States[id]
		if ts.Phase != PhaseDone || ts.Status != st {
			t.Errorf("task %s: %s %s, want done %s", id, ts.Phase, ts.Status, st)
		}
	}
	if r := ended.States["ok"].Result; r == nil || r.Message != "from the hook" || r.TaskID != "ok" {
		t.Errorf("task ok's result %+v: want the message the Command hook's environment gave, and the task's id", r)
	}
	if e := ended.States["bad"].Error; !strings.Contains(e, "the persona is not there") {
		t.Errorf("task bad's error %q: want the end of its stderr", e)
	}
	if data, err := os.ReadFile(filepath.Join(b.State.TaskDir("ok"), "events.jsonl")); err != nil || !strings.Contains(string(data), `"finished"`) {
		t.Errorf("task ok's events.jsonl: %q, %v", data, err)
	}
	slices.Sort(r.done)
	if got := strings.Join(r.done, " "); got != "bad=failed c=conflict ok=succeeded" {
		t.Errorf("done hooks: %s", got)
	}
	if r.planned != [3]int{3, 0, 2} || len(r.running) != 3 || !slices.Contains(r.events, report.EventMessage) {
		t.Errorf("planned %v, running %v, events %v", r.planned, r.running, r.events)
	}
	if r.order[0] != "planned" || r.order[1] != "start" || r.order[len(r.order)-1] != "finish" {
		t.Errorf("hooks in the order %v: want planned, start first, finish last", r.order)
	}
	b.Close()

	// Again: what is done is skipped; with RetryFailed the failure runs
	// again.
	for _, tt := range []struct {
		retry       Retry
		skip, rerun []string
	}{
		{RetryNone, []string{"ok", "c", "bad"}, nil},
		{RetryFailed, []string{"ok"}, []string{"c", "bad"}},
	} {
		b := openTasks(t, home, entries...)
		var r recorder
		o := childOptions("")
		o.Retry = tt.retry
		if _, err := b.RunLocal(o, r.hooks()); err != nil {
			t.Fatal(err)
		}
		slices.Sort(r.running)
		slices.Sort(tt.rerun)
		if !slices.Equal(r.skipped, tt.skip) || !slices.Equal(r.running, tt.rerun) {
			t.Errorf("retry %d: skipped %v, ran %v; want skipped %v, ran %v", tt.retry, r.skipped, r.running, tt.skip, tt.rerun)
		}
		b.Close()
	}
}

// TestRunLocalSignal: a signal of Signals, caught while a task runs, is
// told (Stopping), passed on to the running task, which ends interrupted
// and pending again, and is the run's Signal.
func TestRunLocalSignal(t *testing.T) {
	b := openTasks(t, t.TempDir(), [2]string{"w", "wait"})
	sigs := make(chan os.Signal, 1)
	var stopped bool
	o := childOptions("")
	o.Signals = func() (<-chan os.Signal, func()) { return sigs, func() { stopped = true } }
	var r recorder
	r.onRunning = func(string) {
		go func() {
			time.Sleep(300 * time.Millisecond) // the child catches signals by then
			sigs <- syscall.SIGTERM
		}()
	}
	start := time.Now()
	ended, err := b.RunLocal(o, r.hooks())
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("the task was not stopped by the signal")
	}
	if ended.Signal != syscall.SIGTERM || len(r.stopping) != 1 || !stopped {
		t.Errorf("ended by %v, stopping %v, catching stopped %v; want SIGTERM, told once, stopped", ended.Signal, r.stopping, stopped)
	}
	if ts := ended.States["w"]; ts.Phase != PhasePending || ts.Status != report.StatusInterrupted {
		t.Errorf("task w: %s %s, want pending, interrupted", ts.Phase, ts.Status)
	}
}

// TestLoad: each entry is checked beyond its syntax, and a wrong one is a
// FileError naming the file, the line and the task; the catalog's own
// error is returned as it is, not as the file's.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "api"), 0o755); err != nil {
		t.Fatal(err)
	}
	lookup := func(ref string) (string, string, error) {
		if ref == "ghost" {
			return "", "", errors.New(`no persona "ghost"`)
		}
		return "best", "claude", nil
	}
	remote := func(t Task) string {
		if t.Repo == "" {
			return "no repo"
		}
		return ""
	}
	catalogErr := errors.New("the catalog is broken")
	for _, tt := range []struct {
		name, entry string
		remote      func(Task) string
		catalog     error
		want        string // "" for no error
		file        bool   // want a FileError
		dir, harn   string // of the prepared task
	}{
		{name: "plain", entry: `{"id": "a", "persona": "p", "task": "x", "dir": "api"}`, dir: "api", harn: "claude"},
		{name: "harness", entry: `{"id": "a", "persona": "p", "task": "x", "harness": "codex"}`, harn: "codex"},
		{name: "unknown harness", entry: `{"id": "a", "persona": "p", "task": "x", "harness": "vim"}`, want: `tasks.jsonl:1: task a: unknown harness "vim"; want claude, codex`, file: true},
		{name: "no persona", entry: `{"id": "a", "persona": "ghost", "task": "x"}`, want: `tasks.jsonl:1: task a: no persona "ghost"`, file: true},
		{name: "no dir", entry: `{"id": "a", "persona": "p", "task": "x", "dir": "web"}`, want: "tasks.jsonl:1: task a: dir web is not a directory", file: true},
		{name: "repo here", entry: `{"id": "a", "persona": "p", "task": "x", "repo": "https://h/r.git"}`, want: "task a: repo and ref are for a queue of workers", file: true},
		{name: "remote", entry: `{"id": "a", "persona": "p", "task": "x", "repo": "https://h/r.git"}`, remote: remote, harn: "claude"},
		{name: "remote refused", entry: `{"id": "a", "persona": "p", "task": "x"}`, remote: remote, want: "tasks.jsonl:1: task a: no repo", file: true},
		{name: "syntax", entry: `{"id": "a"`, want: "tasks.jsonl:1:", file: true},
		{name: "catalog", entry: `{"id": "a", "persona": "p", "task": "x"}`, catalog: catalogErr, want: "the catalog is broken"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "tasks.jsonl"), []byte(tt.entry+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, tasks, err := Load(LoadOptions{File: "tasks.jsonl", WorkDir: dir, Remote: tt.remote,
				KnownHarnesses: []string{"claude", "codex"}, Harnesses: []string{"claude", "codex"},
				Catalog: func() (Lookup, error) { return lookup, tt.catalog }})
			var fe *FileError
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %v, want none", err)
			case tt.want == "":
				p := tasks[0]
				wantDir := filepath.Join(dir, tt.dir)
				if tt.remote != nil {
					wantDir = "" // a queue's task has no directory here
				}
				if p.Dir != wantDir {
					t.Errorf("dir %q, want %q", p.Dir, wantDir)
				}
				if p.Harness != tt.harn || p.Tier != "best" {
					t.Errorf("harness %q tier %q, want %q best", p.Harness, p.Tier, tt.harn)
				}
			case err == nil || !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %v, want %q", err, tt.want)
			case errors.As(err, &fe) != tt.file:
				t.Errorf("error %v: a FileError %v, want %v", err, !tt.file, tt.file)
			case tt.catalog != nil && !errors.Is(err, tt.catalog):
				t.Errorf("error %v is not the catalog's", err)
			}
		})
	}
	// A file that is not there is the file's error.
	_, _, err := Load(LoadOptions{File: "none.jsonl", WorkDir: dir})
	var fe *FileError
	if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "batch file: ") {
		t.Errorf("a missing file: %v, want a FileError saying batch file", err)
	}
}

// TestOpenFileLocked: a batch another holder has locked is a LockError
// naming the batch.
func TestOpenFileLocked(t *testing.T) {
	home := t.TempDir()
	b := openTasks(t, home, [2]string{"a", "succeed"})
	st, err := Open(home, b.ID)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file: a second one of this process is refused.
	err = st.Lock()
	var le *LockError
	if err == nil {
		st.Unlock()
		t.Skip("the lock is not exclusive within one process here")
	}
	_, err = OpenFile(OpenOptions{ID: b.ID, Home: func() (string, error) { return home, nil },
		LoadOptions: LoadOptions{File: b.File, Catalog: func() (Lookup, error) {
			return func(string) (string, string, error) { return "", "claude", nil }, nil
		}, KnownHarnesses: []string{"claude"}}})
	if !errors.As(err, &le) || le.ID != "b" || !errors.Is(err, ErrBusy) || !strings.HasPrefix(err.Error(), "batch b: ") {
		t.Errorf("OpenFile of a locked batch: %v, want a LockError of batch b, ErrBusy", err)
	}
}
