package eval

import (
	"math"
	"slices"
	"testing"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

func TestPassAtK(t *testing.T) {
	tests := []struct {
		n, c, k int
		want    float64
	}{
		{2, 1, 1, 0.5},
		{2, 1, 2, 1},
		{5, 0, 1, 0},
		{5, 0, 5, 0},
		{5, 5, 1, 1},
		{4, 2, 2, 1 - 1.0/6}, // 1 - C(2,2)/C(4,2)
		{10, 3, 5, 1 - 21.0/252},
		{1, 1, 3, 1}, // n < k: pass@n
		{2, 0, 3, 0},
	}
	for _, tt := range tests {
		if got := PassAtK(tt.n, tt.c, tt.k); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("PassAtK(n=%d, c=%d, k=%d) = %v, want %v", tt.n, tt.c, tt.k, got, tt.want)
		}
	}
}

// run is the state of an attempt whose agent ran, ending with status st
// and the check's exit code (-2: no check).
func run(st report.Status, check int, change ...string) *batch.TaskState {
	a := &report.Attempt{AgentStarted: true, Changes: report.AttemptChanges{Created: []string{}, Updated: change, Deleted: []string{}}}
	if check != -2 {
		a.Check = &report.Step{ExitCode: check}
	}
	return &batch.TaskState{Phase: batch.PhaseDone, Status: st, Result: &report.Result{Status: st, Attempt: a, DurationMS: 1000}}
}

func with(ts *batch.TaskState, f func(r *report.Result)) *batch.TaskState {
	f(ts.Result)
	return ts
}

func TestJudge(t *testing.T) {
	cost, turns, limit, maxTurns := 0.5, 7, 0.25, 5
	check := Case{ID: "c", Check: "make test"}
	tests := []struct {
		name    string
		c       Case
		ts      *batch.TaskState
		outcome report.EvalOutcome
		failed  []string
		uncheck []string
	}{
		{name: "not run", c: check, ts: nil, outcome: ""},
		{name: "interrupted", c: check, ts: &batch.TaskState{Phase: batch.PhasePending}, outcome: ""},
		{name: "no result", c: check, ts: &batch.TaskState{Phase: batch.PhaseDone, Error: "unknown persona"}, outcome: report.OutcomeError},
		{name: "setup failed", c: check, ts: with(run(report.StatusFailed, -2), func(r *report.Result) {
			r.Attempt.AgentStarted, r.Attempt.Setup = false, &report.Step{ExitCode: 2}
		}), outcome: report.OutcomeError},
		{name: "pass", c: check, ts: run(report.StatusSucceeded, 0), outcome: report.OutcomePass},
		{name: "check failed", c: check, ts: run(report.StatusSucceeded, 1), outcome: report.OutcomeFail, failed: []string{"check"}},
		{name: "check did not run", c: check, ts: run(report.StatusSucceeded, -2), outcome: report.OutcomeFail, failed: []string{"check"}},
		{name: "run failed", c: check, ts: run(report.StatusFailed, 0), outcome: report.OutcomeFail, failed: []string{"status"}},
		{name: "timed out", c: Case{}, ts: run(report.StatusTimedOut, -2), outcome: report.OutcomeFail, failed: []string{"status"}},
		{name: "status expected", c: Case{Expect: Expect{Status: report.StatusFailed}}, ts: run(report.StatusFailed, -2), outcome: report.OutcomePass},
		{name: "changed holds", c: Case{Expect: Expect{Changed: []string{"src/**/*.go"}}}, ts: run(report.StatusSucceeded, -2, "src/a/b.go"), outcome: report.OutcomePass},
		{name: "changed fails", c: Case{Expect: Expect{Changed: []string{"src/**/*.go"}}}, ts: run(report.StatusSucceeded, -2, "docs/a.md"), outcome: report.OutcomeFail, failed: []string{"changed"}},
		{name: "unchanged holds", c: Case{Expect: Expect{Unchanged: []string{"docs/**"}}}, ts: run(report.StatusSucceeded, -2, "src/a.go"), outcome: report.OutcomePass},
		{name: "unchanged fails", c: Case{Expect: Expect{Unchanged: []string{"docs/**"}}}, ts: run(report.StatusSucceeded, -2, "docs/a.md"), outcome: report.OutcomeFail, failed: []string{"unchanged"}},
		{name: "message holds", c: Case{Expect: Expect{Message: "^fixed"}}, ts: with(run(report.StatusSucceeded, -2), func(r *report.Result) { r.Message = "fixed it" }), outcome: report.OutcomePass},
		{name: "message fails", c: Case{Expect: Expect{Message: "^fixed"}}, ts: with(run(report.StatusSucceeded, -2), func(r *report.Result) { r.Message = "gave up" }), outcome: report.OutcomeFail, failed: []string{"message"}},
		{name: "cost holds", c: Case{Expect: Expect{MaxCostUSD: &cost}}, ts: with(run(report.StatusSucceeded, -2), func(r *report.Result) { r.Usage = &report.Usage{CostUSD: &limit} }), outcome: report.OutcomePass},
		{name: "cost fails", c: Case{Expect: Expect{MaxCostUSD: &limit}}, ts: with(run(report.StatusSucceeded, -2), func(r *report.Result) { r.Usage = &report.Usage{CostUSD: &cost} }), outcome: report.OutcomeFail, failed: []string{"maxCostUsd"}},
		{name: "cost unchecked", c: Case{Expect: Expect{MaxCostUSD: &limit}}, ts: run(report.StatusSucceeded, -2), outcome: report.OutcomePass, uncheck: []string{"maxCostUsd"}},
		{name: "duration holds", c: Case{Expect: Expect{MaxDuration: 2e9}}, ts: run(report.StatusSucceeded, -2), outcome: report.OutcomePass},
		{name: "duration fails", c: Case{Expect: Expect{MaxDuration: 5e8}}, ts: run(report.StatusSucceeded, -2), outcome: report.OutcomeFail, failed: []string{"maxDuration"}},
		{name: "turns holds", c: Case{Expect: Expect{MaxTurns: &turns}}, ts: with(run(report.StatusSucceeded, -2), func(r *report.Result) { r.Usage = &report.Usage{Turns: &maxTurns} }), outcome: report.OutcomePass},
		{name: "turns fails", c: Case{Expect: Expect{MaxTurns: &maxTurns}}, ts: with(run(report.StatusSucceeded, -2), func(r *report.Result) { r.Usage = &report.Usage{Turns: &turns} }), outcome: report.OutcomeFail, failed: []string{"maxTurns"}},
		{name: "turns unchecked", c: Case{Expect: Expect{MaxTurns: &maxTurns}}, ts: run(report.StatusSucceeded, -2), outcome: report.OutcomePass, uncheck: []string{"maxTurns"}},
		{name: "several fail", c: Case{Check: "x", Expect: Expect{Changed: []string{"a"}}}, ts: run(report.StatusFailed, 1), outcome: report.OutcomeFail, failed: []string{"status", "check", "changed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := Judge(&tt.c, tt.ts)
			if j.Outcome != tt.outcome || !slices.Equal(j.Failed, orEmpty(tt.failed)) || !slices.Equal(j.Unchecked, orEmpty(tt.uncheck)) {
				t.Errorf("Judge = %+v, want %q failed %v unchecked %v", j, tt.outcome, tt.failed, tt.uncheck)
			}
			if (j.Outcome == report.OutcomeFail || j.Outcome == report.OutcomeError) && len(j.Reasons) == 0 {
				t.Errorf("Judge = %+v: no reason", j)
			}
		})
	}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TestReport sums the attempts of two personas on two cases: pass rate
// with errors left out, pass@k over the cases, cases passed, cost and
// duration means and medians, and a worker's other hash flagged.
func TestReport(t *testing.T) {
	cases := []Case{{ID: "a", Check: "x"}, {ID: "b", Check: "x"}}
	p := Persona{ID: "p", Tier: "best", Harness: "claude", Hash: "h1"}
	q := Persona{ID: "q", Tier: "best", Harness: "codex", Hash: "h2"}
	e := &Evaluation{ID: "e", Cases: cases, Personas: []Persona{p, q}, Attempts: 2, K: 1}
	e.Cells = matrix(cases, e.Personas, 2, "/", false)
	cost := func(c float64) func(r *report.Result) {
		return func(r *report.Result) { r.Usage = &report.Usage{CostUSD: &c} }
	}
	states := map[string]batch.TaskState{}
	set := func(caseID string, per Persona, n int, ts *batch.TaskState) {
		for _, c := range e.Cells {
			if c.Case.ID == caseID && c.Persona == per && c.Attempt == n {
				states[c.Task.ID] = *ts
				return
			}
		}
		t.Fatalf("no cell %s %s %d", caseID, per.Key(), n)
	}
	// p: a pass, fail; b error, pass  -> 2 passed of 3 that ran.
	set("a", p, 1, with(run(report.StatusSucceeded, 0), cost(0.1)))
	set("a", p, 2, with(run(report.StatusSucceeded, 1), cost(0.3)))
	set("b", p, 1, &batch.TaskState{Phase: batch.PhaseDone, Error: "no harness"})
	set("b", p, 2, with(run(report.StatusSucceeded, 0), cost(0.2)))
	// q: a fail fail; b pass, not run; one run of another version.
	set("a", q, 1, run(report.StatusFailed, 1))
	set("a", q, 2, with(run(report.StatusSucceeded, 1), func(r *report.Result) { r.PersonaHash = "other" }))
	set("b", q, 1, run(report.StatusSucceeded, 0))
	rep := e.Report(states)
	if len(rep.Attempts) != 8 || len(rep.Personas) != 2 || len(rep.Cases) != 2 {
		t.Fatalf("Report = %+v", rep)
	}
	rp, rq := rep.Personas[0], rep.Personas[1]
	if rp.Attempts != 4 || rp.Passed != 2 || rp.Errors != 1 || *rp.PassRate != 2.0/3 || rp.CasesPassed != 2 {
		t.Errorf("p: %+v, want 2 of 3 passed, 1 error, 2 cases passed", rp)
	}
	// pass@1: case a 1 of 2 (0.5), case b 1 of 1 (1): mean 0.75.
	if *rp.PassAtK != 0.75 {
		t.Errorf("p: pass@1 = %v, want 0.75", *rp.PassAtK)
	}
	if math.Abs(*rp.CostUSD.Mean-0.2) > 1e-9 || *rp.CostUSD.Median != 0.2 || rp.CostUSD.Known != 3 || *rp.DurationMS.Mean != 1000 {
		t.Errorf("p: cost %v/%v of %d, duration %v", *rp.CostUSD.Mean, *rp.CostUSD.Median, rp.CostUSD.Known, *rp.DurationMS.Mean)
	}
	if rq.Passed != 1 || rq.Pending != 1 || *rq.PassRate != 1.0/3 || rq.CostUSD.Mean != nil || !rq.HashMismatch || rq.WorkerHashes[0] != "other" {
		t.Errorf("q: %+v", rq)
	}
	if *rq.PassAtK != 0.5 { // a: 0 of 2, b: 1 of 1
		t.Errorf("q: pass@1 = %v, want 0.5", *rq.PassAtK)
	}
	if len(rep.Warnings) != 2 {
		t.Errorf("warnings %q, want the other hash and the attempt not run", rep.Warnings)
	}
	if got := rep.Cases[0].Personas[0].Outcomes; !slices.Equal(got, []report.EvalOutcome{report.OutcomePass, report.OutcomeFail}) {
		t.Errorf("case a, p: outcomes %v", got)
	}
}

// TestCompare orders the cases regressed, improved, then the rest, and
// pairs the personas.
func TestCompare(t *testing.T) {
	r := func(f float64) *float64 { return &f }
	row := func(rate *float64) []report.EvalCasePersona {
		return []report.EvalCasePersona{{Persona: "p", Tier: "best", Harness: "claude", PassRate: rate}}
	}
	a := report.Eval{ID: "A", Personas: []report.EvalPersona{{Persona: "p", Tier: "best", Harness: "claude", PassRate: r(0.5)}},
		Cases: []report.EvalCase{{Case: "same", Personas: row(r(1))}, {Case: "better", Personas: row(r(0))}, {Case: "worse", Personas: row(r(1))}, {Case: "gone", Personas: row(r(1))}}}
	b := report.Eval{ID: "B", Personas: []report.EvalPersona{{Persona: "p", Tier: "best", Harness: "claude", PassRate: r(0.5)}, {Persona: "q", Tier: "best", Harness: "claude"}},
		Cases: []report.EvalCase{{Case: "same", Personas: row(r(1))}, {Case: "better", Personas: row(r(0.5))}, {Case: "worse", Personas: row(r(0.5))}, {Case: "new", Personas: row(nil)}}}
	cmp := Compare(a, b)
	var got []string
	for _, c := range cmp.Cases {
		got = append(got, c.Case+":"+c.Change)
	}
	want := []string{"worse:regressed", "better:improved", "same:same", "gone:only-a", "new:only-b"}
	if !slices.Equal(got, want) {
		t.Errorf("Compare cases = %v, want %v", got, want)
	}
	if len(cmp.Personas) != 2 || cmp.Personas[0].A == nil || cmp.Personas[0].B == nil || cmp.Personas[1].A != nil || cmp.Personas[1].B == nil {
		t.Errorf("Compare personas = %+v", cmp.Personas)
	}
}
