package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func init() {
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
		Flags:  []cli.Flag{jsonFlag},
		Action: sessionsListAction,
	}
	register(&cli.Command{
		Name:  "sessions",
		Usage: "list, show, diff, apply, sync and remove run sessions, those left by a crash included",
		Description: `A session is one workforce run: its sandbox, record and manifest under
<home>/sessions/<id>/. Sessions left by a process that died (closed terminal,
kill -9, reboot) are stale; their work is still in the sandbox. A session of
run --review holds the agent's work until you apply or discard it. The
agent's commits come back as the branch workforce/<id> of your repository.

Example:

   workforce sessions
   workforce sessions diff code-reviewer-20261123-101500-1a2b3c4d --stat
   workforce sessions sync code-reviewer-20261123-101500-1a2b3c4d`,
		Flags:  []cli.Flag{jsonFlag},
		Action: sessionsListAction,
		Subcommands: []*cli.Command{
			listCmd,
			{
				Name:      "show",
				Usage:     "show a session's record and the changes a sync-back would apply",
				ArgsUsage: "ID",
				Description: `Shows the session's record and what a sync-back would do now: files created,
updated and deleted, deletions left unapplied without --sync-deletes, files
that are not synced, and conflicts (files changed in the real tree too).
Nothing is written.

Example:

   workforce sessions show code-reviewer-20261123-101500-1a2b3c4d --json`,
				Flags:  []cli.Flag{jsonFlag, &cli.BoolFlag{Name: "sync-deletes", Usage: "show deletions as a sync with --sync-deletes would apply them"}},
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
kept while the harness runs). The session is removed once synced without
conflicts, unless --keep; what a kept session synced is yours from then on
(a later edit or deletion is no conflict).

Exit status: 0, or 3 when there were conflicts.

Example:

   workforce sessions sync code-reviewer-20261123-101500-1a2b3c4d --sync-deletes`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the session after the sync"},
					&cli.BoolFlag{Name: "force", Usage: "sync even while the session's harness, left by a workforce process that died, still runs"},
					syncCommittedFlag,
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
only if the agent changed it again. The session is removed once all its
work is applied without conflicts, unless --keep.

Exit status: 0, or 3 when there were conflicts.

Example:

   workforce sessions apply code-reviewer-20261123-101500-1a2b3c4d
   workforce sessions apply code-reviewer src/parser/ 'docs/**/*.md'`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"},
					&cli.BoolFlag{Name: "keep", Usage: "keep the session after the apply"},
					&cli.BoolFlag{Name: "force", Usage: "apply even while the session's harness, left by a workforce process that died, still runs"},
					syncCommittedFlag,
				},
				Action: sessionsApplyAction,
			},
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
		},
	})
}

// sessionRow is one session of `sessions list --json`.
type sessionRow struct {
	ID      string `json:"id"`
	Persona string `json:"persona,omitempty"`
	Tier    string `json:"tier,omitempty"`
	Harness string `json:"harness,omitempty"`
	Root    string `json:"root,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Stale   bool   `json:"stale"`
	Live    bool   `json:"live"`
	// Started is when the session started; Age the seconds since.
	Started time.Time `json:"started"`
	Age     int64     `json:"ageSeconds"`
	// Changed is the number of files a sync-back would bring back
	// (created, updated, deleted, conflicts); -1 when the sandbox cannot
	// be read.
	Changed int    `json:"changed"`
	Error   string `json:"error,omitempty"`
}

func sessionsHome() (string, error) { return persona.Home() }

func sessionsListAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions list takes no arguments; to see one session: workforce sessions show ID")
	}
	home, err := sessionsHome()
	if err != nil {
		return err
	}
	infos, err := session.List(home)
	if err != nil {
		return err
	}
	rows := []sessionRow{}
	now := time.Now()
	for _, in := range infos {
		row := sessionRow{ID: in.ID(), Changed: -1}
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
	warm := session.WarmList(home)
	if c.Bool("json") {
		if warm == nil {
			warm = []session.Warm{}
		}
		return writeJSON(c.App.Writer, map[string]any{"sessions": rows, "warm": warm})
	}
	for _, w := range warm {
		defer fmt.Fprintf(c.App.Writer, "warm sandbox of %s: %s (%s old)\n", w.Root, w.Dir, age(now.Sub(w.Time)))
	}
	if len(rows) == 0 {
		fmt.Fprintln(c.App.Writer, "no sessions")
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Persona, phase, age(time.Duration(r.Age)*time.Second), changed, r.Root)
	}
	return tw.Flush()
}

func changedCount(r *mount.Report) int {
	return len(r.Created) + len(r.Updated) + len(r.Deleted) + len(r.Unapplied) + len(r.Blocked) + len(r.Conflicts)
}

// age prints a duration as people read an age.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// oneSession opens the session named by the only argument.
func oneSession(c *cli.Context) (*session.Session, error) {
	if c.NArg() != 1 {
		return nil, usagef("%s takes one session id (workforce sessions lists them)", c.Command.Name)
	}
	home, err := sessionsHome()
	if err != nil {
		return nil, err
	}
	return session.Open(home, c.Args().First())
}

// sessionShow is what `sessions show --json` prints.
type sessionShow struct {
	Record  session.Record `json:"record"`
	Changes *mount.Report  `json:"changes"`
}

func sessionsShowAction(c *cli.Context) error {
	s, err := oneSession(c)
	if err != nil {
		return err
	}
	rep, err := s.Changes(c.Bool("sync-deletes"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, sessionShow{Record: s.Record, Changes: rep})
	}
	w := c.App.Writer
	r := s.Record
	fmt.Fprintf(w, "session: %s\npersona: %s@%s on %s\nroot: %s\ncwd: %s\nphase: %s\nstarted: %s by process %d\n",
		r.ID, r.Persona, r.Tier, r.Harness, r.Root, r.Cwd, r.Phase, r.Started.Local().Format(time.RFC3339), r.PID)
	if r.ExitCode != nil {
		fmt.Fprintf(w, "harness exit status: %d\n", *r.ExitCode)
	}
	if r.Branch != "" {
		fmt.Fprintf(w, "branch: %s (%s of the agent)\n", r.Branch, commits(r.Commits))
	}
	if err := s.HarnessRunning(); err != nil {
		warnf(c.App.ErrWriter, "%v", err)
	}
	printReport(w, io.Discard, rep)
	return nil
}

func sessionsSyncAction(c *cli.Context) error {
	s, err := oneSession(c)
	if err != nil {
		return err
	}
	return syncSession(c, s, nil)
}

// syncSession syncs back the session s, or with sel the part of its work
// that sel selects, and prints what it did: sessions sync and apply, and
// run --review's apply.
func syncSession(c *cli.Context, s *session.Session, sel *session.Selector) error {
	stderr := c.App.ErrWriter
	// The first signal stops after the current file, leaving the session
	// resumable; a second exits at once.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sig)
	go func() {
		n := 0
		for sg := range sig {
			if n++; n > 1 {
				os.Exit(128 + int(sg.(syscall.Signal)))
			}
			cancel()
		}
	}()
	o := session.SyncOptions{
		SyncOptions: mount.SyncOptions{Deletes: c.Bool("sync-deletes")}, Keep: c.Bool("keep"), Force: c.Bool("force"),
		SyncCommitted: c.Bool("sync-committed"), Warn: func(msg string) { warnf(stderr, "%s", msg) },
	}
	if sel != nil {
		o.Only = sel.Match
	}
	if isTerminal(stderr) {
		o.Progress = func(rel string) { fmt.Fprintf(stderr, "\rworkforce: syncing %s\033[K", quote.Name(rel)) }
		defer fmt.Fprint(stderr, "\r\033[K")
	}
	rep, kept, err := s.Sync(ctx, o)
	if errors.Is(err, session.ErrGone) {
		// Another sync finished it while this one waited (or it was
		// removed): nothing is left to do.
		warnf(stderr, "%v", err)
		return nil
	}
	if err != nil {
		if rep != nil {
			printReport(c.App.Writer, stderr, rep) // what was synced, and what failed
		}
		return withHarnessHint(err, "workforce sessions sync "+s.ID(), "--force syncs what the sandbox holds now")
	}
	printReport(c.App.Writer, stderr, rep)
	printBranch(c.App.Writer, stderr, s.Record)
	if kept {
		fmt.Fprintf(c.App.Writer, "sandbox kept: %s\n", s.Dir)
		if s.Record.Phase == session.Review {
			hintf(stderr, "the rest of the agent's work stays in the session: workforce sessions apply %s applies it, workforce sessions discard %s drops it", s.ID(), s.ID())
		} else if len(rep.Blocked) > 0 && !rep.Interrupted {
			hintBlocked(stderr, s.ID())
		}
	}
	switch {
	case rep.Interrupted:
		hintf(stderr, "workforce sessions sync %s finishes it", s.Record.ID)
		return silentExit(130)
	case len(rep.Conflicts) > 0:
		return silentExit(exitConflict)
	}
	return nil
}

// withHarnessHint adds to a *session.HarnessRunningError the hints of
// what to do: wait or stop the harness, then run again, or force.
func withHarnessHint(err error, again, force string) error {
	var he *session.HarnessRunningError
	if !errors.As(err, &he) {
		return err
	}
	stop := fmt.Sprintf("kill %d", he.PID)
	if he.Member != 0 {
		stop = fmt.Sprintf("kill -- -%d", he.PID) // its process group
	}
	return withCode(exitFailure, err, fmt.Sprintf("wait for it to exit, or stop it (%s); then run %s again; %s", stop, again, force))
}

func sessionsRmAction(c *cli.Context) error {
	ids := c.Args().Slice()
	home, err := sessionsHome()
	if err != nil {
		return err
	}
	if c.Bool("warm") {
		if c.Bool("stale") || len(ids) > 0 {
			return usagef("sessions rm takes session ids, --stale or --warm")
		}
		// Warm sandboxes hold no work of an agent: no question asked.
		for _, w := range session.WarmList(home) {
			if err := session.RemoveWarm(w); err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "removed the warm sandbox of %s\n", w.Root)
		}
		return nil
	}
	if c.Bool("stale") == (len(ids) > 0) {
		return usagef("sessions rm takes session ids, --stale or --warm")
	}
	var targets []*session.Session
	if c.Bool("stale") {
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
		for _, id := range ids {
			s, err := session.Find(home, id)
			if err != nil {
				return err
			}
			if err := s.ReadRecord(); err != nil {
				warnf(c.App.ErrWriter, "cannot read the record of session %s (%v); it is removed all the same, without checking for a harness still running in it", s.ID(), err)
			}
			targets = append(targets, s)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(c.App.Writer, "no stale sessions")
		return nil
	}
	if !c.Bool("yes") {
		if !isTerminal(c.App.ErrWriter) || !isTerminal(os.Stdin) {
			return usageError(errors.New("sessions rm removes the agent's work that was not synced back"), "add --yes to remove without asking")
		}
		var names []string
		for _, s := range targets {
			names = append(names, s.ID())
		}
		fmt.Fprintf(c.App.ErrWriter, "workforce: remove %s and the work in them? [y/N] ", strings.Join(names, ", "))
		answer, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("nothing removed")
		}
	}
	var failed error
	for _, s := range targets {
		if err := s.RemoveIdle(c.Bool("force")); err != nil {
			printError(c.App.ErrWriter, withHarnessHint(err, "workforce sessions rm", "--force removes the session anyway"))
			failed = silentExit(exitFailure)
			continue
		}
		fmt.Fprintf(c.App.Writer, "removed: %s\n", s.ID())
		if c.Bool("branch") {
			removeBranch(c.App.Writer, c.App.ErrWriter, s)
		}
	}
	return failed
}

// syncCommittedFlag is --sync-committed of sessions sync and apply.
var syncCommittedFlag = &cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<id> either way)"}

// printBranch says where the agent's commits are, when it made some.
func printBranch(w, stderr io.Writer, r session.Record) {
	if r.Branch == "" {
		return
	}
	fmt.Fprintf(w, "the agent made %s: branch %s\n", commits(r.Commits), r.Branch)
	if r.Report != nil && len(r.Report.OnBranch) > 0 {
		hintf(stderr, "what the agent committed is on the branch, not in your working tree: git merge %s brings it in (or sync with --sync-committed)", r.Branch)
	}
}

// commits says n commits, in the singular for one.
func commits(n int) string {
	if n == 1 {
		return "1 commit"
	}
	return fmt.Sprintf("%d commits", n)
}

// selectorFor makes the selector of the PATH|GLOB arguments of sessions
// diff and apply for the session s, and checks that each names one of the
// agent's changes.
func selectorFor(s *session.Session, args []string) (*session.Selector, error) {
	if len(args) == 0 {
		return nil, nil
	}
	wd, err := os.Getwd()
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

// useColor reports whether output to w is coloured: on a terminal, unless
// NO_COLOR is set.
func useColor(w io.Writer) bool {
	return isTerminal(w) && os.Getenv("NO_COLOR") == ""
}

// openSelected opens the session the first argument names and the
// selector of the paths or globs after it (nil for all), for the command
// verb.
func openSelected(c *cli.Context, verb string) (*session.Session, *session.Selector, error) {
	if c.NArg() < 1 {
		return nil, nil, usagef("sessions %s takes a session id (workforce sessions lists them), then optionally paths or globs", verb)
	}
	home, err := sessionsHome()
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Open(home, c.Args().First())
	if err != nil {
		return nil, nil, err
	}
	sel, err := selectorFor(s, c.Args().Tail())
	if err != nil {
		return nil, nil, err
	}
	return s, sel, nil
}

func sessionsDiffAction(c *cli.Context) error {
	s, sel, err := openSelected(c, "diff")
	if err != nil {
		return err
	}
	err = s.Diff(c.App.Writer, session.DiffOptions{Only: sel.Match, Stat: c.Bool("stat"), Color: useColor(c.App.Writer)})
	if errors.Is(err, session.ErrNoGit) {
		return withCode(exitFailure, err, "workforce sessions show "+s.ID()+" lists the changed files")
	}
	return err
}

func sessionsApplyAction(c *cli.Context) error {
	s, sel, err := openSelected(c, "apply")
	if err != nil {
		return err
	}
	return syncSession(c, s, sel)
}

func sessionsDiscardAction(c *cli.Context) error {
	s, err := oneSession(c)
	if err != nil {
		return err
	}
	return discardSession(c, s)
}

// discardSession drops the session s and its branch, and says so.
func discardSession(c *cli.Context, s *session.Session) error {
	if err := s.RemoveIdle(c.Bool("force")); err != nil {
		return withHarnessHint(err, "workforce sessions discard "+s.ID(), "--force discards the session anyway")
	}
	fmt.Fprintf(c.App.Writer, "discarded: %s\n", s.ID())
	removeBranch(c.App.Writer, c.App.ErrWriter, s)
	return nil
}

// removeBranch deletes the branch of the removed session s, if it made
// one, and says so; a branch that cannot be deleted is a warning.
func removeBranch(w, stderr io.Writer, s *session.Session) {
	if s.Record.Branch == "" {
		return
	}
	if err := s.RemoveBranch(); err != nil {
		warnf(stderr, "%v", err)
		return
	}
	fmt.Fprintf(w, "deleted branch %s\n", s.Record.Branch)
}

// reviewRuns reports whether a run holds the agent's work for review:
// --review, else "review" in <home>/config.json.
func reviewRuns(c *cli.Context) bool {
	if c.IsSet("review") {
		return c.Bool("review")
	}
	home, err := persona.Home()
	if err != nil {
		return false
	}
	cfg, err := persona.ReadConfig(home)
	return err == nil && cfg.Review
}

// reviewHeld shows the agent's work that a run held for review, and on a
// terminal asks what to do with it: apply, discard or keep. Without a
// terminal the session is kept and the commands are printed.
func reviewHeld(c *cli.Context, res *session.Result) error {
	s := res.Session
	w, stderr := c.App.Writer, c.App.ErrWriter
	printBranch(w, stderr, s.Record)
	if err := s.Diff(w, session.DiffOptions{Stat: true, Color: useColor(w)}); err != nil {
		warnf(stderr, "%v", err)
	}
	answer := "keep"
	if res.HungUp {
		// The terminal closed during the run: no question, the work waits.
		warnf(stderr, "the terminal closed while the agent worked: its work is held for review")
	} else if tty := openTerminal(); tty != nil {
		answer = askReview(tty)
		tty.Close()
	}
	switch answer {
	case "apply":
		err := syncSession(c, s, nil)
		if res.ExitCode != 0 {
			// The harness's status comes first, as after any run.
			if err != nil && !errors.As(err, new(silentExit)) {
				printError(stderr, err)
			}
			return silentExit(res.ExitCode)
		}
		return err
	case "discard":
		if err := discardSession(c, s); err != nil {
			return err
		}
	default:
		fmt.Fprintf(w, "held for review: %s\n", s.ID())
		hintf(stderr, "workforce sessions diff %s shows the agent's work; workforce sessions apply %s [PATH...] applies it; workforce sessions discard %s drops it", s.ID(), s.ID(), s.ID())
		if s.Record.Branch != "" {
			hintf(stderr, "git merge %s brings in the agent's commits", s.Record.Branch)
		}
	}
	return silentExit(res.ExitCode)
}

// openTerminal opens the controlling terminal to ask a question, when
// standard input is a terminal; nil otherwise.
func openTerminal() *os.File {
	if !isTerminal(os.Stdin) {
		return nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return tty
}

// askReview asks on the terminal tty what to do with the agent's work,
// and returns apply, discard or keep (the answer to an empty line, or to
// none).
func askReview(tty *os.File) string {
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
