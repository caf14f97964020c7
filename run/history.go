package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/history/sessions"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// history says whether runs are recorded (WORKFORCE_HISTORY).
func (r *Run) history() bool { return history.Enabled(r.opts.Env.Getenv) }

// appendHistory appends rec to the history of home.
var appendHistory = history.Append

// usageReader reads an interactive run's usage from the harness's own
// records once it ended (usage nil when not found).
type usageReader struct {
	start time.Time
	usage *history.RunUsage
}

// reader returns the hook (session.RunOptions.Ended) that reads the usage
// of the interactive run of plan from the harness's own records in the
// session's state directory once the harness has exited, before the
// session, and they with it, is removed; nil without a history or a
// sandbox (the records of a run in the repository are the user's own,
// and stay).
func (u *usageReader) reader(plan *session.Plan) func(*session.Session) {
	if u == nil || plan.InRepo || plan.Sandbox == "" {
		return nil
	}
	return func(s *session.Session) {
		rec := history.Record{Time: u.start, Harness: plan.Harness, HarnessSessionID: s.Record.HarnessSessionID,
			Sandbox: plan.Sandbox, Workdir: plan.Workdir, DurationMS: time.Since(u.start).Milliseconds()}
		u.usage = EndedRunUsage(rec)
	}
}

// fill gives the interactive record rec the usage read, when any.
func (u *usageReader) fill(rec *history.Record) {
	if u == nil || u.usage == nil || rec.Mode != history.ModeInteractive {
		return
	}
	rec.Usage, rec.UsageFrom, rec.CostEstimated = u.usage.Usage, history.UsageFromSessionRecords, u.usage.Estimated
	if rec.Model == "" && len(u.usage.Models) > 0 {
		rec.Model = u.usage.Models[0]
	}
}

// EndedRunUsage reads the usage of the interactive run rec, which has
// just ended, from the harness's own records in its session's state
// directory: the conversation of its harness session id, else the one
// that ran in its sandbox during the run (history.MatchSessionRecords).
// nil when none is found, or the session has no state of its own (the
// records are then the user's, and stay: usage reads them).
func EndedRunUsage(rec history.Record) *history.RunUsage {
	state := session.StateDir(rec.Sandbox)
	if fi, err := os.Stat(state); err != nil || !fi.IsDir() {
		return nil
	}
	return history.EndedRunUsage(rec, StateStores(state))
}

// StateStores are the harness stores of a session's state directory, as
// the per-session state moves them (harness.State).
func StateStores(state string) []sessions.Store {
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

// historyRecord is the record of the run of plan (persona p, nil when
// unknown, whose PersonaHash is hash) that ended as out, started at
// start and took took, with the exit status the caller decided and
// failed, an error besides its outcome.
func historyRecord(p *persona.Persona, plan *session.Plan, hash string, out *Outcome, status int, failed error, start time.Time, took time.Duration) history.Record {
	if p == nil {
		p = &persona.Persona{}
	}
	res := out.Session
	r := history.Record{
		Time: start.UTC(), Persona: plan.Persona, PersonaHash: hash, Source: p.Layer,
		Tier: plan.Tier, Harness: plan.Harness, HarnessVersion: plan.HarnessVersion, Mode: history.ModeInteractive,
		Root: plan.Root, Cwd: plan.Cwd, SessionID: filepath.Base(plan.Sandbox), Workdir: plan.Workdir,
		ExitStatus: status, DurationMS: took.Milliseconds(),
	}
	if plan.Resolved != nil {
		r.Model = plan.Resolved.Model
	}
	if !plan.InRepo {
		r.Sandbox = plan.Sandbox
	}
	if s := res.Session; s != nil {
		r.SessionID, r.HarnessSessionID = s.Record.ID, s.Record.HarnessSessionID
	}
	if !plan.InRepo && plan.Sandbox != "" {
		// Whether the session's directory outlived the run, as it is
		// now: a resumed session stays, a one-shot run's goes unless kept.
		_, err := os.Stat(plan.Sandbox)
		kept := err == nil
		r.SessionKept = &kept
	}
	if res.OneShot == nil {
		r.Status = string(interactiveStatus(res, failed))
		return r
	}
	r.Mode = history.ModeOneShot
	if kept := out.Result; kept != nil && out.Kept {
		// The result as it was kept: the harness's session id, the model
		// it reported, the usage.
		r.Status, r.Usage, r.DurationMS = string(kept.Status), kept.Usage, kept.DurationMS
		r.DeniedHosts = kept.Network.DeniedHosts()
		if kept.Model != "" {
			r.Model = kept.Model
		}
		if kept.HarnessSessionID != "" {
			r.HarnessSessionID = kept.HarnessSessionID
		}
		if kept.HarnessVersion != "" {
			r.HarnessVersion = kept.HarnessVersion
		}
		return r
	}
	r.Status = string(interactiveStatus(res, failed))
	return r
}

// interactiveStatus is the status of a run without a result of its own
// (an interactive run), in the terms of a one-shot result's, decided as
// OneShotResult decides them: how res ended, failed an error the run
// ended with besides (nil for none).
func interactiveStatus(res *session.Result, failed error) report.Status {
	rep := res.Report
	o := report.Outcome{
		ExitCode: res.Harness.Code, Signal: int(res.Harness.Signal), Started: !res.Stopped, Parsed: true,
		Interrupted: res.Stopped || res.Signal != nil || (rep != nil && rep.Interrupted),
		TimedOut:    res.TimedOut,
		Conflicts:   (rep != nil && len(rep.Conflicts) > 0) || (res.Live != nil && len(res.Live.Conflicts) > 0),
		WorkFailed:  (rep != nil && len(rep.Failed) > 0) || failed != nil,
	}
	return report.DecideStatus(o)
}

// PersonaHash is the hex SHA-256 of the resolved persona r, its version:
// r as JSON, without where each field came from, a sidecar file's
// content in place of its path. The same persona gives the same hash
// wherever its files are; any change to what the run gets changes it.
func PersonaHash(r *persona.Resolved) string {
	if r == nil {
		return ""
	}
	c := *r
	c.Origins = nil
	for _, sc := range []*persona.Sidecar{&c.Claude, &c.Agents} {
		sc.Origin = persona.Origin{}
		if sc.Path == "" {
			continue
		}
		if b, err := os.ReadFile(sc.Path); err == nil {
			sc.Content, sc.Path = string(b), ""
		}
	}
	// A network grant's origin names the file it came from: the same
	// persona installed elsewhere (a queue worker's home) grants the same.
	if len(c.Network) > 0 {
		c.Network = slices.Clone(c.Network)
		for i := range c.Network {
			c.Network[i].Origin = persona.Origin{}
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
