package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"golang.org/x/sys/unix"
)

// This file is the launcher in namespaces (Policy.Net): Start's side
// (nsProcAttr, receiveListeners) and the launcher's (mainNS), process 1
// of the harness's PID namespace.

// nsFlags are the namespaces a harness gets with Policy.Net.
const nsFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNET | unix.CLONE_NEWPID | unix.CLONE_NEWNS

// nsCaps are the capabilities the launcher keeps across its execution,
// in its user namespace only: mounting (CAP_SYS_ADMIN), bringing
// loopback up (CAP_NET_ADMIN) and emptying its bounding set
// (CAP_SETPCAP). overlayCaps are those it keeps besides with an
// Overlay: overlayfs refuses the mount (EACCES) to a mounter without
// CAP_DAC_OVERRIDE, measured; in the user namespace it overrides the
// permissions of the user's own files only. It clears them all before
// the harness starts.
var (
	nsCaps      = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP}
	overlayCaps = append(append([]uintptr(nil), nsCaps...), unix.CAP_DAC_OVERRIDE)
)

// idsInside returns the user and group ids workforce's effective ones
// become inside the user namespace: themselves, or RootUID for root's.
func idsInside(uid, gid int) (int, int) {
	if uid == 0 {
		uid = rootUID
	}
	if gid == 0 {
		gid = rootUID
	}
	return uid, gid
}

// rootUID is RootUID; tests change it.
var rootUID = RootUID

// nsProcAttr returns a, copied, for a launcher started in the harness's
// namespaces: the user's ids mapped to themselves (root's to RootUID),
// setgroups denied, caps ambient. Its parent-death signal is dropped:
// the kernel would send it when the thread that started the launcher
// exits, which a Go program's may; the launcher takes the closing of its
// socket for workforce's end instead (message.ParentDeath).
func nsProcAttr(a *syscall.SysProcAttr, caps []uintptr) *syscall.SysProcAttr {
	var c syscall.SysProcAttr
	if a != nil {
		c = *a
	}
	c.Pdeathsig = 0
	c.Cloneflags |= nsFlags
	uid, gid := os.Geteuid(), os.Getegid()
	in, ing := idsInside(uid, gid)
	c.UidMappings = []syscall.SysProcIDMap{{ContainerID: in, HostID: uid, Size: 1}}
	c.GidMappings = []syscall.SysProcIDMap{{ContainerID: ing, HostID: gid, Size: 1}}
	c.GidMappingsEnableSetgroups = false
	c.AmbientCaps = caps
	return &c
}

// socketPair returns the two ends of a sequenced-packet socket pair,
// both close-on-exec.
func socketPair() (ours, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot make the launcher's socket pair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "launcher"), os.NewFile(uintptr(fds[1]), "launcher"), nil
}

// listenersMessage is the launcher's first message on its socket, with
// the listeners' descriptors in the same order as Ports.
type listenersMessage struct {
	Ports []int `json:"ports"`
}

// receiveListeners reads the launcher's first message on sock: the
// listeners it made for ports.
func receiveListeners(sock *os.File, ports []int) (map[int]net.Listener, error) {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*max(len(ports), 1)))
	conn, err := sock.SyscallConn()
	if err != nil {
		return nil, err
	}
	var n, oobn int
	var rerr error
	if err := conn.Read(func(fd uintptr) bool {
		n, oobn, _, _, rerr = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	}); err != nil {
		return nil, err
	}
	if rerr != nil {
		return nil, fmt.Errorf("cannot read the launcher's listeners: %w", rerr)
	}
	if n == 0 {
		return nil, errors.New("the launcher exited before it made its listeners")
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, fmt.Errorf("the launcher's listeners: %w", err)
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err != nil {
				return nil, fmt.Errorf("the launcher's listeners: %w", err)
			}
			fds = append(fds, got...)
		}
	}
	files, closeAll := fdFiles(fds, "listener")
	defer closeAll()
	var lm listenersMessage
	if err := json.Unmarshal(buf[:n], &lm); err != nil {
		return nil, fmt.Errorf("the launcher's listeners: %w", err)
	}
	if len(lm.Ports) != len(files) || len(lm.Ports) != len(ports) {
		return nil, fmt.Errorf("the launcher sent %d listeners for %d ports, %d were asked for", len(files), len(lm.Ports), len(ports))
	}
	out := map[int]net.Listener{}
	for i, port := range lm.Ports {
		ln, err := net.FileListener(files[i])
		if err != nil {
			for _, l := range out {
				l.Close()
			}
			return nil, fmt.Errorf("the launcher's listener on port %d: %w", port, err)
		}
		out[port] = ln
	}
	return out, nil
}

// mainNS is the launcher in namespaces, process 1 of the harness's PID
// namespace, once Main read its message: it makes its mounts private,
// mounts /proc, the overlay and its /dev, hides Hide, binds Tmp on /tmp,
// brings loopback up, makes the listeners and hands them to workforce,
// clears every capability, makes itself not dumpable, applies the
// policy and the seccomp filter, starts the program as its child and
// stays its init (nsInit) until it exits. fail reports an error before
// the program starts.
func mainNS(m message, path string, argv, env []string, status io.Writer, sigc chan os.Signal, fail func(int, error) int) int {
	n := m.Policy.Net
	// The capabilities are cleared on this thread, which starts the
	// program (a fork copies the thread that forks).
	runtime.LockOSThread()
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + blockingCalls)
	if os.Getpid() != 1 {
		return fail(ExitCannotRun, errors.New("the launcher is not process 1 of a PID namespace"))
	}
	if _, err := unix.FcntlInt(uintptr(m.Sock), unix.F_GETFD, 0); err != nil {
		return fail(ExitCannotRun, fmt.Errorf("socket descriptor %d: %w", m.Sock, err))
	}
	syscall.CloseOnExec(m.Sock)
	wd := m.Dir
	if wd == "" {
		wd, _ = os.Getwd()
	}
	if err := mountNamespace(n, keepPaths(m.Policy, wd, path, envValue(env, "PATH")), m.Policy.Devices); err != nil {
		return fail(ExitCannotRun, err)
	}
	if m.Dir != "" {
		// Named in the message: it is in the new mounts (the overlay's
		// tree), and must be.
		if err := unix.Chdir(m.Dir); err != nil {
			return fail(ExitCannotRun, fmt.Errorf("cannot change to the directory %s: %w", m.Dir, err))
		}
	} else if wd != "" {
		// Through the new mounts, not the /tmp they cover.
		_ = unix.Chdir(wd)
	}
	if err := loopbackUp(); err != nil {
		return fail(ExitCannotRun, err)
	}
	ports := n.ports()
	fds, err := listen(ports)
	if err == nil {
		err = sendListeners(m.Sock, ports, fds)
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	if err != nil {
		return fail(ExitCannotRun, err)
	}
	if err := closeOnExecFrom(3 + m.Files); err != nil {
		return fail(ExitCannotRun, fmt.Errorf("cannot close the inherited descriptors: %w", err))
	}
	if err := dropCapabilities(); err != nil {
		return fail(ExitCannotRun, err)
	}
	// Not dumpable: the program cannot trace the launcher nor read its
	// /proc files (its descriptors, the socket to workforce).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fail(ExitCannotRun, fmt.Errorf("cannot make the launcher not dumpable: %w", err))
	}
	if err := confineSelf(m); err != nil {
		return fail(ExitCannotRun, err)
	}
	renames := -1
	if n.Overlay != nil {
		if renames, err = superviseRenames(); err != nil {
			return fail(ExitCannotRun, err)
		}
	}
	if m.ParentDeath != 0 && closed(m.Sock) {
		return fail(ExitCannotRun, fmt.Errorf("workforce (process %d) exited before the harness started", m.Parent))
	}
	if sigc == nil {
		sigc = catchSignals()
	}
	files := make([]uintptr, 3+m.Files)
	for i := range files {
		files[i] = uintptr(i)
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: env, Files: files})
	if err != nil {
		code := ExitCannotRun
		if errors.Is(err, syscall.ENOENT) {
			code = ExitNotFound
		}
		return fail(code, fmt.Errorf("cannot execute %s: %w", path, err))
	}
	// The program runs: Start returns.
	if f, ok := status.(*os.File); ok && f != os.Stderr {
		f.Close()
	}
	// The program's standard streams are its own: the launcher lets go
	// of them, so that whoever reads the other end of a pipe sees its end
	// when the program and what it started close theirs (not when the
	// launcher exits: a program that outlives workforce's death would
	// hold its caller's pipes open until then).
	releaseStreams()
	init := func(kill killFunc) int { return nsInit(pid, m.Sock, syscall.Signal(m.ParentDeath), sigc, kill) }
	if renames >= 0 {
		return superviseUntil(renames, init)
	}
	return init(syscall.Kill)
}

// blockingCalls is how many of the launcher's goroutines may wait in a
// system call at once, each holding a P of the Go runtime while it waits:
// the supervisor's poll (the overlay's, on the main thread), the reaper's
// wait4 and the read of the socket to workforce (nsInit). The launcher
// runs with that many Ps more than the default. With only the default (2
// on a 2-core machine), the poll and the read held both, and a goroutine
// they made runnable (the reaper, with the program's exit; a forwarded
// signal) waited until the runtime's monitor took a P back from a system
// call, which it does at its next tick, up to 10 ms apart when it finds
// nothing to do: an overlay run saw its harness exit 10 to 20 ms late
// (BENCHMARKS.md). A P costs nothing while no goroutine runs on it.
const blockingCalls = 3

// forwarded are the signals the launcher passes on to the program: those
// workforce sends it (SIGTERM and SIGHUP, package session) and the user
// signals. terminalSignals are those a terminal sends to its whole
// foreground process group, the program included: passed on, the program
// would get them twice, so the launcher drops them (but it must catch
// them: a Go program that does not would exit, and the namespace with
// it).
var (
	forwarded       = []os.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM}
	terminalSignals = []os.Signal{syscall.SIGINT, syscall.SIGQUIT}
)

// closed reports whether the other end of the socket sock is closed.
func closed(sock int) bool {
	fds := []unix.PollFd{{Fd: int32(sock), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0
}

// nsInit is process 1 once the program pid started: it reaps every
// process, passes the forwarded signals on to the program, sends it
// parentDeath when workforce's end of sock closes, and when the program
// exits ends what is left (endRest), reports on sock how the program
// ended and what it ended, and returns the program's exit status (128+n
// when signal n killed it: process 1 cannot die of a signal it sends
// itself; the report says which).
//
// kill signals: from the thread that forked the program, whose Landlock
// domain is the program's parent (go-landlock gives each thread a domain
// of its own, and the signal scope lets a thread signal only its own
// domain's processes and those below).
func nsInit(pid, sock int, parentDeath syscall.Signal, sigc chan os.Signal, kill killFunc) int {
	exited := make(chan syscall.WaitStatus, 1)
	go func() {
		for {
			var ws syscall.WaitStatus
			got, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				// Never: the program is a child until reaped here.
				exited <- syscall.WaitStatus(ExitCannotRun << 8)
				return
			}
			if got == pid {
				exited <- ws
				return
			}
		}
	}()
	gone := make(chan struct{})
	go func() {
		buf := make([]byte, 1)
		for {
			n, err := unix.Read(sock, buf)
			if err == unix.EINTR {
				continue
			}
			if n <= 0 {
				close(gone)
				return
			}
		}
	}()
	var ws syscall.WaitStatus
wait:
	for {
		select {
		case sig := <-sigc:
			if s, ok := sig.(syscall.Signal); ok && !isTerminalSignal(s) {
				_ = kill(pid, s)
			}
		case <-gone:
			gone = nil
			if parentDeath != 0 {
				_ = kill(pid, parentDeath)
			}
		case ws = <-exited:
			break wait
		}
	}
	e := Ending{Left: endRest(EndGrace, kill)}
	code := ws.ExitStatus()
	if ws.Signaled() {
		e.Signal = ws.Signal()
		code = 128 + int(e.Signal)
	} else {
		e.Code = code
	}
	if b, err := json.Marshal(e); err == nil {
		_, _ = unix.Write(sock, b)
	}
	return code
}

// catchSignals asks for the signals the launcher in namespaces passes on
// (forwarded) and those it leaves to the terminal (terminalSignals), on a
// channel that holds those that come before the program starts: they are
// passed on once it has. Asking costs a round trip to the Go runtime's
// signal thread for each signal, about 0.9 ms for the seven, which Main
// spends while it waits for its message.
func catchSignals() chan os.Signal {
	sigc := make(chan os.Signal, 16)
	signal.Notify(sigc, forwarded...)
	signal.Notify(sigc, terminalSignals...)
	return sigc
}

// killFunc sends a signal, as kill(2).
type killFunc func(pid int, sig syscall.Signal) error

func isTerminalSignal(s syscall.Signal) bool {
	for _, t := range terminalSignals {
		if t == s {
			return true
		}
	}
	return false
}

// endRest ends every process of the namespace but process 1: SIGCONT
// and SIGTERM, and SIGKILL grace later to those left, reaping them all.
// It returns those that were running (zombies aside), at most maxLeft.
func endRest(grace time.Duration, kill killFunc) []Proc {
	left := nsProcs()
	if len(left) > 0 {
		_ = kill(-1, syscall.SIGCONT)
		_ = kill(-1, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	killed := false
	for {
		var ws syscall.WaitStatus
		flags := syscall.WNOHANG
		if killed {
			flags = 0
		}
		got, err := syscall.Wait4(-1, &ws, flags, nil)
		switch {
		case err == syscall.EINTR || got > 0:
			continue
		case err != nil: // ECHILD: nobody is left
			return left
		case !killed && time.Now().After(deadline):
			_ = kill(-1, syscall.SIGKILL)
			killed = true
		default:
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// nsProcs returns the processes of the namespace but process 1 that have
// not exited, from its /proc.
func nsProcs() []Proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []Proc
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == 1 {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || end+2 >= len(s) {
			continue
		}
		if state := s[end+2]; state == 'Z' || state == 'X' {
			continue
		}
		out = append(out, Proc{PID: pid, Comm: s[open+1 : end]})
		if len(out) == maxLeft {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out
}

// keepPaths returns the paths that stay at their own path when Tmp is
// bound on /tmp and a tmpfs of the harness's own on /dev/shm (those
// under the real ones are bound back): the policy's writable directories
// and files, the working directory, the program's directory (and the
// program where a link leads elsewhere), the directories of the
// program's PATH (path, a list as in $PATH), Tmp and Keep.
func keepPaths(p Policy, wd, program, path string) []string {
	out := append(append([]string(nil), p.Dirs...), p.Files...)
	for _, dir := range filepath.SplitList(path) {
		if filepath.IsAbs(dir) {
			out = append(out, filepath.Clean(dir))
		}
	}
	if wd != "" {
		out = append(out, wd)
	}
	if filepath.IsAbs(program) {
		// The directory, and the file a link there leads to.
		out = append(out, filepath.Dir(program), program)
	}
	if p.Net.Tmp != "" {
		out = append(out, p.Net.Tmp)
	}
	return append(out, p.Net.Keep...)
}

// mountNamespace sets up the mount namespace: every mount private (none
// propagates to the system's), a /proc of the PID namespace, the
// Overlay, a /dev with the usual devices and the policy's and keep under
// the real /dev/shm bound back at their paths (mountDev), Hide hidden,
// Tmp on /tmp with keep under the real /tmp bound back at their paths.
// The overlay comes before /dev: its layers may be in the real /dev/shm,
// which the harness's /dev hides (its target, a writable directory, is
// kept, the overlay mounted there with it).
func mountNamespace(n *Namespaces, keep, devices []string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("cannot make the mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("cannot mount /proc: %w", err)
	}
	if n.Overlay != nil {
		if err := mountOverlay(n.Overlay); err != nil {
			return err
		}
	}
	if err := mountDev(devices, keep); err != nil {
		return err
	}
	if err := nameRoot(); err != nil {
		return err
	}
	for _, path := range n.Hide {
		if err := hide(path); err != nil {
			return err
		}
	}
	if n.Tmp != "" {
		return bindTmp(n.Tmp, keep)
	}
	return nil
}

// rootName is the user and group name RootUID gets in the harness's
// /etc/passwd and /etc/group when the system has none for it.
const rootName = "workforce"

// nameRoot gives RootUID a name when root's harness runs as it and the
// system's /etc/passwd or /etc/group has none for it (a container where
// root is the only user): programs ask (node's os.userInfo() throws
// without one). A copy of the file with the entry added is bound over
// it, from a file made and unlinked in the launcher's /dev.
func nameRoot() error {
	b, err := os.ReadFile("/proc/self/uid_map")
	if f := strings.Fields(string(b)); err != nil || len(f) < 2 || f[1] != "0" {
		return nil // not root's harness
	}
	uid, gid := os.Getuid(), os.Getgid()
	for _, db := range []struct {
		path string
		line string
		id   int
	}{
		{"/etc/passwd", fmt.Sprintf("%s:x:%d:%d:%s:/:/bin/sh", rootName, uid, gid, rootName), uid},
		{"/etc/group", fmt.Sprintf("%s:x:%d:", rootName, gid), gid},
	} {
		old, err := os.ReadFile(db.path)
		if err != nil {
			continue
		}
		data, added := withEntry(old, db.id, db.line)
		if !added {
			continue
		}
		tmp := "/dev/.workforce-" + filepath.Base(db.path)
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return fmt.Errorf("cannot name the harness's user in %s: %w", db.path, err)
		}
		err = unix.Mount(tmp, db.path, "", unix.MS_BIND, "")
		_ = os.Remove(tmp)
		if err != nil {
			return fmt.Errorf("cannot name the harness's user in %s: %w", db.path, err)
		}
	}
	return nil
}

// withEntry returns the user or group database db with line added when no
// entry of db has id as its third field, and whether it added it.
func withEntry(db []byte, id int, line string) ([]byte, bool) {
	want := strconv.Itoa(id)
	for _, l := range strings.Split(string(db), "\n") {
		if f := strings.Split(l, ":"); len(f) > 2 && f[2] == want {
			return db, false
		}
	}
	out := append([]byte(nil), db...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, line+"\n"...), true
}

// devNodes are the device files of the harness's /dev, besides the
// policy's: what programs expect to open.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// mountDev mounts a /dev of its own: a tmpfs where devNodes and the
// policy's devices (under /dev) are bound from the real one, a devpts of
// its own on /dev/pts (/dev/ptmx a link to its ptmx), /dev/shm a tmpfs
// of its own with the paths of keep under the real /dev/shm bound back
// at their paths (a workforce home or a project there: the session's
// directories), and the usual links to /proc. Every other device stays
// out of reach: root's harness would otherwise open the disks, which
// root owns, as their owner, and a user's those of the groups it keeps;
// and the user's other terminals are not there; nor are the other files
// of /dev/shm. The harness's terminal stays its own through its
// descriptors and /dev/tty, though ttyname(3) finds no path for it.
func mountDev(devices, keep []string) error {
	// Resolved through the real /dev, before the new one covers it.
	shmKept := keptBelow("/dev/shm", keep)
	old, err := unix.Open("/dev", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open /dev: %w", err)
	}
	defer unix.Close(old)
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("cannot mount /dev: %w", err)
	}
	names := append([]string(nil), devNodes...)
	for _, d := range devices {
		if rel, ok := strings.CutPrefix(d, "/dev/"); ok && rel != "" && rel != "ptmx" && rel != "pts" && !strings.HasPrefix(rel, "pts/") {
			names = append(names, rel)
		}
	}
	done := map[string]bool{}
	for _, name := range names {
		if done[name] {
			continue
		}
		done[name] = true
		src := "/proc/self/fd/" + strconv.Itoa(old) + "/" + name
		fi, err := os.Stat(src)
		if err != nil {
			continue
		}
		dst := filepath.Join("/dev", name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("cannot make %s: %w", dst, err)
		}
		if fi.IsDir() {
			err = unix.Mkdir(dst, 0o755)
		} else {
			var fd int
			if fd, err = unix.Open(dst, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600); err == nil {
				unix.Close(fd)
			}
		}
		if err == nil {
			err = unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, "")
		}
		if err != nil {
			return fmt.Errorf("cannot bind %s in the harness's /dev: %w", dst, err)
		}
	}
	if err := unix.Mkdir("/dev/pts", 0o755); err != nil {
		return fmt.Errorf("cannot make /dev/pts: %w", err)
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("cannot mount /dev/pts: %w", err)
	}
	if err := unix.Mkdir("/dev/shm", 0o1777); err != nil {
		return fmt.Errorf("cannot make /dev/shm: %w", err)
	}
	if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return fmt.Errorf("cannot mount /dev/shm: %w", err)
	}
	if err := bindBack("/dev/shm", "/proc/self/fd/"+strconv.Itoa(old)+"/shm", shmKept); err != nil {
		return err
	}
	for name, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := unix.Symlink(target, "/dev/"+name); err != nil {
			return fmt.Errorf("cannot make /dev/%s: %w", name, err)
		}
	}
	return nil
}

// hide makes path unreachable: an empty read-only tmpfs over a
// directory, /dev/null over anything else. A missing path is skipped.
func hide(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555")
	} else {
		err = unix.Mount("/dev/null", path, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("cannot hide %s: %w", path, err)
	}
	return nil
}

// bindTmp binds tmp on /tmp, and binds each path of keep under the real
// /tmp back at its own path (bindBack).
func bindTmp(tmp string, keep []string) error {
	kept := keptBelow("/tmp", keep)
	old, err := unix.Open("/tmp", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open /tmp: %w", err)
	}
	defer unix.Close(old)
	if err := unix.Mount(tmp, "/tmp", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("cannot bind %s on /tmp: %w", tmp, err)
	}
	return bindBack("/tmp", "/proc/self/fd/"+strconv.Itoa(old), kept)
}

// keptBelow returns the paths of keep that are the directory dir or
// below it, both with their links resolved, relative to the resolved
// dir: the outermost ones (the others are below them). It resolves
// through the real directory, so it is called before a mount covers it.
func keptBelow(dir string, keep []string) []string {
	real := dir
	if r, err := pathutil.Real(real); err == nil {
		real = r
	}
	resolved := make([]string, len(keep))
	for i, k := range keep {
		if r, err := pathutil.Real(k); err == nil {
			k = r
		}
		resolved[i] = k
	}
	return outermost(real, resolved)
}

// bindBack binds each of rels (keptBelow) from below src, the real
// directory through a descriptor opened before a mount covered it, at
// its own path below dir, now a mount of the harness's own, on a mount
// point made there. A kept path that does not exist is skipped. Making a
// mount point never follows a symbolic link: the directory may be the
// agent's (its tmp), who may have left one there in an earlier run.
func bindBack(dir, src string, rels []string) error {
	for _, rel := range rels {
		from := src
		if rel != "." {
			from += "/" + rel
		}
		fi, err := os.Stat(from)
		if err != nil {
			continue
		}
		dst := filepath.Join(dir, rel)
		if err := mountPoint(dir, rel, fi.IsDir()); err != nil {
			return fmt.Errorf("cannot keep %s in the private %s: %w", dst, dir, err)
		}
		if err := unix.Mount(from, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("cannot keep %s in the private %s: %w", dst, dir, err)
		}
	}
	return nil
}

// outermost returns the paths of paths that are root or below it, as
// paths relative to root ("." for root itself), sorted, leaving out
// those below another: binding those back brings the others.
func outermost(root string, paths []string) []string {
	var rels []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			rels = append(rels, rel)
		}
	}
	// Root first, then shorter first: a path comes after every path
	// above it.
	sort.Slice(rels, func(i, j int) bool {
		if (rels[i] == ".") != (rels[j] == ".") {
			return rels[i] == "."
		}
		if len(rels[i]) != len(rels[j]) {
			return len(rels[i]) < len(rels[j])
		}
		return rels[i] < rels[j]
	})
	var outer []string
	for _, rel := range rels {
		below := false
		for _, o := range outer {
			if o == "." || rel == o || strings.HasPrefix(rel, o+"/") {
				below = true
				break
			}
		}
		if !below {
			outer = append(outer, rel)
		}
	}
	sort.Strings(outer)
	return outer
}

// mountPoint makes rel, a path relative to dir, a directory (isDir) or
// an empty file, with its parents, unless it is one already; a symbolic
// link on the way is an error. Dir itself (rel ".") is one already.
func mountPoint(dir, rel string, isDir bool) error {
	if rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	cur := dir
	for i, part := range parts {
		cur += "/" + part
		last := i == len(parts)-1
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link", cur)
		case err == nil && (!last || isDir) && !fi.IsDir():
			return fmt.Errorf("%s is not a directory", cur)
		case err == nil && last && !isDir && fi.IsDir():
			return fmt.Errorf("%s is a directory", cur)
		case err == nil:
		case !errors.Is(err, os.ErrNotExist):
			return err
		case !last || isDir:
			if err := unix.Mkdir(cur, 0o755); err != nil && err != unix.EEXIST {
				return err
			}
		default:
			fd, err := unix.Open(cur, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
			if err != nil {
				return err
			}
			unix.Close(fd)
		}
	}
	return nil
}

// loopbackUp brings the loopback interface of the network namespace up.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot bring loopback up: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err == nil {
		err = unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr)
	}
	if err == nil {
		ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
		err = unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
	}
	if err != nil {
		return fmt.Errorf("cannot bring loopback up: %w", err)
	}
	return nil
}

// listen returns a socket listening on 127.0.0.1 for each port.
func listen(ports []int) ([]int, error) {
	var fds []int
	for _, port := range ports {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			fds = append(fds, fd)
			_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
			err = unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
		}
		if err == nil {
			err = unix.Listen(fd, unix.SOMAXCONN)
		}
		if err != nil {
			for _, fd := range fds {
				unix.Close(fd)
			}
			return nil, fmt.Errorf("cannot listen on 127.0.0.1:%d in the network namespace: %w", port, err)
		}
	}
	return fds, nil
}

// sendListeners sends workforce the listeners fds, for ports, on sock.
func sendListeners(sock int, ports, fds []int) error {
	b, err := json.Marshal(listenersMessage{Ports: append([]int{}, ports...)})
	if err != nil {
		return err
	}
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	if err := unix.Sendmsg(sock, b, oob, nil, 0); err != nil {
		return fmt.Errorf("cannot hand the listeners to workforce: %w", err)
	}
	return nil
}

// dropCapabilities clears every capability of the calling thread, the
// one that starts the program (capabilities are per thread, and a fork
// copies the thread that forks): the ambient, bounding, effective,
// permitted and inheritable sets. The ambient sets of the launcher's
// other threads are cleared too; they keep the rest, in the user
// namespace only, and run the launcher's own code, which nobody can
// trace (the launcher is not dumpable).
func dropCapabilities() error {
	if err := ll.AllThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot clear the ambient capabilities: %w", err)
	}
	for c := 0; c <= 63; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability
			}
			return fmt.Errorf("cannot clear the bounding set (capability %d): %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("cannot clear the capabilities: %w", err)
	}
	return nil
}

// probeArg, after LauncherArg, makes the launcher the probe of
// probeNamespaces.
const probeArg = "probe-namespaces"

// probeNamespaces starts the launcher in the namespaces a harness gets,
// as the probe: it mounts /proc and brings loopback up.
func probeNamespaces() error { return runProbe(nsCaps, probeArg) }

// runProbe runs the launcher with args in the namespaces a harness gets,
// with the capabilities caps inside, and an empty environment: an error
// carries what it printed.
func runProbe(caps []uintptr, args ...string) error {
	cmd := exec.Command(launcherPath(), append([]string{LauncherArg}, args...)...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = launcherEnv()
	cmd.SysProcAttr = nsProcAttr(nil, caps)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return fmt.Errorf("%v: %s", err, msg)
		}
		return err
	}
	return nil
}

// probeMainNS is the probe of probeNamespaces, in the namespaces.
func probeMainNS() int {
	err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	if err == nil {
		err = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot mount /proc: %v\n", err)
		return 1
	}
	if err := loopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// releaseStreams points the launcher's descriptors 0 to 2 at /dev/null.
func releaseStreams() {
	null, err := unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	for fd := 0; fd <= 2; fd++ {
		_ = unix.Dup3(null, fd, 0)
	}
	if null > 2 {
		unix.Close(null)
	}
}

// maxLeft bounds the processes an Ending names.
const maxLeft = 1000
