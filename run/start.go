package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// Streams are the streams of a run: an interactive harness gets them
// all; a one-shot harness gets Err only. InTTY says stdin is a terminal
// (the persona's time limit then applies only when asked for).
type Streams struct {
	In       io.Reader
	Out, Err io.Writer
	InTTY    bool
}

// Outcome is how a run ended.
type Outcome struct {
	// Session is the session's result; nil when nothing started.
	Session *session.Result
	// Result is a one-shot run's result, with its warnings: those of the
	// plan, of the run, and the error it ended with; nil for an
	// interactive run, or a one-shot run that never started.
	Result *report.Result
	// Kept says the result was written to the session's results
	// directory (session.ResultFile), as WriteJSON writes it.
	Kept bool
	// Warnings are the plan's warnings and notes and the run's, each
	// also given to Hooks.Warn as it came.
	Warnings []string
}

// Refusal is the plan's refusal to start (settings the harness cannot
// apply, without AllowUnmapped) as an *Error of kind Refused; nil when
// the run may start.
func (r *Run) Refusal() error {
	var ue *harness.UnmappedError
	if err := r.Plan.Refusal(); errors.As(err, &ue) {
		return refused(err, ue.Hint())
	}
	return nil
}

// Start runs the plan: interactively on s, or unattended with the task
// of Options.Task. It warns first of the sessions of the project a dead
// process left, and of the plan's notes. The error is what failed; the
// Outcome, when not nil, says how far the run went (a one-shot run's
// error is then in its result too).
func (r *Run) Start(s Streams) (*Outcome, error) {
	if err := r.Refusal(); err != nil {
		return nil, err
	}
	for _, n := range r.Plan.Notes {
		r.Hooks.warn("%s", n)
	}
	if m := r.Plan.VersionMeasured; m != nil && !*m {
		// On stderr on every run; in a one-shot result as
		// harnessVersionMeasured, not among its warnings.
		r.Hooks.warn("%s", harness.UnmeasuredNote(r.Plan.Harness, r.Plan.HarnessVersion))
	}
	r.start = time.Now()
	if !r.opts.NoHistory && r.history() {
		r.usage = &usageReader{start: r.start}
	}
	if !r.Plan.InRepo && r.resumed == nil {
		r.warnStale()
	}
	if r.opts.Task != nil {
		return r.oneShot(s)
	}
	warnings := append(append([]string(nil), r.Plan.Warnings...), r.Plan.Notes...)
	o := r.runOptions(s.Err)
	o.Stdin, o.Stdout = s.In, s.Out
	o.Warn = func(msg string) {
		warnings = append(warnings, msg)
		r.Hooks.warn("%s", msg)
	}
	o.Progress = r.Hooks.Progress
	o.Timeout = r.Plan.Timeout(r.opts.Timeout, s.InTTY)
	o.Ended = r.usage.reader(r.Plan)
	res, err := r.Plan.Run(o)
	if res == nil {
		return nil, err
	}
	return &Outcome{Session: res, Warnings: warnings}, err
}

// runOptions are the session's options of the run, its streams and
// hooks aside.
func (r *Run) runOptions(stderr io.Writer) session.RunOptions {
	opts, plan := r.opts, r.Plan
	return session.RunOptions{
		Stderr:      stderr,
		SyncDeletes: opts.SyncDeletes, Keep: opts.Keep, Reuse: opts.Reuse,
		SyncCommitted: opts.SyncCommitted, SyncConfig: opts.SyncConfig, Review: !plan.InRepo && opts.Attempt == nil && session.HoldsForReview(r.Home, opts.Review),
		Live: opts.Live, Abort: r.Hooks.Abort, Signals: r.Hooks.Signals,
	}
}

// oneShot runs the unattended plan, builds its result and keeps it in
// the session's results directory.
func (r *Run) oneShot(s Streams) (*Outcome, error) {
	// The plan's warnings and notes, as warned before the run.
	warnings := append(append(append([]string(nil), r.warned...), r.Plan.Warnings...), r.Plan.Notes...)
	o := r.runOptions(s.Err)
	o.Warn = func(msg string) {
		warnings = append(warnings, msg)
		r.Hooks.warn("%s", msg)
	}
	o.Timeout = r.Plan.Timeout(r.opts.Timeout, false)
	o.Events = r.Hooks.Events
	o.Attempt = sessionAttempt(r.opts.Attempt)
	res, err := r.Plan.Run(o)
	if (res == nil || res.OneShot == nil) && err != nil && r.resumed != nil {
		err = resumeError(r.resumed, err)
	}
	if res == nil {
		return nil, err
	}
	out := &Outcome{Session: res, Warnings: warnings}
	if res.OneShot == nil {
		return out, err
	}
	if r.resumed != nil && r.Hooks.ResumedUsage != nil {
		if w := r.Hooks.ResumedUsage(r.Plan.Harness, res.OneShot); w != "" {
			warnings = append(warnings, w)
			r.Hooks.warn("%s", w)
		}
	}
	out.Warnings = warnings
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	result := OneShotResult(r.Plan, res, err, time.Since(r.start), warnings)
	result.PersonaHash = r.personaHash()
	out.Result = &result
	out.Kept = r.keep(res.OneShot.Dir, result)
	return out, err
}

// keep writes result into the results directory dir, as WriteJSON
// writes it; what goes wrong is a warning.
func (r *Run) keep(dir string, result report.Result) bool {
	if dir == "" {
		return false
	}
	var b bytes.Buffer
	write := r.Hooks.WriteJSON
	if write == nil {
		write = func(w io.Writer, v any) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			enc.SetEscapeHTML(false)
			return enc.Encode(v)
		}
	}
	err := write(&b, result)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, session.ResultFile), b.Bytes(), 0o600)
	}
	if err != nil {
		r.Hooks.warn("cannot keep the result: %v", err)
		return false
	}
	return true
}

// warnStale warns of the sessions of the project left by a process that
// died.
func (r *Run) warnStale() {
	infos, err := session.List(r.Home)
	if err != nil {
		return
	}
	for _, in := range infos {
		// An attempt's session is never synced back: nothing to say.
		if in.Stale && !in.Session.Record.Attempt && in.Session.Record.Root == r.Plan.Root {
			r.Hooks.warn("session %s of this project was left %s by a process that is gone; workforce sessions sync %s brings its work back", in.ID(), in.Session.Record.Phase, in.ID())
		}
	}
}

// Finish ends the run that ended as out: it prunes the results of the
// home after a one-shot run (its own stays), and, unless the history is
// off (Options.NoHistory, WORKFORCE_HISTORY=0), appends the run's record
// to the history: with status, the exit status the caller decided, and
// failed, an error the run ended with besides its outcome (nil for
// none; a failed apply of reviewed work). A run that started nothing is
// not recorded; what goes wrong is a warning, never the run's failure.
func (r *Run) Finish(out *Outcome, status int, failed error) {
	if out == nil || out.Session == nil || (r.resumed != nil && out.Result == nil) {
		return
	}
	if out.Result != nil {
		r.pruneResults(out.Result.SessionID)
	}
	if r.opts.NoHistory || !r.history() {
		return
	}
	rec := historyRecord(r.Persona, r.Plan, r.personaHash(), out, status, failed, r.start, time.Since(r.start))
	r.usage.fill(&rec)
	if err := appendHistory(r.Home, rec); err != nil {
		r.Hooks.warn("the run is not in the history: %v", err)
	}
}

// pruneResults prunes the results of the home after the one-shot run of
// session id wrote its own, which stays.
func (r *Run) pruneResults(id string) {
	lim, err := session.ConfiguredResultLimits(r.Home)
	if err != nil {
		r.Hooks.warn("the results of earlier runs were not pruned: %v", err)
		return
	}
	if _, err := session.PruneResults(r.Home, lim, id, time.Now()); err != nil {
		r.Hooks.warn("%v", err)
	}
}
