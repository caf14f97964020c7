package history

// Usage totals: what `workforce usage` reports of the runs of the history
// (docs/usage.md). A run's usage is the one its record carries, else the
// one the harness's own record of its conversation says (package
// history/sessions), found by the harness's session id or by where and
// when it ran; a usage not found is unknown, never 0. The functions here
// compute and return values: where the harnesses' records are (a
// session's state directory, the user's stores) the caller says, and what
// to print of the result is the caller's.

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/history/sessions"
	"github.com/seed-3bc194a6/workforce/report"
)

// Where a run's usage came from (RunUsage.From).
const (
	// FromRecord: the history's record carried it (the one-shot result's).
	FromRecord = "history"
	// FromSessionRecords: the harness's own record of the conversation,
	// read when the run ended or when usage ran.
	FromSessionRecords = UsageFromSessionRecords
)

// UsageKeys are what usage totals group by: the persona (the first, the
// default), the harness, the model, the project root.
var UsageKeys = []string{"persona", "harness", "model", "project"}

// RunUsage is a run of the history and the usage found for it.
type RunUsage struct {
	Record Record
	// Usage is nil when unknown; From says where it came from.
	Usage *report.Usage
	From  string
	// Estimated: the harness priced a model it had no price for.
	Estimated bool
	// Models are the models the harness's record names.
	Models []string
}

// Since is recs without the runs started before since.
func Since(recs []Record, since time.Time) []Record {
	return slices.DeleteFunc(recs, func(r Record) bool { return r.Time.Before(since) })
}

// RunsUsage are the runs of recs with the usage their records carry: an
// interactive run's was read from the harness's records when it ended.
func RunsUsage(recs []Record) []RunUsage {
	runs := make([]RunUsage, len(recs))
	for i, r := range recs {
		runs[i] = RunUsage{Record: r}
		if r.Usage != nil {
			runs[i].Usage, runs[i].From = r.Usage, FromRecord
			if r.UsageFrom == UsageFromSessionRecords {
				runs[i].From, runs[i].Estimated = FromSessionRecords, r.CostEstimated
			}
		}
	}
	return runs
}

// SessionStores says where the harnesses' records of the runs'
// conversations are.
type SessionStores struct {
	// State returns the stores of the state directory of the session of
	// sandbox, and false when it has none (no sandbox, the session gone,
	// or it kept no state of its own: --install-in-repo, a shared state).
	State func(sandbox string) ([]sessions.Store, bool)
	// User returns the user's own stores, read for the runs of no state
	// of their own.
	User func() []sessions.Store
}

// ReadSessionRecords reads the harnesses' records of the conversations
// of the runs whose usage is unknown: in the state directory of each such
// run's session while it is kept, and in the user's own stores for a run
// that kept no state of its own. Files older than the earliest such run
// are not read. The result's errors and skipped lines are the caller's to
// report; nothing is read, and the result is empty, when no run needs it.
func ReadSessionRecords(runs []RunUsage, where SessionStores) sessions.Result {
	var stores []sessions.Store
	var earliest time.Time
	user := false
	seen := map[string]bool{}
	for _, r := range runs {
		if r.Usage != nil {
			continue
		}
		if earliest.IsZero() || r.Record.Time.Before(earliest) {
			earliest = r.Record.Time
		}
		if seen[r.Record.Sandbox] {
			continue
		}
		st, ok := []sessions.Store(nil), false
		if r.Record.Sandbox != "" {
			st, ok = where.State(r.Record.Sandbox)
		}
		if !ok {
			// No state of its own: the conversation is in the user's
			// stores, or gone with its session.
			user = true
			continue
		}
		seen[r.Record.Sandbox] = true
		stores = append(stores, st...)
	}
	if user {
		stores = append(stores, where.User()...)
	}
	if len(stores) == 0 {
		return sessions.Result{}
	}
	// A conversation's files were last written after its run started.
	return sessions.Read(stores, sessions.Options{ModifiedSince: earliest.Add(-time.Minute)})
}

// EndedRunUsage reads the usage of the run rec, which has just ended,
// from the harnesses' records in stores (its session's state directory):
// the conversation of its harness session id, else the one that ran in
// its sandbox during the run (MatchSessionRecords); only files written
// since the run started are read. nil when none is found; the records'
// errors are not reported (the run's usage is then unknown).
func EndedRunUsage(rec Record, stores []sessions.Store) *RunUsage {
	res := sessions.Read(stores, sessions.Options{ModifiedSince: rec.Time.Add(-time.Minute)})
	runs := []RunUsage{{Record: rec}}
	MatchSessionRecords(runs, res.Records)
	if runs[0].Usage == nil {
		return nil
	}
	return &runs[0]
}

// MatchSlack is how far a conversation's start may lie outside its run's
// time and still be matched by its directory.
const MatchSlack = time.Minute

// MatchSessionRecords gives each run without usage the harness record of
// its conversation: the one of its harness session id, or else the one
// that ran in its sandbox (or, without one, in its working directory)
// and started during the run, give or take MatchSlack. A record goes to
// one run at most.
func MatchSessionRecords(runs []RunUsage, found []sessions.Record) {
	used := make([]bool, len(found))
	byID := map[[2]string]int{}
	for i, f := range found {
		byID[[2]string{f.Harness, f.SessionID}] = i
	}
	take := func(r *RunUsage, i int) {
		used[i] = true
		f := found[i]
		in, out, cached := f.Tokens.Input, f.Tokens.Output, f.Tokens.CacheRead
		r.Usage = &report.Usage{InputTokens: &in, OutputTokens: &out, CachedTokens: &cached, CostUSD: f.CostUSD}
		r.From, r.Estimated, r.Models = FromSessionRecords, f.CostEstimated, f.Models
	}
	// By id first, so that a match by directory cannot take a record
	// another run names.
	for k := range runs {
		r := &runs[k]
		if r.Usage != nil || r.Record.HarnessSessionID == "" {
			continue
		}
		if i, ok := byID[[2]string{r.Record.Harness, r.Record.HarnessSessionID}]; ok && !used[i] {
			take(r, i)
		}
	}
	for k := range runs {
		r := &runs[k]
		if r.Usage != nil {
			continue
		}
		if best := matchByDir(r.Record, found, used); best >= 0 {
			take(r, best)
		}
	}
}

// matchByDir is the index in found of the earliest record not used of
// rec's harness that ran in rec's sandbox (or, without one, its working
// directory) and started during the run; -1 when none did.
func matchByDir(rec Record, found []sessions.Record, used []bool) int {
	from := rec.Time.Add(-MatchSlack)
	to := rec.Time.Add(time.Duration(rec.DurationMS)*time.Millisecond + MatchSlack)
	best := -1
	for i, f := range found {
		if used[i] || f.Harness != rec.Harness || f.Start.Before(from) || f.Start.After(to) {
			continue
		}
		if rec.Sandbox != "" && !sessions.Within(f.Dir, rec.Sandbox) ||
			rec.Sandbox == "" && (rec.Workdir == "" || f.Dir != filepath.Clean(rec.Workdir)) {
			continue
		}
		if best < 0 || f.Start.Before(found[best].Start) {
			best = i
		}
	}
	return best
}

// UsageTotals are the usage of runs grouped by by (one of UsageKeys), and
// the total, since is the start of the period (zero: the whole history).
func UsageTotals(runs []RunUsage, by string, since time.Time) report.UsageReport {
	rep := report.UsageReport{By: by, Groups: groupUsage(runs, by)}
	if !since.IsZero() {
		s := since.UTC()
		rep.Since = &s
	}
	for _, r := range runs {
		addUsage(&rep.Total, r)
	}
	return rep
}

// addUsage counts run r in g.
func addUsage(g *report.UsageSums, r RunUsage) {
	g.Runs++
	u := r.Usage
	if u == nil {
		g.Unknown++
		g.CostUnknown++
		return
	}
	if r.From == FromRecord {
		g.FromHistory++
	} else {
		g.FromSessionRecords++
	}
	for _, f := range []struct {
		n   *int64
		sum *int64
	}{{u.InputTokens, &g.InputTokens}, {u.OutputTokens, &g.OutputTokens}, {u.CachedTokens, &g.CachedTokens}} {
		if f.n != nil {
			*f.sum += *f.n
		}
	}
	if u.CostUSD == nil {
		g.CostUnknown++
		return
	}
	c := *u.CostUSD
	if g.CostUSD != nil {
		c += *g.CostUSD
	}
	g.CostUSD = &c
	g.CostEstimated = g.CostEstimated || r.Estimated
}

// UsageKey is the key of run r by by (one of UsageKeys; the persona for
// any other): "" when it is not known.
func UsageKey(r RunUsage, by string) string {
	switch by {
	case "harness":
		return r.Record.Harness
	case "model":
		if r.Record.Model != "" {
			return r.Record.Model
		}
		if len(r.Models) > 0 {
			return r.Models[0]
		}
		return ""
	case "project":
		return r.Record.Root
	}
	return r.Record.Persona
}

// groupUsage groups runs by by: the costliest first (known cost, then
// tokens), then by key.
func groupUsage(runs []RunUsage, by string) []report.UsageGroup {
	at := map[string]int{}
	groups := []report.UsageGroup{}
	for _, r := range runs {
		k := UsageKey(r, by)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, report.UsageGroup{Key: k})
		}
		addUsage(&groups[i].UsageSums, r)
	}
	cost := func(g report.UsageGroup) float64 {
		if g.CostUSD == nil {
			return 0
		}
		return *g.CostUSD
	}
	slices.SortFunc(groups, func(a, b report.UsageGroup) int {
		return cmp.Or(cmp.Compare(cost(b), cost(a)),
			cmp.Compare(b.InputTokens+b.OutputTokens, a.InputTokens+a.OutputTokens),
			strings.Compare(a.Key, b.Key))
	})
	return groups
}
