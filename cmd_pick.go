package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/seed-3bc194a6/workforce/harness"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/pick"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/urfave/cli/v2"
)

func pickCommand() *cli.Command {
	return &cli.Command{
		Name:      "pick",
		Usage:     "ask a cheap model which persona fits a task; print its id",
		ArgsUsage: "TASK|-",
		Description: `Asks a cheap model, through an installed harness's one-shot mode, which
persona of every layer (project, configured directories, built-in) fits TASK
best (- reads the task from stdin), and prints its id. The model sees each
persona's id, intent and description, cut short (docs/pick.md), and answers
with one JSON line, {"persona", "confidence", "reason"}; an answer that is
not exactly that, or names no persona of the layers, is no match. The call
runs as any unattended run does: in a sandbox (an empty directory), confined,
on a per-session copy of the harness's configuration, read-only and with
every tool denied. The harness is claude with a Haiku model unless "pick"
in <home>/config.json says otherwise; when that harness is not installed,
the first installed of claude, opencode, codex and gemini, on its own
default model (a note says so):

   {"pick": {"harness": "codex", "model": "gpt-5-mini", "timeout": "60s"}}

--json prints the answer as one JSON line: {"persona": ID or null,
"confidence": "high", "medium", "low" or null, "reason": TEXT}. --run then
runs the persona on the task, as workforce run PERSONA TASK does (with
--json, printing its result), and exits with the run's status.

Exit status (pick's own): 0 a persona matched (confidence high or medium);
2 no persona matched, or only with low confidence (and, as for every
command, a wrong command line); 3 no harness could answer (not installed,
failed, timed out). With --run, the run's status after a match.

Example:

   workforce pick "review this PR for security issues"
   workforce run "$(workforce pick 'fix the flaky test in foo_test.go')" --dry-run
   workforce pick "write tests for the parser" --run --json`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "run", Usage: "run the persona picked on the task, as workforce run PERSONA TASK does"},
			&cli.BoolFlag{Name: "json", Usage: "print the answer as one JSON line; with --run, the run's result"},
			modelFlag,
			&cli.StringSliceFlag{Name: "input", Usage: "with --run, an input value of the persona picked, NAME=VALUE (repeatable); a required input left without one gets the task"},
		},
		Action: pickAction,
	}
}

// pickOptions are what `workforce pick` picks for: the task Task, and
// whether to run the persona picked.
type pickOptions struct {
	// Model is the model of --run's run (--model), not the picker's.
	Task, Model string
	Run, JSON   bool
	Inputs      map[string]string
	Env         procEnv
}

func pickAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageError(errors.New("pick takes one task, quoted (or - to read it from stdin)"), `usage: workforce pick "TASK" [--run] [--json]`)
	}
	if err := checkFlags(c, flagRule{flag: modelFlag.Name, needs: "run", err: "--model goes with --run: it is the model of the run of the persona picked", hint: "\"pick\": {\"model\": ...} in <home>/config.json chooses the model that picks"},
		flagRule{flag: "input", needs: "run", err: "--input goes with --run: it is an input of the run of the persona picked"}); err != nil {
		return err
	}
	inputs := map[string]string{}
	if err := inputValues(c, inputs); err != nil {
		return err
	}
	ios := newStreams(c)
	task, err := readTask(ios.In, c.Args().Slice(), "")
	if err != nil {
		return err
	}
	return runPick(c.Context, ios, pickOptions{Task: task, Model: c.String(modelFlag.Name), Run: c.Bool("run"), JSON: c.Bool("json"), Inputs: inputs, Env: newProcEnv()})
}

func runPick(ctx context.Context, ios *iostreams, opts pickOptions) error {
	cat, err := loadCatalog(opts.Env)
	if err != nil {
		return err
	}
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	cfg, err := homedir.ReadPickConfig(home)
	if err != nil {
		return err
	}
	if cfg.Harness != "" && persona.Runnable(cfg.Harness) != nil {
		return fmt.Errorf("%s: pick.harness: %q is not a harness workforce runs; want one of %s", homedir.ConfigPath(home), cfg.Harness, strings.Join(persona.Harnesses, ", "))
	}
	cands := pick.Candidates(cat)
	if len(cands) == 0 {
		return pickNoMatch(ios, opts, pick.Answer{Reason: "there are no personas to pick from"})
	}
	text, err := askPicker(ctx, ios, opts.Env, home, cfg, pick.Prompt(opts.Task, cands))
	if err != nil {
		var s silentExit
		if errors.As(err, &s) {
			return err
		}
		var hints []string
		var nf interface{ Hint() string }
		if errors.As(err, &nf) {
			hints = append(hints, nf.Hint())
		}
		hints = append(hints, "workforce harness check lists the installed harnesses; \"pick\": {\"harness\": ..., \"model\": ...} in <home>/config.json chooses the one pick asks")
		return withCode(exitPickUnavailable, fmt.Errorf("no harness can answer: %w", err), hints...)
	}
	ids := make(map[string]bool, len(cands))
	for _, c := range cands {
		ids[c.ID] = true
	}
	ans, ok := pick.Decide(text, ids)
	if !ok {
		return pickNoMatch(ios, opts, ans)
	}
	id := *ans.Persona
	if opts.Run {
		notef(ios.Err, "picked %s (%s): %s; running it", id, *ans.Confidence, ans.Reason)
		p, _ := cat.Get(id)
		inputs, filled := pick.RunInputs(p, opts.Task, opts.Inputs, opts.Env.getenv)
		if len(filled) > 0 {
			notef(ios.Err, "%s needs %s: the task is its value (--input NAME=VALUE gives another)", id, strings.Join(filled, ", "))
		}
		return runPersona(ctx, ios, runOptions{Ref: id, Model: opts.Model, Task: &opts.Task, JSON: opts.JSON, Inputs: inputs, Env: opts.Env})
	}
	if opts.JSON {
		return writeJSONLine(ios.Out, ans)
	}
	notef(ios.Err, "picked %s (%s): %s", id, *ans.Confidence, ans.Reason)
	fmt.Fprintln(ios.Out, id)
	return nil
}

// pickNoMatch ends a pick that found no persona: the answer on stdout
// with --json (without --run), the reason on stderr, exit status 2.
func pickNoMatch(ios *iostreams, opts pickOptions, ans pick.Answer) error {
	ans.Persona = nil
	if opts.JSON && !opts.Run {
		if err := writeJSONLine(ios.Out, ans); err != nil {
			return err
		}
	}
	return withCode(exitPickNoMatch, fmt.Errorf("no persona matches the task: %s", ans.Reason),
		"workforce list shows the personas; workforce create makes one for the task")
}

// askPicker asks the model of cfg (pick.DefaultHarness and its model
// when unset) prompt without tools (run.Ask), and returns its final
// message. An error is that no harness could answer.
func askPicker(ctx context.Context, ios *iostreams, env procEnv, home string, cfg homedir.PickConfig, prompt string) (string, error) {
	h, model, note, ok := pick.Choose(cfg.Harness, cfg.Model, func(h string) bool { return harness.Installed(h, env.Environ) })
	if !ok {
		return "", &harness.NoneInstalledError{}
	}
	if note != "" {
		notef(ios.Err, "%s", note)
	}
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = pick.DefaultTimeout
	}
	argsDir, err := os.MkdirTemp("", "workforce-pick-args-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(argsDir)
	extra, err := harness.NoToolsArgs(h, argsDir)
	if err != nil {
		return "", err
	}
	re := runEnv(env)
	re.Home, re.HomeErr = home, nil
	q := run.Question{Resolved: pick.Resolved(h, model), Prompt: prompt, Extra: extra, Timeout: timeout, Env: re}
	text, err := run.Ask(q, run.Hooks{Warn: func(msg string) { warnf(ios.Err, "%s", msg) }, Abort: exitOnSignal, Signals: notify})
	var ie *run.InterruptedError
	if errors.As(err, &ie) {
		return "", silentExit(signalStatus(ie.Signal))
	}
	return text, err
}
