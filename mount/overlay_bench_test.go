//go:build linux

package mount

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchProject makes a project of n files, 20 to a directory, two levels
// deep, with an .agentignore, an ignored directory and instruction files.
func benchProject(b *testing.B, n int) string {
	b.Helper()
	root := b.TempDir()
	for i := 0; i < n; i++ {
		d := filepath.Join(root, fmt.Sprintf("d%02d", i/2000), fmt.Sprintf("e%03d", i/20%100))
		if i%20 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", i)), []byte("package x\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for name, data := range map[string]string{".agentignore": ".env\n*.log\n", ".env": "S=1", "AGENTS.md": "x",
		"node_modules/m/i.js": "m", "d00/AGENTS.md": "y"} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return root
}

// BenchmarkOverlayCreate: making and removing a sandbox of a 20,000-file
// project, an overlay's against a copy's; and the overlay's listing of
// the directories for the whiteouts alone (findWhiteouts).
func BenchmarkOverlayCreate(b *testing.B) {
	root := benchProject(b, 20000)
	home := b.TempDir()
	for _, overlay := range []bool{true, false} {
		name := "copy"
		if overlay {
			name = "overlay"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				s, err := create(context.Background(), Options{Home: home, Persona: "p", Root: root, Cwd: root,
					Hide: []string{"AGENTS.md"}, Overlay: overlay})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Remove(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	r, err := NewRules(Options{Persona: "p", Root: root, Hide: []string{"AGENTS.md"}})
	if err != nil {
		b.Fatal(err)
	}
	// The listing alone, without the cache and with it (every directory
	// taken from it: the tree is older than the margin there).
	b.Run("whiteouts", func(b *testing.B) {
		for b.Loop() {
			scan, err := findWhiteouts(context.Background(), root, r, nil, nil)
			if err != nil || len(scan.hide) != 4 {
				b.Fatal(scan.hide, err)
			}
		}
	})
	b.Run("whiteouts-cached", func(b *testing.B) {
		cacheHome := b.TempDir()
		open := func() *listingCache {
			c := openListingCache(cacheHome, root, r, nil)
			c.margin = -time.Hour
			return c
		}
		c := open()
		if _, err := findWhiteouts(context.Background(), root, r, nil, c); err != nil {
			b.Fatal(err)
		}
		c.save()
		for b.Loop() {
			scan, err := findWhiteouts(context.Background(), root, r, nil, open())
			if err != nil || len(scan.hide) != 4 || scan.read != 0 {
				b.Fatal(scan.hide, scan.read, err)
			}
		}
	})
}

// BenchmarkOverlaySync: a dry-run sync of ten changed files of a
// 20,000-file project reads the upper layer: its time is that of the
// ten, not of the tree.
func BenchmarkOverlaySync(b *testing.B) {
	root := benchProject(b, 20000)
	s, err := create(context.Background(), Options{Home: b.TempDir(), Persona: "p", Root: root, Cwd: root, Overlay: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Remove()
	for i := 0; i < 10; i++ {
		p := filepath.Join(s.Overlay.Upper, "d00", fmt.Sprintf("e%03d", i), fmt.Sprintf("f%d.go", i*20))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package y\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		r, err := s.Sync(context.Background(), SyncOptions{DryRun: true})
		if err != nil || len(r.Updated) != 10 {
			b.Fatal(r, err)
		}
	}
}

// BenchmarkReadWatch: setting the read watch of an overlay sandbox on
// every directory of a 2,000-, 20,000- and 200,000-file project (100,
// 1,000 and 10,000 directories), and stopping it: what it adds to a
// run's start (start-ms, WatchReads's return), the time until every
// directory is watched (all-ms, on the watch's goroutine while the
// harness starts), and what Stop adds before sync-back (stop-ms).
func BenchmarkReadWatch(b *testing.B) {
	for _, n := range []int{2000, 20000, 200000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			root := benchProject(b, n)
			s, err := create(context.Background(), Options{Home: b.TempDir(), Persona: "p", Root: root, Cwd: root, Overlay: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Remove()
			b.ReportMetric(float64(len(s.Overlay.dirs)), "dirs")
			watchNow(b) // the cost of the watches, not the wait before them
			var start, all, stop time.Duration
			for b.Loop() {
				t0 := time.Now()
				w := s.WatchReads()
				t1 := time.Now()
				w.Begin()
				<-w.set
				t2 := time.Now()
				r := w.Stop()
				start, all, stop = start+t1.Sub(t0), all+t2.Sub(t0), stop+time.Since(t2)
				if r.Incomplete != "" {
					b.Fatal(r.Incomplete)
				}
			}
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(b.N) / 1000 }
			b.ReportMetric(ms(start), "start-ms")
			b.ReportMetric(ms(all), "all-ms")
			b.ReportMetric(ms(stop), "stop-ms")
		})
	}
}
