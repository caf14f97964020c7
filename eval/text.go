package eval

// The text forms of an evaluation: its matrix (--dry-run), its report
// (the table after a run, eval show) and a comparison (eval compare).
// Each prints what its JSON carries; every name a file, a worker or an
// agent may have chosen goes through quote.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

// WriteMatrix prints the attempts the evaluation would run, one a line,
// and their count.
func (e *Evaluation) WriteMatrix(w io.Writer) {
	fmt.Fprintf(w, "evaluation %s: %s\n", e.ID, quote.Name(e.File))
	for _, p := range e.Personas {
		fmt.Fprintf(w, "persona %s: hash %s, layer %s\n", p.Key(), short(p.Hash), p.Layer)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tCASE\tPERSONA\tATTEMPT\tMODEL\tWHERE")
	for _, c := range e.Cells {
		model, where := c.Task.Model, c.Task.Task.Dir
		if model == "" {
			model = "-"
		}
		if c.Task.Repo != "" {
			where = c.Task.Repo + "@" + c.Task.Ref
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", c.Task.ID, c.Case.ID, c.Persona.Key(), c.Attempt, quote.Name(model), quote.Name(where))
	}
	tw.Flush()
	fmt.Fprintf(w, "%d attempts: %d cases × %d personas × %d attempts; pass@%d\n", len(e.Cells), len(e.Cases), len(e.Personas), e.Attempts, e.K)
}

// DoneLine is the line of an attempt whose task ended, as eval prints it
// while the attempts run: the task's line (batch.DoneLine) and the
// attempt's outcome, with why it is not a pass.
func (e *Evaluation) DoneLine(ts batch.TaskState) string {
	line := batch.DoneLine(ts)
	for _, c := range e.Cells {
		if c.Task.ID != ts.ID {
			continue
		}
		j := Judge(c.Case, &ts)
		if j.Outcome != "" {
			line += ": " + string(j.Outcome)
		}
		if len(j.Reasons) > 0 {
			line += ": " + quote.Text(strings.Join(j.Reasons, "; "))
		}
	}
	return line
}

// WriteTable prints the report as tables: one row a persona (on a
// harness), one row a case of each persona, then why each attempt that
// did not pass did not.
func WriteTable(w io.Writer, rep report.Eval) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "PERSONA\tPASSED\tPASS RATE\tPASS@%d\tCASES\tCOST MEAN/MEDIAN\tTOKENS IN/OUT\tDURATION MEAN/MEDIAN\tHASH\n", rep.K)
	for _, p := range rep.Personas {
		passed := fmt.Sprintf("%d/%d", p.Passed, p.Attempts)
		if p.Errors > 0 {
			passed += fmt.Sprintf(" (%d errors)", p.Errors)
		}
		if p.Pending > 0 {
			passed += fmt.Sprintf(" (%d not run)", p.Pending)
		}
		hash := short(p.Hash)
		if p.HashMismatch {
			hash += " (workers: " + shorts(p.WorkerHashes) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%d/%d\t%s\t%s\n", key(p.Persona, p.Tier, p.Harness), passed, percent(p.PassRate),
			fraction(p.PassAtK), p.CasesPassed, p.Cases, dollars(p.CostUSD), p.Tokens.Input, p.Tokens.Output, millis(p.DurationMS), hash)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE\tPERSONA\tOUTCOMES\tPASS RATE\tCOST MEAN\tDURATION MEAN")
	for _, c := range rep.Cases {
		for _, p := range c.Personas {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Case, key(p.Persona, p.Tier, p.Harness), outcomes(p.Outcomes), percent(p.PassRate),
				meanOf(p.CostUSD, dollar), meanOf(p.DurationMS, milli))
		}
	}
	tw.Flush()
	for _, a := range rep.Attempts {
		if a.Outcome == report.OutcomeFail || a.Outcome == report.OutcomeError {
			fmt.Fprintf(w, "%s %s #%d: %s: %s\n", a.Case, key(a.Persona, a.Tier, a.Harness), a.Attempt, a.Outcome, quote.Text(strings.Join(a.Reasons, "; ")))
		}
		if len(a.Unchecked) > 0 {
			fmt.Fprintf(w, "%s %s #%d: unchecked (not reported by the harness): %s\n", a.Case, key(a.Persona, a.Tier, a.Harness), a.Attempt, strings.Join(a.Unchecked, ", "))
		}
	}
}

// WriteComparison prints a comparison: the personas side by side, then
// the cases, the regressed first.
func WriteComparison(w io.Writer, cmp report.EvalComparison) {
	fmt.Fprintf(w, "A: %s\nB: %s\n", cmp.A, cmp.B)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PERSONA\tPASS RATE A\tPASS RATE B\tCOST A\tCOST B\tDURATION A\tDURATION B")
	for _, p := range cmp.Personas {
		var rate, cost, dur [2]string
		for i, side := range []*report.EvalPersona{p.A, p.B} {
			rate[i], cost[i], dur[i] = "-", "-", "-"
			if side != nil {
				rate[i], cost[i], dur[i] = percent(side.PassRate), meanOf(side.CostUSD, dollar), meanOf(side.DurationMS, milli)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", key(p.Persona, p.Tier, p.Harness), rate[0], rate[1], cost[0], cost[1], dur[0], dur[1])
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANGE\tCASE\tPERSONA\tA\tB\tCOST A\tCOST B\tDURATION A\tDURATION B")
	for _, c := range cmp.Cases {
		var outs, cost, dur [2]string
		for i, side := range []*report.EvalCasePersona{c.A, c.B} {
			outs[i], cost[i], dur[i] = "-", "-", "-"
			if side != nil {
				outs[i], cost[i], dur[i] = outcomes(side.Outcomes)+" ("+percent(side.PassRate)+")", meanOf(side.CostUSD, dollar), meanOf(side.DurationMS, milli)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Change, c.Case, key(c.Persona, c.Tier, c.Harness), outs[0], outs[1], cost[0], cost[1], dur[0], dur[1])
	}
	tw.Flush()
}

func key(persona, tier, harness string) string { return persona + "@" + tier + "/" + harness }

// outcomes are the outcomes of some attempts, "-" for one not run.
func outcomes(os []report.EvalOutcome) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = string(o)
		if o == "" {
			s[i] = "-"
		}
	}
	return strings.Join(s, " ")
}

func percent(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", *f*100)
}

func fraction(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *f)
}

func dollar(f float64) string { return fmt.Sprintf("$%.4f", f) }

func milli(f float64) string {
	return (time.Duration(f) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// meanOf is s's mean as form prints it; "-" when unknown.
func meanOf(s report.EvalStat, form func(float64) string) string {
	if s.Mean == nil {
		return "-"
	}
	return form(*s.Mean)
}

// both is s's mean and median as form prints them.
func both(s report.EvalStat, form func(float64) string) string {
	if s.Mean == nil {
		return "-"
	}
	return form(*s.Mean) + "/" + form(*s.Median)
}

func dollars(s report.EvalStat) string { return both(s, dollar) }
func millis(s report.EvalStat) string  { return both(s, milli) }
