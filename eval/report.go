package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

// Report is the evaluation's report from its attempts' states: each
// attempt judged (Judge), the sums per persona and per case, and the
// warnings (a persona whose runs reported another hash, attempts not
// run).
func (e *Evaluation) Report(states map[string]batch.TaskState) report.Eval {
	rep := report.Eval{ID: e.ID, File: e.File, K: e.K, Personas: []report.EvalPersona{}, Cases: []report.EvalCase{},
		Attempts: []report.EvalAttempt{}, Warnings: []string{}}
	for _, c := range e.Cells {
		var ts *batch.TaskState
		if s, ok := states[c.Task.ID]; ok {
			ts = &s
		}
		rep.Attempts = append(rep.Attempts, attemptOf(c, ts))
	}
	expected := map[string]string{}
	for _, c := range e.Cells {
		expected[c.Task.ID] = c.Task.PersonaHash
	}
	pending := 0
	for _, p := range e.Personas {
		ps := personaSums(p, rep.Attempts, expected, e.Cases, e.K)
		pending += ps.Pending
		if ps.HashMismatch {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("persona %s: the runs reported another version of it (%s) than this machine's (%s): a queue's workers run their own installed personas",
				p.Key(), shorts(ps.WorkerHashes), short(p.Hash)))
		}
		rep.Personas = append(rep.Personas, ps)
	}
	for _, c := range e.Cases {
		ec := report.EvalCase{Case: c.ID, Personas: []report.EvalCasePersona{}}
		for _, p := range e.Personas {
			ec.Personas = append(ec.Personas, caseSums(p, c.ID, rep.Attempts))
		}
		rep.Cases = append(rep.Cases, ec)
	}
	if pending > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%d attempts have not run yet: run the evaluation again to run them", pending))
	}
	return rep
}

// attemptOf is the report's attempt of the cell c, whose task's state
// is ts (nil when it has none).
func attemptOf(c Cell, ts *batch.TaskState) report.EvalAttempt {
	j := Judge(c.Case, ts)
	a := report.EvalAttempt{Case: c.Case.ID, Persona: c.Persona.ID, Tier: c.Persona.Tier, Harness: c.Persona.Harness,
		Attempt: c.Attempt, TaskID: c.Task.ID, Outcome: j.Outcome, Reasons: j.Reasons, Failed: j.Failed, Unchecked: j.Unchecked}
	if ts == nil || ts.Result == nil {
		return a
	}
	r := ts.Result
	a.Result, a.SessionID, a.PersonaHash = r, r.SessionID, r.PersonaHash
	if at := r.Attempt; at != nil {
		a.Setup, a.Check = stepOf(at.Setup), stepOf(at.Check)
	}
	return a
}

func stepOf(s *report.Step) *report.EvalStep {
	if s == nil {
		return nil
	}
	return &report.EvalStep{ExitCode: s.ExitCode, TimedOut: s.TimedOut, DurationMS: s.DurationMS}
}

// of reports whether the attempt a is persona p's.
func of(a report.EvalAttempt, p Persona) bool {
	return a.Persona == p.ID && a.Tier == p.Tier && a.Harness == p.Harness
}

// personaSums are the sums of persona p's attempts over the cases; a
// hash a run reported that is not the one expected of its task (by task
// id) is a worker's other version.
func personaSums(p Persona, attempts []report.EvalAttempt, expected map[string]string, cases []Case, k int) report.EvalPersona {
	ps := report.EvalPersona{Persona: p.ID, Tier: p.Tier, Harness: p.Harness, Hash: p.Hash, Layer: p.Layer, Cases: len(cases)}
	var mine []report.EvalAttempt
	for _, a := range attempts {
		if of(a, p) {
			mine = append(mine, a)
			if a.PersonaHash != "" && a.PersonaHash != expected[a.TaskID] && !slices.Contains(ps.WorkerHashes, a.PersonaHash) {
				ps.WorkerHashes = append(ps.WorkerHashes, a.PersonaHash)
			}
		}
	}
	ps.HashMismatch = len(ps.WorkerHashes) > 0
	ps.Attempts, ps.Passed, ps.Failed, ps.Errors, ps.Pending = count(mine)
	ps.PassRate = rate(ps.Passed, ps.Passed+ps.Failed)
	var estimates []float64
	for _, c := range cases {
		var n, passed int
		for _, a := range mine {
			if a.Case == c.ID && (a.Outcome == report.OutcomePass || a.Outcome == report.OutcomeFail) {
				n++
				if a.Outcome == report.OutcomePass {
					passed++
				}
			}
		}
		if passed > 0 {
			ps.CasesPassed++
		}
		if n > 0 {
			estimates = append(estimates, PassAtK(n, passed, k))
		}
	}
	if len(estimates) > 0 {
		ps.PassAtK = ptr(mean(estimates))
	}
	ps.CostUSD, ps.DurationMS, ps.Turns, ps.Tokens = figures(mine)
	return ps
}

// caseSums are the sums of persona p's attempts on case id.
func caseSums(p Persona, id string, attempts []report.EvalAttempt) report.EvalCasePersona {
	cp := report.EvalCasePersona{Persona: p.ID, Tier: p.Tier, Harness: p.Harness, Outcomes: []report.EvalOutcome{}}
	var mine []report.EvalAttempt
	for _, a := range attempts {
		if of(a, p) && a.Case == id {
			mine = append(mine, a)
			cp.Outcomes = append(cp.Outcomes, a.Outcome)
		}
	}
	_, passed, failed, errs, _ := count(mine)
	cp.Passed, cp.Errors, cp.PassRate = passed, errs, rate(passed, passed+failed)
	cp.CostUSD, cp.DurationMS, _, _ = figures(mine)
	return cp
}

// count counts the attempts, and those that passed, failed, could not
// run and have not run.
func count(as []report.EvalAttempt) (all, passed, failed, errs, pending int) {
	for _, a := range as {
		switch a.Outcome {
		case report.OutcomePass:
			passed++
		case report.OutcomeFail:
			failed++
		case report.OutcomeError:
			errs++
		default:
			pending++
		}
	}
	return len(as), passed, failed, errs, pending
}

// figures are the cost, duration and turns of the attempts whose run
// reported them, and the sums of their tokens.
func figures(as []report.EvalAttempt) (cost, dur, turns report.EvalStat, tokens report.EvalTokens) {
	var costs, durs, ts []float64
	for _, a := range as {
		r := a.Result
		if r == nil || a.Outcome == report.OutcomeError {
			continue
		}
		durs = append(durs, float64(r.DurationMS))
		u := r.Usage
		if u == nil {
			continue
		}
		if u.CostUSD != nil {
			costs = append(costs, *u.CostUSD)
		}
		if u.Turns != nil {
			ts = append(ts, float64(*u.Turns))
		}
		for _, f := range []struct {
			dst *int64
			v   *int64
		}{{&tokens.Input, u.InputTokens}, {&tokens.Output, u.OutputTokens}, {&tokens.Cached, u.CachedTokens}} {
			if f.v != nil {
				*f.dst += *f.v
			}
		}
	}
	return stat(costs), stat(durs), stat(ts), tokens
}

// stat is the mean and the median of xs.
func stat(xs []float64) report.EvalStat {
	s := report.EvalStat{Known: len(xs)}
	if len(xs) == 0 {
		return s
	}
	sorted := slices.Sorted(slices.Values(xs))
	med := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		med = (sorted[len(sorted)/2-1] + med) / 2
	}
	s.Mean, s.Median = ptr(mean(xs)), &med
	return s
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// rate is passed/ran; nil when nothing ran.
func rate(passed, ran int) *float64 {
	if ran == 0 {
		return nil
	}
	return ptr(float64(passed) / float64(ran))
}

func ptr[T any](v T) *T { return &v }

// PassAtK is the unbiased estimate of pass@k for n attempts with c
// passes: the chance that at least one of k attempts drawn from the n
// passes, 1 - C(n-c, k) / C(n, k) (computed as a product, which stays
// exact for large n). With fewer attempts than k (n < k) it is pass@n:
// 1 when any passed, else 0. n must be at least 1 (a case with no
// attempt that ran has no estimate, and is left out of the mean).
func PassAtK(n, c, k int) float64 {
	if k > n {
		k = n
	}
	if c == 0 {
		return 0
	}
	if n-c < k {
		return 1
	}
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return math.Max(0, math.Min(1, 1-p))
}

// shorts are the hashes hs, short, joined.
func shorts(hs []string) string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = short(h)
	}
	return strings.Join(out, ", ")
}

// short is the first 12 hex digits of a hash.
func short(h string) string {
	if len(h) > 12 {
		h = h[:12]
	}
	return quote.Name(h)
}

// WriteBelow writes a line to w for each persona of rep below min (Below),
// naming the evaluation and the rate, and returns how many there are.
func WriteBelow(w io.Writer, rep report.Eval, min *float64) int {
	below := Below(rep, min)
	for _, p := range below {
		fmt.Fprintf(w, "workforce: %s: pass rate in %s below --min-pass-rate %v\n", p, rep.ID, *min)
	}
	return len(below)
}

// Below are the personas (PERSONA@TIER/HARNESS) of the report whose pass
// rate is below min (one whose attempts all could not run among them);
// none when min is nil.
func Below(rep report.Eval, min *float64) []string {
	var out []string
	for _, p := range rep.Personas {
		if min != nil && (p.PassRate == nil || *p.PassRate < *min) {
			out = append(out, key(p.Persona, p.Tier, p.Harness))
		}
	}
	return out
}
