package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/run"
	"github.com/urfave/cli/v2"
)

// sessionsResumeCommand is sessions resume.
func sessionsResumeCommand() *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "continue a kept session's harness conversation with a new task, unattended",
		ArgsUsage: "ID [TASK|-] [-- HARNESS-ARGS...]",
		Description: `Continues the harness's own conversation of a kept session (run --keep,
--review, a one-shot run with --keep, a session kept for conflicts) in its
sandbox, as it is, with a new task (or - to read it from stdin, or
--task-file F): claude -p --resume, codex exec resume, opencode run
--session. The run is unattended and ends as workforce run PERSONA TASK
does: the work syncs back (only what changed since the last sync), or is
held for review with --review; a session held for review is held again. It
prints the same result, a short summary or with --json one result object,
and exits by its status. The session stays kept afterwards, whatever the
run's status, so that the conversation can go on (a failed resume can be
tried again): workforce sessions rm ID ends it.

The persona is taken again from the catalog by the session's persona and
tier (a warning says when it is gone: the harness then runs with its own
defaults); the harness is the session's. Which conversation ran in the
sandbox is in the session's record: claude's id is fixed before the run;
a one-shot run of codex or opencode records the one its output names; an
interactive one the one its own session store says ran in the sandbox
(docs/run.md, Resume). A session for which nothing says so cannot be
resumed, and neither can a running or failed one, nor one whose sandbox
is gone. Of a session that is gone, the error says why, as the history
knows it: a one-shot run removes its session unless --keep (workforce
history lists the runs and whether their session can be resumed).

Exit status: as workforce run PERSONA TASK: interrupted 130 (128+signal),
timed_out 124, conflict 3, denied 1, failed 1, succeeded 0; 1 when the
session cannot be resumed.

Example:

   workforce run editor "write the parser" --keep --json
   workforce sessions resume editor-20261123-101500-1a2b3c4d "now add its tests" --json`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "events", Usage: "print progress events on stdout as JSON lines while the run goes, as run --events does (implies --json)"},
			&cli.StringFlag{Name: "task-file", Usage: "read the task from this file (as a TASK argument does)"},
			&cli.StringSliceFlag{Name: "input", Usage: "an input value of the persona, NAME=VALUE (repeatable)"},
			syncDeletesFlag,
			&cli.BoolFlag{Name: "review", Usage: "hold the agent's work for review instead of syncing it back (default: \"review\" in <home>/config.json; a session held for review is held again)", DisableDefaultText: true},
			&cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<id> either way)"},
			syncConfigFlag,
			&cli.DurationFlag{Name: "timeout", Action: notNegative("timeout"), Usage: "stop the harness after this long (e.g. 30m); 0 for no limit", DefaultText: "the persona's harnessSettings.timeoutSeconds"},
			allowUnmappedFlag, modelFlag,
			sandboxFlag, sandboxAllowFlag, sandboxDenyReadFlag, networkFlag, networkAllowFlag, noHistoryFlag,
		},
		Action: sessionsResumeAction,
	}
}

// sessionsResumeOptions are a resumed run: session ID continued with
// Task, the arguments Extra passed to the harness, the persona's input
// values Inputs, and the choices of the command line, as in runOptions.
type sessionsResumeOptions struct {
	ID, Task, Model string
	Extra           []string
	Inputs          map[string]string

	JSON, Events, SyncDeletes, SyncCommitted, SyncConfig, AllowUnmapped, NoHistory bool
	// Review and Timeout are as in runOptions.
	Review  *bool
	Timeout *time.Duration
	// SandboxFlags are as in runOptions.
	run.SandboxFlags
	Env procEnv
}

func sessionsResumeAction(c *cli.Context) error {
	args, extra := harnessArgs(c.Args().Slice())
	taskFile := c.String("task-file")
	switch {
	case len(args) == 2 && taskFile != "":
		return usageError(fmt.Errorf("--task-file and a TASK argument conflict"), "give the task once: as an argument, - for stdin, or --task-file F")
	case len(args) == 1 && taskFile == "", len(args) == 0, len(args) > 2:
		return usagef("sessions resume takes a session id (workforce sessions lists them) and a task (TASK, - for stdin, or --task-file F), then optionally -- and harness arguments")
	}
	opts := sessionsResumeOptions{
		ID: args[0], Extra: extra, Inputs: map[string]string{}, Model: c.String(modelFlag.Name),
		JSON: c.Bool("json") || c.Bool("events"), Events: c.Bool("events"), SyncDeletes: c.Bool("sync-deletes"),
		SyncCommitted: c.Bool("sync-committed"), SyncConfig: c.Bool(syncConfigFlag.Name), AllowUnmapped: c.Bool("allow-unmapped"),
		NoHistory: c.Bool(noHistoryFlag.Name), Review: optionalBool(c, "review"), Env: newProcEnv(),
	}
	var err error
	if opts.SandboxFlags, err = sandboxFlags(c); err != nil {
		return err
	}
	if err := inputValues(c, opts.Inputs); err != nil {
		return err
	}
	if c.IsSet("timeout") {
		t := c.Duration("timeout")
		opts.Timeout = &t
	}
	ios := newStreams(c)
	task, err := readTask(ios.In, args[1:], taskFile)
	if err != nil {
		return err
	}
	opts.Task = task
	return runSessionsResume(c.Context, ios, opts)
}

func runSessionsResume(ctx context.Context, ios *iostreams, opts sessionsResumeOptions) error {
	ro := run.ResumeOptions{
		ID: opts.ID, Task: opts.Task, Extra: opts.Extra, Inputs: opts.Inputs, Model: opts.Model,
		SyncDeletes: opts.SyncDeletes, SyncCommitted: opts.SyncCommitted, SyncConfig: opts.SyncConfig, AllowUnmapped: opts.AllowUnmapped,
		NoHistory: opts.NoHistory, Review: opts.Review, Timeout: opts.Timeout,
		SandboxFlags: opts.SandboxFlags, Env: runEnv(opts.Env),
	}
	hooks := runHooks(ctx, ios, opts.Env)
	hooks.ResumedUsage = run.OwnUsage
	r, err := run.PrepareResume(ctx, ro, hooks)
	if err != nil {
		return resumeHint(err)
	}
	var events *eventPrinter
	if opts.Events {
		events = newEventPrinter(ios.Out, filepath.Base(r.Plan.Sandbox), run.TreeRelative(r.Plan))
		r.Hooks.Events = events.harness
	}
	out, err := r.Start(run.Streams{Err: ios.Err})
	if out == nil || out.Result == nil {
		return resumeHint(err)
	}
	err = printResult(ios, opts.JSON, events, out, err)
	r.Finish(out, errorStatus(err), failure(err))
	return err
}

// resumeHint adds to an error of sessions resume the hint of what to do
// while the session's harness runs.
func resumeHint(err error) error {
	return withHarnessHint(err, "workforce sessions resume", "wait for it to exit, or stop it")
}
