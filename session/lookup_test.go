package session

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
)

// TestFindEarly: a one-shot run whose harness's output named no usable
// conversation looks it up once the harness exited (before its leftovers
// are ended), and findHarnessSession then gets that answer without
// starting anything; a run whose conversation is known, or an
// interactive run, does not look early.
func TestFindEarly(t *testing.T) {
	errNone := errors.New("no conversation")
	for _, tc := range []struct {
		name     string
		oneShot  bool
		recorded string // the record's id before the run
		output   string // the id the harness's output names
		wantFind bool
	}{
		{name: "output names none", oneShot: true, wantFind: true},
		{name: "output names one", oneShot: true, output: "ses_1"},
		{name: "output names a flag", oneShot: true, output: "-x", wantFind: true},
		{name: "recorded", oneShot: true, recorded: "ses_0"},
		{name: "interactive", oneShot: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			o := Options{
				Invocation:     &harness.Invocation{OneShot: tc.oneShot},
				HarnessSession: func() string { return tc.output },
				FindHarnessSession: func(time.Time) (string, error) {
					calls++
					return "ses_found", errNone
				},
			}
			s := &Session{Record: Record{HarnessSessionID: tc.recorded}}
			early := s.findEarly(&o)
			if !tc.oneShot {
				if early != nil {
					t.Fatal("an interactive run looks early")
				}
				return
			}
			early()
			if got := calls == 1; got != tc.wantFind {
				t.Fatalf("looked up %d times, want a lookup: %v", calls, tc.wantFind)
			}
			// findHarnessSession's later call starts nothing.
			id, err := o.FindHarnessSession(time.Time{})
			if calls > 1 {
				t.Fatalf("the later call looked up again (%d lookups)", calls)
			}
			if tc.wantFind && (id != "ses_found" || !errors.Is(err, errNone)) {
				t.Fatalf("the later call got %q, %v; want the early answer", id, err)
			}
			if !tc.wantFind && (id != "" || err != nil) {
				t.Fatalf("the later call got %q, %v; want nothing", id, err)
			}
		})
	}
}

// TestConfineLookup: the invocation of a resumed run's session lookup
// gets the policy the run's harness gets, the state's directories with
// it, when the run is confined, and none when it is not.
func TestConfineLookup(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state", "data")
	for _, tc := range []struct {
		name     string
		confined bool
		inRepo   bool
	}{
		{name: "confined", confined: true},
		{name: "not confined"},
		{name: "in the repository", confined: true, inRepo: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Plan{Sandbox: dir, InRepo: tc.inRepo, Confine: &Confinement{Confined: tc.confined}, state: &harnessState{Writable: []string{state}}}
			inv := &harness.Invocation{}
			if err := p.confineLookup(Sandbox{}, inv); err != nil {
				t.Fatal(err)
			}
			want := tc.confined && !tc.inRepo
			if got := inv.Confine != nil; got != want {
				t.Fatalf("confined: %v, want %v", got, want)
			}
			if !want {
				return
			}
			for _, d := range []string{filepath.Join(dir, mount.TreeDir), filepath.Join(dir, tmpDir), state} {
				if !slices.Contains(inv.Confine.Dirs, d) {
					t.Errorf("the lookup may not write %s: %v", d, inv.Confine.Dirs)
				}
			}
			if p.Confine.Policy.Dirs != nil {
				t.Errorf("the run's own policy changed: %v", p.Confine.Policy.Dirs)
			}
		})
	}
}
