package main

import (
	"errors"

	"github.com/seed-3bc194a6/workforce/batch"
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
	jobs := batch.Jobs(opts.Jobs, tasks)
	home, _ := opts.Env.home()
	runs := batch.Decisions(home, id, tasks, opts.Rerun, opts.Retry)
	return batch.DryRun{ID: id, File: abs, Jobs: jobs, Tasks: tasks, Remote: remote != nil, Runs: runs}.WriteText(ios.Out)
}
