package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func sessionsCommand() *cli.Command {
	listCmd := &cli.Command{
		Name:  "list",
		Usage: "list the sessions, with their phase and the files the agent changed",
		Description: `Lists the sessions of <home>/sessions, oldest first: id, persona, phase, age,
the number of files a sync-back would bring back, and the project root. A
session whose process is gone before its work was synced back is marked
stale: workforce sessions sync ID finishes it.

Example:

   workforce sessions
   workforce sessions list --json`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: sessionsListAction,
	}
	return &cli.Command{
		Name:  "sessions",
		Usage: "list, show, diff, apply, sync, resume and remove run sessions, those left by a crash included",
		Description: `A session is one workforce run: its sandbox, record and manifest under
<home>/sessions/<id>/. Sessions left by a process that died (closed terminal,
kill -9, reboot) are stale; their work is still in the sandbox. A session of
run --review holds the agent's work until you apply or discard it. The
agent's commits come back as the branch workforce/<id> of your repository.
A kept session's harness conversation continues with sessions resume.

Example:

   workforce sessions
   workforce sessions diff code-reviewer-20261123-101500-1a2b3c4d --stat
   workforce sessions sync code-reviewer-20261123-101500-1a2b3c4d`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: sessionsListAction,
		Subcommands: []*cli.Command{
			listCmd,
			{
				Name:      "show",
				Usage:     "show a session's record and the changes a sync-back would apply, or the result of its one-shot run",
				ArgsUsage: "ID",
				Description: `Shows the session's record and what a sync-back would do now: files created,
updated and deleted, deletions left unapplied without --sync-deletes, files
that are not synced, and conflicts (files changed in the real tree too).
Nothing is written.

A one-shot run (run PERSONA TASK) leaves its result in
<home>/results/<id>/result.json. Once its session is gone (the sandbox is
removed after the run unless kept), show prints the run's summary from the
result, as run printed it, and with --json the result object; a kept
session shows its record and the summary of its result
(workforce sessions prune-results tells how long results stay).

Example:

   workforce sessions show code-reviewer-20261123-101500-1a2b3c4d --json`,
				Flags:  []cli.Flag{jsonFlag(), &cli.BoolFlag{Name: "sync-deletes", Usage: "show deletions as a sync with --sync-deletes would apply them"}},
				Action: sessionsShowAction,
			},
			{
				Name:      "sync",
				Usage:     "bring a session's work back into the real tree",
				ArgsUsage: "ID",
				Description: `Runs the sync-back of the run that made the session: new and changed files flow
back, a file changed in the real tree too is a conflict (yours stays, the
agent's is saved under the session's conflicts/), deletions apply only with
--sync-deletes, and so does a file, directory or symlink the agent replaced
by another of them (what takes its place waits in the session). The agent's
commits become the branch workforce/<id>, and what it committed is left to
that branch unless --sync-committed. A sync killed half-way and run again
finishes the job.
Syncs of one session wait for each other; a session whose run is still
going is refused, and so is one whose harness outlived its workforce
process and still runs (it may still write): wait for it to exit or stop
it, or sync what it has written so far with --force (the session is then
kept while the harness runs). Executable configuration the agent changed
(docs/run.md) is held again, for sessions apply, unless --sync-config;
policy files never sync back. The session is removed once synced without
conflicts, unless --keep; what a kept session synced is yours from then on
(a later edit or deletion is no conflict).

Exit status: 0, or 3 when there were conflicts.

Example:

   workforce sessions sync code-reviewer-20261123-101500-1a2b3c4d --sync-deletes`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the session after the sync"},
					&cli.BoolFlag{Name: "force", Usage: "sync even while the session's harness, left by a workforce process that died, still runs"},
					syncCommittedFlag(), syncConfigFlag,
				},
				Action: sessionsSyncAction,
			},
			{
				Name:      "diff",
				Usage:     "show a session's work as a git diff against the tree it started from",
				ArgsUsage: "ID [PATH|GLOB...]",
				Description: `Shows the agent's changes, committed and uncommitted, against the files the
session started from, as a unified git diff (coloured on a terminal): the
work a sync-back or apply would bring now, deletions included. A file that
changed in your tree too is a conflict: it is marked with a "# conflict:"
line and shown against your version. PATH and GLOB arguments (doublestar
globs: *, ?, **, [a-z], {a,b}; quote them) pick files or directories,
relative to your working directory. Nothing is written. Needs git.

Example:

   workforce sessions diff code-reviewer-20261123-101500-1a2b3c4d --stat
   workforce sessions diff code-reviewer src/ '**/*_test.go'`,
				Flags:  []cli.Flag{&cli.BoolFlag{Name: "stat", Usage: "show a summary of the changed files instead of the patch"}},
				Action: sessionsDiffAction,
			},
			{
				Name:      "apply",
				Usage:     "apply all or part of a session's work to the real tree",
				ArgsUsage: "ID [PATH|GLOB...]",
				Description: `Applies the agent's work held by a session (run --review, or any kept session)
as sync-back does, with the same rules: a file changed in your tree too is a
conflict (yours stays, the agent's is saved under the session's
conflicts/), deletions apply only with --sync-deletes, and what the agent
committed is left to its branch workforce/<id> unless --sync-committed.
PATH and GLOB arguments (doublestar globs, quoted) apply only the files they
name, relative to your working directory; the rest stays in the session for
a later apply or discard. What was applied is yours from then on: a later
edit or deletion of it is no conflict, and a later apply brings it again
only if the agent changed it again. Executable configuration a run held for
review (.claude/, .mcp.json, opencode.json, .vscode/tasks.json, .envrc...:
docs/run.md) is applied too; policy files (.agentignore, .agentreadonly,
.agentworkforce/...) never are. The session is removed once all its work is
applied without conflicts, unless --keep.

Exit status: 0, or 3 when there were conflicts.

Example:

   workforce sessions apply code-reviewer-20261123-101500-1a2b3c4d
   workforce sessions apply code-reviewer src/parser/ 'docs/**/*.md'`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the session after the apply"},
					&cli.BoolFlag{Name: "force", Usage: "apply even while the session's harness, left by a workforce process that died, still runs"},
					syncCommittedFlag(),
				},
				Action: sessionsApplyAction,
			},
			resumeCommand(),
			{
				Name:      "discard",
				Usage:     "drop a session's work: its sandbox and its branch",
				ArgsUsage: "ID",
				Description: `Removes the session, with the agent's work that was not applied, and deletes
its branch workforce/<id> from your repository while the branch is as the
session made it (a branch you moved or checked out stays).

Example:

   workforce sessions discard code-reviewer-20261123-101500-1a2b3c4d`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "force", Usage: "discard even while the session's harness, left by a workforce process that died, still runs"},
				},
				Action: sessionsDiscardAction,
			},
			{
				Name:      "rm",
				Usage:     "remove sessions and their sandboxes",
				ArgsUsage: "ID... | --stale | --warm",
				Description: `Removes the named sessions, or with --stale every stale session, with the
agent's work that was not synced back; --warm removes the warm sandboxes
that run --reuse keeps. It asks first on a terminal; --yes
answers for you, and is needed when there is no terminal. A running session
is refused, and so is one whose harness outlived its workforce process and
still runs, unless --force. A session whose record cannot be read is
removed all the same, with a warning. The branch workforce/<id> of the
agent's commits stays in your repository unless --branch.

Example:

   workforce sessions rm --stale --yes
   workforce sessions rm code-reviewer --yes --branch`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "branch", Usage: "also delete each session's branch workforce/<id>, while it is as the session made it"},
					&cli.BoolFlag{Name: "stale", Usage: "remove every stale session"},
					&cli.BoolFlag{Name: "warm", Usage: "remove the warm sandboxes kept by run --reuse"},
					&cli.BoolFlag{Name: "yes", Usage: "do not ask"},
					&cli.BoolFlag{Name: "force", Usage: "remove even while a session's harness, left by a workforce process that died, still runs"},
				},
				Action: sessionsRmAction,
			},
			{
				Name:  "prune-results",
				Usage: "remove the results of one-shot runs past their age or count limit",
				Description: `A one-shot run (run PERSONA TASK) leaves its result and the harness's raw
output in <home>/results/<id>/, where sessions show ID finds them after the
sandbox is gone. They are pruned after each one-shot run, and by this
command: results older than maxAge, and those beyond the newest maxCount,
are removed, by "results" in <home>/config.json
({"results": {"maxAge": "720h", "maxCount": 500}} is the default; 0 is no
limit). The age of a result is its session's, from the time in its id.
The results of a session that still exists (kept, held for review, stale)
stay while it does and do not count. --max-age and --max-count override the
configuration.

Example:

   workforce sessions prune-results
   workforce sessions prune-results --max-age 168h --max-count 50`,
				Flags: []cli.Flag{
					&cli.DurationFlag{Name: "max-age", Action: notNegative("max-age"), Usage: "remove results older than this (e.g. 168h); 0 for no limit (default: \"results\" in <home>/config.json, else 720h)"},
					&cli.IntFlag{Name: "max-count", Action: atLeast("max-count", 0), Usage: "keep at most this many results, the newest; 0 for no limit (default: \"results\" in <home>/config.json, else 500)"},
				},
				Action: sessionsPruneResultsAction,
			},
		},
	}
}

// syncCommittedFlag is --sync-committed of sessions sync and apply.
func syncCommittedFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<id> either way)"}
}

// sessionsListOptions are the workforce home `workforce sessions list`
// lists the sessions of.
type sessionsListOptions struct {
	JSON bool
	Env  procEnv
}

func sessionsListAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions list takes no arguments; to see one session: workforce sessions show ID")
	}
	return runSessionsList(c.Context, newStreams(c), sessionsListOptions{JSON: c.Bool("json"), Env: newProcEnv()})
}

func runSessionsList(_ context.Context, ios *iostreams, opts sessionsListOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	infos, err := session.List(home)
	if err != nil {
		return err
	}
	rows := []report.SessionRow{}
	now := time.Now()
	for _, in := range infos {
		row := report.SessionRow{ID: in.ID(), Changed: -1}
		if in.Err != nil {
			row.Error = in.Err.Error()
			rows = append(rows, row)
			continue
		}
		r := in.Session.Record
		row.Persona, row.Tier, row.Harness, row.Root, row.Phase = r.Persona, r.Tier, r.Harness, r.Root, string(r.Phase)
		row.Stale, row.Live, row.Started = in.Stale, in.Live, r.Started
		row.Age = int64(now.Sub(r.Started).Seconds())
		if r.Phase != session.Creating && r.Phase != session.Failed {
			if rep, err := in.Session.Changes(true); err == nil {
				row.Changed = changedCount(rep)
			}
		}
		rows = append(rows, row)
	}
	warm := each(session.WarmList(home), toWarm)
	if opts.JSON {
		if warm == nil {
			warm = []report.Warm{}
		}
		return writeJSON(ios.Out, report.Sessions{Sessions: rows, Warm: warm})
	}
	for _, w := range warm {
		defer fmt.Fprintf(ios.Out, "warm sandbox of %s: %s (%s old)\n", quote.Name(w.Root), quote.Name(w.Dir), age(now.Sub(w.Time)))
	}
	if len(rows) == 0 {
		fmt.Fprintln(ios.Out, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPERSONA\tPHASE\tAGE\tCHANGED\tROOT")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t\tunreadable\t\t\t%s\n", quote.Name(r.ID), quote.Text(r.Error))
			continue
		}
		phase := r.Phase
		if r.Stale {
			phase += " (stale)"
		}
		changed := "?"
		if r.Changed >= 0 {
			changed = fmt.Sprint(r.Changed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Persona, phase, age(time.Duration(r.Age)*time.Second), changed, quote.Name(r.Root))
	}
	return tw.Flush()
}

func changedCount(r *mount.Report) int {
	return len(r.Created) + len(r.Updated) + len(r.Deleted) + len(r.Unapplied) + len(r.Blocked) + len(r.Conflicts)
}

// oneID returns the session id that is the only argument of c.
func oneID(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("%s takes one session id (workforce sessions lists them)", c.Command.Name)
	}
	return c.Args().First(), nil
}

// openSession opens the session id of the workforce home.
func openSession(env procEnv, id string) (*session.Session, error) {
	home, err := env.home()
	if err != nil {
		return nil, err
	}
	return session.Open(home, id)
}

// sessionsShowOptions are what `workforce sessions show` shows: session
// ID, with deletions as SyncDeletes would apply them.
type sessionsShowOptions struct {
	ID          string
	SyncDeletes bool
	JSON        bool
	Env         procEnv
}

func sessionsShowAction(c *cli.Context) error {
	id, err := oneID(c)
	if err != nil {
		return err
	}
	opts := sessionsShowOptions{ID: id, SyncDeletes: c.Bool("sync-deletes"), JSON: c.Bool("json"), Env: newProcEnv()}
	return runSessionsShow(c.Context, newStreams(c), opts)
}

func runSessionsShow(_ context.Context, ios *iostreams, opts sessionsShowOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	l, err := session.Locate(home, opts.ID)
	if err != nil {
		return err
	}
	if l.Session == nil {
		// The sandbox is gone; the result of its one-shot run stays.
		r, err := readResult(l.ResultDir)
		if err != nil {
			return fmt.Errorf("session %s is gone, and its result cannot be read: %w", l.ID, err)
		}
		if opts.JSON {
			return writeJSON(ios.Out, r)
		}
		printOneShot(ios.Out, ios.Err, *r, nil)
		fmt.Fprintf(ios.Out, "result: %s\n", filepath.Join(l.ResultDir, session.ResultFile))
		return nil
	}
	s := l.Session
	if err := s.ReadRecord(); err != nil {
		return err
	}
	rep, err := s.Changes(opts.SyncDeletes)
	if err != nil {
		return err
	}
	var result *report.Result
	if l.ResultDir != "" {
		// A run under way (or killed) has written its output there, and
		// no result yet.
		if result, err = readResult(l.ResultDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			warnf(ios.Err, "the result of session %s cannot be read: %v", l.ID, err)
		}
	}
	if opts.JSON {
		return writeJSON(ios.Out, report.SessionShow{Record: toRecord(s.Record), Changes: ptr(rep, toSyncReport), Result: result})
	}
	w := ios.Out
	r := s.Record
	fmt.Fprintf(w, "session: %s\npersona: %s@%s on %s\nroot: %s\ncwd: %s\nphase: %s\nstarted: %s by process %d\n",
		r.ID, r.Persona, r.Tier, r.Harness, quote.Name(r.Root), quote.Name(r.Cwd), r.Phase, r.Started.Local().Format(time.RFC3339), r.PID)
	if r.ExitCode != nil {
		fmt.Fprintf(w, "harness exit status: %d\n", *r.ExitCode)
	}
	if r.Branch != "" {
		fmt.Fprintf(w, "branch: %s (%s of the agent)\n", r.Branch, commits(r.Commits))
	}
	if err := s.HarnessRunning(); err != nil {
		warnf(ios.Err, "%v", err)
	}
	printSyncReport(w, io.Discard, rep)
	if result != nil {
		fmt.Fprintf(w, "result: %s\n", filepath.Join(l.ResultDir, session.ResultFile))
		printOneShot(&indented{w: w}, io.Discard, *result, nil)
	}
	return nil
}

// readResult reads the result a one-shot run left in its results
// directory dir; a result that cannot be read is an error naming the file.
func readResult(dir string) (*report.Result, error) {
	path := filepath.Join(dir, session.ResultFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, diag.JSONError(path, data, err)
	}
	if !slices.Contains(report.Statuses, r.Status) {
		return nil, &diag.Diagnostic{File: path, Field: "status", Message: fmt.Sprintf("%q is not a status of a run", r.Status)}
	}
	if r.SessionID == "" {
		return nil, &diag.Diagnostic{File: path, Field: "sessionId", Message: "missing"}
	}
	return &r, nil
}

// indented writes to w with each line indented by two spaces.
type indented struct {
	w   io.Writer
	mid bool // within a line
}

func (in *indented) Write(p []byte) (int, error) {
	var b []byte
	for _, c := range p {
		if !in.mid {
			b = append(b, ' ', ' ')
		}
		b = append(b, c)
		in.mid = c != '\n'
	}
	if _, err := in.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sessionsPruneResultsOptions are the bounds `workforce sessions
// prune-results` prunes by: those of config.json, but for MaxAge and
// MaxCount when set.
type sessionsPruneResultsOptions struct {
	MaxAge   *time.Duration
	MaxCount *int
	Env      procEnv
}

func sessionsPruneResultsAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions prune-results takes no arguments")
	}
	opts := sessionsPruneResultsOptions{Env: newProcEnv()}
	if c.IsSet("max-age") {
		d := c.Duration("max-age")
		opts.MaxAge = &d
	}
	if c.IsSet("max-count") {
		n := c.Int("max-count")
		opts.MaxCount = &n
	}
	return runSessionsPruneResults(c.Context, newStreams(c), opts)
}

func runSessionsPruneResults(_ context.Context, ios *iostreams, opts sessionsPruneResultsOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	lim, err := session.ConfiguredResultLimits(home)
	if err != nil && (opts.MaxAge == nil || opts.MaxCount == nil) {
		return err
	}
	if opts.MaxAge != nil {
		lim.MaxAge = *opts.MaxAge
	}
	if opts.MaxCount != nil {
		lim.MaxCount = *opts.MaxCount
	}
	removed, err := session.PruneResults(home, lim, "", time.Now())
	for _, id := range removed {
		fmt.Fprintf(ios.Out, "removed result: %s\n", quote.Name(id))
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(ios.Out, "no results to prune")
	}
	return err
}

// sessionsSyncOptions are how `workforce sessions sync` and `apply` bring
// the work of session ID back: the files Paths name (apply only; all
// without), deletions with SyncDeletes, the session kept with Keep,
// forced with Force while its harness runs, and with SyncCommitted what
// the agent committed too.
type sessionsSyncOptions struct {
	ID                                      string
	Paths                                   []string
	SyncDeletes, Keep, Force, SyncCommitted bool
	// SyncConfig syncs executable configuration too: sessions sync
	// --sync-config, and sessions apply always (it is the user's review).
	SyncConfig bool
	Env        procEnv
}

func sessionsSyncFlags(c *cli.Context, id string) sessionsSyncOptions {
	return sessionsSyncOptions{ID: id, SyncDeletes: c.Bool("sync-deletes"), Keep: c.Bool("keep"), Force: c.Bool("force"),
		SyncCommitted: c.Bool("sync-committed"), SyncConfig: c.Bool(syncConfigFlag.Name), Env: newProcEnv()}
}

func sessionsSyncAction(c *cli.Context) error {
	id, err := oneID(c)
	if err != nil {
		return err
	}
	return runSessionsSync(c.Context, newStreams(c), sessionsSyncFlags(c, id))
}

func runSessionsSync(ctx context.Context, ios *iostreams, opts sessionsSyncOptions) error {
	s, err := openSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	return syncSession(ctx, ios, s, nil, opts)
}

// syncSession syncs back the session s, or with sel the part of its work
// that sel selects, and prints what it did.
func syncSession(ctx context.Context, ios *iostreams, s *session.Session, sel *session.Selector, opts sessionsSyncOptions) error {
	var only func(string) bool
	if sel != nil {
		only = sel.Match
	}
	o, done := syncOptions(ios, opts.SyncDeletes, opts.Keep, opts.Force, opts.SyncCommitted, only)
	o.SyncConfig = opts.SyncConfig
	defer done()
	rep, kept, err := s.Sync(ctx, o)
	return printSync(ios, s, rep, kept, err)
}

func sessionsApplyAction(c *cli.Context) error {
	if c.NArg() < 1 {
		return usagef("sessions apply takes a session id (workforce sessions lists them), then optionally paths or globs")
	}
	opts := sessionsSyncFlags(c, c.Args().First())
	opts.Paths = c.Args().Tail()
	opts.SyncConfig = true
	return runSessionsApply(c.Context, newStreams(c), opts)
}

func runSessionsApply(ctx context.Context, ios *iostreams, opts sessionsSyncOptions) error {
	s, sel, err := openSelected(opts.Env, opts.ID, opts.Paths)
	if err != nil {
		return err
	}
	return syncSession(ctx, ios, s, sel, opts)
}

// openSelected opens the session id and the selector of the paths or
// globs (nil for none), relative to the working directory: sessions diff
// and apply.
func openSelected(env procEnv, id string, paths []string) (*session.Session, *session.Selector, error) {
	s, err := openSession(env, id)
	if err != nil {
		return nil, nil, err
	}
	sel, err := selectorFor(env, s, paths)
	if err != nil {
		return nil, nil, err
	}
	return s, sel, nil
}

// selectorFor makes the selector of the PATH|GLOB arguments of sessions
// diff and apply for the session s, and checks that each names one of the
// agent's changes.
func selectorFor(env procEnv, s *session.Session, args []string) (*session.Selector, error) {
	if len(args) == 0 {
		return nil, nil
	}
	wd, err := env.dir()
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	sel, err := session.NewSelector(s.Record.Root, wd, args)
	if err != nil {
		return nil, usageError(err)
	}
	changed, err := s.Changed()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ch := range changed {
		sel.Match(ch.Path)
		names = append(names, ch.Path)
	}
	if un := sel.Unmatched(); len(un) > 0 {
		there := "the agent changed nothing that syncs back"
		if len(names) > 0 {
			there = "the agent's changes: " + strings.Join(names, ", ")
		}
		return nil, withCode(exitFailure, fmt.Errorf("no change of the agent in session %s matches %s", s.ID(), strings.Join(un, ", ")), there)
	}
	return sel, nil
}

// sessionsDiffOptions are what `workforce sessions diff` shows: the work
// of session ID, the files Paths name (all without), as a summary with
// Stat.
type sessionsDiffOptions struct {
	ID    string
	Paths []string
	Stat  bool
	Env   procEnv
}

func sessionsDiffAction(c *cli.Context) error {
	if c.NArg() < 1 {
		return usagef("sessions diff takes a session id (workforce sessions lists them), then optionally paths or globs")
	}
	opts := sessionsDiffOptions{ID: c.Args().First(), Paths: c.Args().Tail(), Stat: c.Bool("stat"), Env: newProcEnv()}
	return runSessionsDiff(c.Context, newStreams(c), opts)
}

func runSessionsDiff(_ context.Context, ios *iostreams, opts sessionsDiffOptions) error {
	s, sel, err := openSelected(opts.Env, opts.ID, opts.Paths)
	if err != nil {
		return err
	}
	err = s.Diff(ios.Out, session.DiffOptions{Only: sel.Match, Stat: opts.Stat, Color: useColor(ios, opts.Env)})
	if errors.Is(err, session.ErrNoGit) {
		return withCode(exitFailure, err, "workforce sessions show "+s.ID()+" lists the changed files")
	}
	return err
}

// sessionsDiscardOptions are the session `workforce sessions discard`
// drops, forced with Force while its harness runs.
type sessionsDiscardOptions struct {
	ID    string
	Force bool
	Env   procEnv
}

func sessionsDiscardAction(c *cli.Context) error {
	id, err := oneID(c)
	if err != nil {
		return err
	}
	return runSessionsDiscard(c.Context, newStreams(c), sessionsDiscardOptions{ID: id, Force: c.Bool("force"), Env: newProcEnv()})
}

func runSessionsDiscard(_ context.Context, ios *iostreams, opts sessionsDiscardOptions) error {
	s, err := openSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	return discard(ios, s, opts.Force)
}

// sessionsRmOptions are what `workforce sessions rm` removes: the
// sessions IDs name, or with Stale every stale one, or with Warm the warm
// sandboxes; Yes answers its question, Force removes sessions whose
// harness still runs, Branch deletes their branches too.
type sessionsRmOptions struct {
	IDs                []string
	Stale, Warm        bool
	Yes, Force, Branch bool
	Env                procEnv
}

func sessionsRmAction(c *cli.Context) error {
	opts := sessionsRmOptions{
		IDs: c.Args().Slice(), Stale: c.Bool("stale"), Warm: c.Bool("warm"),
		Yes: c.Bool("yes"), Force: c.Bool("force"), Branch: c.Bool("branch"), Env: newProcEnv(),
	}
	return runSessionsRm(c.Context, newStreams(c), opts)
}

func runSessionsRm(_ context.Context, ios *iostreams, opts sessionsRmOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	if opts.Warm {
		if opts.Stale || len(opts.IDs) > 0 {
			return usagef("sessions rm takes session ids, --stale or --warm")
		}
		// Warm sandboxes hold no work of an agent: no question asked.
		for _, w := range session.WarmList(home) {
			if err := session.RemoveWarm(w); err != nil {
				return err
			}
			fmt.Fprintf(ios.Out, "removed the warm sandbox of %s\n", quote.Name(w.Root))
		}
		return nil
	}
	if opts.Stale == (len(opts.IDs) > 0) {
		return usagef("sessions rm takes session ids, --stale or --warm")
	}
	var targets []*session.Session
	if opts.Stale {
		infos, err := session.List(home)
		if err != nil {
			return err
		}
		for _, in := range infos {
			if in.Stale {
				targets = append(targets, in.Session)
			}
		}
	} else {
		for _, id := range opts.IDs {
			s, err := session.Find(home, id)
			if err != nil {
				return err
			}
			if err := s.ReadRecord(); err != nil {
				warnf(ios.Err, "cannot read the record of session %s (%v); it is removed all the same, without checking for a harness still running in it", s.ID(), err)
			}
			targets = append(targets, s)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(ios.Out, "no stale sessions")
		return nil
	}
	if !opts.Yes {
		if !ios.ErrTTY || !ios.InTTY {
			return usageError(errors.New("sessions rm removes the agent's work that was not synced back"), "add --yes to remove without asking")
		}
		var names []string
		for _, s := range targets {
			names = append(names, s.ID())
		}
		fmt.Fprintf(ios.Err, "workforce: remove %s and the work in them? [y/N] ", strings.Join(names, ", "))
		answer, _ := bufio.NewReader(ios.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("nothing removed")
		}
	}
	var failed error
	for _, s := range targets {
		if err := s.RemoveIdle(opts.Force); err != nil {
			printError(ios.Err, withHarnessHint(err, "workforce sessions rm", "--force removes the session anyway"))
			failed = silentExit(exitFailure)
			continue
		}
		fmt.Fprintf(ios.Out, "removed: %s\n", s.ID())
		if opts.Branch {
			removeBranch(ios, s)
		}
	}
	return failed
}

func resumeCommand() *cli.Command {
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
is gone.

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
			&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
			&cli.BoolFlag{Name: "review", Usage: "hold the agent's work for review instead of syncing it back (default: \"review\" in <home>/config.json; a session held for review is held again)"},
			&cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<id> either way)"},
			syncConfigFlag,
			&cli.DurationFlag{Name: "timeout", Action: notNegative("timeout"), Usage: "stop the harness after this long (e.g. 30m); 0 for no limit (default: the persona's harnessSettings.timeoutSeconds)"},
			&cli.BoolFlag{Name: "allow-unmapped", Usage: "start the harness even when it cannot apply some of the persona's permissions, settings or MCP servers, without them (a warning names each)"},
			sandboxFlag, sandboxAllowFlag, noHistoryFlag,
		},
		Action: sessionsResumeAction,
	}
}

// sessionsResumeOptions are a resumed run: session ID continued with
// Task, the arguments Extra passed to the harness, the persona's input
// values Inputs, and the choices of the command line, as in runOptions.
type sessionsResumeOptions struct {
	ID, Task string
	Extra    []string
	Inputs   map[string]string

	JSON, Events, SyncDeletes, SyncCommitted, SyncConfig, AllowUnmapped, NoHistory bool
	// Review and Timeout are as in runOptions.
	Review  *bool
	Timeout *time.Duration
	// Sandbox and SandboxAllow are as in runOptions.
	Sandbox      *confine.Mode
	SandboxAllow []string
	Env          procEnv
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
		ID: args[0], Extra: extra, Inputs: map[string]string{},
		JSON: c.Bool("json") || c.Bool("events"), Events: c.Bool("events"), SyncDeletes: c.Bool("sync-deletes"),
		SyncCommitted: c.Bool("sync-committed"), SyncConfig: c.Bool(syncConfigFlag.Name), AllowUnmapped: c.Bool("allow-unmapped"),
		NoHistory: c.Bool(noHistoryFlag.Name), Review: optionalBool(c, "review"), Env: newProcEnv(), SandboxAllow: c.StringSlice("sandbox-allow"),
	}
	var err error
	if opts.Sandbox, err = sandboxMode(c); err != nil {
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
		ID: opts.ID, Task: opts.Task, Extra: opts.Extra, Inputs: opts.Inputs,
		SyncDeletes: opts.SyncDeletes, SyncCommitted: opts.SyncCommitted, SyncConfig: opts.SyncConfig, AllowUnmapped: opts.AllowUnmapped,
		NoHistory: opts.NoHistory, Review: opts.Review, Timeout: opts.Timeout, Sandbox: opts.Sandbox, SandboxAllow: opts.SandboxAllow,
		Env: runEnv(opts.Env),
	}
	hooks := runHooks(ctx, ios, opts.Env)
	hooks.ResumedUsage = ownUsage
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
