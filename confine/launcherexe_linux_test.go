package confine

import (
	"debug/buildinfo"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// stampedBuild builds testdata/launcherexe with version control
// information, as a build of this module's revision is, and returns a
// function that copies it to dir/name, mode 0755. The test is skipped,
// with the reason, where the module is not a git checkout.
func stampedBuild(t *testing.T) func(t *testing.T, dir, name string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "launcherexe")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", src, "./testdata/launcherexe")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		if strings.Contains(string(b), "VCS status") || strings.Contains(string(b), "buildvcs") {
			t.Skipf("the module is not a git checkout here, so no build carries a revision: %s", b)
		}
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return func(t *testing.T, dir, name string) string {
		t.Helper()
		in, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		path := filepath.Join(dir, name)
		out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			t.Fatal(err)
		}
		if err := out.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// TestFindLauncher: the launcher beside workforce is taken only when it
// is a file its owner alone may write, executable, and of the same build.
func TestFindLauncher(t *testing.T) {
	stampedCopy := stampedBuild(t)
	dir := t.TempDir()
	self := stampedCopy(t, dir, "workforce")
	mine, err := buildinfo.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	other := *mine
	other.Settings = append([]debug.BuildSetting(nil), mine.Settings...)
	for i, s := range other.Settings {
		if s.Key == "vcs.revision" {
			other.Settings[i].Value = "0000000000000000000000000000000000000000"
		}
	}
	unstamped := &debug.BuildInfo{GoVersion: mine.GoVersion, Main: debug.Module{Path: mine.Main.Path, Version: "(devel)"}}
	launcher := filepath.Join(dir, LauncherName)
	// withMode puts the same build beside workforce with mode m.
	withMode := func(m os.FileMode) func(t *testing.T) {
		return func(t *testing.T) {
			if err := os.Chmod(stampedCopy(t, dir, LauncherName), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name  string
		setup func(t *testing.T)
		mine  *debug.BuildInfo
		want  bool
	}{
		{"the same build", func(t *testing.T) { stampedCopy(t, dir, LauncherName) }, mine, true},
		{"none beside workforce", func(t *testing.T) {}, mine, false},
		{"another revision", func(t *testing.T) { stampedCopy(t, dir, LauncherName) }, &other, false},
		{"workforce built without version information", func(t *testing.T) { stampedCopy(t, dir, LauncherName) }, unstamped, false},
		{"no build information at hand", func(t *testing.T) { stampedCopy(t, dir, LauncherName) }, nil, false},
		{"writable by its group", withMode(0o775), mine, false},
		{"writable by others", withMode(0o757), mine, false},
		{"not executable", withMode(0o644), mine, false},
		{"a directory", func(t *testing.T) {
			if err := os.Mkdir(launcher, 0o755); err != nil {
				t.Fatal(err)
			}
		}, mine, false},
		{"a symlink to the same build", func(t *testing.T) {
			stampedCopy(t, dir, "elsewhere")
			if err := os.Symlink("elsewhere", launcher); err != nil {
				t.Fatal(err)
			}
		}, mine, true},
		{"a FIFO", func(t *testing.T) {
			if err := unix.Mkfifo(launcher, 0o755); err != nil {
				t.Fatal(err)
			}
		}, mine, false},
		{"not a Go program", func(t *testing.T) {
			if err := os.WriteFile(launcher, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, mine, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(launcher)
			tt.setup(t)
			l := findLauncher(self, tt.mine)
			if got := l != nil; got != tt.want {
				t.Fatalf("findLauncher = %v, want found %v", l, tt.want)
			}
			if l != nil {
				defer l.f.Close()
				if l.path != launcher {
					t.Errorf("path = %s, want %s", l.path, launcher)
				}
			}
		})
	}
	// workforce-launcher does not look for itself.
	stampedCopy(t, dir, LauncherName)
	if l := findLauncher(launcher, mine); l != nil {
		t.Errorf("findLauncher(%s) = %v, want nil", launcher, l)
	}
}

// TestLauncherExe: a confined start executes workforce-launcher beside
// workforce when it is of the same build, with and without namespaces,
// and workforce itself otherwise; the harness's status comes back either
// way.
func TestLauncherExe(t *testing.T) {
	needLandlock(t)
	stampedCopy := stampedBuild(t)
	modes := []string{"plain"}
	if NamespacesAvailable("") == nil {
		modes = append(modes, "ns")
	} else {
		t.Logf("no namespaces here: the start in namespaces is not tried")
	}
	for _, mode := range modes {
		for _, tt := range []struct {
			name        string
			beside      func(t *testing.T, dir string)
			want, wantL string
		}{
			{"the same build beside", func(t *testing.T, dir string) { stampedCopy(t, dir, LauncherName) }, LauncherName, LauncherName + " true"},
			{"none beside", func(t *testing.T, dir string) {}, "workforce", "workforce false"},
			{"writable by others", func(t *testing.T, dir string) {
				if err := os.Chmod(stampedCopy(t, dir, LauncherName), 0o777); err != nil {
					t.Fatal(err)
				}
			}, "workforce", "workforce false"},
		} {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				work := filepath.Join(dir, "work")
				if err := os.Mkdir(work, 0o755); err != nil {
					t.Fatal(err)
				}
				wf := stampedCopy(t, dir, "workforce")
				tt.beside(t, dir)
				cmd := exec.Command(wf, work, mode, "/bin/sh", "-c", "echo confined > out.txt; exit 3")
				out, err := cmd.Output()
				if code := cmd.ProcessState.ExitCode(); code != 3 {
					t.Fatalf("exit %d (%v), want 3; output %s", code, err, out)
				}
				if got := strings.TrimSpace(string(out)); got != "launcher: "+tt.wantL {
					t.Errorf("printed %q, want %q", got, "launcher: "+tt.wantL)
				}
				launched, err := os.ReadFile(filepath.Join(dir, "launched"))
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(string(launched)); got != tt.want {
					t.Errorf("the launcher was %q, want %q", got, tt.want)
				}
				if data, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(data) != "confined\n" {
					t.Errorf("out.txt = %q, %v", data, err)
				}
			})
		}
	}
}
