package confine

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// probeEnv makes the test binary the probe: the program a test starts
// confined, which tries the operations its argument lists (JSON, a list
// of [op, args...]) and prints what each gave: "OK", an errno name such
// as "EACCES", or a word the operation defines.
const probeEnv = "CONFINE_TEST_PROBE"

// probeMain runs the probe on its JSON argument and returns the exit
// status.
func probeMain(args []string) int {
	var ops [][]string
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &ops) != nil {
		fmt.Fprintln(os.Stderr, "probe: want one JSON argument, a list of operations")
		return 2
	}
	out := make([]string, len(ops))
	for i, op := range ops {
		out[i] = probeOp(op)
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		return 1
	}
	return 0
}

// probeOp tries one operation.
func probeOp(op []string) string {
	arg := func(i int) string {
		if i < len(op) {
			return op[i]
		}
		return ""
	}
	var err error
	switch op[0] {
	case "write": // create or truncate, then write
		err = os.WriteFile(arg(1), []byte("confined\n"), 0o644)
	case "append": // open an existing file for writing, without truncating
		var f *os.File
		if f, err = os.OpenFile(arg(1), os.O_WRONLY|os.O_APPEND, 0); err == nil {
			_, err = f.WriteString("appended\n")
			f.Close()
		}
	case "truncate":
		err = unix.Truncate(arg(1), 0)
	case "mkdir":
		err = unix.Mkdir(arg(1), 0o755)
	case "rmdir":
		err = unix.Rmdir(arg(1))
	case "symlink":
		err = unix.Symlink(arg(1), arg(2))
	case "mkfifo":
		err = unix.Mkfifo(arg(1), 0o644)
	case "unlink":
		err = unix.Unlink(arg(1))
	case "rename":
		err = unix.Rename(arg(1), arg(2))
	case "link":
		err = unix.Link(arg(1), arg(2))
	case "chmod":
		err = unix.Chmod(arg(1), 0o640)
	case "chmodto", "lchmod", "fchmod", "fchmod-opath", "fchmodat2", "setfacl", "statmode", "chmodrace", "chmods":
		return probeModeOp(op) // modes_linux_test.go
	case "chmod-dir": // to 0755
		err = unix.Chmod(arg(1), 0o755)
	case "read":
		_, err = os.ReadFile(arg(1))
	case "list":
		_, err = os.ReadDir(arg(1))
	case "await": // wait, at most 10 s, until a file exists
		for i := 0; i < 1000; i++ {
			if _, err = os.Stat(arg(1)); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	case "exec":
		err = exec.Command(arg(1), op[2:]...).Run()
	case "sh": // a grandchild shell
		if exec.Command("/bin/sh", "-c", arg(1)).Run() != nil {
			return "failed"
		}
	case "child": // the probe again, as a grandchild, with one operation
		exe, err := os.Executable()
		if err != nil {
			return err.Error()
		}
		arg, _ := json.Marshal([][]string{op[1:]})
		b, err := exec.Command(exe, string(arg)).Output()
		var got []string
		if err != nil || json.Unmarshal(b, &got) != nil || len(got) != 1 {
			return fmt.Sprintf("child: %v: %q", err, b)
		}
		return got[0]
	case "pty": // make a pseudo-terminal and ask for its settings
		err = pty()
	case "winsize": // make a pseudo-terminal and ask for its window size
		err = winsize()
	case "tiocsti": // push input into a terminal of our own
		return tiocsti(0)
	case "tiocsti-high": // the same, the request's high word set
		return tiocsti(0xffffffff)
	case "ioctl": // a device's own ioctl: the entropy count of a random device
		var f *os.File
		if f, err = os.Open(arg(1)); err == nil {
			_, err = unix.IoctlGetInt(int(f.Fd()), unix.RNDGETENTCNT)
			f.Close()
		}
	case "env":
		if _, ok := os.LookupEnv(arg(1)); ok {
			return "set"
		}
		return "unset"
	case "envsum": // the SHA-256 of a variable's value, "unset"
		v, ok := os.LookupEnv(arg(1))
		if !ok {
			return "unset"
		}
		return fmt.Sprintf("%x", sha256.Sum256([]byte(v)))
	case "environ": // the SHA-256 of the environment, NUL-separated
		return fmt.Sprintf("%x", sha256.Sum256([]byte(strings.Join(os.Environ(), "\x00"))))
	case "mknod": // mknod c|b PATH: /dev/null's and loop0's numbers
		mode, dev := uint32(unix.S_IFCHR|0o600), unix.Mkdev(1, 3)
		if arg(1) == "b" {
			mode, dev = unix.S_IFBLK|0o600, unix.Mkdev(7, 0)
		}
		err = unix.Mknod(arg(2), mode, int(dev))
	case "socket": // bind a Unix socket to a path
		var fd int
		if fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			err = unix.Bind(fd, &unix.SockaddrUnix{Name: arg(1)})
			unix.Close(fd)
		}
	case "writefd": // write to descriptor N
		n, _ := strconv.Atoi(arg(1))
		_, err = unix.Write(n, []byte("through the descriptor\n"))
	case "mount": // a tmpfs on a directory
		if err = unix.Mount("none", arg(1), "tmpfs", 0, ""); err == nil {
			_ = unix.Unmount(arg(1), 0)
		}
	case "renames": // PATH renamed to PATH.2 and back, N times each: the time per rename in ns
		n, _ := strconv.Atoi(arg(2))
		t0 := time.Now()
		for i := 0; i < n && err == nil; i++ {
			if err = unix.Rename(arg(1), arg(1)+".2"); err == nil {
				err = unix.Rename(arg(1)+".2", arg(1))
			}
		}
		if err == nil {
			return strconv.FormatInt(time.Since(t0).Nanoseconds()/int64(2*n), 10)
		}
	case "renameat2": // renameat2(2) of OLD to NEW with FLAGS (a number, 0x for hex)
		flags, perr := strconv.ParseUint(arg(3), 0, 32)
		if perr != nil {
			return perr.Error()
		}
		err = unix.Renameat2(unix.AT_FDCWD, arg(1), unix.AT_FDCWD, arg(2), uint(flags))
	case "renameat": // renameat(2) of DIR's OLD to DIR's NEW, DIR opened first
		var fd int
		if fd, err = unix.Open(arg(1), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
			err = unix.Renameat(fd, arg(2), fd, arg(3))
			unix.Close(fd)
		}
	case "renamefd": // rename(2) of PREFIX/77/OLD to PREFIX/77/NEW, DIR opened as descriptor 77 first (as Bun's renameSync does, with PREFIX /proc/self/fd)
		var fd int
		if fd, err = unix.Open(arg(1), unix.O_PATH|unix.O_DIRECTORY, 0); err == nil {
			if err = unix.Dup3(fd, 77, 0); err == nil {
				err = unix.Rename(arg(2)+"/77/"+arg(3), arg(2)+"/77/"+arg(4))
				unix.Close(77)
			}
			unix.Close(fd)
		}
	case "lstat":
		_, err = os.Lstat(arg(1))
	case "mountinfo": // whether /proc/self/mountinfo names ARG
		b, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			return errName(err)
		}
		if strings.Contains(string(b), arg(1)) {
			return "named"
		}
		return "unnamed"
	case "umount":
		err = unix.Unmount(arg(1), unix.MNT_DETACH)
	case "chroot":
		err = unix.Chroot(arg(1))
	case "chown": // to the owner it has: allowed or not, nothing changes
		var st unix.Stat_t
		if err = unix.Stat(arg(1), &st); err == nil {
			err = unix.Chown(arg(1), int(st.Uid), int(st.Gid))
		}
	case "setxattr": // a user attribute, removed again
		if err = unix.Setxattr(arg(1), "user.workforce-probe", []byte("x"), 0); err == nil {
			_ = unix.Removexattr(arg(1), "user.workforce-probe")
		}
	case "open-read":
		var f *os.File
		if f, err = os.Open(arg(1)); err == nil {
			f.Close()
		}
	case "open-write": // open for writing, write nothing
		var f *os.File
		if f, err = os.OpenFile(arg(1), os.O_WRONLY, 0); err == nil {
			f.Close()
		}
	case "sethostname": // to the name it has
		var name string
		if name, err = os.Hostname(); err == nil {
			err = unix.Sethostname([]byte(name))
		}
	case "init-module": // an empty module: refused by the capability check or as no module
		err = unix.InitModule(nil, "")
	case "reboot": // with a bad magic: EPERM without CAP_SYS_BOOT, EINVAL with it
		_, _, errno := unix.Syscall6(unix.SYS_REBOOT, 0, 0, 0, 0, 0, 0)
		if errno != 0 {
			err = errno
		}
	case "ptrace-parent": // seize (without stopping) and let go
		if err = unix.PtraceSeize(os.Getppid()); err == nil {
			_ = unix.PtraceDetach(os.Getppid())
		}
	case "netadmin": // set the loopback interface's flags to what they are
		err = netAdmin()
	case "bpf": // load (not attach) a kprobe program that returns 0
		err = loadKprobe()
	case "landlocked": // restrict itself further with Landlock, no write allowed anywhere (every later operation too)
		err = landlock.V1.RestrictPaths()
	case "kill-init": // the null signal to process 1
		err = unix.Kill(1, 0)
	case "kill-parent": // the null signal to the parent (workforce)
		err = unix.Kill(os.Getppid(), 0)
	case "kill-child": // start a child and end it with SIGTERM
		child := exec.Command("/bin/sleep", "60")
		if err = child.Start(); err == nil {
			err = child.Process.Signal(unix.SIGTERM)
			_ = child.Wait()
		}
	case "pipes": // the pipes the program holds beyond its standard streams
		return strings.Join(pipes(), " ")
	case "fd": // what descriptor N is
		link, err := os.Readlink("/proc/self/fd/" + arg(1))
		if err != nil {
			return errName(err)
		}
		return link
	case "pid":
		return strconv.Itoa(os.Getpid())
	case "pdeathsig": // the parent-death signal the program has
		var sig int
		if err = unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err == nil {
			return strconv.Itoa(sig)
		}
	case "uid":
		return strconv.Itoa(os.Getuid())
	case "capeff", "capbnd", "capprm": // a capability set, as /proc/self/status says
		return statusField(map[string]string{"capeff": "CapEff", "capbnd": "CapBnd", "capprm": "CapPrm"}[op[0]])
	case "procs": // the process ids /proc shows
		return strings.Join(procIDs(), " ")
	case "connect": // a TCP connection to HOST:PORT
		var c net.Conn
		if c, err = net.DialTimeout("tcp", arg(1), 2*time.Second); err == nil {
			c.Close()
		}
	case "send": // a line sent on a TCP connection to HOST:PORT
		var c net.Conn
		if c, err = net.DialTimeout("tcp", arg(1), 2*time.Second); err == nil {
			_, err = fmt.Fprintln(c, arg(2))
			c.Close()
		}
	case "unix": // a connection to the Unix socket PATH
		var c net.Conn
		if c, err = net.DialTimeout("unix", arg(1), 2*time.Second); err == nil {
			c.Close()
		}
	case "daemon": // a process left behind, detached (setsid, a double fork), ARG among its arguments
		err = exec.Command("/bin/sh", "-c", `setsid /bin/sh -c 'sleep 600; true' "$0" </dev/null >/dev/null 2>&1 &`, arg(1)).Run()
	case "waitterm": // PATH made, then the SIGTERMs that come within half a second of the first
		c := make(chan os.Signal, 8)
		signal.Notify(c, unix.SIGTERM)
		if err = os.WriteFile(arg(1), nil, 0o644); err != nil {
			break
		}
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			return "none"
		}
		n := 1
		for end := time.After(500 * time.Millisecond); ; {
			select {
			case <-c:
				n++
				continue
			case <-end:
			}
			break
		}
		return strconv.Itoa(n)
	case "fds": // the sockets and pipes this process holds above its standard streams
		ents, _ := os.ReadDir("/proc/self/fd")
		var out []string
		for _, e := range ents {
			fd, _ := strconv.Atoi(e.Name())
			link, _ := os.Readlink("/proc/self/fd/" + e.Name())
			if fd > 2 && (strings.HasPrefix(link, "socket:") || strings.HasPrefix(link, "pipe:")) {
				out = append(out, e.Name()+"="+link)
			}
		}
		return strings.Join(out, " ")
	case "winsize0": // the window size of the terminal on standard input
		_, err = unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
	case "killself":
		_ = unix.Kill(os.Getpid(), unix.SIGKILL)
		time.Sleep(time.Second)
		return "alive"
	default:
		return "unknown operation " + op[0]
	}
	return errName(err)
}

// statusField returns the value of a field of /proc/self/status.
func statusField(name string) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return errName(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return "no " + name
}

// procIDs returns the process ids /proc lists, in order.
func procIDs() []string {
	ents, _ := os.ReadDir("/proc")
	var ids []int
	for _, e := range ents {
		if id, err := strconv.Atoi(e.Name()); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.Itoa(id)
	}
	return out
}

// pty opens a new pseudo-terminal pair and reads the terminal's settings.
func pty() error {
	m, s, err := openPty()
	if err != nil {
		return err
	}
	defer m.Close()
	defer s.Close()
	_, err = unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	return err
}

// openPty opens a new pseudo-terminal pair, as posix_openpt, unlockpt
// and ptsname do.
func openPty() (master, slave *os.File, err error) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	}
	var s *os.File
	if err == nil {
		s, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	}
	if err != nil {
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

// winsize asks a new pseudo-terminal for its window size.
func winsize() error {
	m, s, err := openPty()
	if err != nil {
		return err
	}
	defer m.Close()
	defer s.Close()
	_, err = unix.IoctlGetWinsize(int(s.Fd()), unix.TIOCGWINSZ)
	return err
}

// tiocsti makes a new pseudo-terminal the probe's controlling terminal,
// as a user's terminal is the shell's, and pushes "x\n" into its input
// queue with ioctl(TIOCSTI), the request number's high word set to high
// (the kernel takes the low 32 bits): "OK" when the line then reads
// back from the terminal, the errno when TIOCSTI failed.
func tiocsti(high uint64) string {
	m, s, err := openPty()
	if err != nil {
		return errName(err)
	}
	defer m.Close()
	defer s.Close()
	// A new session without a terminal, which then takes this one; as
	// root TIOCSTI works on any terminal, otherwise only on one's own.
	// Closing the master hangs the terminal up, which signals its
	// session and leaves it without a terminal again, for the next op.
	signal.Ignore(unix.SIGHUP)
	_, _ = unix.Setsid()
	if err := unix.IoctlSetInt(int(s.Fd()), unix.TIOCSCTTY, 0); err != nil {
		return "TIOCSCTTY: " + errName(err)
	}
	for _, c := range []byte("x\n") {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, s.Fd(), uintptr(high<<32|unix.TIOCSTI), uintptr(unsafe.Pointer(&c)))
		if errno != 0 {
			return errName(errno)
		}
	}
	buf := make([]byte, 16)
	n, err := s.Read(buf)
	if err != nil || string(buf[:n]) != "x\n" {
		return fmt.Sprintf("pushed, but the terminal read %q (%v)", buf[:n], err)
	}
	return "OK"
}

// errName names err: "OK" for nil, the errno's name, "exit N" for a
// command's exit status.
func errName(err error) string {
	var errno unix.Errno
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "OK"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	case errors.As(err, &ee):
		return "exit " + strconv.Itoa(ee.ExitCode())
	}
	return err.Error()
}

// pipes lists the pipes this process holds beyond its standard streams.
func pipes() []string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		fd, _ := strconv.Atoi(e.Name())
		link, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if fd > 2 && strings.HasPrefix(link, "pipe:") {
			out = append(out, link)
		}
	}
	return out
}

// netAdmin sets the flags of the loopback interface to the ones it has:
// it needs CAP_NET_ADMIN, and changes nothing.
func netAdmin() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// loadKprobe loads a kprobe program (mov r0, 0; exit), which needs
// CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN), and closes it unattached.
func loadKprobe() error {
	insns := []uint64{0x00000000000000b7, 0x0000000000000095}
	license := []byte("GPL\x00")
	var attr struct {
		progType, insnCnt uint32
		insns, license    uint64
		logLevel, logSize uint32
		logBuf            uint64
		kernVersion       uint32
		_                 [84]byte
	}
	attr.progType = 2 // BPF_PROG_TYPE_KPROBE
	attr.insnCnt = uint32(len(insns))
	attr.insns = uint64(uintptr(unsafe.Pointer(&insns[0])))
	attr.license = uint64(uintptr(unsafe.Pointer(&license[0])))
	fd, _, errno := unix.Syscall(unix.SYS_BPF, 5 /* BPF_PROG_LOAD */, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	runtime.KeepAlive(insns)
	runtime.KeepAlive(license)
	if errno != 0 {
		return errno
	}
	return unix.Close(int(fd))
}
