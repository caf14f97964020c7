package eval

import (
	"slices"

	"github.com/seed-3bc194a6/workforce/report"
)

// The changes of a case between two evaluations (EvalCasePair.Change).
const (
	Regressed = "regressed"
	Improved  = "improved"
	Same      = "same"
	OnlyA     = "only-a"
	OnlyB     = "only-b"
)

// rowKey names a persona on a harness.
type rowKey struct{ persona, tier, harness string }

// Compare puts the evaluations a and b side by side: each persona's sums,
// and each case of each persona, the regressed first (a lower pass rate
// in b), then the improved, then the rest, each group in a's order, then
// b's.
func Compare(a, b report.Eval) report.EvalComparison {
	cmp := report.EvalComparison{A: a.ID, B: b.ID, Personas: []report.EvalPersonaPair{}, Cases: []report.EvalCasePair{}}
	var keys []rowKey
	pa, pb := map[rowKey]*report.EvalPersona{}, map[rowKey]*report.EvalPersona{}
	for _, side := range []struct {
		rep report.Eval
		m   map[rowKey]*report.EvalPersona
	}{{a, pa}, {b, pb}} {
		for i := range side.rep.Personas {
			p := &side.rep.Personas[i]
			k := rowKey{p.Persona, p.Tier, p.Harness}
			if _, ok := pa[k]; !ok && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
			side.m[k] = p
		}
	}
	for _, k := range keys {
		cmp.Personas = append(cmp.Personas, report.EvalPersonaPair{Persona: k.persona, Tier: k.tier, Harness: k.harness, A: pa[k], B: pb[k]})
	}
	pairs := casePairs(a, b)
	for _, change := range []string{Regressed, Improved} {
		for _, p := range pairs {
			if p.Change == change {
				cmp.Cases = append(cmp.Cases, p)
			}
		}
	}
	for _, p := range pairs {
		if p.Change != Regressed && p.Change != Improved {
			cmp.Cases = append(cmp.Cases, p)
		}
	}
	return cmp
}

// caseKey names a case of a persona on a harness.
type caseKey struct {
	id string
	rowKey
}

// casePairs are the cases of each persona of a and b, with the change
// from a to b, in a's order, then b's.
func casePairs(a, b report.Eval) []report.EvalCasePair {
	var keys []caseKey
	ca, cb := map[caseKey]*report.EvalCasePersona{}, map[caseKey]*report.EvalCasePersona{}
	for _, side := range []struct {
		rep report.Eval
		m   map[caseKey]*report.EvalCasePersona
	}{{a, ca}, {b, cb}} {
		for _, c := range side.rep.Cases {
			for i := range c.Personas {
				p := &c.Personas[i]
				k := caseKey{c.Case, rowKey{p.Persona, p.Tier, p.Harness}}
				if !slices.Contains(keys, k) {
					keys = append(keys, k)
				}
				side.m[k] = p
			}
		}
	}
	out := make([]report.EvalCasePair, 0, len(keys))
	for _, k := range keys {
		out = append(out, report.EvalCasePair{Case: k.id, Persona: k.persona, Tier: k.tier, Harness: k.harness,
			Change: change(ca[k], cb[k]), A: ca[k], B: cb[k]})
	}
	return out
}

// change is how the case went from a to b: by pass rate, an attempt of
// neither that ran counting as the same.
func change(a, b *report.EvalCasePersona) string {
	switch {
	case a == nil:
		return OnlyB
	case b == nil:
		return OnlyA
	case a.PassRate == nil || b.PassRate == nil:
		return Same
	case *b.PassRate < *a.PassRate:
		return Regressed
	case *b.PassRate > *a.PassRate:
		return Improved
	}
	return Same
}
