package history

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/history/sessions"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestMatchSessionRecords: a run without usage gets the record of its
// harness session id, else the one that ran in its sandbox (or its
// working directory, without one) and started during the run, give or
// take MatchSlack; each record goes to one run.
func TestMatchSessionRecords(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	rec := func(h, id, dir string, start time.Duration, input int64) sessions.Record {
		return sessions.Record{Harness: h, SessionID: id, Dir: dir, Start: t0.Add(start), End: t0.Add(start + time.Minute),
			Tokens: sessions.Tokens{Input: input}, Models: []string{"m-" + id}}
	}
	found := []sessions.Record{
		rec("claude", "c1", "/other", 0, 1),                     // by id, wherever it ran
		rec("codex", "x1", "/s/a/tree", 30*time.Second, 2),      // in a's sandbox, during the run
		rec("codex", "x2", "/s/ab/tree", 30*time.Second, 3),     // a sibling whose name starts the same
		rec("codex", "x3", "/s/b/tree", -2*time.Minute, 4),      // in b's sandbox, before the run
		rec("opencode", "o1", "/repo", 10*time.Minute, 5),       // in the repository, during the long run
		rec("opencode", "o2", "/repo", 11*time.Minute, 6),       // later: the first one is taken
		rec("codex", "x4", "/s/c/tree", 3*time.Minute, 7),       // past c's end and the slack
		rec("claude", "c2", "/s/d/tree", 0, 8),                  // named by d: not given to e by its directory
		rec("codex", "x5", "/s/a/tree/sub", 40*time.Second, 16), // a's sandbox too: a second run there gets it
	}
	runs := []RunUsage{
		{Record: Record{Harness: "claude", HarnessSessionID: "c1", Sandbox: "/s/z", Time: t0}},
		{Record: Record{Harness: "codex", Sandbox: "/s/a", Time: t0, DurationMS: 60_000}},
		{Record: Record{Harness: "codex", Sandbox: "/s/b", Time: t0, DurationMS: 60_000}},
		{Record: Record{Harness: "opencode", Workdir: "/repo", Time: t0, DurationMS: 3_600_000}},
		{Record: Record{Harness: "codex", Sandbox: "/s/c", Time: t0, DurationMS: 60_000}},
		{Record: Record{Harness: "claude", Sandbox: "/s/d", Time: t0, DurationMS: 60_000}},
		{Record: Record{Harness: "claude", HarnessSessionID: "c2", Sandbox: "/s/e", Time: t0}},
		{Record: Record{Harness: "codex", Sandbox: "/s/a", Time: t0, DurationMS: 60_000}},
		{Record: Record{Harness: "claude", HarnessSessionID: "missing", Sandbox: "/s/y", Time: t0}},
	}
	MatchSessionRecords(runs, found)
	want := []int64{1, 2, 0, 5, 0, 0, 8, 16, 0} // input tokens of the record matched; 0: none
	for i, r := range runs {
		var got int64
		if r.Usage != nil {
			got = *r.Usage.InputTokens
			if r.From != FromSessionRecords || r.Usage.CostUSD != nil || len(r.Models) != 1 {
				t.Errorf("run %d: from %q, cost %v, models %q; want the session records', unknown, one", i, r.From, r.Usage.CostUSD, r.Models)
			}
		}
		if got != want[i] {
			t.Errorf("run %d (%+v) got the record of %d input tokens, want %d", i, r.Record, got, want[i])
		}
	}
}

// TestUsageTotals: runs summed by key, the costliest group first (known
// cost, then tokens, then key); an unknown usage or cost is counted as
// unknown, never 0; an estimated cost marks its group and the total.
func TestUsageTotals(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	n := func(v int64) *int64 { return &v }
	usd := func(v float64) *float64 { return &v }
	run := func(persona, h, model string, from string, u *report.Usage) RunUsage {
		return RunUsage{Record: Record{Persona: persona, Harness: h, Model: model, Root: "/p/" + persona}, Usage: u, From: from}
	}
	runs := []RunUsage{
		run("rev", "claude", "opus", FromRecord, &report.Usage{InputTokens: n(100), OutputTokens: n(10), CachedTokens: n(50), CostUSD: usd(0.5)}),
		run("rev", "codex", "", FromSessionRecords, &report.Usage{InputTokens: n(1000), OutputTokens: n(100), CachedTokens: n(0)}),
		run("ed", "claude", "opus", FromSessionRecords, &report.Usage{InputTokens: n(10), OutputTokens: n(1), CostUSD: usd(2)}),
		run("ed", "gemini", "", "", nil),
		run("zz", "codex", "", FromRecord, &report.Usage{InputTokens: n(5000), OutputTokens: n(1)}),
	}
	runs[2].Estimated = true
	runs[1].Models = []string{"gpt-5", "gpt-5-mini"}
	type group struct {
		key               string
		runs, unknown     int
		in                int64
		cost              float64 // -1: none known
		costUnknown       int
		estimated         bool
		fromRec, fromSess int
	}
	tests := []struct {
		by   string
		want []group
	}{
		{"persona", []group{
			{"ed", 2, 1, 10, 2, 1, true, 0, 1},
			{"rev", 2, 0, 1100, 0.5, 1, false, 1, 1},
			{"zz", 1, 0, 5000, -1, 1, false, 1, 0},
		}},
		{"harness", []group{
			{"claude", 2, 0, 110, 2.5, 0, true, 1, 1},
			{"codex", 2, 0, 6000, -1, 2, false, 1, 1},
			{"gemini", 1, 1, 0, -1, 1, false, 0, 0},
		}},
		{"model", []group{
			{"opus", 2, 0, 110, 2.5, 0, true, 1, 1},
			{"", 2, 1, 5000, -1, 2, false, 1, 0},
			{"gpt-5", 1, 0, 1000, -1, 1, false, 0, 1},
		}},
		{"project", []group{
			{"/p/ed", 2, 1, 10, 2, 1, true, 0, 1},
			{"/p/rev", 2, 0, 1100, 0.5, 1, false, 1, 1},
			{"/p/zz", 1, 0, 5000, -1, 1, false, 1, 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.by, func(t *testing.T) {
			rep := UsageTotals(runs, tt.by, t0)
			if rep.By != tt.by || rep.Since == nil || !rep.Since.Equal(t0) {
				t.Errorf("by %q since %v, want %q %v", rep.By, rep.Since, tt.by, t0)
			}
			var got []group
			for _, g := range rep.Groups {
				cost := -1.0
				if g.CostUSD != nil {
					cost = *g.CostUSD
				}
				got = append(got, group{g.Key, g.Runs, g.Unknown, g.InputTokens, cost, g.CostUnknown, g.CostEstimated, g.FromHistory, g.FromSessionRecords})
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("groups\n%v\nwant\n%v", got, tt.want)
			}
			tot := rep.Total
			if tot.Runs != 5 || tot.Unknown != 1 || tot.InputTokens != 6110 || tot.OutputTokens != 112 || tot.CachedTokens != 50 ||
				tot.CostUSD == nil || *tot.CostUSD != 2.5 || tot.CostUnknown != 3 || !tot.CostEstimated || tot.FromHistory != 2 || tot.FromSessionRecords != 2 {
				t.Errorf("total %+v (cost %v)", tot, tot.CostUSD)
			}
		})
	}
	if rep := UsageTotals(nil, "persona", time.Time{}); rep.Since != nil || rep.Groups == nil || len(rep.Groups) != 0 || rep.Total.Runs != 0 || rep.Total.CostUSD != nil {
		t.Errorf("no runs: %+v", rep)
	}
}

// TestRunsUsage: a record's usage is the run's, from the history, or
// from the harness's records when the record says it was read there.
func TestRunsUsage(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	u := &report.Usage{}
	recs := []Record{
		{Time: t0, Usage: u},
		{Time: t0.Add(time.Hour), Usage: u, UsageFrom: UsageFromSessionRecords, CostEstimated: true},
		{Time: t0.Add(2 * time.Hour), CostEstimated: true},
	}
	tests := []struct {
		since     time.Time
		from      []string
		estimated []bool
	}{
		{time.Time{}, []string{FromRecord, FromSessionRecords, ""}, []bool{false, true, false}},
		{t0.Add(time.Minute), []string{FromSessionRecords, ""}, []bool{true, false}},
		{t0.Add(3 * time.Hour), nil, nil},
	}
	for _, tt := range tests {
		runs := RunsUsage(Since(slices.Clone(recs), tt.since))
		var from []string
		var est []bool
		for _, r := range runs {
			from, est = append(from, r.From), append(est, r.Estimated)
			if (r.Usage != nil) != (r.From != "") {
				t.Errorf("since %v: usage %v from %q", tt.since, r.Usage, r.From)
			}
		}
		if !slices.Equal(from, tt.from) || !slices.Equal(est, tt.estimated) {
			t.Errorf("since %v: from %q estimated %v, want %q %v", tt.since, from, est, tt.from, tt.estimated)
		}
	}
}

// TestReadSessionRecords: the harnesses' records are read for the runs
// of unknown usage only: in the state of each sandbox once, and in the
// user's stores when one of them has no state of its own; nothing when
// every usage is known.
func TestReadSessionRecords(t *testing.T) {
	known := &report.Usage{}
	tests := []struct {
		name      string
		runs      []RunUsage
		wantState []string
		wantUser  bool
	}{
		{"every usage known", []RunUsage{{Record: Record{Sandbox: "/s/a"}, Usage: known}}, nil, false},
		{"a sandbox's state, once", []RunUsage{{Record: Record{Sandbox: "/s/a"}}, {Record: Record{Sandbox: "/s/a"}},
			{Record: Record{Sandbox: "/s/b"}, Usage: known}}, []string{"/s/a"}, false},
		{"a sandbox without state", []RunUsage{{Record: Record{Sandbox: "/s/gone"}}, {Record: Record{Sandbox: "/s/a"}}},
			[]string{"/s/gone", "/s/a"}, true},
		{"no sandbox", []RunUsage{{Record: Record{Workdir: "/repo"}}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var state []string
			user := false
			dir := t.TempDir()
			res := ReadSessionRecords(tt.runs, SessionStores{
				State: func(sandbox string) ([]sessions.Store, bool) {
					state = append(state, sandbox)
					return []sessions.Store{{Harness: sessions.Codex, Dir: dir}}, sandbox != "/s/gone"
				},
				User: func() []sessions.Store { user = true; return nil },
			})
			if !slices.Equal(state, tt.wantState) || user != tt.wantUser {
				t.Errorf("read the state of %q, the user's stores %v; want %q, %v", state, user, tt.wantState, tt.wantUser)
			}
			if len(res.Records) != 0 || len(res.Errors) != 0 {
				t.Errorf("records %v, errors %v from empty stores", res.Records, res.Errors)
			}
		})
	}
}

// TestEndedRunUsage: the usage of a run that just ended is its
// conversation's in the stores, found by its harness session id or where
// and when it ran; nil when none is, or the files are older than the run.
func TestEndedRunUsage(t *testing.T) {
	// A copy of the codex fixture of history/sessions.
	store := []sessions.Store{{Harness: sessions.Codex, Dir: t.TempDir()}}
	if err := os.CopyFS(store[0].Dir, os.DirFS(filepath.Join("sessions", "testdata", "codex"))); err != nil {
		t.Fatal(err)
	}
	const id = "01a2108f-3e18-7ff3-8136-2feb8411c336"
	// The conversation of the fixture started then, in this sandbox.
	started := time.Date(2026, 11, 25, 2, 35, 52, 0, time.UTC)
	sandbox := "/tmp/TestUsagecodex1552238022/002/.agentworkforce/workforce/sessions/editor-20261125-023552-6464f49c"
	// The copy's files were written now, long after the run began: make
	// them as old as the run.
	if err := filepath.WalkDir(store[0].Dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			err = os.Chtimes(path, started.Add(time.Minute), started.Add(time.Minute))
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		rec   Record
		input int64 // 0: none found
	}{
		{"by id", Record{Harness: "codex", HarnessSessionID: id, Sandbox: "/elsewhere", Time: started.Add(-time.Second)}, 7025},
		{"by its sandbox and time", Record{Harness: "codex", Sandbox: sandbox, Time: started.Add(-time.Second), DurationMS: 60_000}, 7025},
		{"another sandbox", Record{Harness: "codex", Sandbox: "/s/other", Time: started.Add(-time.Second), DurationMS: 60_000}, 0},
		{"another harness", Record{Harness: "claude", HarnessSessionID: id, Time: started.Add(-time.Second)}, 0},
		{"files older than the run", Record{Harness: "codex", HarnessSessionID: id, Time: started.Add(time.Hour)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EndedRunUsage(tt.rec, store)
			switch {
			case tt.input == 0 && got != nil:
				t.Errorf("found %+v, want none", got.Usage)
			case tt.input != 0 && (got == nil || *got.Usage.InputTokens != tt.input || got.From != FromSessionRecords ||
				!slices.Equal(got.Models, []string{"gpt-5.5"})):
				t.Errorf("found %+v, want %d input tokens of gpt-5.5 from the session records", got, tt.input)
			}
		})
	}
}
