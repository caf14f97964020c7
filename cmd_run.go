package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "run",
		Usage:     "run a persona's harness in a sandbox copy of the project",
		ArgsUsage: "PERSONA[@TIER] [-- HARNESS-ARGS...]",
		Description: `Copies the project (the nearest directory with .git above the working
directory, else the working directory) to <home>/sessions/, writes the
persona's CLAUDE.md (claude) or AGENTS.md (opencode, codex) into the sandbox
directory matching the working directory, hides the repository's own
instruction files of that harness (in extend mode their text, as the harness
would load it in your directory, is folded in before the persona's), starts the harness
there, and after it exits syncs new and changed files back. Files changed in
the repository meanwhile are conflicts: the repository's version stays, the
agent's is kept under the session directory. Deletions are applied only with
--sync-deletes, and so is a file, directory or symlink the agent replaced by
another of them (the session is kept for what takes its place). Commits the
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

Exit status: the harness's (128+signal when killed, 127 when not installed);
124 when the time limit stopped it; when the harness succeeded but sync-back
(or the apply of --review) found conflicts, 3.

Example:

   workforce run code-reviewer@best --harness opencode --dry-run
   workforce run test-writer --input TARGET=./pkg/parser -- --verbose
   workforce run test-writer --review`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Usage: "run on this harness instead of the tier's: claude, opencode or codex"},
			&cli.StringFlag{Name: "root", Usage: "the project root to copy (default: the nearest directory with .git, else the working directory); it must contain the working directory"},
			&cli.StringSliceFlag{Name: "input", Usage: "an input value, NAME=VALUE (repeatable)"},
			&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
			&cli.BoolFlag{Name: "keep", Usage: "keep the sandbox after the run"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan without creating or starting anything"},
			&cli.BoolFlag{Name: "json", Usage: "with --dry-run, print the plan as JSON"},
			&cli.BoolFlag{Name: "install-in-repo", Usage: "run in the repository itself, without a sandbox (the sidecar is skipped)"},
			profileFlagDef,
			&cli.BoolFlag{Name: "reuse", Usage: "start from the project's warm sandbox, refreshed by what changed since, and keep the sandbox warm for the next run"},
			&cli.BoolFlag{Name: "refresh-skills", Usage: "fetch the persona's remote skills (npm, skills.sh, prpm) again instead of taking them from the cache, <home>/cache/skills"},
			&cli.BoolFlag{Name: "review", Usage: "hold the agent's work for review instead of syncing it back: show it, then apply, discard or keep it (default: \"review\" in <home>/config.json)"},
			&cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<session-id> either way)"},
			&cli.BoolFlag{Name: "live", Usage: "sync both ways while the harness runs: the agent's files reach the repository and yours reach the sandbox as they settle (deletions with --sync-deletes); sync-back still runs at the end"},
			&cli.DurationFlag{Name: "timeout", Action: notNegative("timeout"), Usage: "stop the harness after this long (e.g. 30m), on a terminal too; 0 for no limit (default: the persona's harnessSettings.timeoutSeconds, applied when stdin is not a terminal)"},
			&cli.BoolFlag{Name: "allow-unmapped", Usage: "start the harness even when it cannot apply some of the persona's permissions, settings or MCP servers, without them (a warning names each)"},
		},
		Action: runAction,
	})
}

func runAction(c *cli.Context) error {
	args := c.Args().Slice()
	var extra []string
	for i, a := range args {
		if a == "--" {
			args, extra = args[:i], args[i+1:]
			break
		}
	}
	if len(args) != 1 {
		return usagef("run takes one persona, as PERSONA or PERSONA@TIER, then optionally -- and harness arguments")
	}
	if c.Bool("json") && !c.Bool("dry-run") {
		return usageError(errors.New("--json goes with --dry-run"), "use --dry-run --json to print the plan as JSON")
	}
	if c.Bool("install-in-repo") && c.Bool("keep") {
		return usageError(errors.New("--install-in-repo and --keep conflict: there is no sandbox to keep"))
	}
	if c.Bool("install-in-repo") && c.Bool("reuse") {
		return usageError(errors.New("--install-in-repo and --reuse conflict: there is no sandbox to reuse"))
	}
	if c.Bool("install-in-repo") && c.Bool("sync-deletes") {
		return usageError(errors.New("--install-in-repo and --sync-deletes conflict: nothing is synced without a sandbox"))
	}
	if c.Bool("live") && c.Bool("install-in-repo") {
		return usageError(errors.New("--install-in-repo and --live conflict: there is no sandbox to sync"))
	}
	if c.Bool("live") && c.Bool("review") {
		return usageError(errors.New("--live and --review conflict: live sync brings the agent's work at once, review holds it"))
	}
	if c.Bool("install-in-repo") && (c.Bool("review") || c.Bool("sync-committed")) {
		return usageError(errors.New("--install-in-repo conflicts with --review and --sync-committed: nothing is synced without a sandbox"))
	}
	explicit := map[string]string{}
	for _, kv := range c.StringSlice("input") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--input %q: want NAME=VALUE", kv)
		}
		explicit[k] = v
	}
	if h := c.String("harness"); h != "" && !persona.IsKnownHarness(h) {
		return usageError(fmt.Errorf("unknown harness %q", h), "--harness takes one of "+strings.Join(persona.Harnesses, ", "))
	}

	cat, err := loadCatalogQuiet()
	if err != nil {
		return err
	}
	p, r, err := lookup(cat, args[0])
	if err != nil {
		printDiagnostics(c.App.ErrWriter, cat)
		return err
	}
	for _, w := range personaDiagnostics(cat, p) {
		warnf(c.App.ErrWriter, "%s", w)
	}
	if h := c.String("harness"); h != "" {
		r.Harness = h
	}
	if err := persona.Runnable(r.Harness); err != nil {
		return withCode(exitFailure, fmt.Errorf("%s@%s: %w", p.ID, r.Tier, err), "run it on another harness: --harness "+strings.Join(persona.Harnesses, "|"))
	}
	// mount.enabled false (agentworkforce's switch) runs in the repository.
	inRepo := c.Bool("install-in-repo")
	if m := r.Mount.Enabled; m != nil && !*m && !inRepo {
		for _, f := range []string{"keep", "reuse", "sync-deletes", "review", "sync-committed", "live"} {
			if c.Bool(f) {
				return usageError(fmt.Errorf("--%s needs a sandbox, and persona %s sets mount.enabled false", f, p.ID))
			}
		}
		inRepo = true
		warnf(c.App.ErrWriter, "persona %s sets mount.enabled false: running in the repository without a sandbox, as --install-in-repo does", p.ID)
	}
	if name := c.String("profile"); name != "" {
		if p, ok := discover.Lookup(name); !ok || p.Harness != r.Harness {
			return usageError(fmt.Errorf("--profile %s is not a discovery profile of %s", name, r.Harness), "profiles: "+strings.Join(discover.Names(), ", "))
		}
	}
	values, err := r.ResolveInputs(explicit, os.Getenv)
	if err != nil {
		return err
	}
	r.SystemPrompt = persona.Substitute(r.SystemPrompt, values)

	home, err := persona.Home()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	cwd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return err
	}
	root := mount.ProjectRoot(cwd, persona.DefaultRootMarkers)
	if dir := c.String("root"); dir != "" {
		if root, err = filepath.Abs(dir); err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			return fmt.Errorf("--root %s: %w", dir, err)
		}
		if rel, err := filepath.Rel(root, cwd); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return usageError(fmt.Errorf("--root %s does not contain the working directory %s", dir, cwd))
		}
	}
	plan, err := session.NewPlan(session.PlanOptions{
		Home: home, Persona: p.ID, Layers: p.Chain, Resolved: r, Inputs: values, RefreshSkills: c.Bool("refresh-skills"),
		Root: root, Cwd: cwd, Extra: extra, Env: os.Environ(), InRepo: inRepo, AllowUnmapped: c.Bool("allow-unmapped"),
		Profile: func(h string) (discover.Profile, string, error) { return harnessProfile(c, h) },
	})
	var gitDir *session.InGitDirError
	if errors.As(err, &gitDir) {
		return usageError(err, "cd "+shellJoin([]string{gitDir.Root})+" first")
	}
	if err != nil {
		return err
	}
	for _, w := range plan.Warnings {
		warnf(c.App.ErrWriter, "%s", w)
	}
	if c.Bool("dry-run") {
		if err := plan.Preview(); err != nil {
			return err
		}
		if err := plan.Refusal(); err != nil {
			warnf(c.App.ErrWriter, "%v; the run would not start (--allow-unmapped starts it without them)", err)
		}
		if c.Bool("json") {
			return writeJSON(c.App.Writer, plan)
		}
		return printPlan(c.App.Writer, plan)
	}
	if err := unmapped(plan); err != nil {
		return err
	}
	for _, n := range plan.Notes {
		warnf(c.App.ErrWriter, "%s", n)
	}
	return runPlanned(c, plan)
}

// unmapped is the error of a plan whose harness refused persona values:
// the run does not start (a dry run prints the plan and a warning).
func unmapped(p *session.Plan) error {
	var ue *harness.UnmappedError
	if err := p.Refusal(); errors.As(err, &ue) {
		return withCode(exitFailure, err, ue.Hint())
	}
	return nil
}

func harnessMissing(err error) error {
	var nf *harness.NotFoundError
	if errors.As(err, &nf) {
		return withCode(exitHarnessMissing, err, nf.Hint())
	}
	return err
}

func runPlanned(c *cli.Context, plan *session.Plan) error {
	stderr := c.App.ErrWriter
	if !plan.InRepo {
		home, _ := persona.Home()
		warnStale(stderr, home, plan.Root)
	}
	o := session.RunOptions{
		Stdin: os.Stdin, Stdout: c.App.Writer, Stderr: stderr,
		SyncDeletes: c.Bool("sync-deletes"), Keep: c.Bool("keep"), Reuse: c.Bool("reuse"),
		Warn:          func(msg string) { warnf(stderr, "%s", msg) },
		SyncCommitted: c.Bool("sync-committed"), Review: !plan.InRepo && reviewRuns(c),
		Live: c.Bool("live"), Timeout: runTimeout(c, plan),
	}
	syncing := false
	if isTerminal(stderr) {
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
	if syncing {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if err != nil {
		if res != nil && res.Report != nil {
			printReport(c.App.Writer, stderr, res.Report) // what was synced, and what failed
		}
		if res != nil && res.Kept {
			warnf(stderr, "the session is kept at %s; workforce sessions sync %s finishes it", res.Session.Dir, res.Session.Record.ID)
		}
		return harnessMissing(err)
	}
	if res.Held {
		return reviewHeld(c, res)
	}
	if l := res.Live; l != nil {
		fmt.Fprintf(c.App.Writer, "live: %d to the repository, %d to the sandbox, %d deleted, %d conflicts\n", l.ToReal, l.ToSandbox, l.Deleted, len(l.Conflicts))
		for _, f := range l.Failed {
			fmt.Fprintf(c.App.Writer, "failed: %s: %s\n", quote.Name(f.Path), quote.Text(f.Error))
		}
	}
	if res.Report != nil {
		printReport(c.App.Writer, stderr, res.Report)
		if res.Report.Interrupted {
			hintf(stderr, "workforce sessions sync %s finishes it", res.Session.Record.ID)
		} else if len(res.Report.Blocked) > 0 && res.Kept {
			hintBlocked(stderr, res.Session.Record.ID)
		}
	}
	if res.Session != nil {
		printBranch(c.App.Writer, stderr, res.Session.Record)
	}
	if res.Kept {
		fmt.Fprintf(c.App.Writer, "sandbox kept: %s\n", res.Session.Dir)
	}
	return silentExit(res.ExitCode)
}

// runTimeout is the run's time limit: --timeout, else the persona's
// timeoutSeconds when nobody is at a terminal to stop the harness (stdin
// is not one), else none.
func runTimeout(c *cli.Context, plan *session.Plan) time.Duration {
	if c.IsSet("timeout") {
		return max(c.Duration("timeout"), 0)
	}
	if isTerminal(os.Stdin) {
		return 0
	}
	return plan.Invocation().Timeout
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

func printReport(w, stderr io.Writer, r *mount.Report) {
	printEach(w, "created", r.Created)
	printEach(w, "updated", r.Updated)
	printEach(w, "deleted", r.Deleted)
	printEach(w, "deleted in the sandbox, kept", r.Unapplied)
	if len(r.Unapplied) > 0 {
		hintf(stderr, "run with --sync-deletes to apply deletions")
	}
	printEach(w, "not applied, in the place of a deletion kept", r.Blocked)
	printEach(w, "not synced", r.NotSynced)
	printEach(w, "on the branch", r.OnBranch)
	for _, cf := range r.Conflicts {
		if cf.Saved == "" {
			fmt.Fprintf(w, "conflict: %s was deleted by the agent but changed in the repository; kept: %s\n", quote.Name(cf.Path), quote.Name(cf.Real))
			continue
		}
		fmt.Fprintf(w, "conflict: %s changed in the repository too; yours: %s; the agent's: %s\n", quote.Name(cf.Path), quote.Name(cf.Real), quote.Name(cf.Saved))
	}
	for _, f := range r.Failed {
		fmt.Fprintf(w, "failed: %s: %s\n", quote.Name(f.Path), quote.Text(f.Error))
	}
	if r.Interrupted {
		warnf(stderr, "sync-back was interrupted; the rest is still in the sandbox")
	}
}

// hintBlocked says how to finish the session id, kept for the files that
// wait for a deletion (mount.Report.Blocked).
func hintBlocked(stderr io.Writer, id string) {
	hintf(stderr, "the session is kept for what the agent put in the place of what it deleted: workforce sessions sync %s --sync-deletes applies it, workforce sessions discard %s drops it", id, id)
}

// printEach prints a "label: item" line for each item, a name the agent
// may have chosen, quoted.
func printEach(w io.Writer, label string, items []string) {
	for _, it := range items {
		fmt.Fprintf(w, "%s: %s\n", label, quote.Name(it))
	}
}

func printPlan(w io.Writer, p *session.Plan) error {
	fmt.Fprintf(w, "persona: %s@%s on %s\n", p.Persona, p.Tier, p.Harness)
	for _, o := range p.Layers {
		fmt.Fprintf(w, "layer: %s %s\n", o.Layer, o.File)
	}
	fmt.Fprintf(w, "model: %s\nroot: %s\n", p.Resolved.Model, p.Root)
	if p.Profile != "" {
		fmt.Fprintf(w, "profile: %s\n", p.Profile)
	}
	if p.InRepo {
		fmt.Fprintf(w, "runs in: %s (no sandbox)\n", p.Workdir)
	} else {
		fmt.Fprintf(w, "sandbox: %s\nruns in: %s\n", p.Sandbox, p.Workdir)
	}
	printEach(w, "hidden", p.Hidden)
	printEach(w, "ignored", p.Ignored)
	printEach(w, "read-only", p.Readonly)
	if e := p.Extend; e != nil {
		printEach(w, "folded", e.Folded)
		printEach(w, "loaded by the harness itself", e.LoadedAnyway)
	}
	if m := p.Materialized; m != nil {
		fmt.Fprintf(w, "materialized: %s (%s)\n---\n%s\n---\n", m.Path, m.Mode, m.Text)
	} else {
		fmt.Fprintln(w, "materialized: none")
	}
	if sp := p.Skills; sp != nil {
		for _, it := range sp.Items {
			state := string(it.Kind)
			if it.Cache != state {
				state += ", " + it.Cache
			}
			fmt.Fprintf(w, "skill: %s from %s (%s) -> %s\n", it.Name, it.Source, state, it.Dest)
			for _, rel := range it.Replaces {
				fmt.Fprintf(w, "skill replaces: %s (the repository's %s, hidden in the sandbox)\n", rel, it.Name)
			}
		}
	}
	printEach(w, "env", p.Env)
	for _, v := range p.Sealed {
		if v.Dropped {
			fmt.Fprintf(w, "env dropped: %s\n", v.Name)
		} else {
			fmt.Fprintf(w, "env rewritten: %s=%s\n", v.Name, v.Value)
		}
	}
	for path := range p.ConfigFiles {
		fmt.Fprintf(w, "config file: %s\n", path)
	}
	if p.Mapping != nil {
		p.Mapping.WriteText(w)
	}
	fmt.Fprintf(w, "argv: %s\n", shellJoin(p.Argv))
	return nil
}

// shellJoin quotes argv for display as a shell command line.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ',' || r == ':' || r == '@' ||
				r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
