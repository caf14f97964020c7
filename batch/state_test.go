package batch

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

func TestPlan(t *testing.T) {
	a := Task{ID: "a", Persona: "p", Task: "t"}
	edited := a
	edited.Task = "t2"
	done := func(s report.Status) TaskState {
		return TaskState{ID: "a", Digest: a.Digest(), Phase: PhaseDone, Status: s}
	}
	tests := []struct {
		name   string
		state  *TaskState
		task   Task
		retry  Retry
		run    bool
		reason string
	}{
		{name: "new", task: a, run: true, reason: "new"},
		{name: "done and unchanged", state: ptr(done(report.StatusSucceeded)), task: a, run: false, reason: "done"},
		{name: "done failed, no retry", state: ptr(done(report.StatusFailed)), task: a, run: false, reason: "done"},
		{name: "done conflict, no retry", state: ptr(done(report.StatusConflict)), task: a, run: false, reason: "done"},
		{name: "failed, retry failed", state: ptr(done(report.StatusFailed)), task: a, retry: RetryFailed, run: true, reason: "retry"},
		{name: "timed out, retry failed", state: ptr(done(report.StatusTimedOut)), task: a, retry: RetryFailed, run: true, reason: "retry"},
		{name: "succeeded, retry failed", state: ptr(done(report.StatusSucceeded)), task: a, retry: RetryFailed, run: false, reason: "done"},
		{name: "edited", state: ptr(done(report.StatusSucceeded)), task: edited, run: true, reason: "edited"},
		{name: "no result, retry not started", state: ptr(done(report.StatusFailed)), task: a, retry: RetryNotStarted, run: true, reason: "retry"},
		{name: "setup failed, retry not started", state: ptr(attempted(done(report.StatusFailed), false)), task: a, retry: RetryNotStarted, run: true, reason: "retry"},
		{name: "agent ran and failed, retry not started", state: ptr(attempted(done(report.StatusFailed), true)), task: a, retry: RetryNotStarted, run: false, reason: "done"},
		{name: "agent ran and succeeded, retry not started", state: ptr(attempted(done(report.StatusSucceeded), true)), task: a, retry: RetryNotStarted, run: false, reason: "done"},
		{name: "interrupted", state: &TaskState{ID: "a", Digest: a.Digest(), Phase: PhasePending, Status: report.StatusInterrupted}, task: a, run: true, reason: "not done"},
		{name: "running when the batch died", state: &TaskState{ID: "a", Digest: a.Digest(), Phase: PhaseRunning}, task: a, run: true, reason: "not done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			states := map[string]TaskState{}
			if tt.state != nil {
				states["a"] = *tt.state
			}
			d := Plan([]Task{tt.task}, states, tt.retry)
			if len(d) != 1 || d[0].Run != tt.run || d[0].Reason != tt.reason || (d[0].Prev != nil) != (tt.state != nil) {
				t.Errorf("Plan = %+v, want run %v for %q", d, tt.run, tt.reason)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// attempted is ts with an attempt's result whose agent started or not.
func attempted(ts TaskState, started bool) TaskState {
	ts.Result = &report.Result{Status: ts.Status, Attempt: &report.Attempt{AgentStarted: started}}
	return ts
}

func TestStateRoundTrip(t *testing.T) {
	home := t.TempDir()
	st, err := Open(home, "b1")
	if err != nil {
		t.Fatal(err)
	}
	ts := TaskState{ID: "a", Digest: "d", Entry: Task{ID: "a", Persona: "p", Task: "t"}, Phase: PhaseDone, Status: report.StatusConflict,
		Result: &report.Result{TaskID: "a", SessionID: "s", Status: report.StatusConflict}}
	if err := st.WriteTask(ts); err != nil {
		t.Fatal(err)
	}
	got, err := st.ReadTasks([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["a"].Status != report.StatusConflict || got["a"].Result.SessionID != "s" || got["a"].Entry.Task != "t" {
		t.Errorf("ReadTasks = %+v", got)
	}
	if err := st.WriteInfo(Info{ID: "b1", File: "/x/b.jsonl", Tasks: []string{"a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Existing(home, "b1"); err != nil {
		t.Error(err)
	}
	if _, err := Existing(home, "b2"); err == nil {
		t.Error("Existing found a batch never run")
	}
	if _, err := Open(home, "../up"); err == nil {
		t.Error("Open took an id with a path in it")
	}
	if entries, _ := os.ReadDir(filepath.Join(st.Dir, "tasks", "a")); len(entries) != 1 {
		t.Errorf("the task's directory holds %d entries, want state.json alone (no temporary file left)", len(entries))
	}
}

func TestLock(t *testing.T) {
	home := t.TempDir()
	a, _ := Open(home, "b")
	b, _ := Open(home, "b")
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(); !errors.Is(err, ErrBusy) {
		t.Errorf("a second Lock = %v, want ErrBusy", err)
	}
	a.Unlock()
	if err := b.Lock(); err != nil {
		t.Errorf("Lock after Unlock = %v", err)
	}
	b.Unlock()
}

func TestIDFor(t *testing.T) {
	x, y := IDFor("/a/tasks.jsonl"), IDFor("/b/tasks.jsonl")
	if x == y || !SafeName(x) || x != IDFor("/a/tasks.jsonl") || x[:6] != "tasks-" {
		t.Errorf("IDFor = %q, %q", x, y)
	}
	for _, p := range []string{"/a/.jsonl", "/a/-- $x.yaml", "/a/" + string(make([]byte, 300))} {
		if id := IDFor(p); !SafeName(id) {
			t.Errorf("IDFor(%q) = %q, not a safe name", p, id)
		}
	}
}

func TestDefaultJobs(t *testing.T) {
	if a, o := DefaultJobs([]string{"claude", "codex"}), DefaultJobs([]string{"claude", "opencode"}); a < 2 || o != max(1, a/2) {
		t.Errorf("DefaultJobs = %d for claude and codex, %d with opencode", a, o)
	}
}

// TestIDOf: a batch file names its batch (the id of its absolute path,
// as given relative or not); anything else is the id itself, a directory
// included.
func TestIDOf(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "tasks.jsonl")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, tt := range []struct{ arg, want string }{
		{file, IDFor(file)},
		{"tasks.jsonl", IDFor(file)},
		{"nightly", "nightly"},
		{dir, dir},
	} {
		if got, err := IDOf(tt.arg); err != nil || got != tt.want {
			t.Errorf("IDOf(%q) = %q, %v; want %q", tt.arg, got, err, tt.want)
		}
	}
}

// TestOpenAt opens a batch of prepared tasks in a directory of the
// caller's: its states are read back on the next open, and a second
// open while the first holds it is a LockError.
func TestOpenAt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "evals", "e1")
	tasks := []Prepared{{Task: Task{ID: "a", Persona: "p", Task: "t"}}, {Task: Task{ID: "b", Persona: "p", Task: "t"}}}
	b, err := OpenAt(dir, "e1", "/cases.yaml", "cases.yaml", tasks)
	if err != nil {
		t.Fatal(err)
	}
	if b.State.Dir != dir || len(b.IDs) != 2 || b.ByID["b"].ID != "b" || len(b.States) != 0 {
		t.Fatalf("OpenAt = %+v", b)
	}
	if err := b.State.WriteTask(TaskState{ID: "a", Phase: PhaseDone, Status: report.StatusSucceeded}); err != nil {
		t.Fatal(err)
	}
	var le *LockError
	if _, err := OpenAt(dir, "e1", "/cases.yaml", "cases.yaml", tasks); !errors.As(err, &le) {
		t.Errorf("OpenAt while locked = %v, want a LockError", err)
	}
	b.Close()
	b, err = OpenAt(dir, "e1", "/cases.yaml", "cases.yaml", tasks)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.States["a"].Status != report.StatusSucceeded || len(b.States) != 1 {
		t.Errorf("OpenAt again: states %+v, want a's", b.States)
	}
}
