package main

import (
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/history/sessions"
)

func TestParseSince(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"90m", 90 * time.Minute, false},
		{"1h30m", 90 * time.Minute, false},
		{"7d", 7 * 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"0", 0, true},
		{"0d", 0, true},
		{"-1h", 0, true},
		{"-2d", 0, true},
		{"d", 0, true},
		{"NaNd", 0, true},
		{"1e9d", 0, true},
		{"7", 0, true},
		{"", 0, true},
	} {
		got, err := parseSince(c.in)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("parseSince(%q) = %v, %v; want %v, error %v", c.in, got, err, c.want, c.bad)
		}
	}
}

// TestMatchHarnessRecords: a run without usage gets the record of its
// harness session id, else the one that ran in its sandbox (or its
// working directory, without one) and started during the run, give or
// take matchSlack; each record goes to one run.
func TestMatchHarnessRecords(t *testing.T) {
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
	runs := []usageRun{
		{rec: history.Record{Harness: "claude", HarnessSessionID: "c1", Sandbox: "/s/z", Time: t0}},
		{rec: history.Record{Harness: "codex", Sandbox: "/s/a", Time: t0, DurationMS: 60_000}},
		{rec: history.Record{Harness: "codex", Sandbox: "/s/b", Time: t0, DurationMS: 60_000}},
		{rec: history.Record{Harness: "opencode", Workdir: "/repo", Time: t0, DurationMS: 3_600_000}},
		{rec: history.Record{Harness: "codex", Sandbox: "/s/c", Time: t0, DurationMS: 60_000}},
		{rec: history.Record{Harness: "claude", Sandbox: "/s/d", Time: t0, DurationMS: 60_000}},
		{rec: history.Record{Harness: "claude", HarnessSessionID: "c2", Sandbox: "/s/e", Time: t0}},
		{rec: history.Record{Harness: "codex", Sandbox: "/s/a", Time: t0, DurationMS: 60_000}},
		{rec: history.Record{Harness: "claude", HarnessSessionID: "missing", Sandbox: "/s/y", Time: t0}},
	}
	matchHarnessRecords(runs, found)
	want := []int64{1, 2, 0, 5, 0, 0, 8, 16, 0} // input tokens of the record matched; 0: none
	for i, r := range runs {
		var got int64
		if r.usage != nil {
			got = *r.usage.InputTokens
			if r.from != fromSessions || r.usage.CostUSD != nil || len(r.models) != 1 {
				t.Errorf("run %d: from %q, cost %v, models %q; want the session records', unknown, one", i, r.from, r.usage.CostUSD, r.models)
			}
		}
		if got != want[i] {
			t.Errorf("run %d (%+v) got the record of %d input tokens, want %d", i, r.rec, got, want[i])
		}
	}
}
