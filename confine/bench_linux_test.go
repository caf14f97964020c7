package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStart measures what confining costs a start: /bin/true
// started plainly, and through the launcher (this test binary
// re-executed, Landlock applied, then /bin/true executed), with and
// without a read policy denying the user's credentials (the walk of the
// home at every start).
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("confined", func(b *testing.B) {
		needLandlock(b)
		p := Policy{Dirs: []string{dir}, Devices: TerminalDevices}
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			if err := Start(cmd, p); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reads", func(b *testing.B) {
		needLandlock(b)
		home, err := os.UserHomeDir()
		if err != nil {
			b.Skip("no home directory")
		}
		p := Policy{Dirs: []string{dir}, Devices: TerminalDevices, Read: &ReadPolicy{Deny: []string{
			filepath.Join(home, ".ssh"), filepath.Join(home, ".aws"), filepath.Join(home, ".config", "gh"), filepath.Join(home, ".claude")}}}
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			if err := Start(cmd, p); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
