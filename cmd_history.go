package main

// This file records runs in the history (package history): run calls
// recordRun around the run of a plan, and the run reports what the
// session did through runOptions.history.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// noHistoryFlag is --no-history, of run and batch.
var noHistoryFlag = &cli.BoolFlag{Name: "no-history", Usage: "do not record the run in <home>/history.jsonl (also: " + history.Env + "=0)"}

// withoutHistory passes --no-history to the workforce run of a batch's
// task when off: the task records itself otherwise, as any run.
func withoutHistory(cmd *exec.Cmd, off bool) {
	if off {
		cmd.Args = append(cmd.Args, "--"+noHistoryFlag.Name)
	}
}

// historyRun is what a run reports for its history record: the session's
// result, set once the session ran (nil when nothing started), and an
// interactive run's usage, read from the harness's own records once it
// ended (nil when not found).
type historyRun struct {
	res   *session.Result
	start time.Time
	usage *history.RunUsage
}

// usageReader returns the hook (session.RunOptions.Ended) that reads the
// usage of the interactive run of plan from the harness's own records in
// the session's state directory once the harness has exited, before the
// session, and they with it, is removed; nil without a history or a
// sandbox (the records of a run in the repository are the user's own, and
// stay).
func (h *historyRun) usageReader(plan *session.Plan) func(*session.Session) {
	if h == nil || plan.InRepo || plan.Sandbox == "" {
		return nil
	}
	return func(s *session.Session) {
		rec := history.Record{Time: h.start, Harness: plan.Harness, HarnessSessionID: s.Record.HarnessSessionID,
			Sandbox: plan.Sandbox, Workdir: plan.Workdir, DurationMS: time.Since(h.start).Milliseconds()}
		h.usage = endedRunUsage(rec)
	}
}

// ran notes the result of the run; h may be nil (no history).
func (h *historyRun) ran(res *session.Result) {
	if h != nil {
		h.res = res
	}
}

// planRunner is runPlanned or runOneShot.
type planRunner func(context.Context, *iostreams, runOptions, *session.Plan, string) error

// recordRun runs plan of persona p with run and then, unless the history
// is off (--no-history, WORKFORCE_HISTORY=0), appends its record to the
// history of home. A run that started nothing is not recorded; a record
// that cannot be written is a warning, never the run's failure.
func recordRun(ctx context.Context, ios *iostreams, opts runOptions, p *persona.Persona, plan *session.Plan, home string, run planRunner) error {
	if opts.NoHistory || !history.Enabled(opts.Env.getenv) {
		return run(ctx, ios, opts, plan, home)
	}
	start := time.Now()
	h := &historyRun{start: start}
	opts.history = h
	err := run(ctx, ios, opts, plan, home)
	if h.res == nil {
		return err
	}
	rec := historyRecord(p, plan, h.res, err, start, time.Since(start))
	if u := h.usage; u != nil && rec.Mode == history.ModeInteractive {
		rec.Usage, rec.UsageFrom, rec.CostEstimated = u.Usage, history.UsageFromSessionRecords, u.Estimated
		if rec.Model == "" && len(u.Models) > 0 {
			rec.Model = u.Models[0]
		}
	}
	if herr := history.Append(home, rec); herr != nil {
		warnf(ios.Err, "the run is not in the history: %v", herr)
	}
	return err
}

// recordResumed appends to the history of home the record of the resumed
// run res of plan (persona p, nil when it is gone from the catalog),
// started at start and ended with err (its exit status), unless
// WORKFORCE_HISTORY=0; the status, usage and model come from the result
// the run kept. A record that cannot be written is a warning.
func recordResumed(ios *iostreams, env procEnv, home string, p *persona.Persona, plan *session.Plan, res *session.Result, err error, start time.Time) {
	if !history.Enabled(env.getenv) {
		return
	}
	if p == nil {
		p = &persona.Persona{}
	}
	rec := historyRecord(p, plan, res, err, start, time.Since(start))
	if herr := history.Append(home, rec); herr != nil {
		warnf(ios.Err, "the run is not in the history: %v", herr)
	}
}

// historyRecord is the record of the run res of plan, which started at
// start, took took and ended with err (what the run returned: its exit
// status).
func historyRecord(p *persona.Persona, plan *session.Plan, res *session.Result, err error, start time.Time, took time.Duration) history.Record {
	r := history.Record{
		Time: start.UTC(), Persona: plan.Persona, PersonaHash: personaHash(plan.Resolved), Source: p.Layer,
		Tier: plan.Tier, Harness: plan.Harness, HarnessVersion: plan.HarnessVersion, Mode: history.ModeInteractive,
		Root: plan.Root, Cwd: plan.Cwd, SessionID: filepath.Base(plan.Sandbox), Workdir: plan.Workdir,
		ExitStatus: printError(io.Discard, err), DurationMS: took.Milliseconds(),
	}
	if plan.Resolved != nil {
		r.Model = plan.Resolved.Model
	}
	if !plan.InRepo {
		r.Sandbox = plan.Sandbox
	}
	if s := res.Session; s != nil {
		r.SessionID, r.HarnessSessionID = s.Record.ID, s.Record.HarnessSessionID
	}
	if res.OneShot == nil {
		r.Status = string(interactiveStatus(res, err))
		return r
	}
	r.Mode = history.ModeOneShot
	if kept, ok := keptResult(res.OneShot.Dir); ok {
		// The result as run --json printed it: the harness's session id,
		// the model it reported, the usage.
		r.Status, r.Usage, r.DurationMS = string(kept.Status), kept.Usage, kept.DurationMS
		if kept.Model != "" {
			r.Model = kept.Model
		}
		if kept.HarnessSessionID != "" {
			r.HarnessSessionID = kept.HarnessSessionID
		}
		if kept.HarnessVersion != "" {
			r.HarnessVersion = kept.HarnessVersion
		}
		return r
	}
	r.Status = string(interactiveStatus(res, err))
	return r
}

// interactiveStatus is the status of a run without a result of its own
// (an interactive run), in the terms of a one-shot result's, decided as
// oneShotResult decides them: how res ended, err what the run returned.
func interactiveStatus(res *session.Result, err error) report.Status {
	rep := res.Report
	var s silentExit
	o := report.Outcome{
		ExitCode: res.Harness.Code, Signal: int(res.Harness.Signal), Started: !res.Stopped, Parsed: true,
		Interrupted: res.Stopped || res.Signal != nil || (rep != nil && rep.Interrupted),
		TimedOut:    res.TimedOut,
		Conflicts:   (rep != nil && len(rep.Conflicts) > 0) || (res.Live != nil && len(res.Live.Conflicts) > 0),
		WorkFailed:  (rep != nil && len(rep.Failed) > 0) || (err != nil && !errors.As(err, &s)),
	}
	return report.DecideStatus(o)
}

// keptResult reads the result a one-shot run kept in its results
// directory dir.
func keptResult(dir string) (report.Result, bool) {
	var r report.Result
	if dir == "" {
		return r, false
	}
	b, err := os.ReadFile(filepath.Join(dir, session.ResultFile))
	if err != nil || json.Unmarshal(b, &r) != nil || r.Status == "" {
		return r, false
	}
	return r, true
}

// personaHash is the hex SHA-256 of the resolved persona r, its version:
// r as JSON, without where each field came from, a sidecar file's
// content in place of its path. The same persona gives the same hash
// wherever its files are; any change to what the run gets changes it.
func personaHash(r *persona.Resolved) string {
	if r == nil {
		return ""
	}
	c := *r
	c.Origins = nil
	for _, sc := range []*persona.Sidecar{&c.Claude, &c.Agents} {
		if sc.Path == "" {
			continue
		}
		if b, err := os.ReadFile(sc.Path); err == nil {
			sc.Content, sc.Path = string(b), ""
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
