package confine

import (
	debugbuildinfo "debug/buildinfo"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/internal/buildinfo"
)

// LauncherName is the launcher's own executable: cmd/workforce-launcher,
// the launcher (Main) and nothing else, which make build puts beside
// workforce. Beside the workforce running and of the same build, it is
// the launcher every confined start executes: it starts in about a
// millisecond where workforce, initialising every package it links
// (the JSON Schema library compiling its meta-schemas among them), takes
// five to eight (BENCHMARKS.md, issue 44). Otherwise workforce is its own
// launcher, as it always was (/proc/self/exe).
const LauncherName = "workforce-launcher"

// launcherExe is the launcher executable found beside workforce, nil when
// workforce is its own launcher; looked for once, at the first start.
var launcherExe = sync.OnceValue(func() *launcherFile {
	mine, _ := debug.ReadBuildInfo()
	return findLauncher(selfExe(), mine)
})

// launcherFile is the launcher executable found: open, so that the file
// checked is the file executed (through /proc/self/fd) even when its path
// is replaced meanwhile (an upgrade during a batch), as /proc/self/exe is
// for workforce itself.
type launcherFile struct {
	f    *os.File
	path string
}

// selfExe returns the path of the workforce running, "" when unknown.
func selfExe() string {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil || !filepath.IsAbs(exe) || strings.HasSuffix(exe, " (deleted)") {
		return ""
	}
	return exe
}

// findLauncher returns the launcher executable beside self, the path of
// the workforce running, when it is one workforce may execute: a regular
// file that its owner may execute, that nobody but its owner may write,
// owned by the owner of self or by root (so whoever could replace it
// could replace workforce), and of the same build as mine, the build
// information of the workforce running (buildKey). Anything else, or an
// error, is nil: workforce is its own launcher.
func findLauncher(self string, mine *debug.BuildInfo) *launcherFile {
	if self == "" || filepath.Base(self) == LauncherName {
		return nil
	}
	var own unix.Stat_t
	if err := unix.Stat(self, &own); err != nil {
		return nil
	}
	path := filepath.Join(filepath.Dir(self), LauncherName)
	// Not blocking: a FIFO of that name would wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || !trustedLauncher(st, own.Uid) {
		f.Close()
		return nil
	}
	info, err := debugbuildinfo.Read(f)
	if err != nil || buildKey(info) == "" || buildKey(info) != buildKey(mine) {
		f.Close()
		return nil
	}
	return &launcherFile{f: f, path: path}
}

// trustedLauncher reports whether a file of status st may be executed as
// the launcher of a workforce whose executable belongs to uid.
func trustedLauncher(st unix.Stat_t, uid uint32) bool {
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Mode&unix.S_IXUSR != 0 && st.Mode&0o022 == 0 &&
		(st.Uid == uid || st.Uid == 0)
}

// buildKey returns what says two executables of this module come from
// the same build: the module's version (a pseudo-version names the
// commit, and +dirty a modified tree), the revision, its time and
// whether the tree was modified, and the Go release. It is "" when info
// says none of that (a test binary, a build without version control
// information), which matches nothing.
func buildKey(info *debug.BuildInfo) string {
	if info == nil {
		return ""
	}
	rev, at, modified := buildinfo.VCS(info)
	if rev == "" && (info.Main.Version == "" || info.Main.Version == "(devel)") {
		return ""
	}
	return strings.Join([]string{info.GoVersion, info.Main.Path, info.Main.Version, info.Main.Sum, rev, at, strconv.FormatBool(modified)}, "\x00")
}

// launcherPath is the executable a confined start executes: the launcher
// found beside workforce (LauncherName), or else this very binary.
// /proc/self/exe is the file running even when its path was replaced
// since (an upgrade during the run).
func launcherPath() string {
	if l := launcherExe(); l != nil {
		return "/proc/self/fd/" + strconv.Itoa(int(l.f.Fd()))
	}
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return os.Args[0]
}

// Launcher returns the path of the launcher a confined start executes,
// and whether it is LauncherName beside workforce (false: workforce
// itself).
func Launcher() (string, bool) {
	if l := launcherExe(); l != nil {
		return l.path, true
	}
	exe, _ := os.Executable()
	return exe, false
}
