package history

import (
	"fmt"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// Query says which runs List returns.
type Query struct {
	// Limit bounds the runs returned, the newest kept; 0 returns all.
	Limit int
	// Persona, when set, keeps the runs of that persona id.
	Persona string
	// Since, when set, keeps the runs started at or after it.
	Since time.Time
	// Resumable reports whether the session of the id is still kept
	// and can be resumed; nil says no session can. History knows nothing
	// of sessions: the caller asks the sessions' directory.
	Resumable func(sessionID string) bool
}

// List returns the runs of recs (oldest first, as ReadAll returns them)
// that q keeps, newest first: the last recorded first.
func List(recs []Record, q Query) []report.HistoryRun {
	runs := []report.HistoryRun{}
	for i := len(recs) - 1; i >= 0; i-- {
		if q.Limit > 0 && len(runs) == q.Limit {
			break
		}
		r := recs[i]
		if (q.Persona != "" && r.Persona != q.Persona) || (!q.Since.IsZero() && r.Time.Before(q.Since)) {
			continue
		}
		run := report.HistoryRun{Persona: r.Persona, Tier: r.Tier, Harness: r.Harness, Model: r.Model, Project: r.Root,
			Status: r.Status, DurationMS: r.DurationMS, SessionID: r.SessionID}
		if r.Usage != nil {
			run.CostUSD = r.Usage.CostUSD
		}
		if q.Resumable != nil && r.SessionID != "" && r.SessionID != "." {
			run.Resumable = q.Resumable(r.SessionID)
		}
		runs = append(runs, run)
	}
	return runs
}

// Last returns the newest record of the session id in recs, else, as
// sessions resume takes the start of an id (the persona's name), the
// newest whose session id starts with id; and whether there is one.
func Last(recs []Record, id string) (Record, bool) {
	if id == "" {
		return Record{}, false
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].SessionID == id {
			return recs[i], true
		}
	}
	for i := len(recs) - 1; i >= 0; i-- {
		if strings.HasPrefix(recs[i].SessionID, id) {
			return recs[i], true
		}
	}
	return Record{}, false
}

// WhyGone says, from the history's record r of the last run of a session
// that is no longer in the sessions' directory, why it is gone: a
// one-shot run removes its session when it ends unless it is kept
// (--keep, --review, conflicts), an interactive run once its work is
// synced back, and a kept session ends with sessions rm, sync, apply or
// discard.
func WhyGone(r Record) string {
	when := fmt.Sprintf("its last run (%s, %s, %s) ended %s", r.Persona, r.Mode, orUnknown(r.Status), r.Time.Add(time.Duration(r.DurationMS)*time.Millisecond).UTC().Format(time.RFC3339))
	switch {
	case r.SessionKept != nil && *r.SessionKept:
		return when + " with the session kept; it was removed since (workforce sessions rm, discard, or a sync or apply that brought all its work back)"
	case r.SessionKept == nil:
		return when + "; the history does not say whether the session was kept (a one-shot run removes its session unless --keep)"
	case r.Mode == ModeOneShot:
		return when + " without --keep, which removed the session: a one-shot run keeps its session only with --keep (or --review, or when its sync-back leaves conflicts)"
	}
	return when + " and its work was synced back, which removed the session: run --keep keeps it"
}

func orUnknown(s string) string {
	if s == "" {
		return "status unknown"
	}
	return s
}
