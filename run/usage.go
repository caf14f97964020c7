package run

import (
	"errors"
	"fmt"
	"os"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/session"
)

// OwnUsage is sessions resume's Hooks.ResumedUsage: a resumed run's own
// usage. Resumed, some harnesses print in their one-shot output the
// conversation's running total where a fresh run prints its own
// (harness.CumulativeOnResume says which, and what was measured). The
// result of a resumed run, and so its history record, carries the run's
// own usage: the cumulative figures less those the run before printed, so
// that the runs of a conversation sum to what the model consumed in all.
//
// It makes the usage that the harness h of the resumed run one
// printed this run's own: each cumulative figure less the one the latest
// earlier run of the session printed, read from its output kept in the
// results directory (one.Dir/N: an earlier run's files move to the first
// free number, so the highest is the latest). An earlier run that printed
// no such figure is passed over: its share, unknown, goes to this run. A
// figure smaller than the earlier one is the run's own (the harness did
// not carry the total over). When no earlier run printed one, this run's
// own is unknown (its usage or cost left out) and the warning returned
// says so.
func OwnUsage(h string, one *session.OneShotResult) string {
	cum := harness.CumulativeOnResume(h)
	out := one.Outcome
	if (!cum.Tokens && !cum.Cost) || !one.Parsed || out == nil || !hasUsage(out) {
		return ""
	}
	var tokens, cost *harness.Usage
	for _, prev := range earlierOutcomes(h, one.Dir) {
		if tokens == nil && hasUsage(prev) {
			tokens = &prev.Usage
		}
		if cost == nil && hasUsage(prev) && prev.Usage.CostUSD != nil {
			cost = &prev.Usage
		}
	}
	u := &out.Usage
	var unknown []string
	if cum.Tokens {
		if tokens == nil {
			out.HasUsage = false
			unknown = append(unknown, "usage")
		} else if u.Input >= tokens.Input && u.Output >= tokens.Output && u.Cached >= tokens.Cached {
			u.Input, u.Output, u.Cached = u.Input-tokens.Input, u.Output-tokens.Output, u.Cached-tokens.Cached
		}
	}
	if cum.Cost && u.CostUSD != nil {
		if cost == nil {
			u.CostUSD = nil
			unknown = append(unknown, "cost")
		} else if c := *u.CostUSD - *cost.CostUSD; c >= 0 {
			u.CostUSD = &c
		}
	}
	if len(unknown) == 0 {
		return ""
	}
	return fmt.Sprintf("%s prints the conversation's %s so far when resumed, and no earlier run of the session kept its own: this run's %s is unknown", h, unknown[0], unknown[0])
}

// hasUsage reports whether the harness printed usage: a turn that failed
// prints none, which is not 0.
func hasUsage(o *harness.Outcome) bool { return o.HasUsage }

// earlierOutcomes are the outputs of harness h that the earlier runs of a
// session kept in its results directory dir (session.EarlierOutputs), the
// latest first.
func earlierOutcomes(h, dir string) []*harness.Outcome {
	var out []*harness.Outcome
	for _, path := range session.EarlierOutputs(dir) {
		// Read as it streams: a file of any size in bounded memory.
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		o, err := harness.ReadOutput(h, f)
		f.Close()
		if o == nil || (err != nil && !errors.Is(err, harness.ErrNoResult)) {
			continue
		}
		out = append(out, o)
	}
	return out
}
