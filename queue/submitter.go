package queue

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/gitwork"
)

// EntryProblem says what keeps the entry t from going to a queue, ""
// when nothing does: a queue's task names its repository (repo, ref),
// never a directory of this machine, and its URL holds no password (the
// workers fetch and push with their own credentials; a message carries
// none). It is batch.LoadOptions.Remote of a queue's batch.
func EntryProblem(t batch.Task) string {
	switch {
	case t.Dir != "":
		return "dir is a directory of this machine, which the workers do not have; with --queue give repo (a git URL the workers can fetch and push) and ref"
	case t.Repo == "":
		return "no repo: with --queue, a task names its repository as repo (a git URL the workers can fetch and push) and ref"
	case strings.HasPrefix(t.Repo, "-"):
		return fmt.Sprintf("repo %q: not a URL", t.Repo)
	}
	if gitwork.HasCredentials(t.Repo) {
		return fmt.Sprintf("repo %s holds a password or token, which would travel in the queue: give the URL without it; the workers fetch and push with their own credentials", gitwork.Redact(t.Repo))
	}
	return ""
}

// Submitter runs a batch on a queue, the protocol of `workforce batch
// FILE --queue`: Submit decides what to publish as the local pool decides
// what to run (a task published before and not reported yet is followed,
// not published again; one edited or retried is withdrawn and published
// again as another submission), resolves each task's ref to a commit,
// records each publication in the batch's state (Record) before it
// publishes it, and publishes; Follow then waits for the results. It
// prints nothing: its progress goes to batch.Hooks.
type Submitter struct {
	// Batch is the batch, opened (batch.OpenFile, with EntryProblem as
	// its Remote check) and locked by the caller.
	Batch *batch.Batch
	// Options reach the queue's server.
	Options Options
	Retry   batch.Retry
	// Signals, when set, catches the signals that stop the submitter,
	// from before it publishes to its end (Close): one that comes while
	// it publishes ends the publishing after the task under way, one
	// that comes while it follows ends the following. nil (a detached
	// submitter) catches none.
	Signals batch.Signals
	// ResolveRef resolves a task's ref to a commit; nil is
	// gitwork.ResolveRef.
	ResolveRef func(ctx context.Context, url, ref string) (string, error)

	conn   *Conn
	sigs   *stopSignals
	follow []followed
}

// followed is a task the submitter waits for: its key and its entry.
type followed struct {
	key   Key
	entry batch.Task
	// seal verifies its results (Record.Seal).
	seal string
}

// Submission is what Submit did.
type Submission struct {
	// Published is how many tasks it published (fewer than planned when
	// a signal stopped the publishing); Following how many it waits for,
	// published now or before; Reported how many were published before
	// and reported since (shown as Done).
	Published, Following, Reported int
	// Idle: nothing to publish or follow; States are the batch's states
	// as they stand (the results that came recorded).
	Idle   bool
	States map[string]batch.TaskState
}

// Close stops catching signals and closes the connection.
func (s *Submitter) Close() {
	if s.sigs != nil {
		s.sigs.stop()
		s.sigs = nil
	}
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

func (s *Submitter) connect(ctx context.Context) error {
	if s.conn == nil {
		c, err := Connect(ctx, s.Options)
		if err != nil {
			return err
		}
		s.conn = c
	}
	return nil
}

// Submit publishes the batch's tasks as its plan says (see Submitter). A
// ref that names nothing is a batch.FileError naming the file's line, and
// nothing is published then.
func (s *Submitter) Submit(ctx context.Context, h batch.Hooks) (Submission, error) {
	b, h := s.Batch, h.Filled()
	// A task queued before whose result came while nobody followed is
	// done: its result goes in the state before the plan, so that it is
	// skipped, or published again with --retry failed, as on this
	// machine.
	var came map[string]bool
	if queuedResults(b.State, b.IDs, b.States) {
		if err := s.connect(ctx); err != nil {
			return Submission{}, err
		}
		var err error
		if came, err = recordResults(ctx, s.conn, b.State, true, b.IDs, b.States); err != nil {
			return Submission{}, err
		}
	}
	toPublish, withdraw, reported := s.plan(came, h)
	if len(toPublish) == 0 && len(s.follow) == 0 {
		return Submission{Reported: reported, Idle: true, States: b.States}, nil
	}
	commits, err := s.resolve(ctx, toPublish)
	if err != nil {
		return Submission{}, err
	}
	if err := s.connect(ctx); err != nil {
		return Submission{}, err
	}
	// From here on a signal stops the submitter as while it follows: one
	// that comes while it publishes ends the publishing after the task
	// under way.
	if s.Signals != nil {
		s.sigs = catchSignals(s.Signals)
	}
	if err := b.State.WriteInfo(batch.Info{ID: b.ID, File: b.File, Tasks: b.IDs, Updated: time.Now().UTC()}); err != nil {
		return Submission{}, err
	}
	if err := s.publishAgain(ctx, withdraw); err != nil {
		return Submission{}, err
	}
	published, err := s.publish(ctx, toPublish, commits)
	if err != nil {
		return Submission{}, err
	}
	return Submission{Published: published, Following: len(s.follow), Reported: reported}, nil
}

// plan decides what to do with each task: follow what was published and
// not reported yet (the same entry), skip (Skipped) or publish the rest
// as the local pool skips or runs; a task published before whose entry
// changed, or that runs again, is withdrawn first. came are the tasks
// published before whose result came since: Done shows each, counted in
// reported.
func (s *Submitter) plan(came map[string]bool, h batch.Hooks) (toPublish []batch.Task, withdraw []Key, reported int) {
	b := s.Batch
	for _, d := range batch.Plan(b.Entries, b.States, s.Retry) {
		prev := d.Prev
		var rec Record
		wasQueued := prev != nil && prev.Phase == PhaseQueued
		if wasQueued {
			var ok bool
			if rec, ok = ReadRecord(b.State, d.Task.ID); !ok {
				wasQueued = false
			}
		}
		key := Key{Batch: b.ID, Submission: rec.Submission, Task: d.Task.ID}
		switch {
		case wasQueued && prev.Digest == d.Task.Digest():
			s.follow = append(s.follow, followed{key: key, entry: d.Task, seal: rec.Seal})
		case d.Run:
			if wasQueued {
				withdraw = append(withdraw, key)
			}
			toPublish = append(toPublish, d.Task)
		case came[d.Task.ID]:
			// Published before and reported since: its first showing.
			h.Done(*prev)
			reported++
		default:
			h.Skipped(*prev)
		}
	}
	return toPublish, withdraw, reported
}

// refOf is the ref a task's commit is resolved from: HEAD when it names
// none.
func refOf(t batch.Task) [2]string {
	if t.Ref == "" {
		return [2]string{t.Repo, "HEAD"}
	}
	return [2]string{t.Repo, t.Ref}
}

// resolve resolves every ref of tasks before anything is published: the
// refs that name nothing are the file's problems, all of them.
func (s *Submitter) resolve(ctx context.Context, tasks []batch.Task) (map[[2]string]string, error) {
	resolveRef := s.ResolveRef
	if resolveRef == nil {
		resolveRef = gitwork.ResolveRef
	}
	commits := map[[2]string]string{}
	var probs batch.Problems
	for _, t := range tasks {
		k := refOf(t)
		if _, ok := commits[k]; ok {
			continue
		}
		c, err := resolveRef(ctx, k[0], k[1])
		if err != nil {
			// Every ref that names nothing, each once, by its first task.
			probs = append(probs, &batch.ParseError{File: s.Batch.Name, Line: s.Batch.ByID[t.ID].Line, Err: fmt.Errorf("task %s: %w", t.ID, err)})
		}
		commits[k] = c
	}
	if len(probs) > 0 {
		return nil, &batch.FileError{Err: probs}
	}
	return commits, nil
}

// publishAgain takes back the earlier publications of withdraw, and
// publishes again, as the same key, a task followed whose message is
// gone with no result (the submitter died before it could publish it):
// a no-op if it is there after all.
func (s *Submitter) publishAgain(ctx context.Context, withdraw []Key) error {
	for _, k := range withdraw {
		if err := s.conn.Withdraw(ctx, k); err != nil {
			return fmt.Errorf("cannot take task %s's earlier publication back: %w", k.Task, err)
		}
	}
	for _, f := range s.follow {
		rec, _ := ReadRecord(s.Batch.State, f.key.Task)
		if _, ok, err := s.conn.LookupResult(ctx, f.key, rec.Seal); err != nil || ok {
			continue
		}
		if q, err := s.conn.Queued(ctx, f.key); err == nil && !q {
			t := NewTask(f.key, f.entry, rec.Commit)
			t.Seal = rec.Seal
			if err := s.conn.Publish(ctx, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// publish publishes tasks as a new submission, each at the commit of its
// ref, until a signal comes (the rest is published by the next run).
func (s *Submitter) publish(ctx context.Context, tasks []batch.Task, commits map[[2]string]string) (published int, err error) {
	b := s.Batch
	submission := newSubmission()
	for _, t := range tasks {
		if s.sigs.caught() != nil {
			break
		}
		commit := commits[refOf(t)]
		key := Key{Batch: b.ID, Submission: submission, Task: t.ID}
		msg := NewTask(key, t, commit)
		msg.Seal = NewSeal()
		// The state first: a submitter that dies after it publishes
		// the task again as the same key next time, never twice.
		if err := WriteRecord(b.State, t.ID, Record{Submission: submission, Commit: commit, Published: msg.Published, Seal: msg.Seal}); err != nil {
			return published, err
		}
		if err := b.State.WriteTask(batch.TaskState{ID: t.ID, Digest: msg.Digest, Entry: t, Phase: PhaseQueued}); err != nil {
			return published, err
		}
		if err := s.conn.Publish(ctx, msg); err != nil {
			return published, err
		}
		s.follow = append(s.follow, followed{key: key, entry: t, seal: msg.Seal})
		published++
	}
	return published, nil
}

// Followed is how the following of a batch ended.
type Followed struct {
	// IDs and States are the batch's tasks and their states as its
	// directory has them.
	IDs    []string
	States map[string]batch.TaskState
	// Signal stopped the following, with Left tasks still queued (they
	// run on on the workers); nil when none did.
	Signal os.Signal
	Left   int
	// Lost is why the results stopped coming before every one came (the
	// subscription failed); IDs and States are then not read.
	Lost error
}

// Run submits the batch (Submit) and follows its tasks to their end
// (Follow), as the local pool's RunLocal runs them: the batch's states
// as they ended, and the signal that stopped the following. Results lost
// before every one came are an error.
func (s *Submitter) Run(ctx context.Context, h batch.Hooks) (batch.Ended, error) {
	sub, err := s.Submit(ctx, h)
	if err != nil || sub.Idle {
		return batch.Ended{IDs: s.Batch.IDs, States: sub.States}, err
	}
	f, err := s.Follow(ctx, h)
	if err == nil && f.Lost != nil {
		err = fmt.Errorf("lost the results of the queue: %w", f.Lost)
	}
	return batch.Ended{IDs: f.IDs, States: f.States, Signal: f.Signal}, err
}

// Follow waits for the results of the tasks Submit published or found
// published, records each in the batch's state and tells it (Done),
// until every one has come or a signal stops the following (the tasks
// run on). It sweeps now and then: a task every worker died on is
// reported failed (Sweep), even when no worker is left to do it.
func (s *Submitter) Follow(ctx context.Context, h batch.Hooks) (Followed, error) {
	b, h := s.Batch, h.Filled()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waiting := map[string]followed{}
	for _, f := range s.follow {
		waiting[f.key.Task] = f
	}
	var mu sync.Mutex
	var writeErr error
	var stoppedBy os.Signal
	// The watcher ends before Follow returns: Close may drop s.sigs
	// right after.
	sigs, watched := s.sigs, make(chan struct{})
	defer func() { <-watched }()
	defer cancel()
	go func() {
		defer close(watched)
		if sig := sigs.wait(ctx.Done()); sig != nil {
			mu.Lock()
			stoppedBy = sig
			mu.Unlock()
			cancel()
		}
	}()
	go s.sweep(ctx)
	h.Start()
	err := s.conn.Follow(ctx, b.ID, func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		f, ok := waiting[r.Task]
		if !ok || f.key != r.Key {
			return // another submission's, or reported already
		}
		if !r.Sealed(f.seal) {
			// Not its worker's (seal.go): the worker's comes after.
			h.Warn(fmt.Sprintf("task %s: a result its seal does not verify was ignored (it says worker %q): no worker of this batch made it", r.Task, r.Worker))
			return
		}
		delete(waiting, r.Task)
		ts := r.State(f.entry)
		if err := b.State.WriteTask(ts); err != nil && writeErr == nil {
			writeErr = err
		}
		h.Done(ts)
		if len(waiting) == 0 {
			cancel()
		}
	})
	h.Finish()
	mu.Lock()
	sig, left := stoppedBy, len(waiting)
	mu.Unlock()
	if err != nil && left > 0 && sig == nil {
		return Followed{Left: left, Lost: err}, nil
	}
	if writeErr != nil {
		return Followed{}, fmt.Errorf("cannot write the batch's state: %w", writeErr)
	}
	final, err := b.State.ReadTasks(b.IDs)
	if err != nil {
		return Followed{}, err
	}
	f := Followed{IDs: b.IDs, States: final}
	if sig != nil && left > 0 {
		f.Signal, f.Left = sig, left
	}
	return f, nil
}

// sweep sweeps the queue every 15 seconds until ctx ends.
func (s *Submitter) sweep(ctx context.Context) {
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		s.conn.Sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// stopSignals are the signals that stop a submitter, caught from before
// it publishes to its end: one that comes at any moment after the first
// task is recorded leaves the tasks to the workers.
type stopSignals struct {
	ch   <-chan os.Signal
	stop func()
	got  os.Signal
}

// catchSignals catches the signals of signals until stop.
func catchSignals(signals batch.Signals) *stopSignals {
	ch, stop := signals()
	return &stopSignals{ch: ch, stop: stop}
}

// caught is the first signal that came, nil when none has yet (or s is
// nil: none is caught); it does not wait.
func (s *stopSignals) caught() os.Signal {
	if s == nil {
		return nil
	}
	if s.got == nil {
		select {
		case s.got = <-s.ch:
		default:
		}
	}
	return s.got
}

// wait is the first signal that came, once one comes or done is closed
// (then nil).
func (s *stopSignals) wait(done <-chan struct{}) os.Signal {
	if s == nil {
		<-done
		return nil
	}
	if s.caught() != nil {
		return s.got
	}
	select {
	case s.got = <-s.ch:
		return s.got
	case <-done:
		return nil
	}
}
