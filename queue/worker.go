package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/gitwork"
	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
	"golang.org/x/sys/unix"
)

// Published is the agent's work of one task as it left the worker: the
// branch pushed to the task's repository ("" when there was nothing to
// publish), the commit the task started from, the branch's commit, the
// patch from one to the other and the number of files it changes. It is
// gitwork.Published, field for field.
type Published struct {
	Branch string
	Base   string
	Commit string
	Patch  string
	Files  int
}

// Git is what a worker does with git (package gitwork, as GitWork makes
// it; the tests may fake it).
type Git struct {
	// Checkout makes dest (which does not exist) a clone of url at
	// commit.
	Checkout func(ctx context.Context, url, commit, dest string) error
	// Publish commits what a run left in the clone work (started at
	// base) on the local branch branch and pushes it to url.
	Publish func(ctx context.Context, work, url, base, branch string) (Published, error)
}

// Worker pulls tasks from TaskStream and runs them, Jobs at a time: each
// in a clone of its repository at its commit, as the local pool runs a
// task (batch.Command, batch.RunTask: a child `workforce run`, here with
// --sync-committed --sync-deletes so that the clone's working tree holds
// all the agent did), then publishes the work (Git.Publish: the branch
// workforce/<session-id>), reports the result once (ResultStream) and
// acks the task. The package documentation says what happens when
// anything fails.
type Worker struct {
	Conn *Conn
	// Name names the worker in its results and on the server.
	Name string
	// Jobs is how many tasks run at once (at least 1).
	Jobs int
	// Exe is the workforce binary the tasks run as.
	Exe string
	// Env is the environment of the tasks' runs; nil: the worker's own.
	// The command layer leaves out the queue's settings: a task's agent
	// must not hold the worker's login to the queue.
	Env []string
	// Dir is the worker's directory (<home>/worker): a directory a task
	// under tasks/, removed after the task.
	Dir string
	Git Git
	// AckWait is the consumer's ack wait, when this worker makes it;
	// 0: DefaultAckWait.
	AckWait time.Duration
	// PollWait is how long a pull for a task waits on the server before
	// it asks again; 0: 5 seconds.
	PollWait time.Duration
	// RetryDelay is how long a task handed back after a failure (its
	// checkout failed) waits before it is delivered again; 0: 5 seconds.
	RetryDelay time.Duration
	// Log says what the worker does, a line at a time; nil: nothing.
	Log func(format string, args ...any)
	// DenyRead are files the tasks' harnesses may not read besides the
	// defaults (--sandbox-deny-read): the worker's queue credentials,
	// wherever they are.
	DenyRead []string

	pool     batch.Pool
	draining atomic.Bool
	// ackWait and maxDel are the consumer's, as they are on the server.
	ackWait time.Duration
	maxDel  int
	// counts of the tasks it ran, by how they ended.
	mu     sync.Mutex
	counts map[string]int
	// logMu makes Log's calls one at a time.
	logMu sync.Mutex
	// stopPulls cancels the pulls under way (Drain).
	stopPulls context.CancelFunc
}

// pushTries is how many times a worker tries to push a task's branch.
const pushTries = 3

// Run runs tasks until Drain, then until the running tasks end. It fails
// only when it cannot start: the consumer cannot be made or found.
func (w *Worker) Run(ctx context.Context) error {
	if w.AckWait == 0 {
		w.AckWait = DefaultAckWait
	}
	if w.PollWait == 0 {
		w.PollWait = 5 * time.Second
	}
	if w.RetryDelay == 0 {
		w.RetryDelay = 5 * time.Second
	}
	w.pool.Jobs = max(1, w.Jobs)
	cons, err := w.Conn.SetupConsumer(ctx, w.AckWait)
	if err != nil {
		return err
	}
	cfg := cons.CachedInfo().Config
	ackWait := cfg.AckWait
	w.ackWait, w.maxDel = ackWait, cfg.MaxDeliver
	if ackWait != w.AckWait {
		w.logf("the consumer %s waits %v for an ack (set when it was made), not %v", Consumer, ackWait, w.AckWait)
	}
	tasks := filepath.Join(w.Dir, "tasks")
	if err := os.MkdirAll(tasks, 0o700); err != nil {
		return err
	}
	removeStale(tasks)
	sweepDone := make(chan struct{})
	go w.sweep(ctx, sweepDone)
	// A drain cancels the pulls under way, so that an idle worker stops
	// at once. (A task the server sent to a pull as it was cancelled
	// comes back after the ack wait; the server drops pulls nobody
	// listens to any more.)
	pulls, cancelPulls := context.WithCancel(ctx)
	defer cancelPulls()
	w.mu.Lock()
	w.stopPulls = cancelPulls
	w.mu.Unlock()
	var wg sync.WaitGroup
	for range w.pool.Jobs {
		wg.Go(func() {
			for !w.draining.Load() && ctx.Err() == nil {
				pctx, cancel := context.WithTimeout(pulls, w.PollWait)
				m, err := cons.Next(jetstream.FetchContext(pctx))
				cancel()
				if err != nil {
					if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, jetstream.ErrNoMessages) && pulls.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
						w.logf("cannot pull a task: %v", err)
						time.Sleep(time.Second)
					}
					continue
				}
				if w.draining.Load() {
					m.Nak() // at once to another worker
					return
				}
				w.handle(ctx, m)
			}
		})
	}
	wg.Wait()
	close(sweepDone)
	return nil
}

// Drain stops the worker taking tasks; the running ones run to their end.
func (w *Worker) Drain() {
	w.draining.Store(true)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopPulls != nil {
		w.stopPulls()
	}
}

// Interrupt stops the running tasks: sig goes to each one's run, which
// stops its harness; the worker hands the tasks back to the queue (nak)
// for another worker, and reports nothing of them.
func (w *Worker) Interrupt(sig os.Signal) {
	w.Drain()
	w.pool.Signal(sig)
}

// Counts are how many tasks the worker ran, by how they ended.
func (w *Worker) Counts() map[string]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]int{}
	for k, v := range w.counts {
		out[k] = v
	}
	return out
}

func (w *Worker) count(k string) {
	w.mu.Lock()
	if w.counts == nil {
		w.counts = map[string]int{}
	}
	w.counts[k]++
	w.mu.Unlock()
}

func (w *Worker) logf(format string, args ...any) {
	w.Logf(format, args...)
}

// Logf says what the worker does through Log, one call at a time: the
// worker's lines and its caller's never interleave.
func (w *Worker) Logf(format string, args ...any) {
	if w.Log != nil {
		w.logMu.Lock()
		defer w.logMu.Unlock()
		w.Log(format, args...)
	}
}

// sweep sweeps (Conn.Sweep) every ack wait until done is closed.
func (w *Worker) sweep(ctx context.Context, done chan struct{}) {
	t := time.NewTicker(max(w.ackWait, time.Second))
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if n, err := w.Conn.Sweep(ctx); err != nil {
				w.logf("cannot sweep the tasks given up on: %v", err)
			} else if n > 0 {
				w.logf("reported %d tasks given up on as failed", n)
			}
		}
	}
}

// objectName is a full commit id.
var objectName = lazyre.New(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// check checks a task's message: what a worker takes from the queue is
// checked as a batch file's entry is, and more, since anyone who can
// publish on the server can send one.
func check(t Task) error {
	if err := checkKey(t); err != nil {
		return err
	}
	return checkEntry(t)
}

// checkKey checks what a result of t would be reported as: its ids and
// its result's subject. A message that fails it is dropped, reporting
// nothing.
func checkKey(t Task) error {
	switch {
	case !batch.SafeName(t.Batch), !batch.SafeName(t.Submission):
		return errors.New("its batch or submission id is not a safe name")
	case t.Entry.ID != t.Task:
		return errors.New("its entry is not the task its subject names")
	case t.ResultSubject != t.Key.ResultSubject():
		return errors.New("its result subject is not its own")
	}
	return nil
}

// checkEntry checks the rest of t: its entry, repository and commit. A
// task that fails it is reported failed, saying why (refuse), so that its
// submitter does not wait for it.
func checkEntry(t Task) error {
	switch {
	case t.Entry.Repo == "" || t.Entry.Dir != "":
		return errors.New("it names no repository, or a directory")
	case !objectName().MatchString(t.Commit):
		return errors.New("its commit is not a full commit id")
	case quote.Text(t.Entry.Repo) != t.Entry.Repo || quote.Text(t.Entry.Ref) != t.Entry.Ref:
		// They go into the logs and the result as they are.
		return errors.New("its repository url or ref holds characters that are not printable")
	case gitwork.HasCredentials(t.Entry.Repo):
		// The submitter refuses it: a credential would go on into the
		// result and the logs.
		return errors.New("its repository url holds a password or token")
	}
	if err := gitwork.CheckURL(t.Entry.Repo); err != nil {
		return err
	}
	return t.Entry.Validate()
}

// handle runs the task of m to its end, reports it and acks it; or hands
// it back (nak) when it could not run to a result.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		m.Term()
		return
	}
	delivery := int(meta.NumDelivered)
	var t Task
	if err := json.Unmarshal(m.Data(), &t); err == nil {
		if k, kerr := KeyOf(m.Subject()); kerr != nil || k != t.Key {
			err = errors.New("its subject is not its key's")
		} else if err = checkKey(t); err == nil {
			if err := checkEntry(t); err != nil {
				w.refuse(ctx, m, t, delivery, err)
				return
			}
		}
		if err != nil {
			w.logf("dropped a task on %s: %v", quote.Name(m.Subject()), err)
			m.TermWithReason("not a valid workforce task")
			return
		}
	} else {
		w.logf("dropped a message on %s: not a task: %v", quote.Name(m.Subject()), err)
		m.TermWithReason("not a workforce task")
		return
	}
	name := t.Batch + "/" + t.Task
	stop := w.heartbeat(m)
	defer stop()
	rs, err := w.Conn.resultsOf(ctx, t.Key)
	if _, ok := firstSealed(rs, t.Seal); err == nil && ok {
		w.logf("task %s: reported before (delivery %d): skipped", name, delivery)
		w.ack(ctx, m)
		w.count("skipped")
		return
	}
	// Results its seal does not verify are none of its workers': its
	// own goes beside them (seal.go).
	beside := err == nil && len(rs) > 0
	if beside {
		w.logf("task %s: %d result(s) of it that its seal does not verify: running it, its result reported beside them", name, len(rs))
		w.count("unsealed")
	}
	w.logf("task %s: started (delivery %d)", name, delivery)
	r, kept, err := w.run(ctx, t)
	if err != nil {
		// Nothing ran to a result: a checkout that failed, a run
		// interrupted by the worker's stop.
		if r.Status == report.StatusInterrupted {
			w.logf("task %s: interrupted; handed back to the queue", name)
			m.Nak()
			w.count("handed back")
			return
		}
		if delivery < w.maxDeliver() {
			w.logf("task %s: %v; handed back to the queue (delivery %d of %d)", name, err, delivery, w.maxDeliver())
			m.NakWithDelay(w.RetryDelay)
			w.count("handed back")
			return
		}
		now := time.Now().UTC()
		r = Result{Key: t.Key, Digest: t.Digest, Status: report.StatusFailed, Started: now, Finished: now,
			Error: fmt.Sprintf("%v (delivery %d of %d)", err, delivery, w.maxDeliver())}
	}
	r.Worker, r.Delivery = w.Name, delivery
	if r.Result != nil {
		r.Result.Worker = w.Name
	}
	fit(&r, w.Conn.nc.MaxPayload())
	// Another worker's result may have come while this one ran (the
	// task delivered again after a lost heartbeat): reported once.
	var rerr error
	if _, ok, lerr := w.Conn.LookupResult(ctx, t.Key, t.Seal); lerr == nil && ok {
		rerr = ErrReported
	} else {
		rerr = w.report(ctx, r, t.Seal, beside)
	}
	switch err := rerr; {
	case errors.Is(err, ErrReported):
		w.logf("task %s: %s, but another worker reported it first", name, r.Status)
	case err != nil:
		// Not reported: the task comes back after the ack wait, and
		// runs again (at least once).
		w.logf("task %s: %s, but the result could not be reported: %v", name, r.Status, err)
		stop()
		w.count("unreported")
		return
	default:
		line := fmt.Sprintf("task %s: %s (%s)", name, r.Status, r.Finished.Sub(r.Started).Round(100*time.Millisecond))
		if rr := r.Result; rr != nil && rr.Published != nil && rr.Published.Branch != "" {
			line += fmt.Sprintf(", branch %s pushed", rr.Published.Branch)
		}
		if kept != "" {
			line += ", its clone kept in " + quote.Name(kept)
		}
		w.logf("%s", line)
	}
	w.count(string(r.Status))
	w.ack(ctx, m)
}

// refuse reports the task t of m failed, saying why it is not a task the
// worker runs (err), and takes it off the queue.
func (w *Worker) refuse(ctx context.Context, m jetstream.Msg, t Task, delivery int, err error) {
	name := t.Batch + "/" + quote.Name(t.Task)
	w.logf("task %s: refused: %v", name, err)
	now := time.Now().UTC()
	r := Result{Key: t.Key, Digest: t.Digest, Worker: w.Name, Delivery: delivery, Status: report.StatusFailed, Started: now, Finished: now,
		Error: fmt.Sprintf("refused by worker %s: %v", w.Name, err)}
	if err := w.report(ctx, r, t.Seal, false); err != nil && !errors.Is(err, ErrReported) {
		w.logf("task %s: refused, but the result could not be reported: %v", name, err)
	}
	m.TermWithReason("not a valid workforce task")
	w.count("refused")
}

// ack acks m and waits for the server to confirm it.
func (w *Worker) ack(ctx context.Context, m jetstream.Msg) {
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		w.logf("cannot ack a task: %v", err)
	}
}

// maxDeliver is the consumer's MaxDeliver, as it is on the server.
func (w *Worker) maxDeliver() int {
	if w.maxDel <= 0 {
		return MaxDeliver
	}
	return w.maxDel
}

// heartbeat tells the server, every third of the ack wait, that the task
// of m is in progress, until the returned stop is called.
func (w *Worker) heartbeat(m jetstream.Msg) (stop func()) {
	done := make(chan struct{})
	var once sync.Once
	go func() {
		t := time.NewTicker(max(w.ackWait/3, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				m.InProgress()
			}
		}
	}()
	return func() { once.Do(func() { close(done) }) }
}

// report publishes r signed with seal (beside results of its task that
// the seal does not verify, when beside), trying again for a minute when
// the server cannot be reached.
func (w *Worker) report(ctx context.Context, r Result, seal string, beside bool) error {
	var err error
	for i := range 30 {
		if i > 0 {
			time.Sleep(2 * time.Second)
		}
		if err = w.Conn.publishResult(ctx, r, seal, beside); err == nil || errors.Is(err, ErrReported) || w.Conn.nc.IsClosed() {
			return err
		}
	}
	return err
}

// run checks out t and runs it, then publishes its work; the attempt of
// an evaluation (Entry.Attempt) publishes nothing, its work being the
// patch its run's result carries. An error says
// why it ran to no result (r.Status interrupted when the worker's stop
// interrupted it). kept is the task's directory when it stays (its work
// could not be pushed).
func (w *Worker) run(ctx context.Context, t Task) (r Result, kept string, err error) {
	dir, err := os.MkdirTemp(filepath.Join(w.Dir, "tasks"), Token(t.Task)+"-")
	if err != nil {
		return r, "", err
	}
	unlock := lockDir(dir)
	defer func() {
		unlock()
		if kept == "" {
			os.RemoveAll(dir)
		}
	}()
	clone := filepath.Join(dir, "repo")
	if err := w.Git.Checkout(ctx, t.Entry.Repo, t.Commit, clone); err != nil {
		return r, "", fmt.Errorf("cannot check out %s: %w", t.Commit, err)
	}
	stderr, _ := os.Create(filepath.Join(dir, "stderr.txt"))
	events, _ := os.Create(filepath.Join(dir, "events.jsonl"))
	defer closeFiles(stderr, events)
	cmd := batch.Command(w.Exe, t.Entry, clone)
	if t.Entry.Attempt == nil {
		// All the agent's work into the clone, to publish.
		cmd.Args = append(cmd.Args, "--sync-committed", "--sync-deletes")
	}
	// The clone's project layer is whoever published the task's: the
	// persona is the worker's (its user's layers and the catalog).
	cmd.Args = append(cmd.Args, "--no-project-personas")
	for _, p := range w.DenyRead {
		cmd.Args = append(cmd.Args, "--sandbox-deny-read", p)
	}
	cmd.Env = w.Env
	var o batch.Outcome
	ran := false
	w.pool.Run([]batch.Task{t.Entry}, func(bt batch.Task, started func(*os.Process)) batch.Outcome {
		return batch.RunTask(cmd, bt.ID, fileOrNil(events), fileOrNil(stderr), nil, started)
	}, func(_ batch.Task, out batch.Outcome) { o, ran = out, true })
	if !ran || o.Status == report.StatusInterrupted {
		return Result{Status: report.StatusInterrupted}, "", errors.New("interrupted")
	}
	code := o.ExitCode
	r = Result{Key: t.Key, Digest: t.Digest, Status: o.Status, Started: o.Started.UTC(), Finished: o.Finished.UTC(),
		ExitCode: &code, Error: o.Error, Result: o.Result}
	if o.Result == nil || o.Result.SessionID == "" {
		return r, "", nil // no run, nothing to publish
	}
	if t.Entry.Attempt != nil {
		// An evaluation's attempt (run --attempt): its check ran here,
		// nothing came back into the clone, and its work is the patch
		// of its result; nothing is pushed.
		return r, "", nil
	}
	rr := o.Result
	branch := "workforce/" + rr.SessionID // session.BranchName
	var p Published
	for i := range pushTries {
		if i > 0 {
			time.Sleep(time.Duration(i) * 2 * time.Second)
		}
		if p, err = w.Git.Publish(ctx, clone, t.Entry.Repo, t.Commit, branch); err == nil {
			break
		}
	}
	r.Finished = time.Now().UTC()
	if err != nil {
		msg := fmt.Sprintf("the agent's work could not be pushed to %s: %v; it stays in the worker %s, in %s", gitwork.Redact(t.Entry.Repo), err, w.Name, quote.Name(dir))
		rr.Warnings = append(rr.Warnings, msg)
		rr.Status, r.Status, r.Error = report.StatusFailed, report.StatusFailed, msg
		rr.Published = &report.Published{Repo: t.Entry.Repo, Base: t.Commit}
		return r, dir, nil
	}
	rr.Published = &report.Published{Repo: t.Entry.Repo, Branch: p.Branch, Base: t.Commit, Commit: p.Commit, Files: p.Files}
	rr.Patch = p.Patch
	return r, "", nil
}

// fit drops the patch of r when r would not fit in a message of limit
// bytes, with a warning: the branch holds the work all the same. When r
// is too large even so (an agent that made many thousands of files, or
// wrote a huge final message), the result keeps how the run ended and
// where its work went, and the agent's message and the errors cut short;
// the lists of files, denials and warnings go, with a warning: a result
// that cannot be sent would make the task run again and again.
func fit(r *Result, limit int64) {
	room := limit - 1024
	size := func() int64 {
		data, err := json.Marshal(r)
		if err != nil {
			return 0
		}
		return int64(len(data))
	}
	if size() <= room {
		return
	}
	if rr := r.Result; rr != nil && rr.Patch != "" {
		n := len(rr.Patch)
		rr.Patch = ""
		rr.Warnings = append(rr.Warnings,
			fmt.Sprintf("the patch (%d bytes) is left out: it does not fit in a message of the queue (%d bytes); the branch holds the work", n, limit))
		if size() <= room {
			return
		}
	}
	n := size()
	text := max(room/8, 256)
	r.Error = cutText(r.Error, text)
	if rr := r.Result; rr != nil {
		slim := report.Result{TaskID: rr.TaskID, SessionID: rr.SessionID, Persona: rr.Persona, Tier: rr.Tier, Harness: rr.Harness,
			HarnessVersion: rr.HarnessVersion, Model: rr.Model, HarnessSessionID: rr.HarnessSessionID, Status: rr.Status,
			ExitCode: rr.ExitCode, Message: cutText(rr.Message, text), Usage: rr.Usage, Denials: []report.Denial{}, Branch: rr.Branch,
			DurationMS: rr.DurationMS, Published: rr.Published, Worker: rr.Worker}
		slim.Warnings = []string{fmt.Sprintf("the result (%d bytes) does not fit in a message of the queue (%d bytes): "+
			"the agent's message is cut, and the lists of files, denials and warnings are left out; the branch holds the work", n, limit)}
		*rr = slim
	}
}

// cutText is s cut to n bytes at most (and an ellipsis), at the start of
// a character.
func cutText(s string, n int64) string {
	if int64(len(s)) <= n {
		return s
	}
	i := int(n)
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// fileOrNil is f as a writer, nil when f is.
func fileOrNil(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// lockDir locks the task directory dir for this worker (a lock file in
// it, held until unlock): removeStale leaves it alone while it is held.
func lockDir(dir string) (unlock func()) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return func() {}
	}
	unix.Flock(int(f.Fd()), unix.LOCK_EX)
	return func() { f.Close() }
}

// removeStale removes the task directories under tasks that no worker
// holds: those of a worker that died (their tasks run again elsewhere).
// A directory younger than a minute may be one another worker is making.
func removeStale(tasks string) {
	entries, err := os.ReadDir(tasks)
	if err != nil {
		return
	}
	for _, e := range entries {
		dir := filepath.Join(tasks, e.Name())
		fi, err := e.Info()
		if err != nil || !e.IsDir() || time.Since(fi.ModTime()) < time.Minute {
			continue
		}
		f, err := os.Open(filepath.Join(dir, "lock"))
		if err != nil {
			os.RemoveAll(dir) // never locked: its worker died making it
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
