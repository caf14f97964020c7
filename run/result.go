package run

import (
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// OneShotResult is the result of the one-shot run res of plan (run or
// sessions resume), which took took and ended with err (an error after
// the harness ran: the run failed), with warnings.
func OneShotResult(plan *session.Plan, res *session.Result, err error, took time.Duration, warnings []string) report.Result {
	one := res.OneShot
	out := one.Outcome
	o := oneShotOutcome(res, err)
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
		HarnessVersion: plan.HarnessVersion, HarnessVersionMeasured: plan.VersionMeasured, Model: model, HarnessSessionID: sid,
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
		r.Usage = reportUsage(out.Usage)
	} else if o.Started {
		msg := "the harness printed no result"
		if harness.LogsOnStderr(plan.Harness) {
			// Its stderr is its log (harness.OneShotLogArgs): the
			// cause, when known, says what it tells.
			msg += "; its log is in the results directory's " + session.ErrorsFile
		} else if e := LastLine(string(one.Stderr)); e != "" {
			msg += "; its stderr ends: " + e
		}
		r.Warnings = append(r.Warnings, msg)
	}
	rel := TreeRelative(plan)
	for _, d := range out.Denials {
		r.Denials = append(r.Denials, report.Denial{Tool: d.Tool, Detail: rel(d.Detail)})
	}
	r.Files, r.Held, r.Warnings = resultFiles(res, r.Warnings)
	r.Network = networkOf(res.Network)
	if res.Session != nil && res.Session.Record.Branch != "" {
		rec := res.Session.Record
		r.Branch = &report.Branch{Name: rec.Branch, Head: rec.Head, Commits: rec.Commits}
	}
	if r.Status == report.StatusFailed || r.Status == report.StatusTimedOut {
		r.Cause = failureCause(plan, res)
	}
	attemptResult(&r, res.Attempt)
	return r
}

// failureCause is the likely cause of the failed one-shot run res of
// plan (harness.Diagnose): from the error its output reported, the end of
// its stderr (its log lines, where harness.OneShotLogArgs sends them
// there), its environment and the proxy's denials; nil when nothing known
// explains it.
func failureCause(plan *session.Plan, res *session.Result) *report.Cause {
	f := harness.Failure{
		Harness: plan.Harness, Model: plan.Resolved.Model,
		ErrorText: res.OneShot.Outcome.FailureText(), Stderr: res.OneShot.StderrEnd(),
	}
	if inv := plan.Invocation(); inv != nil {
		f.Env = inv.Env()
	}
	if n := res.Network; n != nil {
		for _, d := range n.Denied {
			f.Denied = append(f.Denied, net.JoinHostPort(d.Host, strconv.Itoa(d.Port)))
		}
	}
	c := harness.Diagnose(f)
	if c == nil {
		return nil
	}
	return &report.Cause{Kind: c.Kind, Message: c.Message, Evidence: c.Evidence}
}

// oneShotOutcome is what report.DecideStatus decides a one-shot run's
// status from: how res ended, err an error after the harness ran.
func oneShotOutcome(res *session.Result, err error) report.Outcome {
	out := res.OneShot.Outcome
	return report.Outcome{
		ExitCode: res.Harness.Code, Signal: int(res.Harness.Signal),
		Started: !res.Stopped, Interrupted: res.Stopped || res.Signal != nil || (res.Report != nil && res.Report.Interrupted),
		TimedOut: res.TimedOut,
		Parsed:   res.OneShot.Parsed, HarnessError: out.Error, Denials: len(out.Denials) > 0,
		Conflicts:  (res.Report != nil && len(res.Report.Conflicts) > 0) || (res.Live != nil && len(res.Live.Conflicts) > 0),
		WorkFailed: err != nil || (res.Report != nil && len(res.Report.Failed) > 0),
	}
}

// resultFiles are the files a one-shot run res brought back (with live
// sync's conflicts) and those it holds for review, with warnings.
func resultFiles(res *session.Result, warnings []string) (files, held *report.Files, _ []string) {
	if rep := res.Report; rep != nil && !res.Held {
		sr := SyncReport(*rep)
		files = &report.Files{Created: sr.Created, Updated: sr.Updated, Deleted: sr.Deleted, Conflicts: sr.Conflicts,
			Unapplied: sr.Unapplied, NotSynced: sr.NotSynced, Failed: sr.Failed, Blocked: sr.Blocked, OnBranch: sr.OnBranch,
			Refused: sr.Refused, Held: sr.Held}
	}
	if l := res.Live; l != nil && (len(l.Conflicts) > 0 || len(l.Failed) > 0) {
		// Live sync's conflicts and failures, beside sync-back's.
		if files == nil {
			files = &report.Files{}
		}
		live := SyncReport(mount.Report{Conflicts: l.Conflicts, Failed: l.Failed})
		for _, c := range live.Conflicts {
			if !slices.ContainsFunc(files.Conflicts, func(x report.Conflict) bool { return x.Path == c.Path }) {
				files.Conflicts = append(files.Conflicts, c)
			}
		}
	}
	if res.Held && res.Session != nil {
		// What sessions apply would bring, deletions and executable
		// configuration included.
		if rep, err := res.Session.Pending(); err == nil {
			sr := SyncReport(*rep)
			held = &report.Files{Created: sr.Created, Updated: sr.Updated, Deleted: sr.Deleted, Conflicts: sr.Conflicts}
		} else {
			warnings = append(warnings, fmt.Sprintf("cannot list the work held for review: %v", err))
		}
	}
	return files, held, warnings
}

// SyncReport is sync-back's report r in report's terms.
func SyncReport(r mount.Report) report.SyncReport {
	return report.SyncReport{
		Created: r.Created, Updated: r.Updated, Deleted: r.Deleted, Unapplied: r.Unapplied,
		Conflicts: each(r.Conflicts, func(c mount.Conflict) report.Conflict {
			return report.Conflict{Path: c.Path, Real: c.Real, Saved: c.Saved, Reason: c.Reason}
		}),
		NotSynced: r.NotSynced,
		Failed: each(r.Failed, func(f mount.Failure) report.Failure {
			return report.Failure{Path: f.Path, Error: f.Error}
		}),
		Blocked: r.Blocked, OnBranch: r.OnBranch, Refused: r.Refused, Held: r.Held, Interrupted: r.Interrupted,
	}
}

// each converts every element of s with f; nil stays nil.
func each[T, U any](s []T, f func(T) U) []U {
	if s == nil {
		return nil
	}
	out := make([]U, len(s))
	for i, v := range s {
		out[i] = f(v)
	}
	return out
}

// TreeRelative returns what rewrites the sandbox's paths in a text the
// harness printed (a denied path, a command) as paths relative to the
// project root, as the result's files are: the sandbox is gone after the
// run, and its path means nothing to the reader.
func TreeRelative(plan *session.Plan) func(string) string {
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

// LastLine is the last non-empty line of s.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// networkOf is the result's network of what the proxy saw, nil for a
// harness that ran without namespaces.
func networkOf(s *egress.Summary) *report.Network {
	if s == nil {
		return nil
	}
	n := &report.Network{Mode: string(s.Mode), Allowed: []report.NetworkAllowed{}, Denied: []report.NetworkDenied{}}
	for _, a := range s.Allowed {
		n.Allowed = append(n.Allowed, report.NetworkAllowed{Host: a.Host, Port: a.Port, Count: a.Count, Bytes: a.Bytes})
	}
	for _, d := range s.Denied {
		n.Denied = append(n.Denied, report.NetworkDenied{Host: d.Host, Port: d.Port, Count: d.Count})
	}
	return n
}
