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
	fmt.Fprintf(ios.Out, "batch %s: %s: %d tasks, %d at a time; nothing run (--dry-run)\n", id, quote.Name(abs), len(tasks), jobs)
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tPERSONA\tTIER\tHARNESS\tDIR")
	for _, t := range tasks {
		where := quote.Name(t.Dir)
		if remote != nil {
			where = quote.Name(t.Repo)
			if t.Ref != "" {
				where += "@" + quote.Name(t.Ref)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, quote.Name(t.Persona), quote.Name(t.Tier), t.Harness, where)
	}
	return tw.Flush()
}
