package confine

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Changing the mode of a locked file in the overlay. overlayfs reaches
// its layers with the mounter's credentials, and the launcher mounts it
// with CAP_DAC_OVERRIDE over the user's files: a file or directory of
// the user's that its owner cannot read (mode 000, say) stays closed to
// the harness in the merged tree, where the caller's rights are checked
// against the mode, but the harness, its owner too, may change that
// mode, and the overlay then copies the file up with the mounter's
// rights and the content becomes the harness's to read. The copy never
// gives an agent such a file.
//
// So, with an Overlay, the supervisor of the renames (rename_linux.go)
// receives the mode and ACL changes too: chmod(2), fchmod(2),
// fchmodat(2), fchmodat2(2), and setxattr(2), lsetxattr(2) and
// fsetxattr(2) (a POSIX ACL is an extended attribute, and its owner
// entry is the owner's mode), of the native and the 32-bit ABI. It
// resolves the call's target once, as the kernel would (following the
// last link or not), checks that one file, and refuses the change
// (EPERM) when the file is in the overlay and its mode denies its owner
// read (a directory: read or search); otherwise it makes the change on
// that same file, with the harness's rights (from a thread without
// capabilities, selfCall). It makes every such call itself, even outside the
// overlay: a call left to the kernel would be read again from the
// caller's memory and resolved again, and a path or a name changed
// meanwhile by another of its threads, or a link swapped, would reach a
// locked file. Unknown flags fail with EINVAL, as the kernel fails them.

// modeCall is what a mode or attribute call asks, read from the caller.
type modeCall struct {
	op     modeOp
	fd     int64  // the directory (or, for fchmod and fsetxattr, the file) descriptor
	path   string // empty for fchmod and fsetxattr
	follow bool   // whether the path's last link is followed
	empty  bool   // AT_EMPTY_PATH: an empty path names fd
	mode   uint32
	name   string // the attribute's
	value  []byte
	flags  int // setxattr's
}

// modeOp is a modeCall's kind.
type modeOp int

const (
	opChmod modeOp = iota
	opXattr
)

// modeCalls are the mode and attribute calls of one ABI, in the order
// chmod, fchmod, fchmodat, fchmodat2, setxattr, lsetxattr, fsetxattr; an
// architecture without chmod(2) names fchmodat(2) in its place.
type modeCalls [7]uint32

// Which of modeCalls each is.
const (
	callChmod = iota
	callFchmod
	callFchmodat
	callFchmodat2
	callSetxattr
	callLsetxattr
	callFsetxattr
)

// xattrSizeMax and xattrNameMax are the kernel's XATTR_SIZE_MAX and
// XATTR_NAME_MAX.
const (
	xattrSizeMax = 65536
	xattrNameMax = 255
)

// readModeCall reads the call req asks from its caller's memory: nil,
// false when req is not a mode call, an error for what the kernel would
// refuse before resolving a path.
func readModeCall(req *seccompNotif) (*modeCall, bool, error) {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		return nil, false, nil
	}
	calls := a.modes
	if req.Arch == a.compat {
		calls = a.compatModes
	} else if req.Arch != a.native {
		return nil, false, nil
	}
	which := -1
	for i := len(calls) - 1; i >= 0; i-- { // fchmodat before a chmod that names it
		if uint32(req.NR) == calls[i] {
			which = i
			break
		}
	}
	if which < 0 {
		return nil, false, nil
	}
	pid := int(req.PID)
	c := &modeCall{fd: unix.AT_FDCWD, follow: true}
	arg := req.Args
	if req.Arch == a.compat { // 32-bit registers: pointers and numbers are their low words
		for i := range arg {
			arg[i] = uint64(uint32(arg[i]))
		}
	}
	var pathPtr uint64
	switch which {
	case callChmod:
		c.op, pathPtr, c.mode = opChmod, arg[0], uint32(arg[1])
	case callFchmod:
		c.op, c.fd, c.mode = opChmod, int64(int32(arg[0])), uint32(arg[1])
	case callFchmodat, callFchmodat2:
		c.op, c.fd, pathPtr, c.mode = opChmod, int64(int32(arg[0])), arg[1], uint32(arg[2])
		if which == callFchmodat2 {
			flags := uint32(arg[3])
			if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
				return nil, true, unix.EINVAL
			}
			c.follow, c.empty = flags&unix.AT_SYMLINK_NOFOLLOW == 0, flags&unix.AT_EMPTY_PATH != 0
		}
	case callSetxattr, callLsetxattr:
		c.op, pathPtr, c.follow = opXattr, arg[0], which == callSetxattr
	case callFsetxattr:
		c.op, c.fd = opXattr, int64(int32(arg[0]))
	}
	if c.op == opXattr {
		if err := readXattr(pid, c, arg); err != nil {
			return nil, true, err
		}
	}
	if which != callFchmod && which != callFsetxattr {
		path, err := readCString(pid, pathPtr)
		if err != nil {
			return nil, true, unix.EFAULT
		}
		if path == "" && !c.empty {
			return nil, true, unix.ENOENT
		}
		c.path = path
	}
	return c, true, nil
}

// readXattr reads a setxattr call's name, value and flags (args[1] to
// args[4]) into c.
func readXattr(pid int, c *modeCall, arg [6]uint64) error {
	c.flags = int(int32(arg[4]))
	if c.flags&^(unix.XATTR_CREATE|unix.XATTR_REPLACE) != 0 {
		return unix.EINVAL
	}
	name, err := readCString(pid, arg[1])
	switch {
	case err != nil:
		return unix.EFAULT
	case name == "" || len(name) > xattrNameMax:
		return unix.ERANGE
	}
	c.name = name
	size := arg[3]
	if size > xattrSizeMax {
		return unix.E2BIG
	}
	if size == 0 {
		return nil
	}
	c.value = make([]byte, size)
	got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &c.value[0], Len: size}},
		[]unix.RemoteIovec{{Base: uintptr(arg[2]), Len: int(size)}}, 0)
	if err != nil || uint64(got) != size {
		return unix.EFAULT
	}
	return nil
}

// answerMode answers a mode or attribute call of the caller: refused
// where it would unlock a file of the overlay, made by the launcher
// otherwise. ok is false for a call that is none of those.
func answerMode(listener int, req *seccompNotif) (resp seccompNotifResp, ok bool) {
	resp = seccompNotifResp{ID: req.ID}
	c, ok, err := readModeCall(req)
	if !ok {
		return resp, false
	}
	if err == nil {
		err = c.run(listener, req)
	}
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.EPERM
		}
		resp.Error = -int32(errno)
	}
	return resp, true
}

// run resolves c's target for the caller of req, judges it and makes the
// change.
func (c *modeCall) run(listener int, req *seccompNotif) error {
	if !supervisorCapless {
		return unix.EPERM // fail closed: the change would be made with more rights than the caller's
	}
	fd, err := c.target(int(req.PID))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if lockedInOverlay(fd, &st) {
		return unix.EPERM
	}
	// The caller may have gone, and its id been reused: then nothing
	// read is its.
	id := req.ID
	if ioctlPtr(listener, seccompIoctlNotifIDValid, unsafe.Pointer(&id)) != nil {
		return unix.ESRCH
	}
	return c.change(fd, &st)
}

// lockedInOverlay reports whether st, the status of fd, is of a file in
// the overlay whose mode denies its owner read (a directory: read or
// search).
func lockedInOverlay(fd int, st *unix.Stat_t) bool {
	if !onOverlay(fd, st) {
		return false
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return st.Mode&0o500 != 0o500
	}
	return st.Mode&0o400 == 0
}

// onOverlay reports whether fd, whose status is st, is a file of the
// overlay. A directory has the overlay's device number; a file has it
// only where the layers are on one file system: otherwise (no xino) it
// has one per layer, so the file system's own statfs(2), which overlayfs
// answers alike for every file of the mount, decides.
func onOverlay(fd int, st *unix.Stat_t) bool {
	var o unix.Stat_t
	if overlayFD < 0 || unix.Fstat(overlayFD, &o) != nil {
		return false
	}
	if st.Dev == o.Dev {
		return true
	}
	var a, b unix.Statfs_t
	return unix.Fstatfs(fd, &a) == nil && unix.Fstatfs(overlayFD, &b) == nil &&
		a.Type == unix.OVERLAYFS_SUPER_MAGIC && a.Type == b.Type && a.Fsid == b.Fsid
}

// target opens, for the launcher, the one file c changes: for fchmod
// and fsetxattr the caller's own open file (its very open file
// description, so that what the kernel refuses on it, an O_PATH
// descriptor, is refused alike), otherwise the file its path names,
// O_PATH, resolved from the caller's directory or root.
func (c *modeCall) target(tid int) (int, error) {
	proc := "/proc/" + callerProcess(tid)
	switch {
	case c.path == "" && c.fd == unix.AT_FDCWD: // AT_EMPTY_PATH: the working directory
		return unix.Open(proc+"/cwd", unix.O_PATH|unix.O_CLOEXEC, 0)
	case c.path == "":
		return callerFD(proc, c.fd)
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !c.follow {
		flags |= unix.O_NOFOLLOW
	}
	if strings.HasPrefix(c.path, "/") && !(sameFile(proc+"/ns/mnt", &selfMountNS) && sameFile(proc+"/root", &selfRoot)) {
		// Another mount namespace or root (a nested sandbox): its
		// absolute paths are read from its root, never above it.
		root, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, unix.EPERM
		}
		defer unix.Close(root)
		return unix.Openat2(root, c.path, &unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_IN_ROOT})
	}
	path := callerPath(tid, c.path)
	dir, err := callerDir(proc, c.fd, path)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dir)
	return unix.Openat(dir, path, flags, 0)
}

// callerFD returns a copy of the caller's descriptor fd (pidfd_getfd(2)).
func callerFD(proc string, fd int64) (int, error) {
	if fd < 0 {
		return -1, unix.EBADF
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(proc, "/proc/"))
	if err != nil {
		return -1, unix.EPERM
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1, unix.EPERM
	}
	defer unix.Close(pidfd)
	return unix.PidfdGetfd(pidfd, int(fd), 0)
}

// change makes c's change on fd, the file st is of.
func (c *modeCall) change(fd int, st *unix.Stat_t) error {
	isLink := st.Mode&unix.S_IFMT == unix.S_IFLNK
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	switch {
	case c.path == "" && !c.empty && c.op == opChmod: // fchmod: the descriptor's own rules (EBADF for O_PATH)
		return selfCall(func() error { return unix.Fchmod(fd, c.mode) })
	case c.path == "" && !c.empty: // fsetxattr
		return selfCall(func() error { return unix.Fsetxattr(fd, c.name, c.value, c.flags) })
	case isLink && c.op == opChmod:
		return unix.EOPNOTSUPP // a link has no mode of its own, as fchmodat2(2) says
	case isLink && strings.HasPrefix(c.name, "system.posix_acl_"):
		return unix.EOPNOTSUPP
	case isLink:
		return unix.EPERM // user attributes are for regular files and directories only
	case c.op == opChmod:
		return selfCall(func() error { return unix.Fchmodat(unix.AT_FDCWD, self, c.mode, 0) })
	}
	return selfCall(func() error { return unix.Setxattr(self, c.name, c.value, c.flags) })
}

// The supervisor's own calls. Its filter is on its own thread (the
// harness inherits it from that thread's fork), so a chmod or setxattr
// of its own would go to its own listener, which it alone reads. So the
// change, on a descriptor the supervisor has resolved and judged, is
// made by a helper: a goroutine locked to a thread of its own, which
// has no such filter (the launcher's other threads never had it) and
// drops every capability first (capabilities are per thread), and is
// checked to have neither; the supervisor refuses every change when
// the check fails. The helper needs no Landlock domain of the harness's:
// it reads no caller's memory nor /proc, and Landlock does not govern
// a mode or an attribute.
var (
	selfCalls chan func() // the helper's, nil while nobody supervises
	// supervisorCapless is whether the helper was found without
	// capabilities (CapEff 0) and without the supervisor's filter: a
	// change it makes is then made with the harness's rights, no more,
	// and never waits for the supervisor; otherwise every change is
	// refused.
	supervisorCapless bool
)

// startSelfCalls starts the helper, from the supervisor's thread, and
// waits until it has checked itself.
func startSelfCalls() {
	filters := statusValue("Seccomp_filters")
	calls := make(chan func())
	ok := make(chan bool)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the launcher
		ok <- dropThreadCaps() == nil && threadCapless() && statusValue("Seccomp_filters") < filters
		for f := range calls {
			f()
		}
	}()
	supervisorCapless = <-ok
	selfCalls = calls
}

// dropThreadCaps clears the calling thread's effective, permitted and
// inheritable capabilities.
func dropThreadCaps() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// statusValue returns a number field of the calling thread's
// /proc/thread-self/status (decimal), -1 when it cannot be read.
func statusValue(name string) int {
	if v, ok := threadStatus(name); ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return -1
}

// threadStatus returns the field name of the calling thread's
// /proc/thread-self/status, its value trimmed, and whether it was found.
func threadStatus(name string) (string, bool) {
	b, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// selfCall runs f, a mode or attribute change of the supervisor's, on
// the helper. Outside the supervisor (no filter) it runs f itself.
func selfCall(f func() error) error {
	if selfCalls == nil {
		return f()
	}
	done := make(chan error, 1)
	selfCalls <- func() { done <- f() }
	return <-done
}

// threadCapless reports whether the calling thread has no effective
// capability, as its /proc/thread-self/status says.
func threadCapless() bool {
	v, ok := threadStatus("CapEff")
	if !ok {
		return false
	}
	n, err := strconv.ParseUint(v, 16, 64)
	return err == nil && n == 0
}

// chmodUnlocked gives the file fd (O_PATH) mode, unless it is a link
// (EXDEV: a copy changed under the launcher) or a locked file of the
// overlay (EPERM).
func chmodUnlocked(fd int, mode uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return unix.EXDEV
	case lockedInOverlay(fd, &st):
		return unix.EPERM
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	return selfCall(func() error { return unix.Fchmodat(unix.AT_FDCWD, self, mode, 0) })
}
