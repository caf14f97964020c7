package harness

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestVersionCache: a binary is asked for its version once; a changed
// binary (size or modification time) is asked again; a damaged cache is
// rebuilt.
func TestVersionCache(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	write := func(version string) {
		script := "#!/bin/sh\necho x >> " + calls + "\necho '" + version + "'\n"
		if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "x")
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	vc := VersionCache{File: filepath.Join(t.TempDir(), "cache", "versions.json")}
	steps := []struct {
		name      string
		do        func()
		want      string
		wantCalls int
	}{
		{"first ask", func() { write("2.1.330 (Claude Code)") }, "2.1.330 (Claude Code)", 1},
		{"cached", func() {}, "2.1.330 (Claude Code)", 1},
		{"a new binary", func() {
			write("2.1.400 (Claude Code) ")
			os.Chtimes(filepath.Join(bin, "claude"), time.Now(), time.Now().Add(time.Hour))
		}, "2.1.400 (Claude Code)", 2},
		{"cached again", func() {}, "2.1.400 (Claude Code)", 2},
		{"a damaged cache", func() { os.WriteFile(vc.File, []byte("{not json"), 0o644) }, "2.1.400 (Claude Code)", 3},
		{"rebuilt", func() {}, "2.1.400 (Claude Code)", 3},
		{"a reinstall of the same size with npm's fixed time", func() {
			path := filepath.Join(bin, "claude")
			fi, _ := os.Stat(path)
			os.Remove(path)
			write("2.1.401 (Claude Code) ") // the same size as before
			os.Chtimes(path, fi.ModTime(), fi.ModTime())
		}, "2.1.401 (Claude Code)", 4},
	}
	for _, s := range steps {
		s.do()
		st := vc.Installed(context.Background(), "claude", env)
		if st.Version != s.want || count() != s.wantCalls {
			t.Errorf("%s: Installed() = %q after %d calls, want %q after %d", s.name, st.Version, count(), s.want, s.wantCalls)
		}
	}
	// Without a file, nothing is remembered.
	before := count()
	VersionCache{}.Installed(context.Background(), "claude", env)
	VersionCache{}.Installed(context.Background(), "claude", env)
	if count() != before+2 {
		t.Errorf("the zero VersionCache remembered a version")
	}
}

// TestVersionCacheByHarness: one binary answering as two harnesses (links
// to a multi-call program, as the tests' stand-ins are) has a version
// cached for each.
func TestVersionCacheByHarness(t *testing.T) {
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \"$0\" in *claude) echo '2.1.330 (Claude Code)';; *) echo 'codex-cli 0.169.0';; esac\n"
	prog := filepath.Join(t.TempDir(), "multi")
	if err := os.WriteFile(prog, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"claude", "codex"} {
		if err := os.Symlink(prog, filepath.Join(bin, h)); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=" + bin + ":/usr/bin:/bin"}
	vc := VersionCache{File: filepath.Join(t.TempDir(), "versions.json")}
	for range 2 {
		if v := vc.Installed(context.Background(), "claude", env).Version; v != "2.1.330 (Claude Code)" {
			t.Errorf("claude: %q", v)
		}
		if v := vc.Installed(context.Background(), "codex", env).Version; v != "codex-cli 0.169.0" {
			t.Errorf("codex: %q, the version of another harness of the same binary", v)
		}
	}
}

func TestProfileOfInstalledVersion(t *testing.T) {
	env := standIn(t, "claude", `echo "2.1.197 (Claude Code)"`)
	p, st, note := VersionCache{}.Profile(context.Background(), "claude", env)
	if p.Name != "claude-2.1.197" || st.Version != "2.1.197 (Claude Code)" || note != "" {
		t.Errorf("Profile() = %s, %+v, %q", p.Name, st, note)
	}
	p, st, _ = VersionCache{}.Profile(context.Background(), "opencode", env)
	if p.Name != "opencode" || st.Installed {
		t.Errorf("Profile() of a missing harness = %s, %+v; want the default profile", p.Name, st)
	}
}

// TestVersionMeasured: a patch release of a measured family is measured,
// a family never measured is not, and a version that cannot be read is
// unknown.
func TestVersionMeasured(t *testing.T) {
	tests := []struct {
		h, version      string
		measured, known bool
	}{
		{"claude", "2.1.330 (Claude Code)", true, true},
		{"claude", "2.1.332 (Claude Code)", true, true},
		{"claude", "2.1.197 (Claude Code)", true, true},
		{"claude", "2.2.0 (Claude Code)", false, true},
		{"claude", "1.0.0", false, true},
		{"codex", "codex-cli 0.169.2", true, true},
		{"codex", "codex-cli 0.171.0", true, true},
		{"codex", "codex-cli 0.171.3", true, true},
		{"codex", "codex-cli 0.170.0", false, true},
		{"codex", "codex-cli 0.172.0", false, true},
		{"opencode", "1.18.40", true, true},
		{"gemini", "0.62.0", false, true},
		{"claude", "", false, false},
		{"claude", "unknown", false, false},
		{"grok", "1.0.0", false, true},
	}
	for _, tt := range tests {
		m, k := VersionMeasured(tt.h, tt.version)
		if m != tt.measured || k != tt.known {
			t.Errorf("VersionMeasured(%s, %q) = %v, %v; want %v, %v", tt.h, tt.version, m, k, tt.measured, tt.known)
		}
	}
	if got := UnmeasuredNote("codex", "codex-cli 0.172.0"); !strings.Contains(got, "codex 0.172.0 is of a release family workforce never measured (measured: 0.169.0, 0.171.0)") {
		t.Errorf("UnmeasuredNote = %q", got)
	}
}
