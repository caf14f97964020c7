package confine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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

// BenchmarkOverlay measures what the overlay costs a start, on a tree of
// 20,000 files: /bin/true started in namespaces with the overlay's
// policy (the real project unreadable) but no overlay, and with the tree
// shown through an overlay (the layers staged, the overlay mounted, the rename filter
// installed); ms/start is the time Start takes to return, the command
// running; ns/op adds the end, where the kernel unmounts the overlay
// and syncs the upper layer's file system. The tree's size does not
// enter the overlay's mount. overlay-whiteouts hides 100 files.
func BenchmarkOverlay(b *testing.B) {
	needLandlock(b)
	if ok, reason := OverlayAvailable(""); !ok {
		b.Skip(reason)
	}
	files := map[string]string{}
	for i := range 20000 {
		files[fmt.Sprintf("d%03d/f%05d.go", i/100, i)] = "package x\n"
	}
	o, tmp := overlaySession(b, files)
	run := func(b *testing.B, dir string, p Policy) {
		var started time.Duration
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			cmd.Dir = dir
			t0 := time.Now()
			l, err := Start(cmd, p)
			started += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			l.Close()
		}
		b.ReportMetric(float64(started.Microseconds())/1000/float64(b.N), "ms/start")
	}
	b.Run("namespaces", func(b *testing.B) {
		// The overlay's policy without the overlay: the increment is the
		// overlay's.
		p := overlayPolicy(o, tmp)
		p.Net = &Namespaces{Tmp: tmp}
		run(b, o.Target, p)
	})
	b.Run("overlay", func(b *testing.B) {
		run(b, o.Target, overlayPolicy(o, tmp))
	})
	b.Run("overlay-whiteouts", func(b *testing.B) {
		w := *o
		for i := range 100 {
			w.Whiteouts = append(w.Whiteouts, fmt.Sprintf("d%03d/f%05d.go", i, i*100))
		}
		run(b, o.Target, overlayPolicy(&w, tmp))
	})
}

// BenchmarkRename measures what the launcher's supervision costs a
// rename(2): a file renamed back and forth 2,000 times in the probe, in
// a writable directory in namespaces, and in the overlay, where each
// rename is answered by the launcher; ns/rename is the probe's own time
// per rename.
func BenchmarkRename(b *testing.B) {
	benchSupervised(b, "ns/rename", "renames")
}

// BenchmarkChmod measures what the supervision of mode changes costs a
// chmod(2) (modes_linux.go): a file's mode changed 2,000 times in the
// probe, in namespaces, and in the overlay, where the launcher resolves,
// judges and makes each; ns/chmod is the probe's own time per chmod.
func BenchmarkChmod(b *testing.B) {
	benchSupervised(b, "ns/chmod", "chmods")
}

// benchSupervised runs the probe's operation op (which prints its time
// per call) on a.txt 2,000 times in namespaces and in the overlay, and
// reports that time as metric.
func benchSupervised(b *testing.B, metric, op string) {
	needLandlock(b)
	if ok, reason := OverlayAvailable(""); !ok {
		b.Skip(reason)
	}
	o, tmp := overlaySession(b, map[string]string{"a.txt": "a\n"})
	run := func(b *testing.B, dir string, p Policy) {
		var total float64
		for b.Loop() {
			cmd := probeCommand(b, []string{op, filepath.Join(dir, "a.txt"), "2000"})
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout = &out
			l, err := Start(cmd, p)
			if err != nil {
				b.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				b.Fatal(err)
			}
			l.Close()
			var got []string
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != 1 {
				b.Fatalf("probe printed %q", out.String())
			}
			ns, err := strconv.ParseFloat(got[0], 64)
			if err != nil {
				b.Fatalf("probe printed %q", out.String())
			}
			total += ns
		}
		b.ReportMetric(total/float64(b.N), metric)
	}
	plain := filepath.Join(filepath.Dir(o.Upper), "plain")
	if err := os.Mkdir(plain, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plain, "a.txt"), []byte("a\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("namespaces", func(b *testing.B) {
		run(b, plain, Policy{Dirs: []string{plain, tmp}, Devices: TerminalDevices, Net: &Namespaces{Tmp: tmp}})
	})
	b.Run("overlay", func(b *testing.B) {
		run(b, o.Target, overlayPolicy(o, tmp))
	})
}
