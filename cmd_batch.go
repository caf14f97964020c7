package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/urfave/cli/v2"
)

func batchCommand() *cli.Command {
	return &cli.Command{
		Name:      "batch",
		Usage:     "run many persona tasks unattended, a few at a time, each as a one-shot run in its own sandbox",
		ArgsUsage: "FILE",
		Description: `Reads the tasks of FILE (JSONL, one object a line, or YAML, a list; by the
extension, else by the content), one task an entry; as JSONL, one task a
line, as here (these lines paste into a .jsonl file as they are):

   {"id": "parser-tests", "persona": "test-writer@best", "task": "add tests for ./pkg/parser", "dir": "services/api", "inputs": {"TARGET": "./pkg/parser"}, "timeout": "20m"}
   {"id": "api-review", "persona": "code-reviewer", "task": "review the API handlers", "dir": "services/api", "harness": "codex"}

id (a safe name, unique), persona (PERSONA[@TIER]) and task are required;
dir is the project directory, relative to the file's directory (default:
that directory). A file with errors runs nothing: each problem is listed
with its line, all at once (exit 2). --dry-run checks the whole file and
prints the plan (each task's persona, tier, harness and directory, and
whether a run now would run it) without running anything. repo (a git URL) and ref (default HEAD) replace dir for a
queue of workers: with --queue nats://HOST the tasks are published to
NATS JetStream and run by workforce worker on other machines, each in a
clone of repo at the commit ref names now, the agent's work pushed back
as the branch workforce/<session-id> and its patch in the result;
--detach publishes and exits (follow with batch status ID --queue).
docs/queue.md has the details.

Each task runs as workforce run PERSONA - --events would, in its directory:
its own sandbox and session, its work synced back (conflicts reported per
task), its result in <home>/results/. --jobs tasks run at once (default:
twice the cores, halved when a task runs on opencode).

The batch's state is in <home>/batches/<id>/ (the id: the file's name and a
hash of its path, or --id). Running the same file again resumes it: a task
whose entry is unchanged and done is skipped, an edited one runs again, and
--retry failed runs again the tasks that did not succeed, and --rerun
runs every task again under the same id (the last run's task states are
set aside in <home>/batches/<id>/previous/, replacing an older one). Ctrl-C (SIGINT,
SIGTERM, SIGHUP) stops the running tasks as run stops (their work synced
back) and starts no more; the interrupted tasks run on the next run.

Output: a line per task as it ends, then a table; on a terminal, a live
display of the running tasks. --json prints one result per task as JSON
lines (the object of run --json, with taskId). Exit status: 130 when a
signal stopped the batch; else 1 when any task failed, was denied, timed
out or never started; else 3 when any had conflicts; else 0.
docs/batch.md has the details.

Example:

   workforce batch tasks.jsonl --dry-run
   workforce batch tasks.jsonl --jobs 4
   workforce batch tasks.jsonl --rerun
   workforce batch tasks.yaml --retry failed --json > results.jsonl
   workforce batch status tasks.jsonl
   workforce batch remote.jsonl --queue nats://queue.internal --detach`,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Action: atLeast("jobs", 1), Usage: "run this many tasks at once", DefaultText: "twice the cores, halved for opencode"},
			&cli.StringFlag{Name: "id", Usage: "the batch's id, its directory under <home>/batches (default: the file's name and a hash of its path)"},
			&cli.StringFlag{Name: "retry", Usage: "run again the done tasks whose status is not succeeded: failed"},
			&cli.BoolFlag{Name: "rerun", Usage: "run every task again under the same id, the last run's states set aside in <home>/batches/<id>/previous/"},
			&cli.BoolFlag{Name: "dry-run", Usage: "check the whole file and print the plan (tasks, personas, dirs), running nothing; every problem listed, exit 2"},
			&cli.BoolFlag{Name: "json", Usage: "print one result per task, as JSON lines"},
			noHistoryFlag, networkFlag, networkAllowFlag,
			&cli.BoolFlag{Name: "detach", Usage: "with --queue: publish the tasks and exit, without following them"},
		}, queueFlags(false)...),
		Action: batchAction,
		Subcommands: []*cli.Command{{
			Name:      "status",
			Usage:     "show a batch's tasks: their phase, status and duration",
			ArgsUsage: "ID|FILE",
			Description: `Shows the batch ID (or the batch of the file FILE) as its table: each task's
phase (pending, running, done; queued on a queue), status and duration.
--json prints one object a task, as JSON lines: its state
(docs/batch.md#state). With --queue, it reads the results the workers
reported first (and records them in the batch's state, when this machine
has it).`,
			Flags:  append([]cli.Flag{jsonFlag()}, queueFlags(false)...),
			Action: batchStatusAction,
		}},
	}
}

// batchOptions are a batch run.
type batchOptions struct {
	File  string
	ID    string
	Jobs  int
	Retry batch.Retry
	JSON  bool
	Env   procEnv
	// NoHistory leaves the tasks' runs out of the history.
	NoHistory bool
	// Network are --network and --network-allow, given to each task's
	// run (a task's own network narrows it: --network-narrow).
	Network run.NetworkFlags
	// Rerun runs every task again, the last run set aside (--rerun).
	Rerun bool
}

func batchAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("batch takes one batch file")
	}
	if c.IsSet("detach") && !c.IsSet("queue") {
		return usagef("--detach goes with --queue: on this machine the tasks run in this process")
	}
	opts := batchOptions{File: c.Args().First(), ID: c.String("id"), Jobs: c.Int("jobs"), JSON: c.Bool("json"), Env: newProcEnv(),
		NoHistory: c.Bool("no-history"), Rerun: c.Bool("rerun")}
	switch r := c.String("retry"); r {
	case "":
	case "failed":
		opts.Retry = batch.RetryFailed
	default:
		return usagef("--retry %q: want failed", r)
	}
	var err error
	if opts.Network, err = networkFlags(c); err != nil {
		return err
	}
	if opts.ID != "" && !batch.SafeName(opts.ID) {
		return usagef("--id %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", opts.ID)
	}
	if c.IsSet("queue") && (c.IsSet(networkFlag.Name) || c.IsSet(networkAllowFlag.Name)) {
		return usageError(errors.New("--network and --network-allow go without --queue: a worker's own config.json decides its runs' network"), "narrow a task's network with \"network\" in the batch file")
	}
	if opts.Rerun && (c.IsSet("retry") || c.IsSet("queue")) {
		return usagef("--rerun runs every task again on this machine: it goes without --retry and --queue")
	}
	if c.Bool("dry-run") {
		return batchDryRunAction(c, opts)
	}
	if c.IsSet("queue") {
		return batchQueueAction(c, opts)
	}
	return runBatch(c.Context, newStreams(c), opts)
}

// openBatch checks the batch file of opts and opens its batch, locked
// (batch.OpenFile): remote checks an entry for a queue (nil: the tasks
// run on this machine). A wrong file is a usage error listing every
// problem; a batch another process runs, a failure with a hint.
func openBatch(opts batchOptions, remote func(batch.Task) string) (*batch.Batch, error) {
	lo, err := batchLoadOptions(opts, remote)
	if err != nil {
		return nil, err
	}
	b, err := batch.OpenFile(batch.OpenOptions{ID: opts.ID, Home: opts.Env.home, LoadOptions: lo, Rerun: opts.Rerun})
	var le *batch.LockError
	switch {
	case errors.As(err, new(*batch.FileError)):
		return nil, fileProblems(err)
	case errors.As(err, &le):
		return nil, withCode(exitFailure, err, "wait for it to end, or give another --id")
	}
	return b, err
}

// fileProblems is the usage error of a wrong batch file (a
// *batch.FileError): each problem a line, and how many there are when more
// than one.
func fileProblems(err error) error {
	var probs batch.Problems
	if errors.As(err, &probs) && len(probs) > 1 {
		return usageError(err, fmt.Sprintf("%d problems in the batch file; nothing was run", len(probs)))
	}
	return usageError(err)
}

// batchLoadOptions are how the batch file of opts is read and checked
// (batch.Load): against the catalog of personas, on this machine or, with
// remote, for a queue.
func batchLoadOptions(opts batchOptions, remote func(batch.Task) string) (batch.LoadOptions, error) {
	wd, err := opts.Env.dir()
	if err != nil {
		return batch.LoadOptions{}, err
	}
	var cat *persona.Catalog
	catalog := func() (batch.Lookup, error) {
		var err error
		if cat, err = loadCatalog(opts.Env); err != nil {
			return nil, err
		}
		return func(ref string) (string, string, error) {
			_, r, err := cat.Lookup(ref)
			if err != nil {
				return "", "", err
			}
			return r.Tier, r.Harness, nil
		}, nil
	}
	// An entry's inputs, as its run will resolve them (Load asks once
	// the persona is found, so cat is loaded).
	inputs := func(ref string, values map[string]string) error {
		_, r, err := cat.Lookup(ref)
		if err != nil {
			return err
		}
		_, err = r.ResolveInputs(values, opts.Env.getenv)
		return err
	}
	model := func(ref, h, m string) error { return run.CheckEntryModel(cat, ref, h, m, opts.Env.Environ) }
	return batch.LoadOptions{File: opts.File, WorkDir: wd, Catalog: catalog, Remote: remote, Inputs: inputs, Model: model,
		KnownHarnesses: persona.KnownHarnesses, Harnesses: persona.Harnesses}, nil
}

// runBatch runs the batch file of opts on this machine (batch.RunLocal)
// and prints its progress, then its table.
func runBatch(ctx context.Context, ios *iostreams, opts batchOptions) error {
	b, err := openBatch(opts, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	out := newBatchOutput(ios, opts.JSON, len(b.Tasks))
	out.prepared, out.env = b.ByID, opts.Env
	hooks := out.hooks()
	if !opts.JSON {
		hooks.Planned = func(toRun, before, jobs int) {
			fmt.Fprintf(ios.Err, "workforce: batch %s: %d tasks to run, %d done before, %d at a time\n", b.ID, toRun, before, jobs)
		}
	}
	ended, err := b.RunLocal(batch.LocalOptions{Jobs: opts.Jobs, Retry: opts.Retry, Signals: notifyStop,
		Command: func(cmd *exec.Cmd) {
			cmd.Env = taskEnv(opts.Env.Environ)
			withoutHistory(cmd, opts.NoHistory)
			withNetwork(cmd, opts.Network)
		}}, hooks)
	if err != nil {
		return err
	}
	if !opts.JSON {
		batch.WriteTable(ios.Out, ended.IDs, ended.States)
	}
	if ended.Signal != nil {
		fmt.Fprintf(ios.Err, "workforce: batch %s stopped; run it again to resume: workforce batch %s\n", b.ID, shellJoin(resumeArgs(opts)))
		return silentExit(signalStatus(ended.Signal))
	}
	return silentExit(batchStatus(ended.IDs, ended.States))
}

// resumeArgs are the arguments that run the batch again.
func resumeArgs(opts batchOptions) []string {
	args := []string{opts.File}
	if opts.ID != "" {
		args = append(args, "--id", opts.ID)
	}
	return args
}

func batchStatusAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("batch status takes one batch id or batch file")
	}
	if c.IsSet("queue") {
		return batchStatusQueueAction(c)
	}
	return runBatchStatus(newStreams(c), newProcEnv(), c.Args().First(), c.Bool("json"))
}

func runBatchStatus(ios *iostreams, env procEnv, arg string, asJSON bool) error {
	home, err := env.home()
	if err != nil {
		return err
	}
	id, err := batch.IDOf(arg)
	if err != nil {
		return err
	}
	st, err := batch.Existing(home, id)
	if err != nil {
		return withCode(exitFailure, err, "workforce batch FILE starts one; its id is printed as it starts")
	}
	info, err := st.ReadInfo()
	if err != nil {
		return err
	}
	states, err := st.ReadTasks(info.Tasks)
	if err != nil {
		return err
	}
	if asJSON {
		return printStateLines(ios.Out, info.Tasks, states)
	}
	fmt.Fprintf(ios.Out, "batch %s: %s\n", info.ID, info.File)
	batch.WriteTable(ios.Out, info.Tasks, states)
	return nil
}

// printStateLines prints the states of the tasks ids as JSON lines, one
// a task (pending when it has none).
func printStateLines(w io.Writer, ids []string, states map[string]batch.TaskState) error {
	var b bytes.Buffer
	for _, tid := range ids {
		ts, ok := states[tid]
		if !ok {
			ts = batch.TaskState{ID: tid, Phase: batch.PhasePending}
		}
		line, err := marshalJSONLine(ts)
		if err != nil {
			return err
		}
		b.Write(line)
	}
	_, err := w.Write(b.Bytes())
	return err
}
