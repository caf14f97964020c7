package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/gitwork"
	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/urfave/cli/v2"
)

// queueFlags are the flags that reach the queue's server, for batch,
// batch status and worker. fromEnv takes --queue's default from
// $WORKFORCE_QUEUE (worker only: batch runs on this machine unless told).
func queueFlags(fromEnv bool) []cli.Flag {
	q := &cli.StringFlag{Name: "queue", Usage: "the NATS server with JetStream: nats://HOST[:PORT] (tls://, ws://, wss://; several separated by commas)"}
	if fromEnv {
		q.EnvVars = []string{"WORKFORCE_QUEUE"}
	}
	return []cli.Flag{q,
		&cli.StringFlag{Name: "queue-creds", Usage: "a NATS credentials file (a user JWT and its NKey seed)", TakesFile: true},
		&cli.StringFlag{Name: "queue-nkey", Usage: "a NATS NKey seed file", TakesFile: true},
		&cli.StringFlag{Name: "queue-tls-ca", Usage: "the CA certificate to verify the NATS server with", TakesFile: true},
		&cli.StringFlag{Name: "queue-tls-cert", Usage: "a TLS client certificate for the NATS server (with --queue-tls-key)", TakesFile: true},
		&cli.StringFlag{Name: "queue-tls-key", Usage: "the key of --queue-tls-cert", TakesFile: true},
	}
}

// queueEnvPrefixes start the names of the variables that set a queue's
// connection, whatever reads them: workforce's own (WORKFORCE_QUEUE, and
// any WORKFORCE_QUEUE_* a flag may take one day) and the NATS tools'
// (NATS_URL, NATS_CREDS, NATS_NKEY, NATS_USER, NATS_PASSWORD, ...).
var queueEnvPrefixes = []string{"WORKFORCE_QUEUE", "NATS_"}

// queueSettingFlags are the flags whose values reach the queue's server
// or set up a worker: queueFlags and the worker's own. Their variables
// (EnvVars) are stripped from a task's environment (taskEnv), so that a
// flag added here with a variable is stripped too.
func queueSettingFlags() []cli.Flag {
	return append(queueFlags(true), workerCommand().Flags...)
}

// queueEnvVar reports whether the variable name sets a queue's
// connection or a worker: a name of queueEnvPrefixes, or a variable a
// flag of queueSettingFlags reads.
func queueEnvVar(name string) bool {
	for _, p := range queueEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, f := range queueSettingFlags() {
		if df, ok := f.(cli.DocGenerationFlag); ok && slices.Contains(df.GetEnvVars(), name) {
			return true
		}
	}
	return false
}

// taskEnv is env without the variables of a queue (queueEnvVar): the
// environment a task's run gets, on a worker and in the local pool. The
// agent of a task must not hold the login of the worker that runs it:
// with it, it could report a forged result for every later task.
func taskEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !queueEnvVar(name) {
			out = append(out, kv)
		}
	}
	return out
}

// queueOptions are the connection options of the command line; name
// names the connection on the server.
func queueOptions(c *cli.Context, name string) (queue.Options, error) {
	o := queue.Options{URL: c.String("queue"), Creds: c.String("queue-creds"), NKey: c.String("queue-nkey"),
		TLSCA: c.String("queue-tls-ca"), TLSCert: c.String("queue-tls-cert"), TLSKey: c.String("queue-tls-key"), Name: name}
	if err := queue.CheckURL(o.URL); err != nil {
		return o, usageError(fmt.Errorf("--queue: %w", err))
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return o, usagef("--queue-tls-cert and --queue-tls-key go together")
	}
	for flag, path := range map[string]string{"--queue-creds": o.Creds, "--queue-nkey": o.NKey, "--queue-tls-ca": o.TLSCA, "--queue-tls-cert": o.TLSCert, "--queue-tls-key": o.TLSKey} {
		if path == "" {
			continue
		}
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			return o, usagef("%s %s: not a file", flag, path)
		}
	}
	if err := o.CheckFiles(); err != nil {
		return o, usageError(err)
	}
	return o, nil
}

// queueArgs are the flags that reach the same server again, for hints:
// the URL with any password in it hidden.
func queueArgs(o queue.Options) []string {
	args := []string{"--queue", queue.Redact(o.URL)}
	for _, f := range []struct{ flag, v string }{{"--queue-creds", o.Creds}, {"--queue-nkey", o.NKey}, {"--queue-tls-ca", o.TLSCA},
		{"--queue-tls-cert", o.TLSCert}, {"--queue-tls-key", o.TLSKey}} {
		if f.v != "" {
			args = append(args, f.flag, f.v)
		}
	}
	return args
}

// queueEntryProblem says what keeps the entry t from going to a queue,
// "" when nothing does: a queue's task names its repository (repo, ref),
// never a directory of this machine, and its URL holds no password (the
// workers fetch and push with their own credentials; a message carries
// none).
func queueEntryProblem(t batch.Task) string {
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

// queueInfo is what a batch's state keeps of a task's publication:
// tasks/<id>/queue.json.
type queueInfo struct {
	Submission string    `json:"submission"`
	Commit     string    `json:"commit"`
	Published  time.Time `json:"published"`
}

func queueInfoPath(st *batch.State, id string) string {
	return filepath.Join(st.TaskDir(id), "queue.json")
}

func readQueueInfo(st *batch.State, id string) (queueInfo, bool) {
	var qi queueInfo
	data, err := os.ReadFile(queueInfoPath(st, id))
	if err != nil || json.Unmarshal(data, &qi) != nil || qi.Submission == "" {
		return qi, false
	}
	return qi, true
}

func writeQueueInfo(st *batch.State, id string, qi queueInfo) error {
	data, err := json.Marshal(qi)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.TaskDir(id), 0o700); err != nil {
		return err
	}
	return renameio.WriteFile(queueInfoPath(st, id), append(data, '\n'), 0o600)
}

// newSubmission is the id of a publication: the time and a few random
// digits.
func newSubmission() string {
	b := make([]byte, 3)
	rand.Read(b)
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}

// resolveRef is gitwork.ResolveRef (a variable for the tests of hints).
var resolveRef = gitResolveRef

func batchQueueAction(c *cli.Context, opts batchOptions) error {
	if c.IsSet("jobs") {
		return usagef("--jobs does not go with --queue: each worker runs its own number of tasks (workforce worker --jobs)")
	}
	qo, err := queueOptions(c, "workforce batch")
	if err != nil {
		return err
	}
	return runBatchQueue(c.Context, newStreams(c), opts, qo, c.Bool("detach"))
}

// followed is a task the submitter waits for: its key and its entry.
type followed struct {
	key   queue.Key
	entry batch.Task
}

// runBatchQueue runs the batch file on a queue: it checks the file as the
// local pool does, decides what to publish as the local pool decides what
// to run (a task published before and not reported yet is followed, not
// published again), resolves each task's ref to a commit, publishes, and
// follows the results (or, detached, exits).
func runBatchQueue(ctx context.Context, ios *iostreams, opts batchOptions, qo queue.Options, detach bool) error {
	b, err := openBatch(opts, queueEntryProblem)
	if err != nil {
		return err
	}
	defer b.Close()
	abs, id, st, tasks, ids, plain, byID, states := b.File, b.ID, b.State, b.Tasks, b.IDs, b.Entries, b.ByID, b.States
	out := newBatchOutput(ios, opts.JSON, len(tasks))
	out.prepared = byID

	// A task queued before whose result came while nobody followed is
	// done: its result goes in the state before the plan, so that it is
	// skipped, or published again with --retry failed, as on this
	// machine.
	var conn *queue.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	connect := func() error {
		if conn == nil {
			c, err := queue.Connect(ctx, qo)
			if err != nil {
				return err
			}
			conn = c
		}
		return nil
	}
	var came map[string]bool
	if queuedResults(st, ids, states) {
		if err := connect(); err != nil {
			return err
		}
		if came, err = recordQueueResults(ctx, conn, st, true, ids, states); err != nil {
			return err
		}
	}

	// What to do with each task: follow what was published and not
	// reported yet (the same entry), skip or publish the rest as the
	// local pool skips or runs.
	var follow []followed
	var toPublish []batch.Task
	var withdraw []queue.Key
	reported := 0 // published before, reported since
	for _, d := range batch.Plan(plain, states, opts.Retry) {
		prev := d.Prev
		var qi queueInfo
		wasQueued := prev != nil && prev.Phase == queue.PhaseQueued
		if wasQueued {
			var ok bool
			if qi, ok = readQueueInfo(st, d.Task.ID); !ok {
				wasQueued = false
			}
		}
		key := queue.Key{Batch: id, Submission: qi.Submission, Task: d.Task.ID}
		switch {
		case wasQueued && prev.Digest == d.Task.Digest():
			follow = append(follow, followed{key: key, entry: d.Task})
		case d.Run:
			if wasQueued {
				withdraw = append(withdraw, key)
			}
			toPublish = append(toPublish, d.Task)
		case came[d.Task.ID]:
			// Published before and reported since: its first showing.
			out.done(*prev)
			reported++
		default:
			out.skipped(*prev)
		}
	}
	published := 0 // of toPublish: fewer when a signal stops the publishing
	summary := func() {
		fmt.Fprintf(ios.Err, "workforce: batch %s: %d tasks published to %s, %d published before, %d done before\n",
			id, published, queue.Redact(qo.URL), len(follow)-published+reported, len(tasks)-len(follow)-reported)
	}
	if len(toPublish) == 0 && len(follow) == 0 {
		if !opts.JSON {
			if reported > 0 {
				summary()
			}
			printBatchTable(ios.Out, ids, states)
		}
		return silentExit(batchStatus(ids, states))
	}

	// Resolve every ref before anything is published: a ref that names
	// nothing is the file's error.
	commits := map[[2]string]string{}
	for _, t := range toPublish {
		ref := t.Ref
		if ref == "" {
			ref = "HEAD"
		}
		k := [2]string{t.Repo, ref}
		if _, ok := commits[k]; ok {
			continue
		}
		c, err := resolveRef(ctx, t.Repo, ref)
		if err != nil {
			return usageError(&batch.ParseError{File: opts.File, Line: byID[t.ID].Line, Err: fmt.Errorf("task %s: %w", t.ID, err)})
		}
		commits[k] = c
	}

	if err := connect(); err != nil {
		return err
	}
	// From here on a signal stops the submitter as while it follows
	// (followBatch): one that comes while it publishes ends the
	// publishing after the task under way, and the table and how to
	// follow again are printed whenever it came. (It was caught only
	// once the following began: one that came just after the last task
	// was published killed the submitter without a word.)
	var sigs *stopSignals
	if !detach {
		sigs = catchSignals()
		defer sigs.stop()
	}
	if err := st.WriteInfo(batch.Info{ID: id, File: abs, Tasks: ids, Updated: time.Now().UTC()}); err != nil {
		return err
	}
	for _, k := range withdraw {
		if err := conn.Withdraw(ctx, k); err != nil {
			return fmt.Errorf("cannot take task %s's earlier publication back: %w", k.Task, err)
		}
	}
	// A task published before whose message is gone with no result (the
	// submitter died before it could publish it) is published again, as
	// the same key: a no-op if it is there after all.
	for _, f := range follow {
		if _, ok, err := conn.LookupResult(ctx, f.key); err != nil || ok {
			continue
		}
		if q, err := conn.Queued(ctx, f.key); err == nil && !q {
			qi, _ := readQueueInfo(st, f.key.Task)
			if err := conn.Publish(ctx, queue.NewTask(f.key, f.entry, qi.Commit)); err != nil {
				return err
			}
		}
	}
	submission := newSubmission()
	for _, t := range toPublish {
		if sigs.caught() != nil {
			break // the rest is published by the next run
		}
		ref := t.Ref
		if ref == "" {
			ref = "HEAD"
		}
		commit := commits[[2]string{t.Repo, ref}]
		key := queue.Key{Batch: id, Submission: submission, Task: t.ID}
		msg := queue.NewTask(key, t, commit)
		// The state first: a submitter that dies after it publishes
		// the task again as the same key next time, never twice.
		if err := writeQueueInfo(st, t.ID, queueInfo{Submission: submission, Commit: commit, Published: msg.Published}); err != nil {
			return err
		}
		if err := st.WriteTask(batch.TaskState{ID: t.ID, Digest: msg.Digest, Entry: t, Phase: queue.PhaseQueued}); err != nil {
			return err
		}
		if err := conn.Publish(ctx, msg); err != nil {
			return err
		}
		follow = append(follow, followed{key: key, entry: t})
		published++
	}
	again := "workforce batch " + shellJoin(append(resumeArgs(opts), queueArgs(qo)...))
	status := "workforce batch status " + shellJoin(append([]string{id}, queueArgs(qo)...))
	if !opts.JSON || detach {
		summary()
	}
	if detach && opts.JSON {
		// --json: stdout holds JSON lines only; the batch's id is one.
		line, err := marshalLine(struct {
			BatchID   string `json:"batchId"`
			Following int    `json:"following"`
		}{id, len(follow)})
		if err != nil {
			return err
		}
		ios.Out.Write(line)
	} else if detach {
		fmt.Fprintf(ios.Out, "%s\n", id)
	}
	if detach {
		fmt.Fprintf(ios.Err, "workforce: the workers run them; see how they stand with: %s\nworkforce: or follow them to their end with: %s\n", status, again)
		return nil
	}
	return followBatch(ctx, ios, conn, st, out, opts.JSON, ids, follow, again, sigs)
}

// followBatch waits for the results of the tasks follow, records each in
// the batch's state and prints it, until every one has come or a signal
// of sigs (caught already, or coming while it follows) stops the
// following (the tasks run on).
func followBatch(ctx context.Context, ios *iostreams, conn *queue.Conn, st *batch.State, out *batchOutput, asJSON bool,
	ids []string, follow []followed, again string, sigs *stopSignals) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waiting := map[string]followed{}
	for _, f := range follow {
		waiting[f.key.Task] = f
	}
	var mu sync.Mutex
	var writeErr error
	var stoppedBy os.Signal
	go func() {
		if sig := sigs.wait(ctx.Done()); sig != nil {
			mu.Lock()
			stoppedBy = sig
			mu.Unlock()
			cancel()
		}
	}()
	// Sweep now and then: a task every worker died on is reported
	// failed (queue.Sweep), even when no worker is left to do it.
	go func() {
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			conn.Sweep(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	out.start()
	err := conn.Follow(ctx, st.ID, func(r queue.Result) {
		mu.Lock()
		defer mu.Unlock()
		f, ok := waiting[r.Task]
		if !ok || f.key != r.Key {
			return // another submission's, or reported already
		}
		delete(waiting, r.Task)
		ts := r.State(f.entry)
		if err := st.WriteTask(ts); err != nil && writeErr == nil {
			writeErr = err
		}
		out.done(ts)
		if len(waiting) == 0 {
			cancel()
		}
	})
	out.finish()
	mu.Lock()
	sig, left := stoppedBy, len(waiting)
	mu.Unlock()
	if err != nil && left > 0 && sig == nil {
		return fmt.Errorf("lost the results of the queue: %w; follow them again with: %s", err, again)
	}
	if writeErr != nil {
		return fmt.Errorf("cannot write the batch's state: %w", writeErr)
	}
	final, err := st.ReadTasks(ids)
	if err != nil {
		return err
	}
	if !asJSON {
		printBatchTable(ios.Out, ids, final)
	}
	if sig != nil && left > 0 {
		fmt.Fprintf(ios.Err, "workforce: %v: stopped following batch %s; its %d queued tasks run on on the workers. Follow them again with: %s\n", sig, st.ID, left, again)
		return silentExit(signalStatus(sig))
	}
	return silentExit(batchStatus(ids, final))
}

func batchStatusQueueAction(c *cli.Context) error {
	qo, err := queueOptions(c, "workforce batch status")
	if err != nil {
		return err
	}
	return runBatchStatusQueue(c.Context, newStreams(c), newProcEnv(), c.Args().First(), c.Bool("json"), qo)
}

// runBatchStatusQueue shows a batch that runs on a queue: the batch's
// state on this machine, with each queued task's result when it has come
// (recorded in the state, unless the submitter that follows the batch
// holds it); without a state here, what the queue has of the batch: the
// results and the tasks waiting.
func runBatchStatusQueue(ctx context.Context, ios *iostreams, env procEnv, arg string, asJSON bool, qo queue.Options) error {
	home, err := env.home()
	if err != nil {
		return err
	}
	id := arg
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return err
		}
		id = batch.IDFor(abs)
	}
	if !batch.SafeName(id) {
		return usagef("batch status: %q is not a batch id", id)
	}
	conn, err := queue.Connect(ctx, qo)
	if err != nil {
		return err
	}
	defer conn.Close()
	conn.Sweep(ctx)
	var ids []string
	var states map[string]batch.TaskState
	file := "(no state on this machine: from the queue)"
	st, err := batch.Existing(home, id)
	switch {
	case err == nil:
		info, err := st.ReadInfo()
		if err != nil {
			return err
		}
		ids, file = info.Tasks, info.File
		if states, err = st.ReadTasks(ids); err != nil {
			return err
		}
		mine := st.Lock() == nil // not while a submitter follows it
		if mine {
			defer st.Unlock()
		}
		if _, err := recordQueueResults(ctx, conn, st, mine, ids, states); err != nil {
			return err
		}
	case errors.Is(err, fs.ErrNotExist) || strings.HasPrefix(err.Error(), "no batch "):
		ids, states, err = queueStates(ctx, conn, id)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return withCode(exitFailure, fmt.Errorf("no batch %s here or on the queue", id), "workforce batch FILE --queue URL starts one; its id is printed as it starts")
		}
	default:
		return err
	}
	if asJSON {
		for _, tid := range ids {
			ts, ok := states[tid]
			if !ok {
				ts = batch.TaskState{ID: tid, Phase: batch.PhasePending}
			}
			line, err := marshalLine(ts)
			if err != nil {
				return err
			}
			ios.Out.Write(line)
		}
		return nil
	}
	fmt.Fprintf(ios.Out, "batch %s: %s\n", id, file)
	printBatchTable(ios.Out, ids, states)
	return nil
}

// queuedResults reports whether a task of ids is queued in the batch's
// state: its result may have come meanwhile.
func queuedResults(st *batch.State, ids []string, states map[string]batch.TaskState) bool {
	for _, tid := range ids {
		if ts, ok := states[tid]; ok && ts.Phase == queue.PhaseQueued {
			if _, ok := readQueueInfo(st, tid); ok {
				return true
			}
		}
	}
	return false
}

// recordQueueResults puts in states the result of each queued task of
// ids whose result has come, and with write records it in the batch's
// state st (who holds the batch's lock writes). came are the tasks whose
// result it put in states.
func recordQueueResults(ctx context.Context, conn *queue.Conn, st *batch.State, write bool, ids []string, states map[string]batch.TaskState) (came map[string]bool, err error) {
	came = map[string]bool{}
	for _, tid := range ids {
		ts, ok := states[tid]
		if !ok || ts.Phase != queue.PhaseQueued {
			continue
		}
		qi, ok := readQueueInfo(st, tid)
		if !ok {
			continue
		}
		r, ok, err := conn.LookupResult(ctx, queue.Key{Batch: st.ID, Submission: qi.Submission, Task: tid})
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		states[tid] = r.State(ts.Entry)
		if write {
			if err := st.WriteTask(states[tid]); err != nil {
				return nil, err
			}
		}
		came[tid] = true
	}
	return came, nil
}

// queueStates are the states of batch id as the queue has them: a task
// with a result is done (the latest result, when it ran several times);
// one waiting for a worker or running is queued.
func queueStates(ctx context.Context, conn *queue.Conn, id string) ([]string, map[string]batch.TaskState, error) {
	results, err := conn.Results(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	pending, err := conn.Pending(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	states := map[string]batch.TaskState{}
	for _, r := range results {
		if prev, ok := states[r.Task]; ok && prev.Finished != nil && prev.Finished.After(r.Finished) {
			continue
		}
		states[r.Task] = r.State(batch.Task{ID: r.Task})
	}
	for _, k := range pending {
		states[k.Task] = batch.TaskState{ID: k.Task, Phase: queue.PhaseQueued}
	}
	ids := make([]string, 0, len(states))
	for tid := range states {
		ids = append(ids, tid)
	}
	slices.Sort(ids)
	return ids, states, nil
}

// stopSignals are the signals that stop a submitter (Ctrl-C, SIGTERM,
// SIGHUP), caught from before it publishes to its end: one that comes at
// any moment after the first task is recorded leaves the tasks to the
// workers, and the submitter says how to follow them again.
type stopSignals struct {
	ch  chan os.Signal
	got os.Signal
}

// catchSignals catches the signals that stop a submitter until stop.
func catchSignals() *stopSignals {
	s := &stopSignals{ch: make(chan os.Signal, 4)}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	return s
}

func (s *stopSignals) stop() { signal.Stop(s.ch) }

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
