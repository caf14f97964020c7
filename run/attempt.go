package run

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// An attempt's run (Options.Attempt: run --attempt, what workforce eval
// gives each attempt) is a one-shot run whose session runs the case's
// setup before the agent and its check after it, restores the protected
// files first, and syncs nothing back (session.Attempt). Its result
// carries what it did (report.Attempt) and the agent's patch against the
// tree after setup (report.Result.Patch); its files (Result.Files) are
// absent, as no sync-back ran.

// CheckAttempt refuses an attempt spec that cannot run: a protect glob
// that is not a pattern, a negative time limit. The error names the
// field.
func CheckAttempt(a report.AttemptSpec) error {
	for _, p := range a.Protect {
		if !doublestar.ValidatePattern(p) {
			return fmt.Errorf("protect: %q is not a glob pattern", p)
		}
	}
	if a.SetupTimeoutMS < 0 {
		return errors.New("setupTimeoutMs: a time limit cannot be negative")
	}
	if a.CheckTimeoutMS < 0 {
		return errors.New("checkTimeoutMs: a time limit cannot be negative")
	}
	return nil
}

// refuseAttempt refuses the options of an attempt's run that its run
// cannot honour: no task, work held for review, live sync, a warm
// sandbox, the repository itself.
func refuseAttempt(opts Options) error {
	if opts.Attempt == nil {
		return nil
	}
	why := ""
	switch {
	case opts.Task == nil:
		why = "an attempt is a one-shot run: give it a task"
	case opts.Review != nil && *opts.Review:
		why = "an attempt's work is never synced back, so there is nothing to review"
	case opts.Live:
		why = "an attempt's work is never synced back, live or after"
	case opts.Reuse:
		why = "an attempt runs in a fresh sandbox, never a warm one its setup and check would change"
	case opts.InstallInRepo:
		why = "an attempt needs a sandbox: its setup and check must not run in the repository"
	}
	if why == "" {
		return CheckAttempt(*opts.Attempt)
	}
	return usage(fmt.Errorf("--attempt: %s", why))
}

// sessionAttempt is spec in session's terms: its time limits, a default
// one where it sets none.
func sessionAttempt(spec *report.AttemptSpec) *session.Attempt {
	if spec == nil {
		return nil
	}
	limit := func(ms int64) time.Duration {
		if ms == 0 {
			ms = report.DefaultStepTimeoutMS
		}
		return time.Duration(ms) * time.Millisecond
	}
	return &session.Attempt{
		Setup: spec.Setup, Check: spec.Check, Protect: slices.Clone(spec.Protect),
		SetupTimeout: limit(spec.SetupTimeoutMS), CheckTimeout: limit(spec.CheckTimeoutMS),
		OutputMax: report.StepOutputMax,
	}
}

// attemptResult fills r, the result of an attempt's run, from what the
// attempt did (a): its report, the agent's patch, and, when the setup
// failed and the agent never started, the status and the message that
// say so instead of the harness's.
func attemptResult(r *report.Result, a *session.AttemptResult) {
	if a == nil {
		return
	}
	r.Attempt = &report.Attempt{
		Setup: reportStep(a.Setup), AgentStarted: a.AgentStarted, Check: reportStep(a.Check),
		Changes:  report.AttemptChanges{Created: orEmpty(a.Created), Updated: orEmpty(a.Updated), Deleted: orEmpty(a.Deleted)},
		Restored: a.Restored,
	}
	r.Patch, r.Files, r.Branch = a.Patch, nil, nil
	if a.AgentStarted {
		return
	}
	// The conversation id fixed before the start names no conversation.
	r.ExitCode, r.Usage, r.Cause, r.HarnessSessionID = nil, nil, nil, ""
	if r.Status != report.StatusInterrupted {
		r.Status = report.StatusFailed // a signal that stopped the setup says interrupted
	}
	r.Message = setupMessage(a.Setup)
	// The harness never ran: "the harness printed no result" says
	// nothing true.
	r.Warnings = slices.DeleteFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, noResult) })
}

// noResult starts the warning of a one-shot run whose harness printed no
// result.
const noResult = "the harness printed no result"

// setupMessage is the message of an attempt whose setup failed.
func setupMessage(s *session.Step) string {
	if s == nil {
		return "the attempt's setup did not run"
	}
	switch {
	case s.TimedOut:
		return fmt.Sprintf("the setup (%s) was stopped after its time limit; the agent did not start", s.Command)
	case s.ExitCode < 0:
		return fmt.Sprintf("the setup (%s) could not be started; the agent did not start", s.Command)
	}
	return fmt.Sprintf("the setup (%s) exited with status %d; the agent did not start", s.Command, s.ExitCode)
}

// reportStep is s in report's terms; nil stays nil.
func reportStep(s *session.Step) *report.Step {
	if s == nil {
		return nil
	}
	return &report.Step{Command: s.Command, ExitCode: s.ExitCode, TimedOut: s.TimedOut, Output: s.Output,
		OutputBytes: s.OutputBytes, Truncated: s.Truncated, DurationMS: s.Duration.Milliseconds()}
}

// orEmpty is s, or an empty list for nil.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
