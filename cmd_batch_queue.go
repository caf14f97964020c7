package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/urfave/cli/v2"
)

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
			batch.WriteTable(ios.Out, b.IDs, sub.States)
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
		batch.WriteTable(ios.Out, f.IDs, f.States)
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
	batch.WriteTable(ios.Out, st.IDs, st.States)
	return nil
}
