package queue

import (
	"context"
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

// submitEnv is a queue's server and a home for batches' states.
type submitEnv struct {
	url, home, dir string
	conn           *Conn
}

func newSubmitEnv(t *testing.T) *submitEnv {
	url := startServer(t)
	return &submitEnv{url: url, home: t.TempDir(), dir: t.TempDir(), conn: connect(t, url)}
}

// open writes the batch file of tasks (id: ref; "" for none) and opens
// batch b, checked as a queue's.
func (e *submitEnv) open(t *testing.T, tasks ...[2]string) *batch.Batch {
	t.Helper()
	var lines []string
	for _, tk := range tasks {
		lines = append(lines, fmt.Sprintf(`{"id": %q, "persona": "editor", "task": "do it", "repo": "https://git.example/r.git", "ref": %q}`, tk[0], tk[1]))
	}
	file := filepath.Join(e.dir, "tasks.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := batch.OpenFile(batch.OpenOptions{ID: "b", Home: func() (string, error) { return e.home, nil },
		LoadOptions: batch.LoadOptions{File: file, Remote: EntryProblem, KnownHarnesses: []string{"claude"},
			Catalog: func() (batch.Lookup, error) {
				return func(string) (string, string, error) { return "best", "claude", nil }, nil
			}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// resolver resolves a ref to a commit of its name; "gone" names none.
func resolver(_ context.Context, url, ref string) (string, error) {
	if ref == "gone" || ref == "lost" {
		return "", errors.New("no ref " + ref + " in " + url)
	}
	return strings.Repeat(ref[:1], 40), nil
}

// shown records what the hooks were told.
type shown struct {
	mu            sync.Mutex
	skipped, done []string
}

func (s *shown) hooks() batch.Hooks {
	return batch.Hooks{
		Skipped: func(ts batch.TaskState) { s.mu.Lock(); s.skipped = append(s.skipped, ts.ID); s.mu.Unlock() },
		Done: func(ts batch.TaskState) {
			s.mu.Lock()
			s.done = append(s.done, ts.ID+"="+string(ts.Status))
			s.mu.Unlock()
		},
	}
}

// report reports task id of b's record as a worker would, and takes the
// task out of the queue, as its ack does.
func (e *submitEnv) report(t *testing.T, b *batch.Batch, id string, st report.Status) {
	t.Helper()
	rec, ok := ReadRecord(b.State, id)
	if !ok {
		t.Fatalf("task %s has no record", id)
	}
	k := Key{Batch: b.ID, Submission: rec.Submission, Task: id}
	if rec.Seal == "" {
		t.Fatalf("task %s was published without a seal", id)
	}
	if err := e.conn.publishResult(context.Background(), Result{Key: k, Status: st, Started: time.Now(), Finished: time.Now()}, rec.Seal, true); err != nil {
		t.Fatal(err)
	}
	if err := e.conn.Withdraw(context.Background(), k); err != nil {
		t.Fatal(err)
	}
}

// TestSubmit goes through the submitter's protocol, run after run on one
// batch: publish with each ref resolved and recorded first; follow what
// was published and not reported, without publishing it again; show a
// result that came while nobody followed, and skip it after; withdraw an
// edited task and publish it again as another submission; follow to the
// end.
func TestSubmit(t *testing.T) {
	ctx := context.Background()
	e := newSubmitEnv(t)
	submit := func(b *batch.Batch, retry batch.Retry) (*Submitter, Submission, *shown) {
		t.Helper()
		s := &Submitter{Batch: b, Options: Options{URL: e.url}, Retry: retry, ResolveRef: resolver}
		t.Cleanup(s.Close)
		var sh shown
		sub, err := s.Submit(ctx, sh.hooks())
		if err != nil {
			t.Fatal(err)
		}
		return s, sub, &sh
	}

	// First run: both published, each recorded at its ref's commit.
	b := e.open(t, [2]string{"t1", "main"}, [2]string{"t2", ""})
	_, sub, _ := submit(b, batch.RetryNone)
	if sub.Published != 2 || sub.Following != 2 || sub.Idle {
		t.Fatalf("first submission %+v: want 2 published and followed", sub)
	}
	first := map[string]Record{}
	for id, commit := range map[string]string{"t1": strings.Repeat("m", 40), "t2": strings.Repeat("H", 40)} {
		rec, ok := ReadRecord(b.State, id)
		ts, _, _ := b.State.ReadTask(id)
		if !ok || rec.Commit != commit || ts.Phase != PhaseQueued {
			t.Errorf("task %s: record %+v, phase %s; want commit %s, queued", id, rec, ts.Phase, commit)
		}
		if q, err := e.conn.Queued(ctx, Key{Batch: "b", Submission: rec.Submission, Task: id}); err != nil || !q {
			t.Errorf("task %s is not queued: %v", id, err)
		}
		first[id] = rec
	}
	b.Close()

	// Again, nothing reported: followed, not published again.
	b = e.open(t, [2]string{"t1", "main"}, [2]string{"t2", ""})
	_, sub, _ = submit(b, batch.RetryNone)
	if sub.Published != 0 || sub.Following != 2 {
		t.Errorf("second submission %+v: want none published, 2 followed", sub)
	}
	b.Close()

	// t1 reported while nobody followed; t2 edited (its ref): t1 is
	// shown done, t2 withdrawn and published again.
	e.report(t, b, "t1", report.StatusFailed)
	b = e.open(t, [2]string{"t1", "main"}, [2]string{"t2", "dev"})
	s, sub, sh := submit(b, batch.RetryNone)
	if sub.Published != 1 || sub.Following != 1 || sub.Reported != 1 || !slices.Equal(sh.done, []string{"t1=failed"}) {
		t.Errorf("third submission %+v, shown done %v: want t2 published again, t1 shown failed", sub, sh.done)
	}
	rec, _ := ReadRecord(b.State, "t2")
	if rec.Submission == first["t2"].Submission || rec.Commit != strings.Repeat("d", 40) {
		t.Errorf("t2 published again as %+v: want another submission at dev's commit", rec)
	}
	if q, _ := e.conn.Queued(ctx, Key{Batch: "b", Submission: first["t2"].Submission, Task: "t2"}); q {
		t.Error("t2's first publication was not withdrawn")
	}
	// Follow t2 to its end.
	e.report(t, b, "t2", report.StatusSucceeded)
	var fsh shown
	f, err := s.Follow(ctx, fsh.hooks())
	if err != nil {
		t.Fatal(err)
	}
	if f.Signal != nil || f.Lost != nil || f.States["t2"].Status != report.StatusSucceeded || f.States["t1"].Status != report.StatusFailed ||
		!slices.Equal(fsh.done, []string{"t2=succeeded"}) {
		t.Errorf("followed %+v, shown %v: want t2 succeeded, t1 failed", f, fsh.done)
	}
	b.Close()

	// Once more: everything done is skipped and nothing is left to do;
	// with RetryFailed, t1 is published again.
	b = e.open(t, [2]string{"t1", "main"}, [2]string{"t2", "dev"})
	_, sub, sh = submit(b, batch.RetryNone)
	if !sub.Idle || len(sh.skipped) != 2 || sub.States["t1"].Phase != batch.PhaseDone {
		t.Errorf("fourth submission %+v, skipped %v: want idle, both skipped", sub, sh.skipped)
	}
	b.Close()
	b = e.open(t, [2]string{"t1", "main"}, [2]string{"t2", "dev"})
	_, sub, _ = submit(b, batch.RetryFailed)
	if sub.Published != 1 || sub.Idle {
		t.Errorf("retrying the failed: %+v, want t1 published", sub)
	}
}

// TestSubmitErrors: the refs that name nothing are the file's errors,
// all of them, each naming its line, before anything is published; a signal caught before the
// publishing publishes nothing, and one caught while following ends it
// with the tasks left.
func TestSubmitErrors(t *testing.T) {
	ctx := context.Background()
	e := newSubmitEnv(t)
	b := e.open(t, [2]string{"t1", "main"}, [2]string{"t2", "gone"}, [2]string{"t3", "lost"})
	s := &Submitter{Batch: b, Options: Options{URL: e.url}, ResolveRef: resolver}
	_, err := s.Submit(ctx, batch.Hooks{})
	var fe *batch.FileError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "tasks.jsonl:2: task t2: no ref gone in ") || !strings.Contains(err.Error(), "tasks.jsonl:3: task t3: no ref lost in ") {
		t.Errorf("refs that name nothing: %v, want the file's errors at lines 2 and 3, both", err)
	}
	if _, ok := ReadRecord(b.State, "t1"); ok {
		t.Error("t1 was published before every ref was resolved")
	}
	s.Close()
	b.Close()

	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	var stopped bool
	b = e.open(t, [2]string{"t1", "main"})
	s = &Submitter{Batch: b, Options: Options{URL: e.url}, ResolveRef: resolver,
		Signals: func() (<-chan os.Signal, func()) { return sigs, func() { stopped = true } }}
	sub, err := s.Submit(ctx, batch.Hooks{})
	if err != nil || sub.Published != 0 {
		t.Errorf("a signal before the publishing: %+v, %v; want nothing published", sub, err)
	}
	s.Close()
	b.Close()
	if !stopped {
		t.Error("Close did not stop catching the signals")
	}

	b = e.open(t, [2]string{"t1", "main"})
	sigs = make(chan os.Signal, 1)
	s = &Submitter{Batch: b, Options: Options{URL: e.url}, ResolveRef: resolver,
		Signals: func() (<-chan os.Signal, func()) { return sigs, func() {} }}
	defer s.Close()
	if sub, err := s.Submit(ctx, batch.Hooks{}); err != nil || sub.Published != 1 {
		t.Fatalf("%+v, %v", sub, err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		sigs <- syscall.SIGINT
	}()
	f, err := s.Follow(ctx, batch.Hooks{})
	if err != nil || f.Signal != syscall.SIGINT || f.Left != 1 || f.States["t1"].Phase != PhaseQueued {
		t.Errorf("following stopped by a signal: %+v, %v; want SIGINT, 1 left queued", f, err)
	}
}

// TestReadStatus: a batch with a state here shows the results that came
// (and records them); one without shows what the queue has; one neither
// knows is a NoBatchError.
func TestReadStatus(t *testing.T) {
	ctx := context.Background()
	e := newSubmitEnv(t)
	b := e.open(t, [2]string{"t1", "main"}, [2]string{"t2", "main"})
	s := &Submitter{Batch: b, Options: Options{URL: e.url}, ResolveRef: resolver}
	if _, err := s.Submit(ctx, batch.Hooks{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	e.report(t, b, "t1", report.StatusSucceeded)
	b.Close()

	st, err := ReadStatus(ctx, Options{URL: e.url}, e.home, "b")
	if err != nil {
		t.Fatal(err)
	}
	if st.File != b.File || st.States["t1"].Status != report.StatusSucceeded || st.States["t2"].Phase != PhaseQueued {
		t.Errorf("status here %+v: want t1 succeeded, t2 queued", st)
	}
	if ts, _, _ := b.State.ReadTask("t1"); ts.Phase != batch.PhaseDone {
		t.Errorf("t1's result was not recorded in the state: %s", ts.Phase)
	}

	st, err = ReadStatus(ctx, Options{URL: e.url}, t.TempDir(), "b")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(st.File, "(no state on this machine") || !slices.Equal(st.IDs, []string{"t1", "t2"}) ||
		st.States["t1"].Status != report.StatusSucceeded || st.States["t2"].Phase != PhaseQueued {
		t.Errorf("status from the queue %+v: want t1 succeeded, t2 queued", st)
	}

	_, err = ReadStatus(ctx, Options{URL: e.url}, t.TempDir(), "nothing")
	var nb *NoBatchError
	if !errors.As(err, &nb) || err.Error() != "no batch nothing here or on the queue" {
		t.Errorf("an unknown batch: %v, want a NoBatchError", err)
	}
}

// TestFollowIgnoresUnsealed: a result of a followed task that its seal
// does not verify (one an agent that reached the server could publish
// first) is not taken for it: the submitter warns and waits for the
// worker's; a task reported while nobody followed counts only with its
// seal too.
func TestFollowIgnoresUnsealed(t *testing.T) {
	ctx := context.Background()
	e := newSubmitEnv(t)
	b := e.open(t, [2]string{"t1", "main"}, [2]string{"t2", "main"})
	s := &Submitter{Batch: b, Options: Options{URL: e.url}, ResolveRef: resolver}
	t.Cleanup(s.Close)
	if _, err := s.Submit(ctx, batch.Hooks{}); err != nil {
		t.Fatal(err)
	}
	forge := func(id string) {
		rec, _ := ReadRecord(b.State, id)
		k := Key{Batch: b.ID, Submission: rec.Submission, Task: id}
		if err := e.conn.PublishResult(ctx, Result{Key: k, Status: report.StatusSucceeded, Worker: "forged"}, ""); err != nil {
			t.Fatal(err)
		}
	}
	forge("t1")
	forge("t2")
	e.report(t, b, "t1", report.StatusFailed)
	var warned []string
	var fsh shown
	h := fsh.hooks()
	h.Warn = func(msg string) { warned = append(warned, msg) }
	reported := make(chan struct{})
	go func() {
		// t2's worker reports once the forged result was seen: its
		// result ends Follow, its withdrawal comes after, and must be
		// done before the test's connection closes.
		defer close(reported)
		time.Sleep(300 * time.Millisecond)
		e.report(t, b, "t2", report.StatusFailed)
	}()
	defer func() { <-reported }()
	f, err := s.Follow(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if f.States["t1"].Status != report.StatusFailed || f.States["t2"].Status != report.StatusFailed {
		t.Errorf("followed t1 %s, t2 %s; want both failed (the workers' results), not the forged successes", f.States["t1"].Status, f.States["t2"].Status)
	}
	if len(warned) != 2 || !strings.Contains(warned[0], "seal does not verify") || !strings.Contains(warned[0], `"forged"`) {
		t.Errorf("warnings %q, want one a forged result", warned)
	}
}
