package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/eval"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/urfave/cli/v2"
)

func evalCommand() *cli.Command {
	minRate := &cli.Float64Flag{Name: "min-pass-rate", Usage: "exit 1 when a persona's pass rate is below R, from 0 to 1", Action: func(_ *cli.Context, r float64) error {
		if r < 0 || r > 1 {
			return usagef("--min-pass-rate %v: want a rate from 0 to 1, such as 0.8", r)
		}
		return nil
	}}
	return &cli.Command{
		Name:      "eval",
		Usage:     "evaluate personas: run cases with checks, several attempts each, and report pass rates, pass@k and cost side by side",
		ArgsUsage: "FILE",
		Description: `Runs each case of FILE (YAML or JSON) on each persona (--persona replaces
the file's), on each --harness, --attempts times, as a batch's tasks: each
attempt a one-shot run that runs the case's setup, the agent, then its
check, confined, and syncs nothing back. A wrong file runs nothing (exit
2). The report and each attempt's result, check output and patch are kept
in <home>/evals/<id>/; running the file again resumes it. Exit status: 130
on a signal; 1 when an attempt could not run or a persona is below
--min-pass-rate; else 0. docs/eval.md has the details.

Example:

   workforce eval testdata/eval/cases.yaml --dry-run
   workforce eval compare before after --min-pass-rate 0.8`,
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "persona", Usage: "evaluate this persona, PERSONA[@TIER], instead of the file's (repeatable)"},
			&cli.StringSliceFlag{Name: "harness", Usage: "run each persona on this harness (repeatable; default: the tier's)"},
			&cli.IntFlag{Name: "attempts", Action: atLeast("attempts", 1), Usage: "run each case this many times per persona", DefaultText: "the file's, or 1"},
			&cli.IntFlag{Name: "k", Action: atLeast("k", 1), Usage: "the k of pass@k", DefaultText: "the attempts"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Action: atLeast("jobs", 1), Usage: "run this many attempts at once", DefaultText: "twice the cores, halved for opencode"},
			&cli.StringFlag{Name: "id", Usage: "the evaluation's id, its directory under <home>/evals (default: the file's name and a hash of its path)"},
			&cli.StringFlag{Name: "retry", Usage: "run again the attempts that could not run: errors"},
			&cli.BoolFlag{Name: "dry-run", Usage: "check the whole file and print the attempts, running nothing"},
			jsonFlag(), minRate, noHistoryFlag,
		}, queueFlags(false)...),
		Action: evalAction,
		Subcommands: []*cli.Command{{
			Name: "show", Usage: "show an evaluation's report", ArgsUsage: "ID|FILE",
			Description: "Prints the report kept in <home>/evals/<id>/ (--json: its JSON).\n\nExample:\n\n   workforce eval show cases.yaml",
			Flags:       []cli.Flag{jsonFlag()}, Action: evalShowAction,
		}, {
			Name: "compare", Usage: "compare two evaluations of the same cases: the regressed cases first", ArgsUsage: "A B",
			Description: "Puts the pass rate, cost and duration of A and B side by side, per persona and per case;\n--min-pass-rate exits 1 when a persona of B is below it.\n\nExample:\n\n   workforce eval compare before after --json",
			Flags:       []cli.Flag{jsonFlag(), minRate}, Action: evalCompareAction,
		}},
	}
}

// evalOptions are an evaluation's run.
type evalOptions struct {
	eval.Options
	Jobs                    int
	Retry                   batch.Retry
	JSON, DryRun, NoHistory bool
	MinPassRate             *float64
	Env                     procEnv
	Queue                   *queue.Options
}

func evalAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("eval takes one case file (or: eval show ID, eval compare A B)")
	}
	opts := evalOptions{Options: eval.Options{File: c.Args().First(), Personas: c.StringSlice("persona"), Harnesses: c.StringSlice("harness"),
		Attempts: c.Int("attempts"), K: c.Int("k"), ID: c.String("id")}, Jobs: c.Int("jobs"), JSON: c.Bool("json"),
		DryRun: c.Bool("dry-run"), NoHistory: c.Bool("no-history"), Env: newProcEnv(), MinPassRate: minPassRate(c)}
	if r := c.String("retry"); r == "errors" {
		opts.Retry = batch.RetryNotStarted
	} else if r != "" {
		return usagef("--retry %q: want errors (retrying failures would inflate the pass rate)", r)
	}
	if opts.ID != "" && !batch.SafeName(opts.ID) {
		return usagef("--id %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", opts.ID)
	}
	if c.IsSet("queue") {
		if c.IsSet("jobs") {
			return usagef("--jobs does not go with --queue: each worker runs its own number of tasks (workforce worker --jobs)")
		}
		qo, err := queueOptions(c, "workforce eval")
		if err != nil {
			return err
		}
		opts.Queue, opts.Remote = &qo, queue.EntryProblem
	}
	return runEval(c.Context, newStreams(c), opts)
}

// minPassRate is --min-pass-rate, nil when not given.
func minPassRate(c *cli.Context) *float64 {
	if r := c.Float64("min-pass-rate"); c.IsSet("min-pass-rate") {
		return &r
	}
	return nil
}

// loadEval checks the case file of opts against the catalog (eval.Load):
// a wrong file is a usage error listing every problem.
func loadEval(opts evalOptions) (*eval.Evaluation, error) {
	wd, err := opts.Env.dir()
	if err != nil {
		return nil, err
	}
	var cat *persona.Catalog
	o := opts.Options
	o.WorkDir = wd
	o.Lookup = func(ref, h, model string) (eval.Persona, error) {
		if cat == nil {
			if cat, err = loadCatalog(opts.Env); err != nil {
				return eval.Persona{}, err
			}
		}
		p, r, hash, err := run.Version(cat, ref, h, model)
		if err != nil {
			return eval.Persona{}, err
		}
		return eval.Persona{ID: p.ID, Tier: r.Tier, Harness: r.Harness, Hash: hash, Layer: p.Layer}, nil
	}
	o.Check = func(ref, h, model string, inputs map[string]string) error {
		return run.CheckEntry(cat, ref, h, model, inputs, runEnv(opts.Env))
	}
	e, err := eval.Load(o)
	var fe *eval.FileError
	if errors.As(err, &fe) {
		return nil, usageError(err, fe.Hints()...)
	}
	return e, err
}

// runEval runs the evaluation of opts (or prints its attempts, with
// --dry-run): its attempts on this machine (batch.RunLocal) or on a
// queue, then its report.
func runEval(ctx context.Context, ios *iostreams, opts evalOptions) error {
	e, err := loadEval(opts)
	if err != nil {
		return err
	}
	if opts.DryRun {
		e.WriteMatrix(ios.Out)
		return nil
	}
	if err := e.Open(opts.Env.home); errors.As(err, new(*batch.LockError)) {
		return withCode(exitFailure, err, "wait for it to end, or give another --id")
	} else if err != nil {
		return err
	}
	defer e.Close()
	var hooks batch.Hooks
	if !opts.JSON {
		out := newBatchOutput(ios, false, len(e.Cells))
		out.prepared, out.env, out.line, out.stopped = e.Batch.ByID, opts.Env, e.DoneLine, "their checks do not run; they run again next time"
		hooks = out.hooks()
		fmt.Fprintf(ios.Err, "workforce: eval %s: %d attempts (%d cases × %d personas × %d)\n", e.ID, len(e.Cells), len(e.Cases), len(e.Personas), e.Attempts)
	}
	ended, err := runAttempts(ctx, e, opts, hooks)
	if err != nil {
		return err
	}
	rep, err := e.Finish(ended.States)
	if err != nil {
		return err
	}
	return printEval(ios, rep, opts.JSON, ended.Signal, opts.MinPassRate)
}

// runAttempts runs the evaluation's attempts on this machine, or
// publishes them to the queue and follows them.
func runAttempts(ctx context.Context, e *eval.Evaluation, opts evalOptions, hooks batch.Hooks) (batch.Ended, error) {
	if opts.Queue == nil {
		return e.Batch.RunLocal(batch.LocalOptions{Jobs: opts.Jobs, Retry: opts.Retry, Signals: notifyStop, Command: func(cmd *exec.Cmd) {
			cmd.Env = taskEnv(opts.Env.Environ)
			withoutHistory(cmd, opts.NoHistory)
		}}, hooks)
	}
	s := &queue.Submitter{Batch: e.Batch, Options: *opts.Queue, Retry: opts.Retry, Signals: notifyStop}
	defer s.Close()
	return s.Run(ctx, hooks)
}

// printEval prints the report (its table, or its JSON), its warnings on
// stderr, and ends with the evaluation's status (evalStatus).
func printEval(ios *iostreams, rep report.Eval, asJSON bool, sig os.Signal, min *float64) error {
	if !asJSON {
		eval.WriteTable(ios.Out, rep)
	} else if err := writeJSON(ios.Out, rep); err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		warnf(ios.Err, "%s", w)
	}
	return silentExit(evalStatus(rep, sig, eval.WriteBelow(ios.Err, rep, min)))
}

func evalShowAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("eval show takes one evaluation id or case file")
	}
	rep, err := readEval(newProcEnv(), c.Args().First())
	switch {
	case err != nil:
		return err
	case c.Bool("json"):
		return writeJSON(newStreams(c).Out, rep)
	}
	eval.WriteTable(newStreams(c).Out, rep)
	return nil
}

// readEval reads the report of the evaluation arg names: an id, or the
// case file whose default id it is.
func readEval(env procEnv, arg string) (report.Eval, error) {
	home, err := env.home()
	if err != nil {
		return report.Eval{}, err
	}
	rep, err := eval.ReadReport(home, arg)
	return rep, withCode(exitFailure, err, "workforce eval FILE runs one; its id is printed as it starts")
}

func evalCompareAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return usagef("eval compare takes two evaluations: A B (ids or case files)")
	}
	var reps [2]report.Eval
	for i := range reps {
		var err error
		if reps[i], err = readEval(newProcEnv(), c.Args().Get(i)); err != nil {
			return err
		}
	}
	ios, cmp := newStreams(c), eval.Compare(reps[0], reps[1])
	if !c.Bool("json") {
		eval.WriteComparison(ios.Out, cmp)
	} else if err := writeJSON(ios.Out, cmp); err != nil {
		return err
	}
	if eval.WriteBelow(ios.Err, reps[1], minPassRate(c)) > 0 {
		return silentExit(exitFailure)
	}
	return nil
}
