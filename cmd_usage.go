package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/history/sessions"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func usageCommand() *cli.Command {
	return &cli.Command{
		Name:      "usage",
		Usage:     "tokens and cost of the runs, by persona, harness, model or project",
		ArgsUsage: " ",
		Description: `Sums what the models consumed in the runs of the history (<home>/history.jsonl,
docs/history.md), grouped by persona (the default), harness, model or project
(the project root). A one-shot run's usage is the one its result carries (a
resumed run's own, not the conversation's so far); an interactive run's was
read from the harness's own record of the conversation (Claude Code's
projects/*.jsonl, codex's rollout files, opencode's database, gemini's
tmp/*/chats/*.jsonl) when it ended,
before its session was removed, found by the harness's session id, or else
by the sandbox directory it ran in. A run that kept its state in your home
(--install-in-repo) is matched to your own records when usage runs.

A cost the harness did not record (codex and gemini record none) is unknown, never 0:
the table shows "unknown", or "+?" after the sum of the known costs, and a
"~" before a cost the harness estimated for a model it has no price for;
UNKNOWN counts the runs whose usage is unknown. --json prints one object
(docs/usage.md). --since keeps the runs started within the duration before
now (90m, 24h, 7d).

Example:

   workforce usage
   workforce usage --since 7d --by model
   workforce usage --by project --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only the runs started within `DURATION` before now: 90m, 24h, 7d"},
			&cli.StringFlag{Name: "by", Value: "persona", Usage: "group by `KEY`: persona, harness, model or project"},
			jsonFlag(),
		},
		Action: usageAction,
	}
}

// usageKeys are what --by groups by.
var usageKeys = []string{"persona", "harness", "model", "project"}

// usageOptions are what workforce usage reports: the runs started since
// Since before Now (all when 0), grouped by By.
type usageOptions struct {
	Since time.Duration
	By    string
	JSON  bool
	Now   time.Time
	Env   procEnv
}

func usageAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("usage takes no arguments")
	}
	opts := usageOptions{By: c.String("by"), JSON: c.Bool("json"), Now: time.Now(), Env: newProcEnv()}
	if !slices.Contains(usageKeys, opts.By) {
		return usagef("--by %s: want one of %s", quote.Name(opts.By), strings.Join(usageKeys, ", "))
	}
	if given(c, "since") {
		d, err := parseSince(c.String("since"))
		if err != nil {
			return usagef("--since %s: %v", quote.Name(c.String("since")), err)
		}
		opts.Since = d
	}
	return runUsage(c.Context, newStreams(c), opts)
}

// parseSince reads a duration of --since: Go's (90m, 24h, 1h30m), or a
// number of days (7d).
func parseSince(s string) (time.Duration, error) {
	var d time.Duration
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || math.IsNaN(days) || days > 1e5 {
			return 0, fmt.Errorf("not a number of days")
		}
		d = time.Duration(days * float64(24*time.Hour))
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("not a duration (90m, 24h, 7d)")
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("not a positive duration")
	}
	return d, nil
}

// The sources of a run's usage.
const (
	fromHistory  = "history"
	fromSessions = "sessionRecords"
)

// usageRun is a run of the history and the usage found for it.
type usageRun struct {
	rec history.Record
	// usage is nil when unknown; from says where it came from.
	usage *report.Usage
	from  string
	// estimated: the harness priced a model it had no price for.
	estimated bool
	// models are the models the harness's record names.
	models []string
}

// usageReport is what usage --json prints (docs/usage.md).
type usageReport struct {
	// Since is the start of the period; absent for the whole history.
	Since  *time.Time   `json:"since,omitempty"`
	By     string       `json:"by"`
	Groups []usageGroup `json:"groups"`
	Total  usageSums    `json:"total"`
}

// usageGroup is the usage of the runs of one key; Key is "" for the runs
// of which it is not known (the model of a run that names none).
type usageGroup struct {
	Key string `json:"key"`
	usageSums
}

// usageSums are the usage of some runs.
type usageSums struct {
	// Runs counts the runs; FromHistory and FromSessionRecords those
	// whose usage came from each, Unknown those whose usage is unknown.
	Runs               int `json:"runs"`
	FromHistory        int `json:"fromHistory"`
	FromSessionRecords int `json:"fromSessionRecords"`
	Unknown            int `json:"unknown"`
	// The sums of the figures known.
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	CachedTokens int64 `json:"cachedTokens"`
	// CostUSD is the sum of the known costs, absent when no run's cost
	// is known; CostUnknown counts the runs whose cost is unknown (their
	// usage unknown, or recorded without a cost); CostEstimated says a
	// harness estimated a part of it for a model it has no price for.
	CostUSD       *float64 `json:"costUsd,omitempty"`
	CostUnknown   int      `json:"costUnknown"`
	CostEstimated bool     `json:"costEstimated,omitempty"`
}

func runUsage(ctx context.Context, ios *iostreams, opts usageOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	recs, warns, err := history.ReadAll(home)
	if err != nil {
		return fmt.Errorf("cannot read the history: %w", err)
	}
	printHistoryWarnings(ios.Err, warns)
	var since time.Time
	if opts.Since > 0 {
		since = opts.Now.Add(-opts.Since)
		recs = slices.DeleteFunc(recs, func(r history.Record) bool { return r.Time.Before(since) })
	}
	runs := make([]usageRun, len(recs))
	for i, r := range recs {
		runs[i] = usageRun{rec: r}
		if r.Usage != nil {
			runs[i].usage, runs[i].from = r.Usage, fromHistory
			if r.UsageFrom == history.UsageFromSessionRecords {
				// An interactive run's, read from the harness's records
				// when it ended.
				runs[i].from, runs[i].estimated = fromSessions, r.CostEstimated
			}
		}
	}
	found := readHarnessRecords(ios.Err, runs, opts.Env)
	matchHarnessRecords(runs, found)
	rep := usageReport{By: opts.By, Groups: groupUsage(runs, opts.By)}
	if !since.IsZero() {
		s := since.UTC()
		rep.Since = &s
	}
	for _, r := range runs {
		rep.Total.add(r)
	}
	if opts.JSON {
		return writeJSON(ios.Out, rep)
	}
	printUsage(ios.Out, rep)
	return nil
}

// usageWarnings bounds the warnings printed about a damaged history.
const usageWarnings = 3

func printHistoryWarnings(w io.Writer, warns []history.Warning) {
	for i, h := range warns {
		if i == usageWarnings {
			warnf(w, "%d more lines of the history skipped", len(warns)-i)
			break
		}
		warnf(w, "%v", h)
	}
}

// readHarnessRecords reads the harnesses' records of the conversations
// of the runs whose usage the history does not carry: in the state
// directory of each such run's session while it is kept, and in the
// user's own stores for a run that kept no state of its own. Files
// older than the earliest such run are not read.
func readHarnessRecords(stderr io.Writer, runs []usageRun, env procEnv) []sessions.Record {
	var stores []sessions.Store
	var earliest time.Time
	user := false
	seen := map[string]bool{}
	for _, r := range runs {
		if r.usage != nil {
			continue
		}
		if earliest.IsZero() || r.rec.Time.Before(earliest) {
			earliest = r.rec.Time
		}
		state := ""
		if r.rec.Sandbox != "" {
			state = session.StateDir(r.rec.Sandbox)
		}
		if fi, err := os.Stat(state); state == "" || err != nil || !fi.IsDir() {
			// No state of its own: the conversation is in the user's
			// stores (--install-in-repo, a shared state), or gone with
			// its session.
			user = true
			continue
		}
		if !seen[state] {
			seen[state] = true
			stores = append(stores, stateStores(state)...)
		}
	}
	if user {
		stores = append(stores, sessions.Stores(env.getenv)...)
	}
	if len(stores) == 0 {
		return nil
	}
	// A conversation's files were last written after its run started.
	res := sessions.Read(stores, sessions.Options{ModifiedSince: earliest.Add(-time.Minute)})
	for _, err := range res.Errors {
		warnf(stderr, "%s", quote.Text(err.Error()))
	}
	if res.Skipped > 0 {
		warnf(stderr, "%d damaged lines of the harnesses' session records skipped", res.Skipped)
	}
	return res.Records
}

// endedRunUsage reads the usage of the interactive run rec, which has
// just ended, from the harness's own records in its session's state
// directory: the conversation of its harness session id, else the one
// that ran in its sandbox during the run (matchHarnessRecords). nil when
// none is found, or the session has no state of its own (the records are
// then the user's, and stay: usage reads them).
func endedRunUsage(rec history.Record) *usageRun {
	state := session.StateDir(rec.Sandbox)
	if fi, err := os.Stat(state); err != nil || !fi.IsDir() {
		return nil
	}
	res := sessions.Read(stateStores(state), sessions.Options{ModifiedSince: rec.Time.Add(-time.Minute)})
	runs := []usageRun{{rec: rec}}
	matchHarnessRecords(runs, res.Records)
	if runs[0].usage == nil {
		return nil
	}
	return &runs[0]
}

// stateStores are the harness stores of a session's state directory, as
// the per-session state moves them (harness.State).
func stateStores(state string) []sessions.Store {
	moved := map[string]string{}
	for _, h := range persona.Harnesses {
		l, err := harness.State(h, nil)
		if err != nil {
			continue
		}
		for _, v := range l.Vars {
			moved[v.Name] = filepath.Join(state, v.Rel)
		}
	}
	return sessions.Stores(func(k string) string { return moved[k] })
}

// matchSlack is how far a conversation's start may lie outside its run's
// time and still be matched by its directory.
const matchSlack = time.Minute

// matchHarnessRecords gives each run without usage the harness record of
// its conversation: the one of its harness session id, or else the one
// that ran in its sandbox (or, without one, in its working directory)
// and started during the run. A record goes to one run at most.
func matchHarnessRecords(runs []usageRun, found []sessions.Record) {
	used := make([]bool, len(found))
	byID := map[[2]string]int{}
	for i, f := range found {
		byID[[2]string{f.Harness, f.SessionID}] = i
	}
	take := func(r *usageRun, i int) {
		used[i] = true
		f := found[i]
		in, out, cached := f.Tokens.Input, f.Tokens.Output, f.Tokens.CacheRead
		r.usage = &report.Usage{InputTokens: &in, OutputTokens: &out, CachedTokens: &cached, CostUSD: f.CostUSD}
		r.from, r.estimated, r.models = fromSessions, f.CostEstimated, f.Models
	}
	// By id first, so that a match by directory cannot take a record
	// another run names.
	for k := range runs {
		r := &runs[k]
		if r.usage != nil || r.rec.HarnessSessionID == "" {
			continue
		}
		if i, ok := byID[[2]string{r.rec.Harness, r.rec.HarnessSessionID}]; ok && !used[i] {
			take(r, i)
		}
	}
	for k := range runs {
		r := &runs[k]
		if r.usage != nil {
			continue
		}
		from := r.rec.Time.Add(-matchSlack)
		to := r.rec.Time.Add(time.Duration(r.rec.DurationMS)*time.Millisecond + matchSlack)
		best := -1
		for i, f := range found {
			if used[i] || f.Harness != r.rec.Harness || f.Start.Before(from) || f.Start.After(to) {
				continue
			}
			if r.rec.Sandbox != "" && !sessions.Within(f.Dir, r.rec.Sandbox) ||
				r.rec.Sandbox == "" && (r.rec.Workdir == "" || f.Dir != filepath.Clean(r.rec.Workdir)) {
				continue
			}
			if best < 0 || f.Start.Before(found[best].Start) {
				best = i
			}
		}
		if best >= 0 {
			take(r, best)
		}
	}
}

// add counts run r in g.
func (g *usageSums) add(r usageRun) {
	g.Runs++
	u := r.usage
	if u == nil {
		g.Unknown++
		g.CostUnknown++
		return
	}
	if r.from == fromHistory {
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
	g.CostEstimated = g.CostEstimated || r.estimated
}

// usageKey is the key of run r by by.
func usageKey(r usageRun, by string) string {
	switch by {
	case "harness":
		return r.rec.Harness
	case "model":
		if r.rec.Model != "" {
			return r.rec.Model
		}
		if len(r.models) > 0 {
			return r.models[0]
		}
		return ""
	case "project":
		return r.rec.Root
	}
	return r.rec.Persona
}

// groupUsage groups runs by by: the costliest first (known cost, then
// tokens), then by key.
func groupUsage(runs []usageRun, by string) []usageGroup {
	at := map[string]int{}
	groups := []usageGroup{}
	for _, r := range runs {
		k := usageKey(r, by)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, usageGroup{Key: k})
		}
		groups[i].add(r)
	}
	cost := func(g usageGroup) float64 {
		if g.CostUSD == nil {
			return 0
		}
		return *g.CostUSD
	}
	slices.SortFunc(groups, func(a, b usageGroup) int {
		return cmp.Or(cmp.Compare(cost(b), cost(a)),
			cmp.Compare(b.InputTokens+b.OutputTokens, a.InputTokens+a.OutputTokens),
			strings.Compare(a.Key, b.Key))
	})
	return groups
}

// printUsage prints rep as a table.
func printUsage(w io.Writer, rep usageReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tRUNS\tINPUT\tOUTPUT\tCACHED\tCOST\tUNKNOWN\n", strings.ToUpper(rep.By))
	row := func(key string, g usageSums) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%d\n", key, g.Runs, g.InputTokens, g.OutputTokens, g.CachedTokens, costText(g), g.Unknown)
	}
	for _, g := range rep.Groups {
		key := "-"
		if g.Key != "" {
			key = quote.Name(g.Key)
		}
		row(key, g.usageSums)
	}
	if len(rep.Groups) > 1 {
		row("total", rep.Total)
	}
	tw.Flush()
}

// costText is a group's cost in the table: the known sum ("~" before it
// when a harness estimated a part), "+?" after it when some runs' cost is
// unknown, "unknown" when none is known.
func costText(g usageSums) string {
	if g.CostUSD == nil {
		if g.Runs == 0 {
			return "-"
		}
		return "unknown"
	}
	s := fmt.Sprintf("$%.4f", *g.CostUSD)
	if g.CostEstimated {
		s = "~" + s
	}
	if g.CostUnknown > 0 {
		s += "+?"
	}
	return s
}
