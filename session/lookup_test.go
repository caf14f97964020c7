package session

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
)

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
