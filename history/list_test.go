package history

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// TestList: the runs newest first, filtered by persona and time, bounded
// by the limit after filtering, the cost when known and resumable as the
// caller says, never asked for a run without a session.
func TestList(t *testing.T) {
	t0 := time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC)
	cost := 0.5
	recs := []Record{
		{Persona: "a", Time: t0, SessionID: "a-1", Status: "succeeded", Usage: &report.Usage{CostUSD: &cost}},
		{Persona: "b", Time: t0.Add(time.Hour), SessionID: "b-1", Status: "failed"},
		{Persona: "a", Time: t0.Add(2 * time.Hour), SessionID: "a-2", Status: "succeeded", Root: "/p", DurationMS: 1500},
		{Persona: "a", Time: t0.Add(3 * time.Hour), Status: "succeeded"},
	}
	kept := func(id string) bool {
		if id == "" {
			t.Error("asked whether a run without a session can be resumed")
		}
		return id == "a-2"
	}
	ids := func(runs []report.HistoryRun) string {
		var s []string
		for _, r := range runs {
			s = append(s, r.Persona+":"+r.SessionID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"all, newest first", Query{}, "a:,a:a-2,b:b-1,a:a-1"},
		{"limit", Query{Limit: 2}, "a:,a:a-2"},
		{"persona", Query{Persona: "b"}, "b:b-1"},
		{"persona and limit", Query{Persona: "a", Limit: 3}, "a:,a:a-2,a:a-1"},
		{"since", Query{Since: t0.Add(90 * time.Minute)}, "a:,a:a-2"},
		{"none", Query{Persona: "c"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Resumable = kept
			if got := ids(List(recs, tc.q)); got != tc.want {
				t.Errorf("List = %s, want %s", got, tc.want)
			}
		})
	}
	runs := List(recs, Query{Resumable: kept})
	if runs == nil || List(nil, Query{}) == nil {
		t.Error("List returned nil, want an empty list")
	}
	if r := runs[1]; !r.Resumable || r.Project != "/p" || r.DurationMS != 1500 || r.CostUSD != nil {
		t.Errorf("a-2 listed as %+v", r)
	}
	if r := runs[3]; r.Resumable || r.CostUSD == nil || *r.CostUSD != 0.5 {
		t.Errorf("a-1 listed as %+v", r)
	}
	if got := List(recs, Query{}); slices.ContainsFunc(got, func(r report.HistoryRun) bool { return r.Resumable }) {
		t.Error("a run is resumable without a Resumable to ask")
	}
}

// TestWhyGone: the reason follows what the record says of the session.
func TestWhyGone(t *testing.T) {
	yes, no := true, false
	base := Record{Persona: "p", Time: time.Date(2026, 5, 2, 9, 0, 0, 0, time.UTC), DurationMS: 60000, Status: "succeeded"}
	for _, tc := range []struct {
		name string
		mode string
		kept *bool
		want string
	}{
		{"one-shot not kept", ModeOneShot, &no, "(p, oneshot, succeeded) ended 2026-05-02T09:01:00Z without --keep, which removed the session"},
		{"kept then removed", ModeOneShot, &yes, "with the session kept; it was removed since"},
		{"interactive", ModeInteractive, &no, "its work was synced back, which removed the session"},
		{"older record", ModeOneShot, nil, "the history does not say whether the session was kept"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := base
			r.Mode, r.SessionKept = tc.mode, tc.kept
			if got := WhyGone(r); !strings.Contains(got, tc.want) {
				t.Errorf("WhyGone = %q, want it to say %q", got, tc.want)
			}
		})
	}
	if r, ok := Last([]Record{{SessionID: "x", Status: "failed"}, {SessionID: "y"}, {SessionID: "x", Status: "succeeded"}}, "x"); !ok || r.Status != "succeeded" {
		t.Errorf("Last = %+v, %v; want the newest record of x", r, ok)
	}
	recs := []Record{{SessionID: "ed-1", Status: "failed"}, {SessionID: "editor-1"}, {SessionID: "editor-2", Status: "succeeded"}, {SessionID: "ed"}}
	for id, want := range map[string]string{"editor": "editor-2", "ed": "ed", "editor-1": "editor-1", "ed-": "ed-1"} {
		if r, ok := Last(recs, id); !ok || r.SessionID != want {
			t.Errorf("Last(%q) = %q, %v; want %q", id, r.SessionID, ok, want)
		}
	}
	if _, ok := Last(recs, ""); ok {
		t.Error("Last found a record of no id")
	}
	if _, ok := Last(nil, "x"); ok {
		t.Error("Last found a record in no history")
	}
}
