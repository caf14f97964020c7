package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// fakeRun is a stand-in for the workforce binary, as a worker runs it
// (run PERSONA - --events ...): it records the task it got in $RUNS (a
// line "TASK ARGS"), and prints the finished event of a run that
// succeeded, with a session of its own (and the patch of an attempt,
// when --attempt is among its arguments). A task "sleep N" sleeps first,
// and ends interrupted on SIGTERM; a task "fail" ends failed; a task
// "none" prints no result.
const fakeRun = `#!/bin/sh
task=$(cat)
echo "$task $*" >> "$RUNS"
status=succeeded
case "$task" in
sleep*)
	trap 'status=interrupted' TERM
	sleep ${task#sleep } &
	wait $!
	;;
fail) status=failed ;;
none) echo "unknown persona" >&2; exit 1 ;;
esac
patch=
case "$*" in
*--attempt*) patch=',"patch":"diff --git a/attempt b/attempt\n"' ;;
esac
printf '{"type":"finished","time":"2026-01-01T00:00:00.000Z","sessionId":"s%s","result":{"sessionId":"s%s","persona":"p","tier":"best","harness":"claude","status":"%s","denials":[],"durationMs":1,"warnings":[]%s}}\n' $$ $$ $status "$patch"
`

// fakeGit checks out by making the directory, and publishes a branch of
// the name given, recording both.
type fakeGit struct {
	mu           sync.Mutex
	checkouts    int
	published    []string
	failCheckout bool
	patch        string
}

func (g *fakeGit) git() Git {
	return Git{
		Checkout: func(_ context.Context, url, commit, dest string) error {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.checkouts++
			if g.failCheckout {
				return errors.New("cannot reach " + url)
			}
			return os.Mkdir(dest, 0o755)
		},
		Publish: func(_ context.Context, work, url, base, branch string) (Published, error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.published = append(g.published, branch)
			return Published{Branch: branch, Base: base, Commit: strings.Repeat("c", 40), Patch: g.patch, Files: 1}, nil
		},
	}
}

var commit = strings.Repeat("a", 40)

// env is a server, the fake binary and a log of its runs.
type env struct {
	url  string
	exe  string
	runs string
	dir  string
}

func newEnv(t *testing.T) *env {
	dir := t.TempDir()
	e := &env{url: startServer(t), exe: filepath.Join(dir, "workforce"), runs: filepath.Join(dir, "runs"), dir: dir}
	if err := os.WriteFile(e.exe, []byte(fakeRun), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RUNS", e.runs)
	return e
}

// worker starts a worker on its own connection; the returned stop drains
// it and waits for its end.
func (e *env) worker(t *testing.T, name string, jobs int, g Git) (w *Worker, stop func()) {
	t.Helper()
	w = &Worker{Conn: connect(t, e.url), Name: name, Jobs: jobs, Exe: e.exe, Dir: filepath.Join(e.dir, name), Git: g,
		AckWait: time.Second, PollWait: 200 * time.Millisecond, RetryDelay: 50 * time.Millisecond,
		Log: func(f string, a ...any) { t.Logf(name+": "+f, a...) }}
	done := make(chan error, 1)
	go func() { done <- w.Run(context.Background()) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			w.Drain()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return w, stop
}

// publish publishes tasks whose texts are texts, ids t1, t2, ...
func publish(t *testing.T, c *Conn, batchID string, texts ...string) []Key {
	t.Helper()
	var keys []Key
	for i, text := range texts {
		k := Key{Batch: batchID, Submission: "s1", Task: fmt.Sprintf("t%d", i+1)}
		entry := batch.Task{ID: k.Task, Persona: "p", Task: text, Repo: "https://example.com/r.git", Ref: "main"}
		if err := c.Publish(context.Background(), NewTask(k, entry, commit)); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// waitResults waits until batch id has n results, and returns them.
func waitResults(t *testing.T, c *Conn, id string, n int, within time.Duration) []Result {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		rs, err := c.Results(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) >= n || time.Now().After(deadline) {
			if len(rs) != n {
				t.Fatalf("%d results, want %d: %+v", len(rs), n, rs)
			}
			return rs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func runsOf(t *testing.T, e *env) []string {
	data, err := os.ReadFile(e.runs)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(data), "\n", " | "))
}

// TestWorkersReportEachTaskOnce runs eight tasks on two workers: each is
// run once and reported once, with the branch of its session, the
// worker's name and the flags that bring all the agent's work into the
// clone and leave the clone's project personas out.
func TestWorkersReportEachTaskOnce(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	g := &fakeGit{patch: "diff --git a/x b/x\n"}
	e.worker(t, "w1", 2, g.git())
	e.worker(t, "w2", 2, g.git())
	keys := publish(t, c, "b.1", "a", "b", "c", "d", "e", "f", "fail", "none")
	rs := waitResults(t, c, "b.1", len(keys), 30*time.Second)
	seen := map[string]bool{}
	workers := map[string]int{}
	for _, r := range rs {
		if seen[r.Task] {
			t.Errorf("task %s reported twice", r.Task)
		}
		seen[r.Task] = true
		workers[r.Worker]++
		switch r.Task {
		case "t7":
			if r.Status != report.StatusFailed || r.Result == nil {
				t.Errorf("t7: %s, %v; want failed with its result", r.Status, r.Result)
			}
		case "t8":
			if r.Status != report.StatusFailed || r.Result != nil || !strings.Contains(r.Error, "unknown persona") {
				t.Errorf("t8: %s, %q, %v; want failed, no result, the run's error", r.Status, r.Error, r.Result)
			}
			continue
		default:
			if r.Status != report.StatusSucceeded {
				t.Errorf("%s: %s, want succeeded", r.Task, r.Status)
			}
		}
		rr := r.Result
		if rr == nil || rr.Published == nil {
			t.Fatalf("%s: no published work: %+v", r.Task, r)
		}
		if want := "workforce/" + rr.SessionID; rr.Published.Branch != want || rr.Published.Base != commit || rr.Patch != g.patch || rr.Worker != r.Worker {
			t.Errorf("%s: published %+v, patch %q, worker %q; want branch %s from %s", r.Task, *rr.Published, rr.Patch, rr.Worker, want, commit)
		}
	}
	if len(workers) != 2 {
		t.Errorf("the tasks ran on %v, want both workers", workers)
	}
	runs := strings.Split(strings.TrimSpace(readFile(t, e.runs)), "\n")
	if len(runs) != len(keys) {
		t.Errorf("%d runs, want %d:\n%s", len(runs), len(keys), strings.Join(runs, "\n"))
	}
	for _, r := range runs {
		if !strings.HasSuffix(r, "run p - --events --sync-committed --sync-deletes --no-project-personas") {
			t.Errorf("run %q, want run p - --events --sync-committed --sync-deletes --no-project-personas", r)
		}
	}
	for _, k := range keys {
		if q, err := c.Queued(context.Background(), k); err != nil || q {
			t.Errorf("%s is still in the task stream (%v)", k.Task, err)
		}
	}
	// Their directories are gone.
	for _, w := range []string{"w1", "w2"} {
		if left, _ := os.ReadDir(filepath.Join(e.dir, w, "tasks")); len(left) != 0 {
			t.Errorf("%s left task directories: %v", w, left)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestWorkerSkipsReported: a task whose result is out already (a worker
// reported it and died before its ack) is acked without running.
func TestWorkerSkipsReported(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	k := Key{Batch: "b", Submission: "s1", Task: "t1"}
	if err := c.PublishResult(context.Background(), Result{Key: k, Status: report.StatusSucceeded, Worker: "gone"}, ""); err != nil {
		t.Fatal(err)
	}
	publish(t, c, "b", "a")
	w, stop := e.worker(t, "w1", 1, (&fakeGit{}).git())
	deadline := time.Now().Add(10 * time.Second)
	for w.Counts()["skipped"] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if n := w.Counts()["skipped"]; n != 1 {
		t.Fatalf("skipped %d, want 1 (%v)", n, w.Counts())
	}
	if runs := runsOf(t, e); len(runs) != 0 {
		t.Errorf("the task ran: %v", runs)
	}
	if q, _ := c.Queued(context.Background(), k); q {
		t.Error("the task is still queued")
	}
	rs := waitResults(t, c, "b", 1, time.Second)
	if rs[0].Worker != "gone" {
		t.Errorf("the result is %+v, want the first one", rs[0])
	}
}

// TestWorkerLostMidTask: a worker that loses the server mid-task (its
// heartbeats stop, as when it dies) has its task delivered to another
// after the ack wait; the task is reported once, by the one that reports
// first, and the other's report is refused.
func TestWorkerLostMidTask(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	w1, _ := e.worker(t, "w1", 1, (&fakeGit{}).git())
	publish(t, c, "b", "sleep 2")
	deadline := time.Now().Add(10 * time.Second)
	for len(runsOf(t, e)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	w1.Conn.nc.Close() // gone: no heartbeats, no report, no ack
	e.worker(t, "w2", 1, (&fakeGit{}).git())
	rs := waitResults(t, c, "b", 1, 20*time.Second)
	if rs[0].Worker != "w2" || rs[0].Delivery != 2 {
		t.Errorf("reported by %q, delivery %d; want w2, delivery 2", rs[0].Worker, rs[0].Delivery)
	}
	time.Sleep(500 * time.Millisecond)
	if rs := waitResults(t, c, "b", 1, time.Second); len(rs) != 1 {
		t.Errorf("%d results", len(rs))
	}
}

// TestWorkerHeartbeats: a task that runs three times the ack wait is
// not delivered again while its worker lives.
func TestWorkerHeartbeats(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	e.worker(t, "w1", 1, (&fakeGit{}).git())
	e.worker(t, "w2", 1, (&fakeGit{}).git())
	publish(t, c, "b", "sleep 3")
	rs := waitResults(t, c, "b", 1, 20*time.Second)
	if rs[0].Delivery != 1 {
		t.Errorf("delivery %d, want 1", rs[0].Delivery)
	}
	if runs := runsOf(t, e); len(slices.DeleteFunc(runs, func(s string) bool { return s != "sleep" })) != 1 {
		t.Errorf("runs %v, want one", runs)
	}
}

// TestWorkerInterrupt: a worker stopped twice interrupts its running
// task and hands it back; another worker runs it, and only its result is
// reported.
func TestWorkerInterrupt(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	w1, stop1 := e.worker(t, "w1", 1, (&fakeGit{}).git())
	publish(t, c, "b", "sleep 30")
	deadline := time.Now().Add(10 * time.Second)
	for len(runsOf(t, e)) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	w1.Interrupt(syscall.SIGTERM)
	stop1()
	if n := w1.Counts()["handed back"]; n != 1 {
		t.Fatalf("w1 handed back %d tasks, want 1: %v", n, w1.Counts())
	}
	if rs, _ := c.Results(context.Background(), "b"); len(rs) != 0 {
		t.Fatalf("the interrupted task was reported: %+v", rs)
	}
	// The next worker gets it at once (a nak), and runs it to its end.
	os.WriteFile(e.exe, []byte(strings.Replace(fakeRun, "sleep ${task#sleep }", "sleep 0", 1)), 0o755)
	e.worker(t, "w2", 1, (&fakeGit{}).git())
	rs := waitResults(t, c, "b", 1, 10*time.Second)
	if rs[0].Worker != "w2" || rs[0].Status != report.StatusSucceeded {
		t.Errorf("result %+v, want w2's, succeeded", rs[0])
	}
}

// TestWorkerCheckoutFails: a task whose checkout fails goes back to the
// queue, and the worker that sees its last delivery reports it failed.
func TestWorkerCheckoutFails(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	g := &fakeGit{failCheckout: true}
	e.worker(t, "w1", 1, g.git())
	publish(t, c, "b", "a")
	rs := waitResults(t, c, "b", 1, 30*time.Second)
	r := rs[0]
	if r.Status != report.StatusFailed || r.Delivery != MaxDeliver || !strings.Contains(r.Error, "cannot reach https://example.com/r.git") {
		t.Errorf("result %+v, want failed at delivery %d, saying why", r, MaxDeliver)
	}
	if g.checkouts != MaxDeliver {
		t.Errorf("%d checkouts, want %d", g.checkouts, MaxDeliver)
	}
	if runs := runsOf(t, e); len(runs) != 0 {
		t.Errorf("the task ran: %v", runs)
	}
}

// TestWorkerDropsBadTasks: a message that is not a valid task (here one
// whose result subject is another task's) is dropped, never run.
func TestWorkerDropsBadTasks(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	k := Key{Batch: "b", Submission: "s1", Task: "t1"}
	entry := batch.Task{ID: "t1", Persona: "p", Task: "x", Repo: "https://example.com/r.git"}
	bad := NewTask(k, entry, commit)
	bad.ResultSubject = Key{Batch: "other", Submission: "s1", Task: "t1"}.ResultSubject()
	if err := c.Publish(context.Background(), bad); err != nil {
		t.Fatal(err)
	}
	w, stop := e.worker(t, "w1", 1, (&fakeGit{}).git())
	deadline := time.Now().Add(10 * time.Second)
	for {
		q, _ := c.Queued(context.Background(), k)
		if !q || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if runs := runsOf(t, e); len(runs) != 0 {
		t.Errorf("the task ran: %v", runs)
	}
	if q, _ := c.Queued(context.Background(), k); q {
		t.Error("the bad task is still queued")
	}
	if len(w.Counts()) != 0 {
		t.Errorf("counts %v", w.Counts())
	}
}

// TestWorkerRefusesBadEntries: a task whose key is its own but whose
// entry is not one a batch file may hold (here a NUL byte in an input's
// value, which no argument of the run can carry) is never run, and is
// reported failed, saying why, so that its submitter does not wait.
func TestWorkerRefusesBadEntries(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	k := Key{Batch: "b", Submission: "s1", Task: "t1"}
	entry := batch.Task{ID: "t1", Persona: "p", Task: "x", Repo: "https://example.com/r.git", Inputs: map[string]string{"K": "v\x00w"}}
	if err := c.Publish(context.Background(), NewTask(k, entry, commit)); err != nil {
		t.Fatal(err)
	}
	g := &fakeGit{}
	w, stop := e.worker(t, "w1", 1, g.git())
	rs := waitResults(t, c, "b", 1, 10*time.Second)
	stop()
	r := rs[0]
	if r.Key != k || r.Status != report.StatusFailed || r.Worker != "w1" ||
		r.Error != "refused by worker w1: task t1: inputs.K holds a NUL byte" {
		t.Errorf("result %+v, want failed, refused by w1 naming the input", r)
	}
	if runs := runsOf(t, e); len(runs) != 0 || g.checkouts != 0 {
		t.Errorf("the task ran (%v) or was checked out (%d)", runs, g.checkouts)
	}
	if q, _ := c.Queued(context.Background(), k); q {
		t.Error("the refused task is still queued")
	}
	if got := w.Counts(); len(got) != 1 || got["refused"] != 1 {
		t.Errorf("counts %v, want 1 refused", got)
	}
}

func TestCheck(t *testing.T) {
	good := NewTask(Key{Batch: "b", Submission: "s", Task: "t"}, batch.Task{ID: "t", Persona: "p", Task: "x", Repo: "r"}, commit)
	if err := check(good); err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]func(*Task){
		"unsafe batch":    func(t *Task) { t.Batch = "../b" },
		"other entry":     func(t *Task) { t.Entry.ID = "u" },
		"other subject":   func(t *Task) { t.ResultSubject = "workforce.results.x.y.z" },
		"no repo":         func(t *Task) { t.Entry.Repo = "" },
		"a dir":           func(t *Task) { t.Entry.Dir = "/etc" },
		"option repo":     func(t *Task) { t.Entry.Repo = "--upload-pack=touch /tmp/x" },
		"token in repo":   func(t *Task) { t.Entry.Repo = "https://ghp_tok@example.com/r.git" },
		"password repo":   func(t *Task) { t.Entry.Repo = "https://u:pw@example.com/r.git" },
		"ext repo":        func(t *Task) { t.Entry.Repo = "ext::sh -c touch% /tmp/x" },
		"helper repo":     func(t *Task) { t.Entry.Repo = "fd::3" },
		"escapes in repo": func(t *Task) { t.Entry.Repo = "https://example.com/r\x1b]0;title\x07.git" },
		"escapes in ref":  func(t *Task) { t.Entry.Ref = "main\x1b[2J" },
		"short commit":    func(t *Task) { t.Commit = "abc" },
		"empty task":      func(t *Task) { t.Entry.Task = " " },
		"bad persona":     func(t *Task) { t.Entry.Persona = "-p" },
		"upper commit":    func(t *Task) { t.Commit = strings.Repeat("A", 40) },
		"unsafe submiss":  func(t *Task) { t.Submission = "" },
		"NUL in input":    func(t *Task) { t.Entry.Inputs = map[string]string{"K": "v\x00"} },
		"NUL in task":     func(t *Task) { t.Entry.Task = "x\x00y" },
		"NUL in harness":  func(t *Task) { t.Entry.Harness = "claude\x00" },
		"NUL in timeout":  func(t *Task) { t.Entry.Timeout = "1m\x00" },
	} {
		bad := good
		f(&bad)
		if err := check(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestFit(t *testing.T) {
	small := &report.Result{Patch: "p"}
	r := Result{Result: small}
	fit(&r, 4096)
	if r.Result.Patch != "p" || len(r.Result.Warnings) != 0 {
		t.Errorf("a small patch was dropped: %+v", r.Result)
	}
	big := &report.Result{Patch: strings.Repeat("x", 5000)}
	r = Result{Result: big}
	fit(&r, 4096)
	if r.Result.Patch != "" || len(r.Result.Warnings) != 1 || !strings.Contains(r.Result.Warnings[0], "5000 bytes") {
		t.Errorf("a large patch was kept: %d bytes, %v", len(r.Result.Patch), r.Result.Warnings)
	}
}

// TestFitLargeResult: a result too large for a message even without its
// patch (an agent that made many thousands of files, or wrote a huge
// final message) is cut to fit, keeping how the task ended and where its
// work went: a result that cannot be sent makes the task run again, up to
// MaxDeliver times.
func TestFitLargeResult(t *testing.T) {
	files := make([]string, 20000)
	for i := range files {
		files[i] = fmt.Sprintf("generated/dir/file-%06d.txt", i)
	}
	code := 0
	rr := &report.Result{SessionID: "editor-1", Persona: "editor", Tier: "best", Harness: "claude", Status: report.StatusSucceeded,
		ExitCode: &code, Message: strings.Repeat("m", 300000), Files: &report.Files{Created: files, Updated: []string{}, Deleted: []string{}, Conflicts: []report.Conflict{}},
		Warnings: []string{"w"}, Denials: []report.Denial{}, Patch: strings.Repeat("p", 100000),
		Published: &report.Published{Repo: "r", Branch: "workforce/editor-1", Base: commit, Commit: commit, Files: 20000}}
	r := Result{Key: Key{Batch: "b", Submission: "s", Task: "t"}, Status: report.StatusSucceeded, Result: rr, Error: strings.Repeat("e", 200000)}
	const limit = 64 << 10
	fit(&r, limit)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > limit {
		t.Fatalf("the result is %d bytes, more than a message's %d", len(data), limit)
	}
	got := r.Result
	if got == nil || got.Status != report.StatusSucceeded || got.SessionID != "editor-1" || got.Published == nil ||
		got.Published.Branch != "workforce/editor-1" || r.Status != report.StatusSucceeded {
		t.Fatalf("the cut result lost how the task ended or where its work went: %+v", got)
	}
	if !strings.HasPrefix(got.Message, "mmm") {
		t.Errorf("the agent's message is gone instead of cut: %q", got.Message)
	}
	if !strings.Contains(strings.Join(got.Warnings, "\n"), "does not fit") {
		t.Errorf("no warning says the result was cut: %v", got.Warnings)
	}
}

// TestWorkerReplacesUnsealedResults: results of a task published before
// its worker's, one unsigned and one signed with another seal (what an
// agent that reached the server could forge), are not taken for it: the
// worker runs the task and reports its own beside them, and a reader
// with the task's seal finds the worker's.
func TestWorkerReplacesUnsealedResults(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	ctx := context.Background()
	k := Key{Batch: "b", Submission: "s1", Task: "t1"}
	seal := NewSeal()
	for _, forged := range []string{"", NewSeal()} {
		if err := c.publishResult(ctx, Result{Key: k, Status: report.StatusSucceeded, Worker: "forged"}, forged, true); err != nil {
			t.Fatal(err)
		}
	}
	task := NewTask(k, batch.Task{ID: k.Task, Persona: "p", Task: "a", Repo: "https://example.com/r.git", Ref: "main"}, commit)
	task.Seal = seal
	if err := c.Publish(ctx, task); err != nil {
		t.Fatal(err)
	}
	w, stop := e.worker(t, "w1", 1, (&fakeGit{}).git())
	deadline := time.Now().Add(20 * time.Second)
	var r Result
	for ok := false; !ok; {
		if time.Now().After(deadline) {
			t.Fatalf("no result the task's seal verifies (worker counts %v)", w.Counts())
		}
		time.Sleep(50 * time.Millisecond)
		var err error
		if r, ok, err = c.LookupResult(ctx, k, seal); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if r.Worker != "w1" {
		t.Errorf("the sealed result is worker %q's, want w1's", r.Worker)
	}
	if runs := runsOf(t, e); len(slices.DeleteFunc(runs, func(s string) bool { return s != "|" })) != 1 {
		t.Errorf("runs %v, want the task run once", runs)
	}
	if n := w.Counts()["unsealed"]; n != 1 {
		t.Errorf("counts %v, want one task found with unsealed results", w.Counts())
	}
	rs := waitResults(t, c, "b", 3, time.Second)
	for i, want := range []bool{false, false, true} {
		if got := rs[i].Sealed(seal); got != want {
			t.Errorf("result %d (worker %q): sealed %v, want %v", i, rs[i].Worker, got, want)
		}
	}
	// Without the seal, the first result that came counts: the forged
	// one. The seal is what tells them apart.
	if r, _, _ := c.LookupResult(ctx, k, ""); r.Worker != "forged" {
		t.Errorf("unsealed lookup found worker %q's, want the first (forged)", r.Worker)
	}
}

// TestWorkerAttempt: the attempt of an evaluation (an entry with
// Attempt) runs with --attempt and without the flags that bring the work
// into the clone, publishes nothing, and reports the patch its run's
// result carries.
func TestWorkerAttempt(t *testing.T) {
	e := newEnv(t)
	c := connect(t, e.url)
	g := &fakeGit{patch: "diff --git a/pushed b/pushed\n"}
	e.worker(t, "w1", 1, g.git())
	k := Key{Batch: "ev", Submission: "s1", Task: "t1"}
	entry := batch.Task{ID: k.Task, Persona: "p", Task: "fix it", Repo: "https://example.com/r.git", Ref: "main",
		Attempt: &report.AttemptSpec{Check: "go test ./..."}, PersonaHash: "h"}
	if err := c.Publish(context.Background(), NewTask(k, entry, commit)); err != nil {
		t.Fatal(err)
	}
	rs := waitResults(t, c, "ev", 1, 30*time.Second)
	r := rs[0]
	if r.Status != report.StatusSucceeded || r.Result == nil {
		t.Fatalf("attempt: %s, %+v; want succeeded with its result", r.Status, r.Result)
	}
	if r.Result.Published != nil || r.Result.Patch != "diff --git a/attempt b/attempt\n" {
		t.Errorf("attempt: published %+v, patch %q; want nothing published and the run's patch", r.Result.Published, r.Result.Patch)
	}
	g.mu.Lock()
	published := g.published
	g.mu.Unlock()
	if len(published) != 0 {
		t.Errorf("attempt: pushed %v, want nothing", published)
	}
	run := readFile(t, e.runs)
	if !strings.Contains(run, `--attempt {"check":"go test ./..."}`) || strings.Contains(run, "--sync-") || !strings.Contains(run, "--no-project-personas") {
		t.Errorf("run %q, want --attempt and --no-project-personas, no --sync-*", run)
	}
}
