package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/harness"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a persona's harness in a sandbox copy of the project, interactively or unattended with a task",
		ArgsUsage: "PERSONA[@TIER] [TASK|-] [-- HARNESS-ARGS...]",
		Description: `Copies the project (the nearest directory with .git above the working
directory, else the working directory) to <home>/sessions/, writes the
persona's CLAUDE.md (claude), AGENTS.md (opencode, codex) or GEMINI.md (gemini)
into the sandbox directory matching the working directory, hides the repository's own
instruction files of that harness (in extend mode their text, as the harness
would load it in your directory, is folded in before the persona's), starts the harness
there, and after it exits syncs new and changed files back. Files changed in
the repository meanwhile are conflicts: the repository's version stays, the
agent's is kept under the session directory. Deletions are applied only with
--sync-deletes, and so is a file, directory or symlink the agent replaced by
another of them (the session is kept for what takes its place). The agent's
changes to policy files (.agentignore, .agentreadonly, .<persona>.agentignore,
.agentworkforce/) never sync back, and those to executable configuration
(.claude/, .mcp.json, opencode.json, .vscode/tasks.json, .envrc, git hook
managers: docs/run.md) are held in the session for workforce sessions apply
unless --sync-config; a warning names each, and the session is kept. Commits the
agent makes come back as the branch
workforce/<session-id> of the repository, and what it committed is left to
that branch unless --sync-committed. --review (or "review": true in
<home>/config.json) holds the work instead of syncing it back: it shows what
changed, then on a terminal asks to apply, discard or keep it (workforce
sessions diff, apply, discard). Arguments after -- go to the harness.

The harness gets each of the persona's permissions, permission mode,
reasoning level, MCP servers and model through its own mechanism
(docs/harnesses.md); when it cannot express one, run refuses to start and
names it, and --allow-unmapped starts it without, with a warning each.
--dry-run prints the mapping.

A persona's harnessSettings.timeoutSeconds limits a run nobody watches
(stdin not a terminal): the harness then gets SIGTERM, SIGKILL 5 seconds
later, and its work is synced back as after any stop. --timeout sets the
limit of any run, on a terminal too (0: none).

With a TASK (or - to read it from stdin, or --task-file F) the run is
unattended: the harness runs in its own one-shot mode (` + strings.Join(harness.OneShotModes(), ", ") + `)
with the task, never gets the terminal, and nothing asks: a
permission that would ask is refused as the persona's permission mode says,
and reported. Everything else is as above. The harness's output is read for
its session id, final message, usage and denials; run prints a short summary,
or with --json one result object (schema: report/schema/result.schema.json).
--events prints the run's progress on stdout as it goes, one JSON event a
line, the last one carrying the result (schema:
report/schema/event.schema.json; docs/run.md#events).
The result and the harness's raw output stay in <home>/results/<session-id>/,
pruned by age and count (workforce sessions prune-results); a run that
never starts prints no result. workforce sessions resume ID TASK continues
a kept session's conversation.
The persona's timeoutSeconds always applies to an unattended run.

--attempt JSON is what workforce eval gives each attempt's run: its setup
runs in the sandbox before the agent, its check after it (both confined as
the agent, every process the agent left ended first), the protected files
are restored before the check, nothing syncs back and no branch is made;
the result's attempt and patch say what happened (docs/run.md#attempts).

On Linux the harness runs confined (Landlock, docs/sandbox.md): it may write
the sandbox's tree, the session's TMPDIR and the terminal, nothing else;
--sandbox off or strict, --sandbox-allow PATH, or "sandbox" in
<home>/config.json change that. --dry-run lists what it may write.

Exit status: the harness's (128+signal when killed, 127 when not installed);
124 when the time limit stopped it; when the harness succeeded but sync-back
(or the apply of --review) found conflicts, 3. An unattended run's comes from
its status alone: interrupted 130 (128+signal), timed_out 124, conflict 3,
denied 1, failed 1, succeeded 0; the harness's own code is in the JSON only.

Example:

   workforce run code-reviewer@best --harness opencode --dry-run
   workforce run test-writer --input TARGET=./pkg/parser -- --verbose
   workforce run test-writer --review
   workforce run editor "fix the failing test in ./pkg/parser" --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Usage: "run on this harness instead of the tier's: claude, opencode, codex or gemini"},
			modelFlag,
			&cli.StringFlag{Name: "root", Usage: "the project root to copy (default: the nearest directory with .git, else the working directory); it must contain the working directory"},
			&cli.StringSliceFlag{Name: "input", Usage: "an input value, NAME=VALUE (repeatable)"},
			syncDeletesFlag,
			&cli.BoolFlag{Name: "keep", Usage: "keep the sandbox after the run"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan without creating or starting anything"},
			&cli.BoolFlag{Name: "json", Usage: "with a task, print the result as JSON; with --dry-run, print the plan as JSON"},
			&cli.StringFlag{Name: "task-file", Usage: "run unattended with the task read from this file (as a TASK argument does)"},
			eventsFlag,
			&cli.BoolFlag{Name: "install-in-repo", Usage: "run in the repository itself, without a sandbox (the sidecar is skipped)"},
			profileFlag(),
			&cli.BoolFlag{Name: "reuse", Usage: "start from the project's warm sandbox, refreshed by what changed since, and keep the sandbox warm for the next run"},
			&cli.BoolFlag{Name: "refresh-skills", Usage: "fetch the persona's remote skills (npm, skills.sh, prpm) again instead of taking them from the cache, <home>/cache/skills"},
			&cli.BoolFlag{Name: "review", Usage: "hold the agent's work for review instead of syncing it back: show it, then apply, discard or keep it (default: \"review\" in <home>/config.json)", DisableDefaultText: true},
			&cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<session-id> either way)"},
			syncConfigFlag,
			&cli.BoolFlag{Name: "live", Usage: "sync both ways while the harness runs: the agent's files reach the repository and yours reach the sandbox as they settle (deletions with --sync-deletes); sync-back still runs at the end"},
			&cli.DurationFlag{Name: "timeout", Action: notNegative("timeout"), Usage: "stop the harness after this long (e.g. 30m), on a terminal too; 0 for no limit", DefaultText: "the persona's harnessSettings.timeoutSeconds, applied when stdin is not a terminal"},
			allowUnmappedFlag,
			sandboxFlag, sandboxAllowFlag, sandboxDenyReadFlag, treeFlag, networkFlag, networkAllowFlag, networkNarrowFlag, noHistoryFlag, noProjectPersonasFlag,
			attemptFlag,
		},
		Action: runAction,
	}
}

// runRules are the flag rules of run.
var runRules = []flagRule{
	{flag: "json", needs: "dry-run", err: "--json goes with --dry-run", hint: "use --dry-run --json to print the plan as JSON"},
	{flag: "install-in-repo", conflicts: []string{"keep"}, err: "--install-in-repo and --keep conflict: there is no sandbox to keep"},
	{flag: "install-in-repo", conflicts: []string{"reuse"}, err: "--install-in-repo and --reuse conflict: there is no sandbox to reuse"},
	{flag: "install-in-repo", conflicts: []string{"sync-deletes"}, err: "--install-in-repo and --sync-deletes conflict: nothing is synced without a sandbox"},
	{flag: "live", conflicts: []string{"install-in-repo"}, err: "--install-in-repo and --live conflict: there is no sandbox to sync"},
	{flag: "live", conflicts: []string{"review"}, err: "--live and --review conflict: live sync brings the agent's work at once, review holds it"},
	{flag: "install-in-repo", conflicts: []string{"review", "sync-committed"}, err: "--install-in-repo conflicts with --review and --sync-committed: nothing is synced without a sandbox"},
	{flag: "install-in-repo", conflicts: []string{"sync-config"}, err: "--install-in-repo and --sync-config conflict: nothing is synced without a sandbox"},
	{flag: "attempt", conflicts: []string{"review", "live", "reuse", "install-in-repo"}, err: "--attempt conflicts with --review, --live, --reuse and --install-in-repo: an attempt runs in a fresh sandbox and syncs nothing back"},
}

func runAction(c *cli.Context) error {
	args, extra := harnessArgs(c.Args().Slice())
	if len(args) != 1 && len(args) != 2 {
		return usagef("run takes one persona, as PERSONA or PERSONA@TIER, optionally a task, then optionally -- and harness arguments")
	}
	taskFile := c.String("task-file")
	oneShot := len(args) == 2 || c.IsSet("task-file")
	if len(args) == 2 && c.IsSet("task-file") {
		return usageError(fmt.Errorf("--task-file and a TASK argument conflict"), "give the task once: as an argument, - for stdin, or --task-file F")
	}
	rules := runRules
	if oneShot {
		// --json prints the result of a one-shot run.
		rules = nil
		for _, r := range runRules {
			if r.flag != "json" {
				rules = append(rules, r)
			}
		}
	}
	if err := checkFlags(c, rules...); err != nil {
		return err
	}
	if err := checkEvents(c, oneShot); err != nil {
		return err
	}
	attempt, err := attemptSpec(c, oneShot)
	if err != nil {
		return err
	}
	opts := runOptions{
		Ref: args[0], Extra: extra, Harness: c.String("harness"), Model: c.String(modelFlag.Name), Root: c.String("root"), Profile: c.String("profile"),
		Inputs:      map[string]string{},
		SyncDeletes: c.Bool("sync-deletes"), Keep: c.Bool("keep"), Reuse: c.Bool("reuse"), Live: c.Bool("live"),
		SyncCommitted: c.Bool("sync-committed"), SyncConfig: c.Bool(syncConfigFlag.Name), DryRun: c.Bool("dry-run"), JSON: c.Bool("json") || c.Bool("events"), Events: c.Bool("events"),
		InstallInRepo: c.Bool("install-in-repo"), RefreshSkills: c.Bool("refresh-skills"), AllowUnmapped: c.Bool("allow-unmapped"),
		Review: optionalBool(c, "review"), NoHistory: c.Bool("no-history"),
		NoProjectPersonas: c.Bool(noProjectPersonasFlag.Name), Attempt: attempt,
	}
	if opts.SandboxFlags, err = sandboxFlags(c); err != nil {
		return err
	}
	if err := inputValues(c, opts.Inputs); err != nil {
		return err
	}
	if h := opts.Harness; h != "" && !persona.IsKnownHarness(h) {
		return unknownHarness(h, persona.Harnesses)
	}
	if c.IsSet("timeout") {
		t := c.Duration("timeout")
		opts.Timeout = &t
	}
	opts.Env = newProcEnv()
	ios := newStreams(c)
	if oneShot {
		task, err := readTask(ios.In, args[1:], taskFile)
		if err != nil {
			return err
		}
		opts.Task = &task
	}
	return runRun(c.Context, ios, opts)
}

// noProjectPersonasFlag is run's hidden --no-project-personas, which a
// worker passes to the run of each task: the task's repository is
// whoever published the task's, and its personas are not the worker's.
var noProjectPersonasFlag = &cli.BoolFlag{Name: "no-project-personas", Hidden: true,
	Usage: "look the persona up in the user's persona directories and the built-in catalog only, never in the project's " + homedir.ProjectDir + " (a worker's run in a task's clone); a warning says when the project has personas"}

// runRun prepares the run opts asks for through package run, prints its
// plan with --dry-run, or starts it and prints how it ended.
func runRun(ctx context.Context, ios *iostreams, opts runOptions) error {
	r, err := run.Prepare(ctx, opts.toRun(), runHooks(ctx, ios, opts.Env))
	if err != nil {
		return err
	}
	if !opts.DryRun {
		return startRun(ctx, ios, opts, r)
	}
	plan := r.Plan
	if err := plan.Preview(); err != nil {
		return err
	}
	if err := plan.Refusal(); err != nil {
		warnf(ios.Err, "%v; the run would not start (--allow-unmapped starts it without them)", err)
	}
	if opts.JSON {
		return writeJSON(ios.Out, toreport.Plan(plan))
	}
	toreport.Plan(plan).WriteText(ios.Out)
	return nil
}
