package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

// Judgement is what an attempt's state says of it: its outcome ("" for
// an attempt not run yet), why it is not a pass, what failed and what
// could not be checked.
type Judgement struct {
	Outcome   report.EvalOutcome
	Reasons   []string
	Failed    []string
	Unchecked []string
}

func (j *Judgement) fail(name, format string, args ...any) {
	if !slices.Contains(j.Failed, name) {
		j.Failed = append(j.Failed, name)
	}
	j.Reasons = append(j.Reasons, fmt.Sprintf(format, args...))
}

// Judge decides the outcome of an attempt of case c from its task's
// state (nil when it has none):
//   - none yet (not run, or interrupted): "";
//   - error: no result (the run could not start), or the agent never
//     started (the setup failed);
//   - fail: the status is not the expected one (succeeded by default;
//     a run that timed out fails so), the check failed, or an assertion
//     of expect failed;
//   - pass otherwise.
//
// An assertion the result gives nothing to check against (no cost or
// turns reported) is Unchecked, neither passed nor failed.
func Judge(c *Case, ts *batch.TaskState) Judgement {
	j := Judgement{Reasons: []string{}, Failed: []string{}, Unchecked: []string{}}
	if ts == nil || ts.Phase != batch.PhaseDone {
		return j
	}
	r := ts.Result
	switch {
	case r == nil:
		j.Outcome = report.OutcomeError
		j.Reasons = append(j.Reasons, "the run could not start: "+quote.Line(quote.Text(ts.Error), 200))
		return j
	case r.Attempt == nil:
		j.Outcome = report.OutcomeError
		j.Reasons = append(j.Reasons, "the run reported no attempt (a workforce without run --attempt?)")
		return j
	case !r.Attempt.AgentStarted:
		j.Outcome = report.OutcomeError
		if s := r.Attempt.Setup; s != nil && !s.Passed() {
			j.Reasons = append(j.Reasons, stepText("the setup", s))
		} else {
			j.Reasons = append(j.Reasons, fmt.Sprintf("the agent did not start (status %s)", quote.Name(string(r.Status))))
		}
		return j
	}
	j.judgeRun(c, r)
	j.Outcome = report.OutcomePass
	if len(j.Failed) > 0 {
		j.Outcome = report.OutcomeFail
	}
	return j
}

// judgeRun checks the run r of an attempt of c whose agent started: its
// status, its check, each assertion.
func (j *Judgement) judgeRun(c *Case, r *report.Result) {
	e := c.Expect
	want := e.Status
	if want == "" {
		want = report.StatusSucceeded
	}
	if r.Status != want {
		j.fail("status", "status %s, want %s", quote.Name(string(r.Status)), want)
	}
	if c.Check != "" {
		if s := r.Attempt.Check; !s.Passed() {
			if s == nil {
				j.fail("check", "the check did not run")
			} else {
				j.fail("check", "%s%s", stepText("the check", s), restored(r.Attempt.Restored))
			}
		}
	}
	j.judgeFiles(e, r.Attempt.Changes)
	if e.Message != "" {
		re := e.messageRE
		if re == nil {
			re = regexp.MustCompile(e.Message)
		}
		if !re.MatchString(r.Message) {
			j.fail("message", "the final message does not match %s", quote.Name(e.Message))
		}
	}
	j.judgeLimits(e, r)
}

// judgeFiles checks the changed files against expect's globs.
func (j *Judgement) judgeFiles(e Expect, ch report.AttemptChanges) {
	changed := slices.Concat(ch.Created, ch.Updated, ch.Deleted)
	for _, g := range e.Changed {
		if !slices.ContainsFunc(changed, func(p string) bool { return match(g, p) }) {
			j.fail("changed", "no changed file matches %s", quote.Name(g))
		}
	}
	for _, g := range e.Unchanged {
		for _, p := range changed {
			if match(g, p) {
				j.fail("unchanged", "%s changed, which %s says must not", quote.Name(p), quote.Name(g))
			}
		}
	}
}

// judgeLimits checks the cost, duration and turns against expect's
// limits.
func (j *Judgement) judgeLimits(e Expect, r *report.Result) {
	u := r.Usage
	if e.MaxCostUSD != nil {
		switch {
		case u == nil || u.CostUSD == nil:
			j.Unchecked = append(j.Unchecked, "maxCostUsd")
		case *u.CostUSD > *e.MaxCostUSD:
			j.fail("maxCostUsd", "cost $%.4f, over maxCostUsd $%.4f", *u.CostUSD, *e.MaxCostUSD)
		}
	}
	if took := time.Duration(r.DurationMS) * time.Millisecond; e.MaxDuration > 0 && took > e.MaxDuration {
		j.fail("maxDuration", "took %v, over maxDuration %v", took.Round(100*time.Millisecond), e.MaxDuration)
	}
	if e.MaxTurns != nil {
		switch {
		case u == nil || u.Turns == nil:
			j.Unchecked = append(j.Unchecked, "maxTurns")
		case *u.Turns > *e.MaxTurns:
			j.fail("maxTurns", "%d turns, over maxTurns %d", *u.Turns, *e.MaxTurns)
		}
	}
}

// restored says which protected files the agent had changed and were
// restored before the check; "" when none.
func restored(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = quote.Name(p)
	}
	return " (protected, changed by the agent and restored first: " + strings.Join(q, ", ") + ")"
}

// match reports whether the glob g matches the path p.
func match(g, p string) bool {
	ok, _ := doublestar.Match(g, p)
	return ok
}

// stepText says how the step s, named name, ended.
func stepText(name string, s *report.Step) string {
	switch {
	case s.TimedOut:
		return name + " timed out"
	case s.ExitCode < 0:
		return name + " could not start"
	}
	return fmt.Sprintf("%s exited %d", name, s.ExitCode)
}
