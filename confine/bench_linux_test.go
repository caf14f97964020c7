package confine

import (
	"os/exec"
	"testing"
)

// BenchmarkStart measures what confining costs a start: /bin/true
// started plainly, and through the launcher (this test binary
// re-executed, Landlock applied, then /bin/true executed).
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
			if _, err := Start(cmd, p); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
