package run

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

func TestInteractiveStatus(t *testing.T) {
	tests := []struct {
		name string
		res  session.Result
		// err is an error the run ended with besides its outcome.
		err  error
		want report.Status
	}{
		{name: "success", res: session.Result{Report: &mount.Report{}}, err: nil, want: report.StatusSucceeded},
		{name: "harness failed", res: session.Result{Harness: harness.Exit{Code: 3}}, err: nil, want: report.StatusFailed},
		{name: "harness killed", res: session.Result{Harness: harness.Exit{Signal: syscall.SIGKILL}}, err: nil, want: report.StatusFailed},
		{name: "stopped before the start", res: session.Result{Stopped: true, Signal: syscall.SIGINT}, err: nil, want: report.StatusInterrupted},
		{name: "sync-back interrupted", res: session.Result{Signal: syscall.SIGTERM, Report: &mount.Report{Interrupted: true}}, err: nil, want: report.StatusInterrupted},
		{name: "timed out", res: session.Result{TimedOut: true, Harness: harness.Exit{Signal: syscall.SIGTERM}}, err: nil, want: report.StatusTimedOut},
		{name: "conflicts", res: session.Result{Report: &mount.Report{Conflicts: []mount.Conflict{{Path: "a"}}}}, err: nil, want: report.StatusConflict},
		{name: "live conflicts", res: session.Result{Live: &mount.LiveReport{Conflicts: []mount.Conflict{{Path: "a"}}}}, err: nil, want: report.StatusConflict},
		{name: "files not written back", res: session.Result{Report: &mount.Report{Failed: []mount.Failure{{Path: "a"}}}}, err: nil, want: report.StatusFailed},
		{name: "an error after the harness", res: session.Result{}, err: errors.New("sync-back failed"), want: report.StatusFailed},
	}
	for _, tt := range tests {
		if got := interactiveStatus(&tt.res, tt.err); got != tt.want {
			t.Errorf("%s: interactiveStatus() = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestPersonaHash(t *testing.T) {
	dir := t.TempDir()
	side := filepath.Join(dir, "p.md")
	if err := os.WriteFile(side, []byte("Persona text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := func() *persona.Resolved {
		return &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m",
			Claude:  persona.Sidecar{Channel: persona.ChannelClaude, Path: side},
			Env:     map[string]string{"B": "2", "A": "1"},
			Origins: map[string]persona.Origin{"model": {Layer: "user", File: filepath.Join(dir, "p.json")}},
			Network: []persona.ScopedNetwork{{Field: "network", Origin: persona.Origin{Layer: "user", File: filepath.Join(dir, "p.json")}}}}
	}
	h := PersonaHash(base())
	if len(h) != 64 || h != PersonaHash(base()) {
		t.Fatalf("PersonaHash() = %q, then %q: want the same 64 hex digits", h, PersonaHash(base()))
	}
	inline := base()
	inline.Claude.Path, inline.Claude.Content = "", "Persona text.\n"
	moved := base()
	moved.Origins = map[string]persona.Origin{"model": {Layer: "project", File: "/elsewhere/p.json"}}
	moved.Claude.Origin = persona.Origin{Layer: "project", File: "/elsewhere/p.json"}
	moved.Network[0].Origin = persona.Origin{Layer: "project", File: "/elsewhere/p.json"}
	for name, r := range map[string]*persona.Resolved{"the sidecar inline": inline, "from another file": moved} {
		if got := PersonaHash(r); got != h {
			t.Errorf("%s: hash %s, want %s: the same persona", name, got, h)
		}
	}
	other := base()
	other.Model = "m2"
	if PersonaHash(other) == h {
		t.Error("another model: the same hash")
	}
	if err := os.WriteFile(side, []byte("Edited.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if PersonaHash(base()) == h {
		t.Error("an edited sidecar: the same hash")
	}
}

// TestHistoryRecordDeniedHosts: a one-shot run's record names the
// destinations its result's network denied; none, nothing.
func TestHistoryRecordDeniedHosts(t *testing.T) {
	plan := &session.Plan{Persona: "p", Tier: "best", Harness: "claude", Sandbox: "/h/sessions/p-1"}
	for _, tt := range []struct {
		network *report.Network
		want    []string
	}{
		{&report.Network{Mode: "allowlist", Denied: []report.NetworkDenied{{Host: "evil.example", Port: 443, Count: 2}, {Host: "::1", Port: 22, Count: 1}}}, []string{"evil.example:443", "[::1]:22"}},
		{&report.Network{Mode: "allowlist"}, nil},
		{nil, nil},
	} {
		out := &Outcome{Session: &session.Result{OneShot: &session.OneShotResult{}}, Kept: true,
			Result: &report.Result{Status: report.StatusSucceeded, Network: tt.network}}
		r := historyRecord(nil, plan, PersonaHash(plan.Resolved), out, 0, nil, time.Now(), time.Second)
		if !slices.Equal(r.DeniedHosts, tt.want) {
			t.Errorf("historyRecord(network %+v).DeniedHosts = %q, want %q", tt.network, r.DeniedHosts, tt.want)
		}
	}
}
