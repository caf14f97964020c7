package main

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/urfave/cli/v2"
)

// batchDryRunAction is batch --dry-run: the whole file checked (every
// problem listed, exit 2), then the plan printed; nothing runs, nothing
// is published, and the batch's state is neither made nor changed.
func batchDryRunAction(c *cli.Context, opts batchOptions) error {
	var remote func(batch.Task) string
	if c.IsSet("queue") {
		remote = queue.EntryProblem
	}
	lo, err := batchLoadOptions(opts, remote)
	if err != nil {
		return err
	}
	abs, tasks, err := batch.Load(lo)
	if errors.As(err, new(*batch.FileError)) {
		return fileProblems(err)
	}
	if err != nil {
		return err
	}
	ios := newStreams(c)
	id := opts.ID
	if id == "" {
		id = batch.IDFor(abs)
	}
	harnesses := make([]string, len(tasks))
	for i, t := range tasks {
		harnesses[i] = t.Harness
	}
	jobs := opts.Jobs
	if jobs == 0 {
		jobs = batch.DefaultJobs(harnesses)
	}
	runs := dryRunDecisions(opts, id, tasks)
	fmt.Fprintf(ios.Out, "batch %s: %s: %d tasks, %d at a time; nothing run (--dry-run)\n", id, quote.Name(abs), len(tasks), jobs)
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tPERSONA\tTIER\tHARNESS\tDIR\tRUN")
	for i, t := range tasks {
		where := quote.Name(t.Dir)
		if remote != nil {
			where = quote.Name(t.Repo)
			if t.Ref != "" {
				where += "@" + quote.Name(t.Ref)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, quote.Name(t.Persona), quote.Name(t.Tier), t.Harness, where, runs[i])
	}
	return tw.Flush()
}

// dryRunDecisions say, for each task, whether a run of the batch id would
// run it and why (batch.Plan), from the batch's state as it is, read
// without taking its lock: "yes (new)", "no (done)"... Every task runs
// with --rerun, or when the batch has no state yet.
func dryRunDecisions(opts batchOptions, id string, tasks []batch.Prepared) []string {
	out := make([]string, len(tasks))
	entries := make([]batch.Task, len(tasks))
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		entries[i], ids[i], out[i] = t.Task, t.ID, "yes (new)"
	}
	if opts.Rerun {
		for i := range out {
			out[i] = "yes (rerun)"
		}
		return out
	}
	home, err := opts.Env.home()
	if err != nil {
		return out
	}
	st, err := batch.Existing(home, id)
	if err != nil {
		return out
	}
	states, err := st.ReadTasks(ids)
	if err != nil {
		return out
	}
	for i, d := range batch.Plan(entries, states, opts.Retry) {
		out[i] = "no (" + d.Reason + ")"
		if d.Run {
			out[i] = "yes (" + d.Reason + ")"
		}
	}
	return out
}
