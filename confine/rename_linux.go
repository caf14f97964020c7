package confine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Renaming a directory in the overlay. With userxattr, overlayfs refuses
// redirect_dir, so rename(2) of a directory that exists in the lower
// layer fails with EXDEV: mv(1) falls back to a copy, but a program that
// calls rename(2) alone (git mv of a directory) fails. Neither the kernel
// nor a mount option lets an unprivileged overlay record the rename
// (redirect_dir needs trusted extended attributes, which need
// CAP_SYS_ADMIN outside the namespace), and a preloaded library would
// miss static binaries and Go programs. So the launcher supervises the
// renames: with an Overlay, the harness runs under a second seccomp
// filter that sends rename(2), renameat(2) and renameat2(2) to the
// launcher (SECCOMP_RET_USER_NOTIF), which renames in its place, from
// the harness's working directory or directory descriptor (/proc/PID/cwd,
// /proc/PID/fd/N), and, when the rename fails with EXDEV for a directory
// inside the overlay, does what mv(1) does: copies the directory to the
// new name and removes the old one, then answers that the rename
// happened.
//
// What the launcher may do there is what the harness may: the thread
// that renames has no capability (it drops them first) and is under the
// same Landlock domain, so paths the agent chose, or changed under the
// launcher's feet, reach nothing the agent could not reach itself. The
// launcher declines (the kernel runs the call as it was, as the caller)
// where the caller is in another mount namespace or root (a nested
// sandbox), or where it cannot read the caller's memory, and for every
// rename but a directory's inside the overlay (overlayDir): a caller
// under a Landlock domain of its own below the harness's keeps it then.
// A directory inside the overlay is moved with the harness's rights.
//
// Costs and limits: every rename takes a round trip through the launcher
// (measured by BenchmarkRename); a directory renamed by copy is not atomic
// and takes the time of its contents; its hard links are copied apart,
// its files' owners are the harness's. 32-bit programs' renames are not
// supervised (EXDEV stays theirs).

// seccompIoctlNotifIDValid is SECCOMP_IOCTL_NOTIF_ID_VALID, which x/sys
// does not name: _IOW('!', 2, __u64).
const seccompIoctlNotifIDValid = 0x40082102

// seccompNotif is struct seccomp_notif, and seccompNotifResp struct
// seccomp_notif_resp.
type seccompNotif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	NR    int32
	Arch  uint32
	IP    uint64
	Args  [6]uint64
}

type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// launcherRenameFD is the descriptor number the launcher renames from
// (renameat2(2)'s first argument): the filter lets those calls through,
// or the launcher, which answers on the thread that carries the filter,
// would wait for itself. A harness that uses the same number gets the
// kernel's rename, as without the launcher: nothing more.
const launcherRenameFD = 1000

// superviseFilter returns the program of the filter that sends a's
// native rename calls to the launcher, but renameat2(2) from
// launcherRenameFD, and the mode and attribute calls of both ABIs
// (modes_linux.go); every other call is allowed (the terminal filter
// decides about the other architectures).
func superviseFilter(a seccompArch) ([]bpf.RawInstruction, error) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		notify = unix.SECCOMP_RET_USER_NOTIF
	)
	var p labeled
	p.add(bpf.LoadAbsolute{Off: seccompArchOff, Size: 4})
	p.jumpIf(bpf.JumpEqual, a.native, "native", "")
	p.jumpIf(bpf.JumpEqual, a.compat, "compat", "allow")
	p.label("native")
	p.add(bpf.LoadAbsolute{Off: seccompNR, Size: 4})
	p.jumpIf(bpf.JumpEqual, a.renames[0], "notify", "")
	p.jumpIf(bpf.JumpEqual, a.renames[1], "notify", "")
	p.jumpIf(bpf.JumpEqual, a.renames[2], "renameat2", "")
	for _, nr := range a.modes {
		p.jumpIf(bpf.JumpEqual, nr, "notify", "")
	}
	p.jump("allow")
	p.label("renameat2")
	p.add(bpf.LoadAbsolute{Off: seccompArg0Low, Size: 4})
	p.jumpIf(bpf.JumpEqual, launcherRenameFD, "allow", "notify")
	p.label("compat")
	p.add(bpf.LoadAbsolute{Off: seccompNR, Size: 4})
	for _, nr := range a.compatModes {
		p.jumpIf(bpf.JumpEqual, nr, "notify", "")
	}
	p.label("allow")
	p.add(bpf.RetConstant{Val: allow})
	p.label("notify")
	p.add(bpf.RetConstant{Val: notify})
	return p.assemble()
}

// labeled is a BPF program whose jumps name their targets (labels), so
// that nobody counts skips by hand.
type labeled struct {
	insns  []bpf.Instruction
	jumps  map[int][2]string // index of a JumpIf: its true and false targets, "" the next
	labels map[string]int
}

// add appends an instruction.
func (p *labeled) add(i bpf.Instruction) { p.insns = append(p.insns, i) }

// label names the next instruction.
func (p *labeled) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.insns)
}

// jumpIf appends a conditional jump to the labels ifTrue and ifFalse
// ("" the next instruction).
func (p *labeled) jumpIf(cond bpf.JumpTest, val uint32, ifTrue, ifFalse string) {
	if p.jumps == nil {
		p.jumps = map[int][2]string{}
	}
	p.jumps[len(p.insns)] = [2]string{ifTrue, ifFalse}
	p.add(bpf.JumpIf{Cond: cond, Val: val})
}

// jump appends a jump to the label to.
func (p *labeled) jump(to string) {
	if p.jumps == nil {
		p.jumps = map[int][2]string{}
	}
	p.jumps[len(p.insns)] = [2]string{to, ""}
	p.add(bpf.Jump{})
}

// assemble resolves the jumps and assembles the program.
func (p *labeled) assemble() ([]bpf.RawInstruction, error) {
	skip := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := p.labels[label]
		if !ok || to <= from || to-from-1 > 255 {
			return 0, fmt.Errorf("bad jump from %d to %q", from, label)
		}
		return uint8(to - from - 1), nil
	}
	for i, targets := range p.jumps {
		if _, ok := p.insns[i].(bpf.Jump); ok {
			n, err := skip(i, targets[0])
			if err != nil {
				return nil, err
			}
			p.insns[i] = bpf.Jump{Skip: uint32(n)}
			continue
		}
		j := p.insns[i].(bpf.JumpIf)
		var err1, err2 error
		j.SkipTrue, err1 = skip(i, targets[0])
		j.SkipFalse, err2 = skip(i, targets[1])
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		p.insns[i] = j
	}
	return bpf.Assemble(p.insns)
}

// seccompArg0Low is the offset of the low word of seccomp_data.args[0].
const seccompArg0Low = 16

// superviseRenames installs the rename filter on the calling thread only
// (the one that forks the harness) and returns its listener. The caller
// has locked its OS thread and set no_new_privs.
func superviseRenames() (int, error) {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		return -1, fmt.Errorf("no rename filter for %s", runtime.GOARCH)
	}
	raw, err := superviseFilter(a)
	if err != nil {
		return -1, err
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// WAIT_KILLABLE_RECV (Linux 5.19, below the Landlock ABI the
	// launcher needs): once the launcher has received a call, a signal
	// to the caller (the Go runtime's preemption signal, every 10 ms)
	// no longer interrupts and restarts it, which would repeat a rename
	// the launcher did and fail it (ENOENT).
	const flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return -1, fmt.Errorf("cannot supervise the renames: seccomp: %w", errno)
	}
	return int(fd), nil
}

// superviseUntil runs init (nsInit) on another goroutine and, on this
// one, the thread that forked the harness, answers the renames listener
// brings and sends the signals init asks for (its kill), until init
// returns; it returns what init returned. Both must come from this
// thread: it has no capability left and the very Landlock domain the
// harness's descends from, and Landlock lets a process read another's
// memory and /proc links, and signal it, only from that process's
// domain or an enclosing one, while go-landlock gives each of the
// launcher's other threads a domain of its own.
func superviseUntil(listener int, init func(killFunc) int) int {
	var wake [2]int
	if err := unix.Pipe2(wake[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		// No supervisor: the renames get ENOSYS once the listener is
		// closed, the signals are sent from here.
		unix.Close(listener)
		return init(syscall.Kill)
	}
	if unix.Stat("/proc/self/ns/mnt", &selfMountNS) != nil || unix.Stat("/", &selfRoot) != nil {
		unix.Close(listener)
		return init(syscall.Kill)
	}
	calls := make(chan func(), 16)
	supervisorCalls = calls
	startSelfCalls()
	kill := func(pid int, sig syscall.Signal) error {
		done := make(chan error, 1)
		calls <- func() { done <- syscall.Kill(pid, sig) }
		_, _ = unix.Write(wake[1], []byte{0})
		return <-done
	}
	code := make(chan int, 1)
	go func() {
		code <- init(kill)
		_, _ = unix.Write(wake[1], []byte{0})
	}()
	fds := []unix.PollFd{{Fd: int32(listener), Events: unix.POLLIN}, {Fd: int32(wake[0]), Events: unix.POLLIN}}
	buf := make([]byte, 64)
	for {
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return <-code
		}
		if fds[1].Revents != 0 {
			for n, _ := unix.Read(wake[0], buf); n > 0; n, _ = unix.Read(wake[0], buf) {
			}
		drain:
			for {
				select {
				case f := <-calls:
					f()
				case c := <-code:
					return c
				default:
					break drain
				}
			}
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			answerOne(listener)
		}
	}
}

// supervisorCalls are the calls superviseUntil runs on its thread for
// init (the signals it sends), nil until it runs.
var supervisorCalls chan func()

// supervisorTick runs the calls waiting for the supervisor, and fails
// with EINTR once the request id of listener is no longer valid (its
// caller was killed): a directory moved by copy takes the time of its
// contents, and neither the signals init sends (workforce's SIGTERM,
// the end of what is left) nor a copy for nobody should wait for it.
func supervisorTick(listener int, id uint64) error {
	for supervisorCalls != nil {
		select {
		case f := <-supervisorCalls:
			f()
			continue
		default:
		}
		break
	}
	if ioctlPtr(listener, seccompIoctlNotifIDValid, unsafe.Pointer(&id)) != nil {
		return unix.EINTR
	}
	return nil
}

// answerOne receives one call from listener and answers it.
func answerOne(listener int) {
	var req seccompNotif
	if err := ioctlPtr(listener, unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&req)); err != nil {
		return // EINTR, or ENOENT: the caller is gone
	}
	answer(listener, &req)
}

// answer answers req, a rename or a mode call.
func answer(listener int, req *seccompNotif) {
	resp, ok := answerMode(listener, req)
	if !ok {
		resp = answerRename(listener, req)
	}
	_ = ioctlPtr(listener, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// ioctlPtr is ioctl(2) with a pointer argument.
func ioctlPtr(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

// renameCall is a rename call read from the harness: the directories
// its paths are relative to (descriptors of the launcher's) and its
// flags.
type renameCall struct {
	oldDir, newDir int
	oldPath        string
	newPath        string
	flags          uint
	// tick is called between the entries of a directory moved by
	// copy: it runs what the supervisor was asked meanwhile (signals to
	// send) and fails once the caller is gone. Nil: nothing to do.
	tick func() error
}

// answerRename answers req: the rename done (or failed) by the launcher,
// or, where it declines, the kernel's to run.
func answerRename(listener int, req *seccompNotif) seccompNotifResp {
	resp := seccompNotifResp{ID: req.ID}
	call, err := readRename(listener, req)
	if err != nil {
		resp.Flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		return resp
	}
	defer call.close()
	if err := doRename(call); err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.EIO
		}
		resp.Error = -int32(errno)
	}
	return resp
}

// errDecline is readRename's answer for a call the launcher leaves to the
// kernel.
var errDecline = errors.New("declined")

// readRename reads req's rename call from the harness: its arguments,
// the paths from its memory, its directories from its /proc. It declines
// a caller in another mount namespace or root, and a request gone.
func readRename(listener int, req *seccompNotif) (*renameCall, error) {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		return nil, errDecline
	}
	proc := "/proc/" + strconv.FormatUint(uint64(req.PID), 10)
	if !sameFile(proc+"/ns/mnt", &selfMountNS) || !sameFile(proc+"/root", &selfRoot) {
		return nil, errDecline
	}
	var oldDir, newDir int64 = unix.AT_FDCWD, unix.AT_FDCWD
	var oldPtr, newPtr uint64
	var flags uint
	switch uint32(req.NR) {
	case a.renames[0]: // rename(old, new), where the architecture has it
		if a.renames[0] == a.renames[1] {
			oldDir, oldPtr, newDir, newPtr = int64(int32(req.Args[0])), req.Args[1], int64(int32(req.Args[2])), req.Args[3]
		} else {
			oldPtr, newPtr = req.Args[0], req.Args[1]
		}
	case a.renames[1], a.renames[2]:
		oldDir, oldPtr, newDir, newPtr = int64(int32(req.Args[0])), req.Args[1], int64(int32(req.Args[2])), req.Args[3]
		if uint32(req.NR) == a.renames[2] {
			flags = uint(uint32(req.Args[4]))
		}
	default:
		return nil, errDecline
	}
	pid := int(req.PID)
	oldPath, err1 := readCString(pid, oldPtr)
	newPath, err2 := readCString(pid, newPtr)
	if err1 != nil || err2 != nil {
		return nil, errDecline
	}
	oldPath, newPath = callerPath(pid, oldPath), callerPath(pid, newPath)
	call := &renameCall{oldDir: -1, newDir: -1, oldPath: oldPath, newPath: newPath, flags: flags,
		tick: func() error { return supervisorTick(listener, req.ID) }}
	var err error
	if call.oldDir, err = callerDir(proc, oldDir, oldPath); err == nil {
		call.newDir, err = callerDir(proc, newDir, newPath)
	}
	if err == nil && !overlayDir(call) {
		err = errDecline
	}
	// The process may have gone, and its id been reused, since the
	// request came: then nothing read is its.
	id := req.ID
	if err == nil && ioctlPtr(listener, seccompIoctlNotifIDValid, unsafe.Pointer(&id)) != nil {
		err = errDecline
	}
	if err != nil {
		call.close()
		return nil, errDecline
	}
	return call, nil
}

// overlayDir reports whether c renames a directory inside the overlay,
// the one rename the kernel refuses (EXDEV) and only the launcher can
// make. Every other call is the kernel's to run as the caller: with the
// caller's own Landlock domain, which may be narrower than the
// harness's (a tool's own sandbox), where the launcher's is the
// harness's. A name changed after this look gets the kernel's answer,
// at worst the EXDEV it would give without the launcher.
func overlayDir(c *renameCall) bool {
	parent, base, err := openParent(c.oldDir, c.oldPath)
	if err != nil {
		return false
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	return unix.Fstatat(parent, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
		inOverlay(parent)
}

// close closes the call's directory descriptors.
func (c *renameCall) close() {
	for _, fd := range []int{c.oldDir, c.newDir} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// selfMountNS and selfRoot are the launcher's mount namespace and root
// directory, as stat(2) finds them (superviseUntil): a caller's must be
// the same.
var selfMountNS, selfRoot unix.Stat_t

// sameFile reports whether path reaches the file st is of.
func sameFile(path string, st *unix.Stat_t) bool {
	var s unix.Stat_t
	return unix.Stat(path, &s) == nil && s.Dev == st.Dev && s.Ino == st.Ino
}

// readCString reads a NUL-terminated path at addr in process pid's
// memory, at most PATH_MAX bytes, a page at most at a time: a read that
// crosses into an unmapped page would fail whole.
func readCString(pid int, addr uint64) (string, error) {
	const page = 4096
	var out []byte
	for len(out) < unix.PathMax {
		n := page - int(addr%page)
		buf := make([]byte, n)
		got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}},
			[]unix.RemoteIovec{{Base: uintptr(addr), Len: n}}, 0)
		if err != nil {
			return "", err
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...)), nil
		}
		out = append(out, buf[:got]...)
		addr += uint64(got)
	}
	return "", unix.ENAMETOOLONG
}

// callerPath returns path as the launcher must read it for the thread
// tid: a path through /proc/self, /proc/thread-self or /dev/fd (a link to
// /proc/self/fd) names the caller's own /proc files and descriptors, and
// read by the launcher would name its own. Bun (Claude Code) renames a
// file it wrote through /proc/self/fd/N/NAME, N a descriptor of its
// directory. Those prefixes become the caller's /proc/PID, PID its
// process (thread group), or /proc/PID/task/TID; "." and empty names
// and a ".." back to / before them are read as the kernel does. A path
// that reaches /proc/self through a symbolic link elsewhere is read as
// the launcher's (the rename then fails, as no program does).
func callerPath(tid int, path string) string {
	rest, ok := strings.CutPrefix(path, "/")
	if !ok {
		return path
	}
	var names []string
	slash := false
	for len(names) < 2 {
		var name string
		name, rest, slash = strings.Cut(rest, "/")
		switch {
		case name == "" && !slash:
			return path
		case name == "" || name == ".":
		case name == "..":
			if len(names) > 0 {
				names = names[:len(names)-1]
			}
		default:
			names = append(names, name)
		}
	}
	var prefix string
	switch names[0] + "/" + names[1] {
	case "proc/self":
		prefix = "/proc/" + callerProcess(tid)
	case "proc/thread-self":
		prefix = "/proc/" + callerProcess(tid) + "/task/" + strconv.Itoa(tid)
	case "dev/fd":
		prefix = "/proc/" + callerProcess(tid) + "/fd"
	default:
		return path
	}
	if slash {
		prefix += "/"
	}
	return prefix + rest
}

// callerProcess returns the process (thread group) of the thread tid, as
// its /proc/TID/status says, or tid where that cannot be read.
func callerProcess(tid int) string {
	id := strconv.Itoa(tid)
	b, err := os.ReadFile("/proc/" + id + "/status")
	if err != nil {
		return id
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return id
}

// callerDir opens, for the launcher, the directory the caller's path is
// relative to: its working directory for AT_FDCWD, its descriptor fd
// otherwise; "/" for an absolute path.
func callerDir(proc string, fd int64, path string) (int, error) {
	dir := "/"
	switch {
	case filepath.IsAbs(path):
	case fd == unix.AT_FDCWD:
		dir = proc + "/cwd"
	case fd >= 0:
		dir = proc + "/fd/" + strconv.FormatInt(fd, 10)
	default:
		return -1, unix.EBADF
	}
	return unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// doRename renames as c asks, and where that fails with EXDEV for a
// directory inside the overlay, moves it by copy.
func doRename(c *renameCall) error {
	if err := unix.Dup3(c.oldDir, launcherRenameFD, unix.O_CLOEXEC); err != nil {
		return err
	}
	err := unix.Renameat2(launcherRenameFD, c.oldPath, c.newDir, c.newPath, c.flags)
	_ = unix.Close(launcherRenameFD)
	if err != unix.EXDEV || c.flags&(unix.RENAME_EXCHANGE|unix.RENAME_WHITEOUT) != 0 {
		return err
	}
	return moveDir(c)
}

// moveDir moves the directory c names by copy, as mv(1) across file
// systems does, when both names are in the overlay: the new name must
// not exist or be an empty directory (which is replaced), nor be below
// the old one. It returns EXDEV for anything else.
func moveDir(c *renameCall) error {
	oldParent, oldBase, err := openParent(c.oldDir, c.oldPath)
	if err != nil {
		return err
	}
	defer unix.Close(oldParent)
	newParent, newBase, err := openParent(c.newDir, c.newPath)
	if err != nil {
		return err
	}
	defer unix.Close(newParent)
	var st unix.Stat_t
	if err := unix.Fstatat(oldParent, oldBase, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR || !inOverlay(oldParent) || !inOverlay(newParent) {
		return unix.EXDEV
	}
	if below(oldParent, oldBase, newParent) {
		return unix.EINVAL
	}
	var nst unix.Stat_t
	switch err := unix.Fstatat(newParent, newBase, &nst, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && c.flags&unix.RENAME_NOREPLACE != 0:
		return unix.EEXIST
	case err == nil && nst.Mode&unix.S_IFMT != unix.S_IFDIR:
		return unix.ENOTDIR
	case err == nil:
		if err := unix.Unlinkat(newParent, newBase, unix.AT_REMOVEDIR); err != nil {
			return err // ENOTEMPTY, as rename(2) says
		}
	case err != unix.ENOENT:
		return err
	}
	if err := copyDirAt(oldParent, oldBase, newParent, newBase, c.tick); err != nil {
		_ = removeAt(newParent, newBase)
		return err
	}
	return removeAt(oldParent, oldBase)
}

// openParent opens the directory of path, relative to dir, and returns
// it with path's last name.
func openParent(dir int, path string) (int, string, error) {
	// A directory's name may end in slashes (rename("pkg/", "new/")).
	if trimmed := strings.TrimRight(path, "/"); trimmed != "" {
		path = trimmed
	}
	parent, base := filepath.Split(path)
	if base == "" || base == "." || base == ".." {
		return -1, "", unix.EINVAL
	}
	if parent == "" {
		parent = "."
	}
	fd, err := unix.Openat(dir, parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	return fd, base, err
}

// inOverlay reports whether the directory fd is on the overlay's mount.
func inOverlay(fd int) bool {
	if overlayFD < 0 {
		return false
	}
	var a, b unix.Stat_t
	return unix.Fstat(fd, &a) == nil && unix.Fstat(overlayFD, &b) == nil && a.Dev == b.Dev
}

// below reports whether the directory dir is name in parent, or below
// it: a directory cannot be moved into itself.
func below(parent int, name string, dir int) bool {
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	cur, err := unix.Openat(dir, ".", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	for {
		var c unix.Stat_t
		if unix.Fstat(cur, &c) != nil {
			unix.Close(cur)
			return false
		}
		if c.Dev == st.Dev && c.Ino == st.Ino {
			unix.Close(cur)
			return true
		}
		up, err := unix.Openat(cur, "..", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		var u unix.Stat_t
		if err != nil || unix.Fstat(up, &u) != nil || u.Dev != st.Dev || (u.Ino == c.Ino && u.Dev == c.Dev) {
			if err == nil {
				unix.Close(up)
			}
			return false
		}
		cur = up
	}
}

// copyDirAt copies the directory name in src to the new name dstName in
// dst, with everything below it: directories, regular files, symbolic
// links and fifos, with their modes and times; it never follows a link.
func copyDirAt(src int, name string, dst int, dstName string, tick func() error) error {
	from, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(from), name)
	defer dir.Close()
	var st unix.Stat_t
	if err := unix.Fstat(from, &st); err != nil {
		return err
	}
	if err := unix.Mkdirat(dst, dstName, 0o700); err != nil {
		return err
	}
	to, err := unix.Openat(dst, dstName, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(to)
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return err
	}
	for _, n := range names {
		if tick != nil {
			if err := tick(); err != nil {
				return err
			}
		}
		if err := copyEntryAt(from, n, to, tick); err != nil {
			return err
		}
	}
	return setAttrs(to, "", &st, unix.AT_EMPTY_PATH)
}

// copyEntryAt copies the entry name of the directory src into dst.
func copyEntryAt(src int, name string, dst int, tick func() error) error {
	var st unix.Stat_t
	if err := unix.Fstatat(src, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return copyDirAt(src, name, dst, name, tick)
	case unix.S_IFREG:
		if err := copyFileAt(src, name, dst, &st); err != nil {
			return err
		}
	case unix.S_IFLNK:
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(src, name, buf)
		if err == nil {
			err = unix.Symlinkat(string(buf[:n]), dst, name)
		}
		if err != nil {
			return err
		}
	case unix.S_IFIFO:
		if err := unix.Mkfifoat(dst, name, st.Mode&0o7777); err != nil {
			return err
		}
	default: // a socket, a device: what mv(1) cannot copy either
		return unix.EXDEV
	}
	return setAttrs(dst, name, &st, unix.AT_SYMLINK_NOFOLLOW)
}

// copyFileAt copies the regular file name of src into dst. It opens
// the file without blocking and copies it only while it is the regular
// file st found: the harness may have put a FIFO in its place since,
// whose open would wait for a writer and stop the supervisor (every
// rename, and the signals it passes on) until one came.
func copyFileAt(src int, name string, dst int, st *unix.Stat_t) error {
	in, err := unix.Openat(src, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fin := os.NewFile(uintptr(in), name)
	defer fin.Close()
	var now unix.Stat_t
	if err := unix.Fstat(in, &now); err != nil {
		return err
	}
	if now.Mode&unix.S_IFMT != unix.S_IFREG || now.Dev != st.Dev || now.Ino != st.Ino {
		return unix.EXDEV // changed under the copy: mv(1) gives up too
	}
	out, err := unix.Openat(dst, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	fout := os.NewFile(uintptr(out), name)
	_, err = io.Copy(fout, fin)
	if cerr := fout.Close(); err == nil {
		err = cerr
	}
	return err
}

// setAttrs gives name in dir (dir itself with AT_EMPTY_PATH) st's mode
// (not a link's: links have none) and times. The mode is given to the
// file name is when opened, never through a link, and only where that
// file is not locked (chmodUnlocked): the harness may have put a link
// to one of the user's locked files in the place of a copy just made.
func setAttrs(dir int, name string, st *unix.Stat_t, flags int) error {
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		fd := dir
		if flags&unix.AT_EMPTY_PATH == 0 {
			var err error
			if fd, err = unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err != nil {
				return err
			}
			defer unix.Close(fd)
		}
		if err := chmodUnlocked(fd, st.Mode&0o7777); err != nil {
			return err
		}
		if flags&unix.AT_EMPTY_PATH != 0 {
			return unix.UtimesNanoAt(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(dir), []unix.Timespec{st.Atim, st.Mtim}, 0)
		}
	}
	return unix.UtimesNanoAt(dir, name, []unix.Timespec{st.Atim, st.Mtim}, flags)
}

// removeAt removes name in dir with everything below it, never
// following a link.
func removeAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	names, err := f.Readdirnames(-1)
	if err == nil {
		for _, n := range names {
			if err = removeAt(fd, n); err != nil {
				break
			}
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}
