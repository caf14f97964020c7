package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/batch"
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

// runBatchQueue runs the batch file on a queue (queue.Submitter): it
// publishes what the plan says and follows the results (or, detached,
// exits), printing the progress as the local pool does.
func runBatchQueue(ctx context.Context, ios *iostreams, opts batchOptions, qo queue.Options, detach bool) error {
	b, err := openBatch(opts, queue.EntryProblem)
	if err != nil {
		return err
	}
	defer b.Close()
	out := newBatchOutput(ios, opts.JSON, len(b.Tasks))
	out.prepared = b.ByID
	s := &queue.Submitter{Batch: b, Options: qo, Retry: opts.Retry}
	if !detach {
		s.Signals = notifyStop
	}
	defer s.Close()
	sub, err := s.Submit(ctx, out.hooks())
	var fe *batch.FileError
	if errors.As(err, &fe) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	summary := func() {
		fmt.Fprintf(ios.Err, "workforce: batch %s: %d tasks published to %s, %d published before, %d done before\n",
			b.ID, sub.Published, queue.Redact(qo.URL), sub.Following-sub.Published+sub.Reported, len(b.Tasks)-sub.Following-sub.Reported)
	}
	if sub.Idle {
		if !opts.JSON {
			if sub.Reported > 0 {
				summary()
			}
			printBatchTable(ios.Out, b.IDs, sub.States)
		}
		return silentExit(batchStatus(b.IDs, sub.States))
	}
	again := "workforce batch " + shellJoin(append(resumeArgs(opts), queueArgs(qo)...))
	if !opts.JSON || detach {
		summary()
	}
	if detach {
		status := "workforce batch status " + shellJoin(append([]string{b.ID}, queueArgs(qo)...))
		return printDetached(ios, b.ID, sub.Following, opts.JSON, status, again)
	}
	return followBatch(ctx, ios, s, out, opts.JSON, again)
}

// printDetached prints what a detached submitter published: the batch's
// id (with --json, a JSON line: stdout holds JSON lines only), and how to
// see and follow its tasks.
func printDetached(ios *iostreams, id string, following int, asJSON bool, status, again string) error {
	if asJSON {
		line, err := marshalJSONLine(struct {
			BatchID   string `json:"batchId"`
			Following int    `json:"following"`
		}{id, following})
		if err != nil {
			return err
		}
		ios.Out.Write(line)
	} else {
		fmt.Fprintf(ios.Out, "%s\n", id)
	}
	fmt.Fprintf(ios.Err, "workforce: the workers run them; see how they stand with: %s\nworkforce: or follow them to their end with: %s\n", status, again)
	return nil
}

// followBatch follows the results of the submitter's tasks
// (queue.Submitter.Follow), prints each, then the table, and says how to
// follow them again when a signal stopped the following.
func followBatch(ctx context.Context, ios *iostreams, s *queue.Submitter, out *batchOutput, asJSON bool, again string) error {
	f, err := s.Follow(ctx, out.hooks())
	if err != nil {
		return err
	}
	if f.Lost != nil {
		return fmt.Errorf("lost the results of the queue: %w; follow them again with: %s", f.Lost, again)
	}
	if !asJSON {
		printBatchTable(ios.Out, f.IDs, f.States)
	}
	if f.Signal != nil {
		fmt.Fprintf(ios.Err, "workforce: %v: stopped following batch %s; its %d queued tasks run on on the workers. Follow them again with: %s\n", f.Signal, s.Batch.ID, f.Left, again)
		return silentExit(signalStatus(f.Signal))
	}
	return silentExit(batchStatus(f.IDs, f.States))
}

func batchStatusQueueAction(c *cli.Context) error {
	qo, err := queueOptions(c, "workforce batch status")
	if err != nil {
		return err
	}
	return runBatchStatusQueue(c.Context, newStreams(c), newProcEnv(), c.Args().First(), c.Bool("json"), qo)
}

// runBatchStatusQueue shows a batch that runs on a queue
// (queue.ReadStatus): the batch's state on this machine with the results
// that came, or what the queue has of it.
func runBatchStatusQueue(ctx context.Context, ios *iostreams, env procEnv, arg string, asJSON bool, qo queue.Options) error {
	home, err := env.home()
	if err != nil {
		return err
	}
	id, err := batch.IDOf(arg)
	if err != nil {
		return err
	}
	if !batch.SafeName(id) {
		return usagef("batch status: %q is not a batch id", id)
	}
	st, err := queue.ReadStatus(ctx, qo, home, id)
	var nb *queue.NoBatchError
	if errors.As(err, &nb) {
		return withCode(exitFailure, err, "workforce batch FILE --queue URL starts one; its id is printed as it starts")
	}
	if err != nil {
		return err
	}
	if asJSON {
		return printStateLines(ios.Out, st.IDs, st.States)
	}
	fmt.Fprintf(ios.Out, "batch %s: %s\n", id, st.File)
	printBatchTable(ios.Out, st.IDs, st.States)
	return nil
}
