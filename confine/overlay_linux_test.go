package confine

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// needOverlay skips a test of the overlay on a system that cannot mount
// one in the harness's namespaces, found by trying.
func needOverlay(t testing.TB) {
	t.Helper()
	needNamespaces(t)
	if ok, reason := OverlayAvailable(""); !ok {
		t.Skipf("no overlay here: %s", reason)
	}
}

// overlaySession makes a project (lower) and a session directory with
// the overlay's upper, work and target directories and a tmp, and
// returns the overlay and the session's tmp.
func overlaySession(t testing.TB, files map[string]string) (*Overlay, string) {
	t.Helper()
	// Outside /tmp, as a user's files are: the harness's /tmp is the
	// session's.
	return overlaySessionIn(t, outsideTmp(), files)
}

// overlaySessionIn is overlaySession in a new directory of parent.
func overlaySessionIn(t testing.TB, parent string, files map[string]string) (*Overlay, string) {
	t.Helper()
	root, err := os.MkdirTemp(parent, "overlay-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	o := &Overlay{Lower: filepath.Join(root, "project"), Upper: filepath.Join(root, "session", "upper"),
		Work: filepath.Join(root, "session", "work"), Target: filepath.Join(root, "session", "tree")}
	tmp := filepath.Join(root, "session", "tmp")
	for _, d := range []string{o.Lower, o.Upper, o.Work, o.Target, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		path := filepath.Join(o.Lower, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if err := RemoveOverlayDirs(o.Upper, o.Work); err != nil {
			t.Errorf("RemoveOverlayDirs: %v", err)
		}
	})
	return o, tmp
}

// outsideTmp returns /var/tmp where the system has it, the temporary
// directory otherwise.
func outsideTmp() string {
	if fi, err := os.Stat("/var/tmp"); err == nil && fi.IsDir() {
		return "/var/tmp"
	}
	return os.TempDir()
}

// overlayPolicy is the policy of a harness shown o: the target and tmp
// writable, the real project unreadable.
func overlayPolicy(o *Overlay, tmp string) Policy {
	return Policy{Dirs: []string{o.Target, tmp}, Devices: TerminalDevices, Read: &ReadPolicy{Deny: []string{o.Lower}},
		Net: &Namespaces{Tmp: tmp, Overlay: o}}
}

// treeSum returns a digest of every path, mode and content below dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %v %d\n", path, fi.Mode(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Write(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// probeIn runs ops in the probe confined by p, in the directory dir.
func probeIn(t *testing.T, dir string, p Policy, ops ...[]string) []string {
	t.Helper()
	cmd := probeCommand(t, ops...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	l, err := Start(cmd, p)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer l.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	return results(t, &stdout, &stderr, len(ops))
}

// probeCase is a probe operation and the answer it should get.
type probeCase struct {
	op   []string
	want string
}

// probeCases runs the operations of cases in order in the overlay o,
// confined by overlayPolicy, and checks each answer.
func probeCases(t *testing.T, o *Overlay, tmp string, cases []probeCase) {
	t.Helper()
	var list [][]string
	for _, c := range cases {
		list = append(list, c.op)
	}
	got := probeIn(t, o.Target, overlayPolicy(o, tmp), list...)
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%v = %s, want %s", c.op, got[i], c.want)
		}
	}
}

// isWhiteout reports whether path is an overlay whiteout.
func isWhiteout(path string) bool {
	var st unix.Stat_t
	return unix.Lstat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0
}

// TestOverlay runs the probe shown a project through an overlay: it sees
// the project's files at the target, its writes land in the upper layer
// and its deletions are whiteouts there, the real project is untouched
// byte for byte, the ignored file is invisible, mountinfo names neither
// layer's real path, the layers cannot be written by their own paths
// nor the real project read, the overlay cannot be unmounted, and a
// directory of the project can be renamed with rename(2).
func TestOverlay(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{"a.txt": "a\n", "dir/b.txt": "b\n", ".env": "SECRET=1\n",
		"sub/.env": "SECRET=2\n", "pkg/x.go": "package x\n", "pkg/deep/y.go": "package deep\n",
		"keep/k.txt": "k\n", "gone.txt": "gone\n", "d2/c.txt": "c\n", "d7/c.txt": "c\n"})
	o.Whiteouts = []string{".env", "sub/.env", "missing/.env"}
	before := treeSum(t, o.Lower)
	in := func(rel string) string { return filepath.Join(o.Target, rel) }
	ops := []probeCase{
		{[]string{"read", in("a.txt")}, "OK"},
		{[]string{"read", in("pkg/deep/y.go")}, "OK"},
		{[]string{"lstat", in(".env")}, "ENOENT"},
		{[]string{"lstat", in("sub/.env")}, "ENOENT"},
		{[]string{"append", in("a.txt")}, "OK"},
		{[]string{"write", "new.txt"}, "OK"}, // relative: the working directory is the merged tree
		{[]string{"unlink", in("gone.txt")}, "OK"},
		{[]string{"write", filepath.Join(o.Lower, "a.txt")}, "EACCES"},
		{[]string{"write", filepath.Join(o.Lower, "new.txt")}, "EACCES"},
		{[]string{"read", filepath.Join(o.Lower, "a.txt")}, "EACCES"},
		{[]string{"write", filepath.Join(o.Upper, "x")}, "EACCES"},
		{[]string{"write", filepath.Join(o.Work, "x")}, "EACCES"},
		{[]string{"mountinfo", o.Lower}, "unnamed"},
		{[]string{"mountinfo", o.Upper}, "unnamed"},
		{[]string{"mountinfo", o.Work}, "unnamed"},
		{[]string{"mountinfo", "lowerdir=/proc/self/fd/"}, "named"},
		{[]string{"umount", o.Target}, "EPERM"},
		{[]string{"rename", in("pkg"), in("pkg2")}, "OK"},
		{[]string{"read", in("pkg2/deep/y.go")}, "OK"},
		{[]string{"lstat", in("pkg")}, "ENOENT"},
		{[]string{"rename", in("pkg2"), in("keep")}, "ENOTEMPTY"},
		{[]string{"rename", in("pkg2"), in("pkg2/deep/inner")}, "EINVAL"},
		{[]string{"rename", in("pkg2"), in("a.txt")}, "ENOTDIR"},
		{[]string{"rename", "dir", "dir3"}, "OK"}, // relative to the working directory
		{[]string{"read", in("dir3/b.txt")}, "OK"},
		{[]string{"rename", in("keep/k.txt"), in("k2.txt")}, "OK"},
		{[]string{"mkdir", in("newempty")}, "OK"},
		{[]string{"rename", in("keep"), in("newempty")}, "OK"}, // an empty directory is replaced
		{[]string{"lstat", in("keep")}, "ENOENT"},
		{[]string{"rename", in("sub"), filepath.Join(tmp, "sub")}, "EXDEV"}, // out of the overlay: mv copies
		{[]string{"renameat", in("pkg2"), "deep", "deeper"}, "OK"},          // relative to a descriptor
		{[]string{"read", in("pkg2/deeper/y.go")}, "OK"},
		{[]string{"renameat", o.Target, "d2", "d4"}, "OK"}, // a lower directory, by copy
		{[]string{"read", in("d4/c.txt")}, "OK"},
		{[]string{"rename", in("d7") + "/", in("d8") + "/"}, "OK"}, // names ending in slashes
		{[]string{"read", in("d8/c.txt")}, "OK"},
		// Paths through the caller's /proc/self name its descriptors,
		// not the launcher's.
		{[]string{"write", "tmp.1"}, "OK"},
		{[]string{"renamefd", o.Target, "/proc/self/fd", "tmp.1", "out.1"}, "OK"},
		{[]string{"read", in("out.1")}, "OK"},
		{[]string{"renamefd", o.Target, "/proc/thread-self/fd", "out.1", "out.2"}, "OK"},
		{[]string{"renamefd", o.Target, "/dev/fd", "out.2", "out.3"}, "OK"},
		{[]string{"renamefd", o.Target, "//proc/./self/fd", "out.3", "out.4"}, "OK"},
		{[]string{"read", in("out.4")}, "OK"},
		{[]string{"renamefd", o.Target, "/proc/self/fd", "d8", "d9"}, "OK"}, // a lower directory, by copy
		{[]string{"read", in("d9/c.txt")}, "OK"},
		// The launcher renames with no more rights than the harness.
		{[]string{"rename", in("a.txt"), filepath.Join(o.Lower, "stolen")}, "EXDEV"},
		{[]string{"rename", filepath.Join(o.Lower, "d2"), in("taken")}, "EXDEV"},
		{[]string{"rename", filepath.Join(o.Lower, "d2"), filepath.Join(o.Lower, "d5")}, "EACCES"},
		{[]string{"rename", in("d4"), filepath.Join(o.Upper, "d4")}, "EXDEV"},
	}
	probeCases(t, o, tmp, ops)
	if after := treeSum(t, o.Lower); after != before {
		t.Errorf("the real project changed")
	}
	up := func(rel string) string { return filepath.Join(o.Upper, rel) }
	if b, err := os.ReadFile(up("a.txt")); err != nil || string(b) != "a\nappended\n" {
		t.Errorf("upper a.txt = %q (%v), want the appended copy", b, err)
	}
	if b, err := os.ReadFile(up("new.txt")); err != nil || string(b) != "confined\n" {
		t.Errorf("upper new.txt = %q (%v), want the new file", b, err)
	}
	for _, w := range []string{".env", "sub/.env", "gone.txt", "pkg", "dir", "keep"} {
		if !isWhiteout(up(w)) {
			t.Errorf("upper %s is not a whiteout", w)
		}
	}
	if b, err := os.ReadFile(up("pkg2/deeper/y.go")); err != nil || string(b) != "package deep\n" {
		t.Errorf("upper pkg2/deeper/y.go = %q (%v), want the renamed directory's file", b, err)
	}
	if _, err := os.Lstat(up("missing")); err == nil {
		t.Errorf("a whiteout was made for a path the project does not have")
	}
}

// TestOverlayAvailable: the answer is found by trying once per boot and
// kept under the cache directory for that boot; OverlayEnv=off makes it
// unavailable.
func TestOverlayAvailable(t *testing.T) {
	needOverlay(t)
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skipf("no boot id: %v", err)
	}
	bootID := strings.TrimSpace(string(boot))
	dir := filepath.Join(t.TempDir(), "cache")
	cache := filepath.Join(dir, overlayCache)
	if ok, reason := OverlayAvailable(dir); !ok {
		t.Fatalf("OverlayAvailable() = false, %q, want true", reason)
	}
	if got, err := os.ReadFile(cache); err != nil || string(got) != bootID+"\n\n" {
		t.Errorf("the cache holds %q (%v), want the boot id and no reason", got, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 { // the namespaces' answer and the overlay's
		t.Errorf("the cache directory holds %v, want the two answers and nothing of the probe", ents)
	}
	// The answer kept for this boot is the answer, without trying.
	writeFile(t, cache, bootID+"\nkept reason\n")
	if ok, reason := OverlayAvailable(dir); ok || reason != "kept reason" {
		t.Errorf("OverlayAvailable() with a cached failure = %v, %q, want the kept reason", ok, reason)
	}
	// One kept for another boot is not.
	writeFile(t, cache, "another-boot\nkept reason\n")
	if ok, reason := OverlayAvailable(dir); !ok {
		t.Errorf("OverlayAvailable() with another boot's failure kept = false, %q, want true", reason)
	}
	if got, _ := os.ReadFile(cache); string(got) != bootID+"\n\n" {
		t.Errorf("the cache holds %q after trying again, want this boot's answer", got)
	}
	t.Setenv(OverlayEnv, "off")
	if ok, reason := OverlayAvailable(""); ok || reason != OverlayEnv+"=off" {
		t.Errorf("OverlayAvailable() with %s=off = %v, %q, want unavailable", OverlayEnv, ok, reason)
	}
}

// TestOverlayEnd: a process the harness leaves running is ended with the
// namespace, the overlay goes with it (nothing holds the upper layer:
// the session's directories are removed, the work directory's mode-000
// directory included), and the target is an empty directory again.
func TestOverlayEnd(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{"a.txt": "a\n", "d/b.txt": "b\n"})
	marker := "overlay-end-" + strconv.Itoa(os.Getpid())
	got := probeIn(t, o.Target, overlayPolicy(o, tmp), []string{"daemon", marker}, []string{"unlink", "d/b.txt"},
		[]string{"mkdir", "made"}, []string{"chmod", "made"})
	if strings.Join(got, " ") != "OK OK OK OK" {
		t.Fatalf("the probe gave %v", got)
	}
	if left := markedProcesses(marker); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
	if ents, err := os.ReadDir(o.Target); err != nil || len(ents) != 0 {
		t.Errorf("the target holds %v (%v) once the namespace is gone, want nothing", ents, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(o.Work, "work"), &st); err != nil || st.Mode&0o777 != 0 {
		t.Logf("overlayfs's work directory: %v, mode %o", err, st.Mode&0o777)
	}
	if err := os.Chmod(filepath.Join(o.Upper, "made"), 0); err != nil {
		t.Fatal(err)
	}
	if err := RemoveOverlayDirs(o.Upper, o.Work); err != nil {
		t.Fatalf("RemoveOverlayDirs: %v", err)
	}
	for _, d := range []string{o.Upper, o.Work} {
		if _, err := os.Lstat(d); err == nil {
			t.Errorf("%s is still there", d)
		}
	}
	if err := RemoveOverlayDirs(o.Upper, o.Work); err != nil {
		t.Errorf("RemoveOverlayDirs again: %v, want nil", err)
	}
}

// TestOverlayAsUser runs the overlay's tests again as a plain user
// (nobody) when the tests run as root: no privilege outside the user
// namespace is needed.
func TestOverlayAsUser(t *testing.T) {
	needOverlay(t)
	if os.Geteuid() != 0 {
		t.Skip("the tests run as a plain user already")
	}
	out := runAsNobody(t, `^TestOverlay(|End|Available|GitMv|LockedDir|LockedFile|LockedACL|LockedOtherFS|Chmod|ChmodSymlink|GitCheckoutModes)$`)
	for _, name := range []string{"TestOverlay", "TestOverlayEnd", "TestOverlayAvailable", "TestOverlayGitMv",
		"TestOverlayLockedDir", "TestOverlayLockedFile", "TestOverlayLockedACL", "TestOverlayLockedOtherFS", "TestOverlayChmod", "TestOverlayChmodSymlink", "TestOverlayGitCheckoutModes"} {
		if !bytes.Contains(out, []byte("--- PASS: "+name+" ")) {
			t.Errorf("%s did not pass as uid 65534:\n%s", name, out)
		}
	}
}

// TestOverlayGitMv runs git mv of a directory of the project in the
// overlay, as an agent does: git renames with rename(2) alone.
func TestOverlayGitMv(t *testing.T) {
	needOverlay(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	o, tmp := overlaySession(t, map[string]string{"pkg/x.go": "package x\n", "pkg/deep/y.go": "package deep\n"})
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir = o.Lower
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	before := treeSum(t, o.Lower)
	got := probeIn(t, o.Target, overlayPolicy(o, tmp), []string{"exec", git, "mv", "pkg", "lib"},
		[]string{"read", filepath.Join(o.Target, "lib/deep/y.go")}, []string{"lstat", filepath.Join(o.Target, "pkg")})
	if want := []string{"OK", "OK", "ENOENT"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("git mv pkg lib, then the new and the old name: %v, want %v", got, want)
	}
	if treeSum(t, o.Lower) != before {
		t.Errorf("the real project changed")
	}
}

// TestCallerPath: a path through /proc/self, /proc/thread-self or
// /dev/fd names the calling thread's process's /proc, however its first
// names are spelled; any other path is left as it is.
func TestCallerPath(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	pid := strconv.Itoa(os.Getpid())
	for _, c := range []struct{ in, want string }{
		{"/proc/self/fd/11/out.txt", "/proc/" + pid + "/fd/11/out.txt"},
		{"//proc/./self//fd/11/x", "/proc/" + pid + "//fd/11/x"},
		{"/dev/../proc/self/cwd/x", "/proc/" + pid + "/cwd/x"},
		{"/proc/thread-self/fd/3/x", "/proc/" + pid + "/task/" + strconv.Itoa(tid) + "/fd/3/x"},
		{"/dev/fd/3/x", "/proc/" + pid + "/fd/3/x"},
		{"/proc/self/", "/proc/" + pid + "/"},
		{"/proc/self", "/proc/" + pid},
		{"/proc/1/fd/3/x", "/proc/1/fd/3/x"},
		{"/proc", "/proc"},
		{"/", "/"},
		{"proc/self/fd/3/x", "proc/self/fd/3/x"},
		{"/tree/proc/self", "/tree/proc/self"},
		{"/dev/fdx/3", "/dev/fdx/3"},
	} {
		if got := callerPath(tid, c.in); got != c.want {
			t.Errorf("callerPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestOverlayCopyFIFO: the rename supervisor's copy of a directory opens
// a file it found regular without blocking, and copies it only if it is
// still one: the harness may have put a FIFO in its place since, and an
// open that waits for a writer would stop every rename of the harness
// and every signal the launcher passes on to it.
func TestOverlayCopyFIFO(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("regular\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(src, "f"), &st); err != nil {
		t.Fatal(err)
	}
	// The harness's swap, after the supervisor's stat.
	if err := os.Remove(filepath.Join(src, "f")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(src, "f"), 0o644); err != nil {
		t.Fatal(err)
	}
	sfd, err := unix.Open(src, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sfd)
	dfd, err := unix.Open(dst, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(dfd)
	done := make(chan error, 1)
	go func() { done <- copyFileAt(sfd, "f", dfd, &st) }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("copyFileAt of a FIFO swapped for a regular file = nil, want an error")
		}
	case <-time.After(5 * time.Second):
		// Unblock the open, or the test binary hangs on exit.
		if w, err := os.OpenFile(filepath.Join(src, "f"), os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatalf("copyFileAt of a FIFO swapped for a regular file blocks in open")
	}
	if _, err := os.Lstat(filepath.Join(dst, "f")); err == nil {
		t.Errorf("copyFileAt copied a FIFO swapped for a regular file")
	}
}

// TestOverlayNestedLandlock: a program of the harness's that confines
// itself further with Landlock (a tool's own sandbox, as codex's) keeps
// its confinement in the overlay, as in the copy: its renames of files,
// and of directories outside the overlay, are not the launcher's to make
// with the harness's wider rights. (A directory of the project inside
// the overlay is still: only the launcher can move it.)
func TestOverlayNestedLandlock(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{"a.txt": "a\n"})
	if err := os.Mkdir(filepath.Join(tmp, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	in := func(rel string) string { return filepath.Join(o.Target, rel) }
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"write", in("new.txt")},
		[]string{"landlocked"},
		[]string{"write", in("denied.txt")},
		[]string{"rename", in("a.txt"), in("a2.txt")},
		[]string{"rename", in("new.txt"), in("new2.txt")},
		[]string{"rename", filepath.Join(tmp, "d"), filepath.Join(tmp, "d2")})
	want := []string{"OK", "OK", "EACCES", "EACCES", "EACCES", "EACCES"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("write, Landlock with no write allowed, then a write and renames = %v, want %v", got, want)
	}
	for _, rel := range []string{"a2.txt", "new2.txt"} {
		if _, err := os.Lstat(filepath.Join(o.Upper, rel)); err == nil {
			t.Errorf("upper %s exists: a rename Landlock denies happened", rel)
		}
	}
}

// TestOverlayRemoveDeep: RemoveOverlayDirs removes an upper layer whose
// directories the agent nested deeper than a path can name (PATH_MAX),
// the deepest of them left with mode 000, as the copy's removal does:
// the session could not be removed.
func TestOverlayRemoveDeep(t *testing.T) {
	upper := filepath.Join(t.TempDir(), "upper")
	if err := os.Mkdir(upper, 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(upper, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 200)
	for i := 0; i < 40; i++ { // about 8,000 bytes of path
		if err := unix.Mkdirat(fd, name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	if err := unix.Mknodat(fd, "f", unix.S_IFREG|0o644, 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fchmodat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), 0, 0); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if err := RemoveOverlayDirs(upper, ""); err != nil {
		t.Fatalf("RemoveOverlayDirs: %v", err)
	}
	if _, err := os.Lstat(upper); err == nil {
		t.Errorf("%s is still there", upper)
	}
}

// TestOverlayLockedDir: a directory of the project its owner cannot
// list (mode 000) stays closed to the harness: the overlay reads the
// lower layer with the launcher's credentials from the mount, which had
// CAP_DAC_OVERRIDE over the user's own files, so a mode change in the
// merged tree would copy the directory up readable; the supervisor
// refuses it (modes_linux.go). Nor can the harness change the mode of
// the file inside, readable itself: the supervisor that would make the
// change has no more rights than the harness, and cannot reach it
// either. (Root's reads ignore the mode anyway: the test runs as uid
// 65534, TestOverlayAsUser.)
func TestOverlayLockedDir(t *testing.T) {
	o, tmp, in := lockedSession(t, "locked")
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"read", in("locked/secret")},
		[]string{"chmod-dir", in("locked")},
		[]string{"lchmod", in("locked"), "755"},
		[]string{"chmodto", in("locked/secret"), "600"},
		[]string{"read", in("locked/secret")},
		[]string{"list", in("locked")})
	want := []string{"EACCES", "EPERM", "EPERM", "EACCES", "EACCES", "EACCES"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("read, chmod 755, lchmod 755 of a directory of mode 000, chmod and read of a file in it, its listing = %v, want %v", got, want)
	}
}

// TestOverlayLayersUnreadable: under a read policy, the harness reads
// the upper layer through the merged tree only, never by its own path
// (which the session's read policy leaves readable): listing it would
// name the hidden files, each a whiteout there, which the copy never
// shows. Nor is the work directory readable.
func TestOverlayLayersUnreadable(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{".env": "SECRET=1\n", "a.txt": "a\n"})
	o.Whiteouts = []string{".env"}
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"write", "new.txt"},
		[]string{"read", filepath.Join(o.Target, "new.txt")},
		[]string{"list", o.Upper},
		[]string{"lstat", filepath.Join(o.Upper, ".env")},
		[]string{"read", filepath.Join(o.Upper, "new.txt")},
		[]string{"list", o.Work})
	want := []string{"OK", "OK", "EACCES", "OK", "EACCES", "EACCES"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("write, read in the tree, then list, lstat, read in the upper layer, list the work directory = %v, want %v", got, want)
	}
}

// TestOverlayRenameSignal: while the launcher moves a large directory
// by copy for a program of the harness's (mv in the background), the
// signals it passes on still reach the harness, and the copy stops once
// its caller is gone: SIGTERM to the launcher ends the harness, and then
// the rest, at once, not when the copy is done.
func TestOverlayRenameSignal(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, nil)
	const n = 20000
	big := filepath.Join(o.Lower, "big")
	if err := os.Mkdir(big, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(filepath.Join(big, "f"+strconv.Itoa(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ready := filepath.Join(tmp, "ready")
	cmd := probeCommand(t, []string{"sh", "mv big big2 &"}, []string{"waitterm", ready})
	cmd.Dir = o.Target
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	l, err := Start(cmd, overlayPolicy(o, tmp))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer l.Close()
	waitFile(t, ready)
	time.Sleep(100 * time.Millisecond) // the copy under way (it takes seconds)
	t0 := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ended := time.Since(t0)
	copied, _ := os.ReadDir(filepath.Join(o.Upper, "big2"))
	t.Logf("the launcher ended %v after SIGTERM, %d of %d entries copied", ended.Round(time.Millisecond), len(copied), n)
	if len(copied) == n {
		t.Errorf("the launcher copied all %d entries, in %v, before the harness got SIGTERM: want the signal passed on, and the copy stopped", n, ended.Round(time.Millisecond))
	}
	if isWhiteout(filepath.Join(o.Upper, "big")) {
		t.Errorf("the directory was moved though its caller is gone")
	}
}

// TestOverlayRenameFlags: renameat2(2)'s flags on a directory of the
// project, which the launcher renames: an exchange or a whiteout is
// never made by copy, and a flag the kernel does not know fails as the
// kernel fails it; nothing moves.
func TestOverlayRenameFlags(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{"d/a.txt": "a\n", "e/b.txt": "b\n", "f.txt": "f\n"})
	in := func(rel string) string { return filepath.Join(o.Target, rel) }
	ops := []probeCase{
		{[]string{"renameat2", in("d"), in("e"), "0x2"}, "EXDEV"},   // RENAME_EXCHANGE of two directories of the project
		{[]string{"renameat2", in("d"), in("d2"), "0x4"}, "EINVAL"}, // RENAME_WHITEOUT: overlayfs takes none
		{[]string{"renameat2", in("d"), in("d2"), "0x80"}, "EINVAL"},
		{[]string{"renameat2", in("f.txt"), in("g.txt"), "0x80"}, "EINVAL"},
		{[]string{"renameat2", in("d"), in("e"), "0x1"}, "EEXIST"}, // RENAME_NOREPLACE
		{[]string{"lstat", in("d/a.txt")}, "OK"},
		{[]string{"lstat", in("e/b.txt")}, "OK"},
		{[]string{"lstat", in("d2")}, "ENOENT"},
		{[]string{"renameat2", in("d"), in("d3"), "0x1"}, "OK"},
		{[]string{"lstat", in("d3/a.txt")}, "OK"},
	}
	probeCases(t, o, tmp, ops)
}
