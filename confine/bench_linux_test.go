package confine

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkStart measures what confining costs a start: /bin/true
// started plainly, through the launcher (this test binary re-executed,
// Landlock applied, then /bin/true executed), with and without a read
// policy denying the user's credentials (the walk of the home at every
// start), and through the launcher in namespaces (Policy.Net).
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
			if _, err := Start(cmd, p); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	// In namespaces: the user, network, PID and mount namespaces, the
	// mounts (/proc, /dev, a private /tmp), loopback up, a listener
	// handed over, and the launcher waiting for the program as process 1.
	b.Run("namespaces", func(b *testing.B) {
		needLandlock(b)
		if err := NamespacesAvailable(""); err != nil {
			b.Skip(err)
		}
		tmp := b.TempDir()
		p := Policy{Dirs: []string{dir, tmp}, Devices: TerminalDevices, Net: &Namespaces{ProxyPort: 3128, Tmp: tmp}}
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			l, err := Start(cmd, p)
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			if e, err := l.Ending(); err != nil || e.Code != 0 {
				b.Fatal(e, err)
			}
			l.Close()
		}
	})
}
