package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
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
			&cli.StringFlag{Name: "root", Usage: "the project root to copy (default: the nearest directory with .git, else the working directory); it must contain the working directory"},
			&cli.StringSliceFlag{Name: "input", Usage: "an input value, NAME=VALUE (repeatable)"},
			&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the sandbox after the run"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan without creating or starting anything"},
			&cli.BoolFlag{Name: "json", Usage: "with a task, print the result as JSON; with --dry-run, print the plan as JSON"},
			&cli.StringFlag{Name: "task-file", Usage: "run unattended with the task read from this file (as a TASK argument does)"},
			eventsFlag,
			&cli.BoolFlag{Name: "install-in-repo", Usage: "run in the repository itself, without a sandbox (the sidecar is skipped)"},
			profileFlag(),
			&cli.BoolFlag{Name: "reuse", Usage: "start from the project's warm sandbox, refreshed by what changed since, and keep the sandbox warm for the next run"},
			&cli.BoolFlag{Name: "refresh-skills", Usage: "fetch the persona's remote skills (npm, skills.sh, prpm) again instead of taking them from the cache, <home>/cache/skills"},
			&cli.BoolFlag{Name: "review", Usage: "hold the agent's work for review instead of syncing it back: show it, then apply, discard or keep it (default: \"review\" in <home>/config.json)"},
			&cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<session-id> either way)"},
			syncConfigFlag,
			&cli.BoolFlag{Name: "live", Usage: "sync both ways while the harness runs: the agent's files reach the repository and yours reach the sandbox as they settle (deletions with --sync-deletes); sync-back still runs at the end"},
			&cli.DurationFlag{Name: "timeout", Action: notNegative("timeout"), Usage: "stop the harness after this long (e.g. 30m), on a terminal too; 0 for no limit (default: the persona's harnessSettings.timeoutSeconds, applied when stdin is not a terminal)"},
			&cli.BoolFlag{Name: "allow-unmapped", Usage: "start the harness even when it cannot apply some of the persona's permissions, settings or MCP servers, without them (a warning names each)"},
			sandboxFlag, sandboxAllowFlag, noHistoryFlag, noProjectPersonasFlag,
		},
		Action: runAction,
	}
}

// runOptions are a run: the persona Ref names (PERSONA[@TIER]), on
// Harness when set, with the input values Inputs, the arguments Extra
// passed to the harness, and the choices of the command line.
type runOptions struct {
	Ref     string
	Extra   []string
	Harness string
	// Root is the project root to copy, as given (the nearest directory
	// with .git above the working directory when empty).
	Root    string
	Profile string
	Inputs  map[string]string

	SyncDeletes, Keep, Reuse, Live, SyncCommitted bool
	// SyncConfig lets executable configuration sync back with the rest
	// (--sync-config) instead of being held in the session.
	SyncConfig   bool
	DryRun, JSON bool
	// Events prints a one-shot run's events as JSON lines (cmd_events.go).
	Events                                      bool
	InstallInRepo, RefreshSkills, AllowUnmapped bool
	// Review holds the agent's work for review; nil leaves it to
	// "review" in <home>/config.json.
	Review *bool
	// Timeout limits the run; nil leaves it to the persona's
	// timeoutSeconds when stdin is not a terminal.
	Timeout *time.Duration
	// Task, when set, makes the run unattended: the harness's one-shot
	// mode with this task.
	Task *string
	// Sandbox is the sandbox mode asked for (nil: the default), and
	// SandboxAllow the paths --sandbox-allow adds, as given.
	Sandbox      *confine.Mode
	SandboxAllow []string
	Env          procEnv
	// NoProjectPersonas looks the persona up in the user's layers and the
	// built-in catalog only (--no-project-personas: a worker's run).
	NoProjectPersonas bool
	// NoHistory leaves the run out of the history; history is where the
	// run reports what it did for its record (cmd_history.go).
	NoHistory bool
	history   *historyRun
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
	opts := runOptions{
		Ref: args[0], Extra: extra, Harness: c.String("harness"), Root: c.String("root"), Profile: c.String("profile"),
		Inputs:      map[string]string{},
		SyncDeletes: c.Bool("sync-deletes"), Keep: c.Bool("keep"), Reuse: c.Bool("reuse"), Live: c.Bool("live"),
		SyncCommitted: c.Bool("sync-committed"), SyncConfig: c.Bool(syncConfigFlag.Name), DryRun: c.Bool("dry-run"), JSON: c.Bool("json") || c.Bool("events"), Events: c.Bool("events"),
		InstallInRepo: c.Bool("install-in-repo"), RefreshSkills: c.Bool("refresh-skills"), AllowUnmapped: c.Bool("allow-unmapped"),
		Review: optionalBool(c, "review"), SandboxAllow: c.StringSlice("sandbox-allow"), NoHistory: c.Bool("no-history"),
		NoProjectPersonas: c.Bool(noProjectPersonasFlag.Name),
	}
	var err error
	if opts.Sandbox, err = sandboxMode(c); err != nil {
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

// harnessArgs splits a command's arguments at the first --: those before
// are the command's, those after go to the harness.
func harnessArgs(args []string) (own, extra []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

// inputValues adds the values of --input NAME=VALUE to inputs.
func inputValues(c *cli.Context, inputs map[string]string) error {
	for _, kv := range c.StringSlice("input") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--input %q: want NAME=VALUE", kv)
		}
		inputs[k] = v
	}
	return nil
}

// readTask returns the task of a one-shot run: the argument (- reads it
// from in), or the file taskFile names.
func readTask(in io.Reader, args []string, taskFile string) (string, error) {
	var data []byte
	var err error
	switch {
	case taskFile != "":
		if data, err = os.ReadFile(taskFile); err != nil {
			return "", usageError(fmt.Errorf("--task-file: %w", err))
		}
	case args[0] == "-":
		if data, err = io.ReadAll(in); err != nil {
			return "", fmt.Errorf("cannot read the task from stdin: %w", err)
		}
	default:
		data = []byte(args[0])
	}
	task := strings.TrimRight(string(data), "\n")
	if strings.TrimSpace(task) == "" {
		return "", usagef("the task is empty")
	}
	// The task ends as an argument of the harness, which cannot carry a
	// NUL: refused here, before a sandbox is made, not at exec.
	if i := strings.IndexByte(task, 0); i >= 0 {
		from := "the task"
		if taskFile != "" {
			from = "--task-file " + quote.Name(taskFile)
		}
		return "", usagef("%s holds a NUL byte (at byte %d): a task is text, and no harness's command line can carry one", from, i)
	}
	return task, nil
}

// noProjectPersonasFlag is run's hidden --no-project-personas, which a
// worker passes to the run of each task: the task's repository is
// whoever published the task's, and its personas are not the worker's.
var noProjectPersonasFlag = &cli.BoolFlag{Name: "no-project-personas", Hidden: true,
	Usage: "look the persona up in the user's persona directories and the built-in catalog only, never in the project's " + homedir.ProjectDir + " (a worker's run in a task's clone); a warning says when the project has personas"}

func runRun(ctx context.Context, ios *iostreams, opts runOptions) error {
	lo, err := loadOptions(opts.Env)
	if err != nil {
		return err
	}
	lo.NoProject = opts.NoProjectPersonas
	cat, err := persona.Load(lo)
	if err != nil {
		return err
	}
	if id, _ := persona.SplitRef(opts.Ref); !persona.IsPattern(id) {
		if err := refuseLoaderEnv(cat, id); err != nil {
			return err
		}
	}
	p, r, err := cat.Lookup(opts.Ref)
	if err != nil {
		printDiagnostics(ios.Err, cat)
		if opts.NoProjectPersonas {
			if wd, werr := opts.Env.dir(); werr == nil {
				if w := ignoredProjectPersonas(lo, wd); w != "" {
					warnf(ios.Err, "%s", w)
				}
			}
		}
		return lookupError(err)
	}
	if err := refuseLoaderEnv(cat, p.ID); err != nil {
		return err
	}
	printPersonaWarnings(ios.Err, cat, p)
	if opts.Harness != "" {
		r.Harness = opts.Harness
	}
	if err := persona.Runnable(r.Harness); err != nil {
		return withCode(exitFailure, fmt.Errorf("%s@%s: %w", p.ID, r.Tier, err), "run it on another harness: --harness "+strings.Join(persona.Harnesses, "|"))
	}
	inRepo := opts.InstallInRepo
	if session.SandboxOff(r) && !inRepo {
		for _, f := range []struct {
			name string
			on   bool
		}{{"keep", opts.Keep}, {"reuse", opts.Reuse}, {"sync-deletes", opts.SyncDeletes}, {"review", opts.Review != nil && *opts.Review},
			{"sync-committed", opts.SyncCommitted}, {"live", opts.Live}, {"sync-config", opts.SyncConfig}} {
			if f.on {
				return usageError(fmt.Errorf("--%s needs a sandbox, and persona %s sets mount.enabled false", f.name, p.ID))
			}
		}
		inRepo = true
		warnf(ios.Err, "persona %s sets mount.enabled false: running in the repository without a sandbox, as --install-in-repo does", p.ID)
	}
	if name := opts.Profile; name != "" {
		if p, ok := discover.Lookup(name); !ok || p.Harness != r.Harness {
			return usageError(fmt.Errorf("--profile %s is not a discovery profile of %s", name, r.Harness), "profiles: "+strings.Join(discover.Names(), ", "))
		}
	}
	values, err := session.Inputs(r, opts.Inputs, opts.Env.getenv)
	if err != nil {
		return err
	}
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	wd, err := opts.Env.dir()
	if err != nil {
		return err
	}
	sb, err := runSandbox(opts.Env, home, opts.Sandbox, opts.SandboxAllow)
	if err != nil {
		return err
	}
	if session.SandboxOff(r) && !opts.InstallInRepo && sb.Mode != confine.Off && !opts.DryRun {
		// A persona file can come from the project, which an agent can
		// write: turning the sandbox off takes the user's word.
		return usageError(fmt.Errorf("persona %s sets mount.enabled false, which runs the harness in the repository, unconfined, while the write sandbox is %s", p.ID, sb.Mode),
			"pass --install-in-repo to run it so, or --sandbox=off")
	}
	root, cwd, err := session.Dirs(wd, opts.Root)
	var re *session.RootError
	switch {
	case errors.As(err, &re) && re.Err != nil:
		return fmt.Errorf("--root %s: %w", opts.Root, re.Err)
	case errors.As(err, &re):
		return usageError(fmt.Errorf("--root %s does not contain the working directory %s", opts.Root, re.Cwd))
	case err != nil:
		return err
	}
	plan, err := session.NewPlan(session.PlanOptions{
		Home: home, Persona: p.ID, Layers: p.Chain, Resolved: r, Inputs: values, RefreshSkills: opts.RefreshSkills,
		Root: root, Cwd: cwd, Extra: opts.Extra, Env: opts.Env.Environ, InRepo: inRepo, AllowUnmapped: opts.AllowUnmapped,
		OneShot: oneShotOf(opts.Task), Sandbox: sb,
		Version: func(h string) string { return versionCache(opts.Env).Installed(ctx, h, opts.Env.Environ).Version },
		Profile: func(h string) (discover.Profile, string, error) {
			return harnessProfile(ctx, ios.Err, opts.Env, opts.Profile, h)
		},
	})
	var gitDir *session.InGitDirError
	if errors.As(err, &gitDir) {
		return usageError(err, "cd "+shellJoin([]string{gitDir.Root})+" first")
	}
	if errors.As(err, new(*session.ConfigRootError)) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	if opts.NoProjectPersonas {
		if w := ignoredProjectPersonas(lo, wd); w != "" {
			plan.Warnings = append(plan.Warnings, w)
		}
	}
	if w := projectShadowWarning(p); w != "" {
		plan.Warnings = append(plan.Warnings, w)
	}
	for _, w := range plan.Warnings {
		warnf(ios.Err, "%s", w)
	}
	if opts.DryRun {
		if err := plan.Preview(); err != nil {
			return err
		}
		if err := plan.Refusal(); err != nil {
			warnf(ios.Err, "%v; the run would not start (--allow-unmapped starts it without them)", err)
		}
		if opts.JSON {
			return writeJSON(ios.Out, toPlan(plan))
		}
		printPlan(ios.Out, toPlan(plan))
		return nil
	}
	var ue *harness.UnmappedError
	if err := plan.Refusal(); errors.As(err, &ue) {
		return withCode(exitFailure, err, ue.Hint())
	}
	for _, n := range plan.Notes {
		warnf(ios.Err, "%s", n)
	}
	if opts.Task != nil {
		return recordRun(ctx, ios, opts, p, plan, home, runOneShot)
	}
	return recordRun(ctx, ios, opts, p, plan, home, runPlanned)
}

// refuseLoaderEnv refuses a run of persona id when a file that is, or
// was meant to be, that persona sets a loader variable in its env
// (persona.LoaderVariable): the persona below it must not run in its
// place as if nothing happened. A usage error naming each file and
// variable.
func refuseLoaderEnv(cat *persona.Catalog, id string) error {
	ds := cat.EnvRefusals(id)
	if len(ds) == 0 {
		return nil
	}
	msgs := make([]string, len(ds))
	for i, d := range ds {
		msgs[i] = d.Error()
	}
	return usageError(fmt.Errorf("persona %s is refused: %s", id, strings.Join(msgs, "; ")),
		"a persona's env may not change what code the harness's programs load; remove the variable from the file")
}

// projectShadowWarning says so when persona p comes from the project
// layer and lies over a persona of its id in the user's layers or the
// catalog: a file of the repository, which an agent may have written,
// then decides the run instead of the user's. "" otherwise.
func projectShadowWarning(p *persona.Persona) string {
	if p.Layer != persona.LayerProject {
		return ""
	}
	how, lower := "laid over", p.Overrides
	if lower == nil {
		how, lower = "hiding", p.Shadows
	}
	if lower == nil {
		return ""
	}
	return fmt.Sprintf("persona %s comes from the project (%s), %s the one of the same id in the %s layer (%s): the repository's file decides this run; check it if you did not write it",
		p.ID, p.Path, how, lower.Layer, lower.File)
}

// The write sandbox's flags, of run and sessions resume.
var (
	sandboxFlag      = &cli.StringFlag{Name: "sandbox", Usage: "confine the harness's writes to its sandbox: on (the default, where Linux has Landlock; a warning where it cannot), strict (refuse to run unconfined) or off (default: $" + session.SandboxEnv + ", else \"sandbox\" in <home>/config.json)"}
	sandboxAllowFlag = &cli.StringSliceFlag{Name: "sandbox-allow", Usage: "a file or directory the confined harness may write too, such as a package cache (repeatable; also \"sandbox\": {\"allow\": PATHS} in <home>/config.json)"}
)

// syncConfigFlag is --sync-config of run, sessions resume and sessions
// sync: executable configuration (mount.HeldConfig) syncs back with the
// rest instead of being held in the session for sessions apply.
var syncConfigFlag = &cli.BoolFlag{Name: "sync-config", Usage: "also sync back the executable configuration the agent changed (.claude/, .mcp.json, opencode.json, .vscode/tasks.json, .envrc, git hook managers...: docs/run.md), held in the session for workforce sessions apply otherwise"}

// sandboxMode returns the sandbox mode --sandbox asks for, nil when it is
// not given.
func sandboxMode(c *cli.Context) (*confine.Mode, error) {
	if !c.IsSet("sandbox") {
		return nil, nil
	}
	m, err := confine.ParseMode(c.String("sandbox"))
	if err != nil {
		return nil, usageError(fmt.Errorf("--sandbox: %w", err))
	}
	return &m, nil
}

// runSandbox returns the write sandbox of a run in the workforce home:
// mode as asked (session.SandboxFor), with the paths of --sandbox-allow,
// relative to the working directory, added (one that cannot be allowed
// is a usage error, unless the mode is off).
func runSandbox(env procEnv, home string, mode *confine.Mode, allow []string) (session.Sandbox, error) {
	sb, err := session.SandboxFor(home, mode, env.getenv)
	if err != nil || sb.Mode == confine.Off {
		return sb, err
	}
	for _, p := range allow {
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(env.Dir, p)
		}
		abs = filepath.Clean(abs)
		if err := session.CheckAllowIn(home, abs); err != nil {
			return session.Sandbox{}, usageError(fmt.Errorf("--sandbox-allow %s: %w", p, err))
		}
		sb.Allow = append(sb.Allow, abs)
	}
	return sb, nil
}

// oneShotOf is the one-shot run of task; nil for none.
func oneShotOf(task *string) *harness.OneShot {
	if task == nil {
		return nil
	}
	return &harness.OneShot{Task: *task}
}

func runPlanned(ctx context.Context, ios *iostreams, opts runOptions, plan *session.Plan, home string) error {
	stderr := ios.Err
	if !plan.InRepo {
		warnStale(stderr, home, plan.Root)
	}
	o := session.RunOptions{
		Stdin: ios.In, Stdout: ios.Out, Stderr: stderr,
		SyncDeletes: opts.SyncDeletes, Keep: opts.Keep, Reuse: opts.Reuse,
		Warn:          func(msg string) { warnf(stderr, "%s", msg) },
		SyncCommitted: opts.SyncCommitted, SyncConfig: opts.SyncConfig, Review: !plan.InRepo && session.HoldsForReview(home, opts.Review),
		Live: opts.Live, Timeout: plan.Timeout(opts.Timeout, ios.InTTY), Abort: exitOnSignal,
		Ended: opts.history.usageReader(plan),
	}
	syncing := false
	if ios.ErrTTY {
		// Progress, on terminals only.
		o.Progress = func(event, detail string) {
			switch event {
			case "copy":
				fmt.Fprintf(stderr, "workforce: copying %s into %s\n", detail, plan.Sandbox)
			case "refresh":
				fmt.Fprintf(stderr, "workforce: refreshing the warm sandbox of %s into %s\n", detail, plan.Sandbox)
			case "skill":
				fmt.Fprintf(stderr, "workforce: fetching skill %s\n", detail)
			case "sync":
				syncing = true
				fmt.Fprintf(stderr, "\rworkforce: syncing %s\033[K", quote.Name(detail))
			}
		}
	}
	res, err := plan.Run(o)
	opts.history.ran(res)
	if syncing {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if res != nil && res.Report != nil {
			printSyncReport(ios.Out, stderr, res.Report) // what was synced, and what failed
		}
		if res != nil && res.Kept {
			warnf(stderr, "the session is kept at %s; workforce sessions sync %s finishes it", res.Session.Dir, res.Session.Record.ID)
		}
		return err
	}
	if res.Held {
		return reviewHeld(ctx, ios, opts, res)
	}
	if l := res.Live; l != nil {
		fmt.Fprintf(ios.Out, "live: %d to the repository, %d to the sandbox, %d deleted, %d conflicts\n", l.ToReal, l.ToSandbox, l.Deleted, len(l.Conflicts))
		for _, f := range l.Failed {
			fmt.Fprintf(ios.Out, "failed: %s: %s\n", quote.Name(f.Path), quote.Text(f.Error))
		}
	}
	if res.Report != nil {
		printSyncReport(ios.Out, stderr, res.Report)
		if res.Report.Interrupted {
			hintf(stderr, "workforce sessions sync %s finishes it", res.Session.Record.ID)
		} else if len(res.Report.Blocked) > 0 && res.Kept {
			hintBlocked(stderr, res.Session.Record.ID)
		}
	}
	if res.Session != nil {
		printBranch(ios.Out, stderr, res.Session.Record)
	}
	if res.Kept {
		fmt.Fprintf(ios.Out, "sandbox kept: %s\n", res.Session.Dir)
	}
	return silentExit(runStatus(res))
}

// warnStale warns of the sessions of root left by a process that died.
func warnStale(stderr io.Writer, home, root string) {
	infos, err := session.List(home)
	if err != nil {
		return
	}
	for _, in := range infos {
		if in.Stale && in.Session.Record.Root == root {
			warnf(stderr, "session %s of this project was left %s by a process that is gone; workforce sessions sync %s brings its work back", in.ID(), in.Session.Record.Phase, in.ID())
		}
	}
}

// reviewHeld shows the agent's work that a run held for review, and on a
// terminal asks what to do with it: apply, discard or keep. Without a
// terminal the session is kept and the commands are printed.
func reviewHeld(ctx context.Context, ios *iostreams, opts runOptions, res *session.Result) error {
	s := res.Session
	w, stderr := ios.Out, ios.Err
	status := runStatus(res)
	printBranch(w, stderr, s.Record)
	if err := s.Diff(w, session.DiffOptions{Stat: true, Color: useColor(ios, opts.Env)}); err != nil {
		warnf(stderr, "%v", err)
	}
	answer := "keep"
	if res.HungUp {
		// The terminal closed during the run: no question, the work waits.
		warnf(stderr, "the terminal closed while the agent worked: its work is held for review")
	} else if ios.TTY != nil {
		if tty := ios.TTY(); tty != nil {
			answer = askReview(tty)
			tty.Close()
		}
	}
	switch answer {
	case "apply":
		o, done := syncOptions(ios, opts.SyncDeletes, opts.Keep, false, opts.SyncCommitted, nil)
		o.SyncConfig = true // applied after the user saw it, as sessions apply
		rep, kept, err := s.Sync(ctx, o)
		err = printSync(ios, s, rep, kept, err)
		done()
		if status != exitOK {
			// The harness's status comes first, as after any run.
			if err != nil && !errors.As(err, new(silentExit)) {
				printError(stderr, err)
			}
			return silentExit(status)
		}
		return err
	case "discard":
		if err := discard(ios, s, false); err != nil {
			return err
		}
	default:
		fmt.Fprintf(w, "held for review: %s\n", s.ID())
		hintf(stderr, "workforce sessions diff %s shows the agent's work; workforce sessions apply %s [PATH...] applies it; workforce sessions discard %s drops it", s.ID(), s.ID(), s.ID())
		if s.Record.Branch != "" {
			hintf(stderr, "git merge %s brings in the agent's commits", s.Record.Branch)
		}
	}
	return silentExit(status)
}

// askReview asks on the terminal tty what to do with the agent's work,
// and returns apply, discard or keep (the answer to an empty line, or to
// none).
func askReview(tty io.ReadWriter) string {
	in := bufio.NewReader(tty)
	for range 3 {
		fmt.Fprint(tty, "workforce: apply, discard or keep the agent's work? [a/d/K] ")
		line, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "apply":
			return "apply"
		case "d", "discard":
			return "discard"
		case "", "k", "keep":
			return "keep"
		}
		if err != nil {
			break
		}
	}
	return "keep"
}

// runOneShot runs an unattended plan and prints its result: a short
// summary, or with --json one report.Result, or with --events its events
// as they come, the last one carrying the report.Result (cmd_events.go).
// The result is also written to the session's results directory. The
// exit status comes from the result's status alone.
func runOneShot(ctx context.Context, ios *iostreams, opts runOptions, plan *session.Plan, home string) error {
	stderr := ios.Err
	if !plan.InRepo {
		warnStale(stderr, home, plan.Root)
	}
	// The plan's warnings and notes, as printed before the run.
	warnings := append(append([]string(nil), plan.Warnings...), plan.Notes...)
	o := session.RunOptions{
		Stderr:      stderr,
		SyncDeletes: opts.SyncDeletes, Keep: opts.Keep, Reuse: opts.Reuse,
		Warn: func(msg string) {
			warnings = append(warnings, msg)
			warnf(stderr, "%s", msg)
		},
		SyncCommitted: opts.SyncCommitted, SyncConfig: opts.SyncConfig, Review: !plan.InRepo && session.HoldsForReview(home, opts.Review),
		Live: opts.Live, Timeout: plan.Timeout(opts.Timeout, false), Abort: exitOnSignal,
	}
	var events *eventPrinter
	if opts.Events {
		events = newEventPrinter(ios.Out, filepath.Base(plan.Sandbox), treeRelative(plan))
		o.Events = events.harness
	}
	start := time.Now()
	res, err := plan.Run(o)
	opts.history.ran(res)
	if res == nil || res.OneShot == nil {
		return err
	}
	return reportOneShot(ios, opts.JSON, events, home, plan, res, err, time.Since(start), warnings)
}

// reportOneShot ends the one-shot run res of plan (run or sessions
// resume), which took took and ended with err: it builds its result, with
// warnings, keeps it in the session's results directory, prints it (a
// short summary, or with asJSON one report.Result, or with events the
// finished event), prunes the results of home, and returns the exit
// status of its status alone.
func reportOneShot(ios *iostreams, asJSON bool, events *eventPrinter, home string, plan *session.Plan, res *session.Result, err error, took time.Duration, warnings []string) error {
	stderr := ios.Err
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	result := oneShotResult(plan, res, err, took, warnings)
	if dir := res.OneShot.Dir; dir != "" {
		// As --json prints it.
		var b bytes.Buffer
		jerr := writeJSON(&b, result)
		if jerr == nil {
			jerr = os.WriteFile(filepath.Join(dir, session.ResultFile), b.Bytes(), 0o600)
		}
		if jerr != nil {
			warnf(stderr, "cannot keep the result: %v", jerr)
		}
	}
	if events != nil {
		if err := events.finished(result); err != nil {
			return err
		}
	} else if asJSON {
		if err := writeJSON(ios.Out, result); err != nil {
			return err
		}
	} else {
		printOneShot(ios.Out, stderr, result, res)
	}
	if err != nil {
		printError(stderr, err)
	}
	pruneResults(stderr, home, result.SessionID)
	return silentExit(oneShotStatus(result.Status, res.Signal))
}

// oneShotResult is the result of the one-shot run res of plan, which
// ended with err (an error after the harness ran: the run failed).
func oneShotResult(plan *session.Plan, res *session.Result, err error, took time.Duration, warnings []string) report.Result {
	one := res.OneShot
	out := one.Outcome
	interrupted := res.Stopped || res.Signal != nil || (res.Report != nil && res.Report.Interrupted)
	liveConflicts := res.Live != nil && len(res.Live.Conflicts) > 0
	o := report.Outcome{
		ExitCode: res.Harness.Code, Signal: int(res.Harness.Signal),
		Started: !res.Stopped, Interrupted: interrupted, TimedOut: res.TimedOut,
		Parsed: one.Parsed, HarnessError: out.Error, Denials: len(out.Denials) > 0,
		Conflicts:  (res.Report != nil && len(res.Report.Conflicts) > 0) || liveConflicts,
		WorkFailed: err != nil || (res.Report != nil && len(res.Report.Failed) > 0),
	}
	model := plan.Resolved.Model
	if out.Model != "" && (model == "" || model == "inherit") {
		model = out.Model // the harness's default, as it named it
	}
	sid := out.SessionID
	if !session.ValidHarnessSessionID(sid) {
		r := fmt.Sprintf("the harness named its conversation %s, which cannot be resumed", quote.Name(sid))
		warnings, sid = append(warnings, r), ""
	}
	r := report.Result{
		SessionID: filepath.Base(plan.Sandbox), Persona: plan.Persona, Tier: plan.Tier, Harness: plan.Harness,
		HarnessVersion: plan.HarnessVersion, Model: model, HarnessSessionID: sid,
		Status: report.DecideStatus(o), Message: out.Final, DurationMS: took.Milliseconds(), Warnings: warnings,
	}
	if r.Message == "" && out.ErrorText != "" {
		r.Message = out.ErrorText
	}
	if r.HarnessSessionID == "" && res.Session != nil {
		// The output named none (cut short, or no result): the id fixed
		// before the start (claude's --session-id), or the resumed one.
		r.HarnessSessionID = res.Session.Record.HarnessSessionID
	}
	// The harness's own code, when it exited (a signal did not kill it).
	if o.Started && o.Signal == 0 {
		code := o.ExitCode
		r.ExitCode = &code
	}
	if one.Parsed && out.HasUsage {
		// Usage only when the harness reported some: a codex turn that
		// failed reports none, which is not 0 tokens.
		u := out.Usage
		r.Usage = &report.Usage{InputTokens: &u.Input, OutputTokens: &u.Output, CachedTokens: &u.Cached, CostUSD: u.CostUSD}
		if u.Turns > 0 {
			r.Usage.Turns = &u.Turns
		}
	} else if o.Started {
		msg := "the harness printed no result"
		if e := lastLine(string(one.Stderr)); e != "" {
			msg += "; its stderr ends: " + e
		}
		r.Warnings = append(r.Warnings, msg)
	}
	rel := treeRelative(plan)
	for _, d := range out.Denials {
		r.Denials = append(r.Denials, report.Denial{Tool: d.Tool, Detail: rel(d.Detail)})
	}
	if rep := res.Report; rep != nil && !res.Held {
		sr := toSyncReport(*rep)
		r.Files = &report.Files{Created: sr.Created, Updated: sr.Updated, Deleted: sr.Deleted, Conflicts: sr.Conflicts,
			Unapplied: sr.Unapplied, NotSynced: sr.NotSynced, Failed: sr.Failed, Blocked: sr.Blocked, OnBranch: sr.OnBranch,
			Refused: sr.Refused, Held: sr.Held}
	}
	if l := res.Live; l != nil && (len(l.Conflicts) > 0 || len(l.Failed) > 0) {
		// Live sync's conflicts and failures, beside sync-back's.
		if r.Files == nil {
			r.Files = &report.Files{}
		}
		live := toSyncReport(mount.Report{Conflicts: l.Conflicts, Failed: l.Failed})
		for _, c := range live.Conflicts {
			if !slices.ContainsFunc(r.Files.Conflicts, func(x report.Conflict) bool { return x.Path == c.Path }) {
				r.Files.Conflicts = append(r.Files.Conflicts, c)
			}
		}
	}
	if res.Held && res.Session != nil {
		// What sessions apply would bring, deletions and executable
		// configuration included.
		if rep, err := res.Session.Pending(); err == nil {
			sr := toSyncReport(*rep)
			r.Held = &report.Files{Created: sr.Created, Updated: sr.Updated, Deleted: sr.Deleted, Conflicts: sr.Conflicts}
		} else {
			r.Warnings = append(r.Warnings, fmt.Sprintf("cannot list the work held for review: %v", err))
		}
	}
	if res.Session != nil && res.Session.Record.Branch != "" {
		rec := res.Session.Record
		r.Branch = &report.Branch{Name: rec.Branch, Head: rec.Head, Commits: rec.Commits}
	}
	return r
}

// treeRelative returns what rewrites the sandbox's paths in a text the
// harness printed (a denied path, a command) as paths relative to the
// project root, as the result's files are: the sandbox is gone after the
// run, and its path means nothing to the reader.
func treeRelative(plan *session.Plan) func(string) string {
	tree := filepath.Join(plan.Sandbox, mount.TreeDir)
	if plan.InRepo || plan.Sandbox == "" {
		return func(s string) string { return s }
	}
	return func(s string) string {
		if s == tree {
			return "."
		}
		return strings.ReplaceAll(s, tree+string(filepath.Separator), "")
	}
}

// lastLine is the last non-empty line of s.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// printOneShot prints the short summary of a one-shot run: its status,
// the first line of the agent's final message, usage, and what came back.
// res is the run, when this process made it: its sync-back report and
// session say more than r; without it (sessions show, once the sandbox is
// gone) the summary comes from r alone.
func printOneShot(w, stderr io.Writer, r report.Result, res *session.Result) {
	fmt.Fprintf(w, "status: %s\n", r.Status)
	if r.Message != "" {
		first, _, _ := strings.Cut(strings.TrimSpace(r.Message), "\n")
		fmt.Fprintf(w, "message: %s\n", quote.Text(first))
	}
	if u := r.Usage; u != nil {
		line := fmt.Sprintf("usage: %d input tokens (%d cached), %d output", deref(u.InputTokens), deref(u.CachedTokens), deref(u.OutputTokens))
		if u.CostUSD != nil {
			line += fmt.Sprintf(", $%.4f", *u.CostUSD)
		}
		if u.Turns != nil {
			line += fmt.Sprintf(", %d turns", *u.Turns)
		}
		fmt.Fprintln(w, line)
	}
	for _, d := range r.Denials {
		fmt.Fprintf(w, "denied: %s %s\n", quote.Text(d.Tool), quote.Text(d.Detail))
	}
	if res == nil {
		if f := r.Files; f != nil {
			printReport(w, stderr, report.SyncReport{Created: f.Created, Updated: f.Updated, Deleted: f.Deleted, Conflicts: f.Conflicts, Refused: f.Refused, Held: f.Held})
		}
		if b := r.Branch; b != nil {
			fmt.Fprintf(w, "the agent made %s: branch %s\n", commits(b.Commits), quote.Name(b.Name))
		}
		return
	}
	if res.Report != nil && !res.Held {
		printSyncReport(w, stderr, res.Report)
	}
	if res.Session != nil {
		printBranch(w, stderr, res.Session.Record)
	}
	if res.Held {
		fmt.Fprintf(w, "held for review: %s\n", r.SessionID)
	} else if res.Kept && res.Session != nil {
		fmt.Fprintf(w, "sandbox kept: %s\n", res.Session.Dir)
	}
	if res.OneShot.Dir != "" {
		fmt.Fprintf(w, "result: %s\n", filepath.Join(res.OneShot.Dir, session.ResultFile))
	}
}

// deref is *p, or 0 for nil.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// ignoredProjectPersonas is the warning of a run that left out the
// project's personas (--no-project-personas) when the project has some,
// naming a few; "" when it has none.
func ignoredProjectPersonas(lo persona.Options, wd string) string {
	dir, files, err := persona.ProjectPersonas(lo)
	if dir == "" {
		return ""
	}
	if rel, rerr := filepath.Rel(wd, dir); rerr == nil && filepath.IsLocal(rel) {
		dir = rel
	}
	if err != nil {
		return fmt.Sprintf("the project's personas in %s are ignored (this run takes the user's and the built-in ones only); the directory cannot be read: %v", quote.Name(dir), err)
	}
	if len(files) == 0 {
		return ""
	}
	const most = 5
	names := make([]string, 0, most+1)
	for i, f := range files {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(files)-most))
			break
		}
		names = append(names, quote.Name(f))
	}
	return fmt.Sprintf("the project's personas in %s (%s) are ignored: this run takes the user's and the built-in ones only", quote.Name(dir), strings.Join(names, ", "))
}
