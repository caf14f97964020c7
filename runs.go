package main

// This file is what the commands that run a persona share (run, create,
// pick --run, the picker): package run's options and hooks made from a
// command's (its warnings and progress printed on stderr), and the
// printing of a run's outcome, as run prints it. Package run runs; this
// file prints, and exitcode.go decides the exit status.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/batchview"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
)

// runEnv is env in package run's terms.
func runEnv(env procEnv) run.Env {
	return run.Env{Dir: env.Dir, DirErr: env.dirErr, Home: env.Home, HomeErr: env.homeErr, Environ: env.Environ}
}

// toRun is opts in package run's terms.
func (opts runOptions) toRun() run.Options {
	return run.Options{
		Ref: opts.Ref, Extra: opts.Extra, Harness: opts.Harness, Model: opts.Model, ForeignModelInherits: opts.ForeignModelInherits, Root: opts.Root, Profile: opts.Profile, Inputs: opts.Inputs,
		SyncDeletes: opts.SyncDeletes, Keep: opts.Keep, Reuse: opts.Reuse, Live: opts.Live, SyncCommitted: opts.SyncCommitted,
		SyncConfig: opts.SyncConfig, InstallInRepo: opts.InstallInRepo, RefreshSkills: opts.RefreshSkills,
		AllowUnmapped: opts.AllowUnmapped, DryRun: opts.DryRun, Review: opts.Review, Timeout: opts.Timeout, Task: opts.Task,
		SandboxFlags: opts.SandboxFlags, NoProjectPersonas: opts.NoProjectPersonas,
		NoHistory: opts.NoHistory, Attempt: opts.Attempt, Env: runEnv(opts.Env),
	}
}

// runHooks are the hooks of a run in env: its warnings and the catalog's
// diagnostics on ios.Err, the harness's version and profile from the
// version cache of env, the kept result as writeJSON writes it.
func runHooks(ctx context.Context, ios *iostreams, env procEnv) run.Hooks {
	return run.Hooks{
		Warn: func(msg string) { warnf(ios.Err, "%s", msg) },
		Catalog: func(cat *persona.Catalog, p *persona.Persona) {
			if p == nil {
				printDiagnostics(ios.Err, cat)
				return
			}
			printPersonaWarnings(ios.Err, cat, p)
		},
		Abort:   exitOnSignal,
		Signals: notify,
		Version: func(h string) string { return versionCache(env).Installed(ctx, h, env.Environ).Version },
		Profile: func(profile, h string) (discover.Profile, string, error) {
			// A run says once whether the version's family was measured
			// (run.Start); the profile's finer note is for context and
			// harness check.
			return harnessProfile(ctx, io.Discard, env, profile, h)
		},
		WriteJSON: writeJSON,
	}
}

// runPersona runs the persona opts names as run does, without --dry-run:
// pick --run's and the picker's run.
func runPersona(ctx context.Context, ios *iostreams, opts runOptions) error {
	r, err := run.Prepare(ctx, opts.toRun(), runHooks(ctx, ios, opts.Env))
	if err != nil {
		return err
	}
	return startRun(ctx, ios, opts, r)
}

// startRun starts the prepared run r, prints its outcome, has it
// recorded, and returns the error carrying its exit status.
func startRun(ctx context.Context, ios *iostreams, opts runOptions, r *run.Run) error {
	if opts.Task != nil {
		var events *eventPrinter
		var hooks []func(harness.Event)
		if opts.Events {
			events = newEventPrinter(ios.Out, filepath.Base(r.Plan.Sandbox), run.TreeRelative(r.Plan))
			hooks = append(hooks, events.harness)
		}
		if ios.ErrTTY {
			// Progress on a terminal; none in a pipe.
			progress, rel := batchview.StartProgress(ios.Err, batchview.Silence), run.TreeRelative(r.Plan)
			defer progress.Stop()
			hooks = append(hooks, func(e harness.Event) {
				if ev, ok := run.Event(e); ok {
					ev.Detail = rel(ev.Detail)
					progress.Event(ev)
				}
			})
		}
		if len(hooks) > 0 {
			r.Hooks.Events = func(e harness.Event) {
				for _, h := range hooks {
					h(e)
				}
			}
		}
		out, err := r.Start(run.Streams{Err: ios.Err})
		if out != nil && out.Result != nil {
			err = printResult(ios, opts.JSON, events, out, err)
		}
		r.Finish(out, errorStatus(err), failure(err))
		return err
	}
	syncing := false
	if ios.ErrTTY {
		r.Hooks.Progress = progressPrinter(ios.Err, r.Plan.Sandbox, &syncing)
	}
	out, err := r.Start(run.Streams{In: ios.In, Out: ios.Out, Err: ios.Err, InTTY: ios.InTTY})
	if syncing {
		fmt.Fprint(ios.Err, "\r\033[K")
	}
	if out == nil {
		return err
	}
	err = printInteractive(ctx, ios, opts, out.Session, err)
	r.Finish(out, errorStatus(err), failure(err))
	return err
}

// progressPrinter prints the progress of a run into sandbox on stderr, a
// terminal; *syncing says a sync line is left to clear.
func progressPrinter(stderr io.Writer, sandbox string, syncing *bool) func(event, detail string) {
	return func(event, detail string) {
		switch event {
		case "copy":
			fmt.Fprintf(stderr, "workforce: copying %s into %s\n", detail, sandbox)
		case "refresh":
			fmt.Fprintf(stderr, "workforce: refreshing the warm sandbox of %s into %s\n", detail, sandbox)
		case "skill":
			fmt.Fprintf(stderr, "workforce: fetching skill %s\n", detail)
		case "sync":
			*syncing = true
			fmt.Fprintf(stderr, "\rworkforce: syncing %s\033[K", quote.Name(detail))
		}
	}
}

// printInteractive prints how the interactive run res ended (err what
// failed), holds its work for review as asked, and returns the error
// carrying its exit status.
func printInteractive(ctx context.Context, ios *iostreams, opts runOptions, res *session.Result, err error) error {
	stderr := ios.Err
	if err != nil {
		if res.Report != nil {
			printSyncReport(ios.Out, stderr, res.Report) // what was synced, and what failed
		}
		if res.Kept {
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

// printResult prints the result of the one-shot run that ended as out
// (err what failed after the harness ran): a short summary, or with
// asJSON one report.Result, or with events the finished event; then err.
// It returns the exit status of the result's status alone.
func printResult(ios *iostreams, asJSON bool, events *eventPrinter, out *run.Outcome, err error) error {
	result := *out.Result
	if events != nil {
		if err := events.finished(result); err != nil {
			return err
		}
	} else if asJSON {
		if err := writeJSON(ios.Out, result); err != nil {
			return err
		}
	} else {
		printOneShot(ios.Out, ios.Err, result, out.Session)
	}
	if err != nil {
		printError(ios.Err, err)
	}
	return silentExit(oneShotStatus(result.Status, out.Session.Signal))
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
		hintHeld(stderr, s.Record)
	}
	return silentExit(status)
}

// hintHeld names the commands that review, apply and drop the work held
// for review in the session of record r.
func hintHeld(stderr io.Writer, r session.Record) {
	hintf(stderr, "workforce sessions diff %s shows the agent's work; workforce sessions apply %s [PATH...] applies it; workforce sessions discard %s drops it", r.ID, r.ID, r.ID)
	if r.Branch != "" {
		hintf(stderr, "git merge %s brings in the agent's commits", r.Branch)
	}
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
	r.Network.WriteDenied(w)
	if c := r.Cause; c != nil {
		fmt.Fprintf(w, "cause: %s\n", quote.Text(c.Message))
	}
	if res == nil {
		// This process did not warn of them as the run went.
		for _, msg := range r.Warnings {
			fmt.Fprintf(w, "warning: %s\n", quote.Text(msg))
		}
		if f := r.Files; f != nil {
			printReport(w, stderr, report.SyncReport{Created: f.Created, Updated: f.Updated, Deleted: f.Deleted, Conflicts: f.Conflicts, Refused: f.Refused, Held: f.Held})
		}
		if b := r.Branch; b != nil {
			fmt.Fprintf(w, "the agent made %s: branch %s\n", report.Plural(b.Commits, "commit"), quote.Name(b.Name))
		}
		if r.Held != nil {
			r.Held.WriteHeld(w, r.SessionID)
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
		r.Held.WriteHeld(w, r.SessionID)
		if res.Session != nil {
			hintHeld(stderr, res.Session.Record)
		}
	} else if res.Kept && res.Session != nil {
		fmt.Fprintf(w, "sandbox kept: %s\n", res.Session.Dir)
	}
	if res.OneShot.Dir != "" {
		if r.Status == report.StatusFailed || r.Status == report.StatusTimedOut {
			fmt.Fprintf(w, "the harness's stderr and log: %s\n", filepath.Join(res.OneShot.Dir, session.ErrorsFile))
		}
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
