package confine

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeModeOp tries one of the probe's mode and ACL operations:
//   - chmodto PATH MODE: chmod(2) to MODE (octal);
//   - lchmod PATH MODE: fchmodat(2) with AT_SYMLINK_NOFOLLOW;
//   - fchmod PATH MODE: fchmod(2) on PATH opened for writing;
//   - fchmod-opath PATH MODE: fchmod(2) on PATH opened O_PATH;
//   - fchmodat2 PATH MODE FLAGS: fchmodat2(2) with FLAGS (hex), on
//     PATH, or, with AT_EMPTY_PATH, on an O_PATH descriptor of it;
//   - setfacl PATH: the access ACL u::rw-,g::r--,o::r-- (mode 644), as setfacl(1) sets it;
//   - statmode PATH: PATH's permission bits, octal;
//   - chmodrace LINK GOOD BAD N: LINK, a symbolic link, swapped between
//     GOOD and BAD by another thread while this one changes LINK's mode
//     to 644, N times;
//   - chmods PATH N: N changes of PATH's mode: the time per change in ns.
func probeModeOp(op []string) string {
	arg := func(i int) string {
		if i < len(op) {
			return op[i]
		}
		return ""
	}
	mode := func() uint32 {
		m, _ := strconv.ParseUint(arg(2), 8, 32)
		return uint32(m)
	}
	var err error
	switch op[0] {
	case "chmodto":
		err = unix.Chmod(arg(1), mode())
	case "lchmod":
		err = unix.Fchmodat(unix.AT_FDCWD, arg(1), mode(), unix.AT_SYMLINK_NOFOLLOW)
	case "fchmod", "fchmod-opath":
		flags := unix.O_WRONLY
		if op[0] == "fchmod-opath" {
			flags = unix.O_PATH
		}
		var fd int
		if fd, err = unix.Open(arg(1), flags|unix.O_CLOEXEC, 0); err == nil {
			err = unix.Fchmod(fd, mode())
			unix.Close(fd)
		}
	case "fchmodat2":
		err = fchmodat2(arg(1), mode(), arg(3))
	case "setfacl":
		err = unix.Setxattr(arg(1), "system.posix_acl_access", aclXattr(6, 4, 4), 0)
	case "statmode":
		var st unix.Stat_t
		if err = unix.Stat(arg(1), &st); err == nil {
			return strconv.FormatUint(uint64(st.Mode&0o7777), 8)
		}
	case "chmodrace":
		n, _ := strconv.Atoi(arg(4))
		chmodRace(arg(1), arg(2), arg(3), n)
		return "OK"
	case "chmods":
		n, _ := strconv.Atoi(arg(2))
		start := time.Now()
		for i := 0; i < n && err == nil; i++ {
			err = unix.Chmod(arg(1), 0o644|uint32(i%2)<<6)
		}
		if err == nil {
			return strconv.FormatInt(time.Since(start).Nanoseconds()/int64(max(n, 1)), 10)
		}
	}
	return errName(err)
}

// fchmodat2 calls fchmodat2(2) on path with the flags in hex; with
// AT_EMPTY_PATH on an O_PATH descriptor of path, with an empty path.
func fchmodat2(path string, mode uint32, hexFlags string) error {
	flags, _ := strconv.ParseUint(hexFlags, 16, 32)
	dir := unix.AT_FDCWD
	if flags&unix.AT_EMPTY_PATH != 0 {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		dir, path = fd, ""
	}
	p, err := unix.BytePtrFromString(path)
	if err != nil {
		return err
	}
	_, _, errno := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(mode), uintptr(flags), 0, 0)
	runtime.KeepAlive(p)
	if errno != 0 {
		return errno
	}
	return nil
}

// aclXattr returns the value of a minimal POSIX access ACL (the
// owner's, the group's and the others' permissions), as the kernel
// reads system.posix_acl_access.
func aclXattr(user, group, other uint16) []byte {
	const undefinedID = 0xffffffff
	b := binary.LittleEndian.AppendUint32(nil, 2) // POSIX_ACL_XATTR_VERSION
	for _, e := range []struct{ tag, perm uint16 }{{0x01, user}, {0x04, group}, {0x20, other}} {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, undefinedID)
	}
	return b
}

// chmodRace changes the mode of link to 644 n times while another thread
// points it at good and at bad in turn, by renaming a new link over it.
func chmodRace(link, good, bad string, n int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tmp := link + ".new"
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := good
			if i%2 == 1 {
				target = bad
			}
			_ = os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				_ = unix.Rename(tmp, link)
			}
		}
	}()
	for i := 0; i < n; i++ {
		_ = unix.Chmod(link, 0o644)
	}
	close(stop)
	<-done
}

// lockedSession makes an overlay session whose project has a.txt, a
// readable script and the file locked/secret, and locks what lock names
// (mode 000) in the project; it skips as root, whose reads no mode stops.
func lockedSession(t *testing.T, lock ...string) (*Overlay, string, func(string) string) {
	t.Helper()
	needOverlay(t)
	if os.Geteuid() == 0 {
		t.Skip("as root, a mode hides nothing: TestOverlayAsUser runs it as uid 65534")
	}
	o, tmp := overlaySession(t, map[string]string{"locked/secret": "SECRET\n", "secret.txt": "SECRET\n",
		"a.txt": "a\n", "run.sh": "#!/bin/sh\n"})
	for _, rel := range lock {
		p := filepath.Join(o.Lower, rel)
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o755) })
	}
	return o, tmp, func(rel string) string { return filepath.Join(o.Target, rel) }
}

// TestOverlayLockedFile: a file of the project its owner cannot read
// (mode 000) stays unreadable: its mode change is refused, by chmod(2),
// by fchmodat(2) without following a link, by fchmodat2(2) on an O_PATH
// descriptor (AT_EMPTY_PATH), and by fchmod(2), on a file of mode 200
// the harness can open for writing.
func TestOverlayLockedFile(t *testing.T) {
	o, tmp, in := lockedSession(t, "secret.txt")
	wonly := filepath.Join(o.Lower, "a.txt")
	if err := os.Chmod(wonly, 0o200); err != nil {
		t.Fatal(err)
	}
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"read", in("secret.txt")},
		[]string{"chmodto", in("secret.txt"), "644"},
		[]string{"lchmod", in("secret.txt"), "644"},
		[]string{"fchmodat2", in("secret.txt"), "644", "1000"},
		[]string{"read", in("secret.txt")},
		[]string{"fchmod", in("a.txt"), "644"},
		[]string{"read", in("a.txt")},
		[]string{"statmode", in("secret.txt")})
	want := []string{"EACCES", "EPERM", "EPERM", "EPERM", "EACCES", "EPERM", "EACCES", "0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("read, chmod, lchmod, read of a file of mode 000, fchmod and read of one of 200, the mode = %v, want %v", got, want)
	}
}

// TestOverlayLockedACL: an access ACL that would give a locked file's
// owner read (setfacl -m u::rw) is refused as its chmod is.
func TestOverlayLockedACL(t *testing.T) {
	o, tmp, in := lockedSession(t, "secret.txt", "locked")
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"setfacl", in("secret.txt")},
		[]string{"read", in("secret.txt")},
		[]string{"setfacl", in("locked")},
		[]string{"read", in("locked/secret")})
	want := []string{"EPERM", "EACCES", "EPERM", "EACCES"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("setfacl and read of a file of mode 000, of a directory = %v, want %v", got, want)
	}
}

// TestOverlayChmod: the mode changes of the harness's own readable files
// in the tree are made, as without the supervisor: chmod +x of a script,
// fchmod of an open file, an ACL, a mode that locks a file (and, once
// locked by the harness, the harness cannot unlock it either: it is
// then locked like the user's), a file outside the tree, fchmodat2(2)
// on an O_PATH descriptor; fchmod(2) of an O_PATH descriptor and an
// unknown flag of fchmodat2(2) fail as the kernel fails them.
func TestOverlayChmod(t *testing.T) {
	needOverlay(t)
	o, tmp := overlaySession(t, map[string]string{"a.txt": "a\n", "run.sh": "#!/bin/sh\n", "b.txt": "b\n"})
	if err := os.WriteFile(filepath.Join(tmp, "out.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	in := func(rel string) string { return filepath.Join(o.Target, rel) }
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"chmodto", in("run.sh"), "755"},
		[]string{"statmode", in("run.sh")},
		[]string{"fchmod", in("a.txt"), "600"},
		[]string{"statmode", in("a.txt")},
		[]string{"fchmod-opath", in("a.txt"), "644"},
		[]string{"setfacl", in("a.txt")},
		[]string{"statmode", in("a.txt")},
		[]string{"chmodto", filepath.Join(tmp, "out.txt"), "600"},
		[]string{"statmode", filepath.Join(tmp, "out.txt")},
		[]string{"chmodto", in("b.txt"), "0"},
		[]string{"chmodto", in("b.txt"), "644"},
		[]string{"chmodto", in("missing"), "644"},
		[]string{"fchmodat2", in("run.sh"), "700", "1000"},
		[]string{"statmode", in("run.sh")},
		[]string{"fchmodat2", in("run.sh"), "755", "8000"})
	want := []string{"OK", "755", "OK", "600", "EBADF", "OK", "644", "OK", "600", "OK", "EPERM", "ENOENT", "OK", "700", "EINVAL"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("mode changes in the tree and outside = %v, want %v", got, want)
	}
	fi, err := os.Stat(filepath.Join(o.Upper, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("upper run.sh: %v, %v; want mode 700", fi, err)
	}
}

// TestOverlayChmodSymlink: a change through a symbolic link is judged by
// the file it reaches: refused for a locked file, made for a readable
// one, and a link swapped between the two while the harness changes
// its mode never makes the locked file readable.
func TestOverlayChmodSymlink(t *testing.T) {
	o, tmp, in := lockedSession(t, "secret.txt")
	for name, target := range map[string]string{"to-secret": "secret.txt", "to-a": "a.txt", "race": "a.txt"} {
		if err := os.Symlink(target, filepath.Join(o.Lower, name)); err != nil {
			t.Fatal(err)
		}
	}
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"chmodto", in("to-secret"), "644"},
		[]string{"chmodto", in("to-a"), "600"},
		[]string{"statmode", in("a.txt")},
		[]string{"lchmod", in("to-secret"), "644"},
		[]string{"chmodrace", in("race"), in("a.txt"), in("secret.txt"), "2000"},
		[]string{"read", in("secret.txt")},
		[]string{"statmode", in("secret.txt")})
	want := []string{"EPERM", "OK", "600", "ENOTSUP", "OK", "EACCES", "0"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("chmod through links to a locked and a readable file, lchmod of a link, a raced link, read = %v, want %v", got, want)
	}
}

// TestThreadCapless: threadCapless tells a thread with effective
// capabilities (the test's, as root) from one without; the supervisor
// refuses every change when it finds its helper's thread with any.
func TestThreadCapless(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs capabilities to drop")
	}
	if threadCapless() {
		t.Errorf("threadCapless() as root = true, want false")
	}
	got := make(chan bool)
	go func() {
		// The thread ends with the goroutine: locked, never unlocked.
		runtime.LockOSThread()
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			t.Error(err)
		}
		data[0].Effective, data[1].Effective = 0, 0
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			t.Error(err)
		}
		got <- threadCapless()
	}()
	if !<-got {
		t.Errorf("threadCapless() with no effective capability = false, want true")
	}
}

// TestOverlayGitCheckoutModes: git in the tree changes the modes it
// changes, through the supervisor: a checkout of the commit that makes
// a script executable, and, in a repository shared with a group
// (core.sharedRepository), the chmod(2) git gives each file it writes
// in .git (a commit).
func TestOverlayGitCheckoutModes(t *testing.T) {
	needOverlay(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	o, tmp := overlaySession(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	for _, args := range [][]string{{"init", "-q", "--shared=group"}, {"add", "."}, {"commit", "-qm", "init"},
		{"update-index", "--chmod=+x", "run.sh"}, {"commit", "-qm", "x"}, {"branch", "exec"},
		{"reset", "-q", "--hard", "HEAD~"}} {
		cmd := exec.Command(git, append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
		cmd.Dir = o.Lower
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	in := func(rel string) string { return filepath.Join(o.Target, rel) }
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"statmode", in("run.sh")},
		[]string{"exec", git, "checkout", "-q", "exec"},
		[]string{"statmode", in("run.sh")},
		[]string{"exec", git, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "empty"})
	if want := []string{"644", "OK", "755", "OK"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("run.sh's mode, git checkout of the commit that makes it executable, its mode, a commit = %v, want %v", got, want)
	}
}

// TestOverlayLockedOtherFS: a locked file is judged as locked when the
// project and the session are on different file systems, where the
// overlay shows a file of the lower layer with a device number of its
// own, not the overlay's (no xino): the project on the disk, the
// session on tmpfs.
func TestOverlayLockedOtherFS(t *testing.T) {
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		t.Skip("no /dev/shm")
	}
	var a, b unix.Stat_t
	if unix.Stat("/dev/shm", &a) != nil || unix.Stat(outsideTmp(), &b) != nil || a.Dev == b.Dev {
		t.Skip("/dev/shm and " + outsideTmp() + " are one file system")
	}
	o, tmp, in := lockedSession(t, "secret.txt")
	shm, err := os.MkdirTemp("/dev/shm", "overlay-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	moved := &Overlay{Lower: o.Lower, Upper: filepath.Join(shm, "upper"), Work: filepath.Join(shm, "work"), Target: o.Target}
	for _, d := range []string{moved.Upper, moved.Work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { RemoveOverlayDirs(moved.Upper, moved.Work) })
	got := probeIn(t, o.Target, overlayPolicy(moved, tmp),
		[]string{"read", in("a.txt")},
		[]string{"chmodto", in("secret.txt"), "644"},
		[]string{"read", in("secret.txt")})
	if want := []string{"OK", "EPERM", "EACCES"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("read, chmod and read of a file of mode 000, the session on another file system = %v, want %v", got, want)
	}
}

// TestOverlayChmod32: a 32-bit program's chmod(2) goes through the
// supervisor too (the 32-bit ABI has numbers of its own): refused on a
// locked file of the tree, made on a readable one. Built with the go
// command for 386, where the machine runs such programs (x86-64); as
// root, whose judgement by the mode is the same.
func TestOverlayChmod32(t *testing.T) {
	needOverlay(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("32-bit programs are built for 386 only")
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	o, tmp := overlaySession(t, map[string]string{"secret.txt": "SECRET\n", "run.sh": "#!/bin/sh\n"})
	bin := filepath.Join(tmp, "chmod32") // the harness's /tmp is its own
	build := exec.Command(gocmd, "build", "-o", bin, "./testdata/chmod32")
	build.Env = append(os.Environ(), "GOARCH=386", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Skipf("cannot build a 386 program: %v\n%s", err, out)
	}
	if err := exec.Command(bin, bin, "755").Run(); err != nil {
		t.Skipf("32-bit programs do not run here: %v", err)
	}
	if err := os.Chmod(filepath.Join(o.Lower, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	in := func(rel string) string { return filepath.Join(o.Target, rel) }
	got := probeIn(t, o.Target, overlayPolicy(o, tmp),
		[]string{"exec", bin, in("secret.txt"), "644"},
		[]string{"statmode", in("secret.txt")},
		[]string{"exec", bin, in("run.sh"), "755"},
		[]string{"statmode", in("run.sh")})
	if want := []string{"exit 1", "0", "OK", "755"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("a 32-bit chmod of a file of mode 000 (exit 1: EPERM), its mode, of a readable one, its mode = %v, want %v", got, want)
	}
}
