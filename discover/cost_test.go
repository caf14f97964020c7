package discover

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// countingFS counts the calls discovery makes.
type countingFS struct {
	FS
	stats, reads atomic.Int64
}

func (c *countingFS) Stat(name string) (fs.FileInfo, error) {
	c.stats.Add(1)
	return c.FS.Stat(name)
}

func (c *countingFS) ReadFile(name string, limit int) ([]byte, int64, error) {
	c.reads.Add(1)
	return c.FS.ReadFile(name, limit)
}

// deepTree makes a repository with depth nested directories, an AGENTS.md
// every fifth level, and extra files spread over the levels.
func deepTree(tb testing.TB, depth, extra int) (root, leaf string) {
	tb.Helper()
	root = tb.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	must := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	must(os.Mkdir(filepath.Join(root, ".git"), 0o755))
	dirs := []string{root}
	dir := root
	for i := range depth {
		dir = filepath.Join(dir, fmt.Sprintf("d%02d", i))
		must(os.Mkdir(dir, 0o755))
		dirs = append(dirs, dir)
		if i%5 == 0 {
			must(os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("level "+fmt.Sprint(i)+"\n"), 0o644))
		}
	}
	for i := range extra {
		d := dirs[i%len(dirs)]
		must(os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d.txt", i)), nil, 0o644))
	}
	return root, dir
}

// TestCostGrowsWithDepthNotFiles checks that the number of stat calls
// depends on depth times candidate names, and not at all on how many other
// files the tree holds.
func TestCostGrowsWithDepthNotFiles(t *testing.T) {
	stats := func(depth, extra int, profile string) int64 {
		_, leaf := deepTree(t, depth, extra)
		c := &countingFS{FS: OS}
		if _, err := Chain(Profiles[profile], leaf, Options{FS: c, NoGlobals: true}); err != nil {
			t.Fatal(err)
		}
		return c.stats.Load()
	}
	for _, profile := range []string{"codex", "claude", "opencode", "agents"} {
		empty := stats(20, 0, profile)
		full := stats(20, 5000, profile)
		if empty != full {
			t.Errorf("%s: %d stats without extra files, %d with 5,000: cost depends on the number of files", profile, empty, full)
		}
		deeper := stats(40, 0, profile)
		names := int64(len(Profiles[profile].Names))
		// Each level adds at most one stat per candidate name (Otherwise names
		// included) and per root
		// marker.
		perLevel := names + int64(len(Profiles[profile].Otherwise)+len(Profiles[profile].Markers))
		if grow := deeper - empty; grow <= 0 || grow > 20*perLevel {
			t.Errorf("%s: 20 more levels added %d stats, want between 1 and %d", profile, grow, 20*perLevel)
		}
	}
}

// BenchmarkChain measures discovery at depth 40 in a tree of 100,000 files
// and reports the stat calls per run.
func BenchmarkChain(b *testing.B) {
	_, leaf := deepTree(b, 40, 100_000)
	for _, profile := range []string{"codex", "claude", "opencode", "agents"} {
		b.Run(profile, func(b *testing.B) {
			c := &countingFS{FS: OS}
			for b.Loop() {
				if _, err := Chain(Profiles[profile], leaf, Options{FS: c, NoGlobals: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(c.stats.Load())/float64(b.N), "stats/op")
		})
	}
}

// FuzzChain builds a small tree from the fuzzer's bytes and checks that
// discovery neither panics nor loads a project file from outside its root,
// and that every loaded file is a regular file under a walked directory.
func FuzzChain(f *testing.F) {
	f.Add("a/b/c", "AGENTS.md:a;AGENTS.override.md:a/b;.git:;CLAUDE.md:a/b/c", uint8(0))
	f.Add("x", "AGENTS.md:;link:x/AGENTS.md>../AGENTS.md", uint8(2))
	f.Add("../../etc", "AGENTS.md:..", uint8(3))
	profiles := Names()
	f.Fuzz(func(t *testing.T, start, spec string, which uint8) {
		root := t.TempDir()
		root, _ = filepath.EvalSymlinks(root)
		repo := filepath.Join(root, "repo")
		if err := os.Mkdir(repo, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, entry := range strings.Split(spec, ";") {
			name, dir, _ := strings.Cut(entry, ":")
			target := ""
			if n, ok := strings.CutPrefix(name, "link:"); ok {
				name, target, _ = strings.Cut(n, ">")
			}
			p := filepath.Join(repo, dir, name)
			if !pathutil.Within(repo, p) || p == repo {
				continue
			}
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if target != "" {
				_ = os.Symlink(target, p)
			} else if name == ".git" {
				_ = os.Mkdir(p, 0o755)
			} else {
				_ = os.WriteFile(p, []byte(entry), 0o644)
			}
		}
		dir := filepath.Join(repo, start)
		p := Profiles[profiles[int(which)%len(profiles)]]
		res, err := Chain(p, dir, Options{Home: filepath.Join(root, "home"), NoGlobals: true})
		if err != nil {
			return
		}
		if !pathutil.Within(res.Root, res.Dir) {
			t.Fatalf("root %s does not contain the start %s", res.Root, res.Dir)
		}
		for _, f := range res.Files {
			if !pathutil.Within(res.Root, f.Dir) || !pathutil.Within(f.Dir, res.Dir) {
				t.Fatalf("%s loaded from %s, outside %s..%s", f.Path, f.Dir, res.Root, res.Dir)
			}
			if fi, err := os.Stat(f.Path); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s loaded but is not a regular file", f.Path)
			}
		}
	})
}
