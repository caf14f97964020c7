package confine

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// kernelABI returns the kernel's Landlock ABI, 0 without Landlock.
func kernelABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// writeRights are the access rights the boundary handles: every right
// that writes (creating, writing, truncating, removing, renaming and
// linking across directories) and ioctl(2) on devices. Reading, listing
// and executing are not handled, so they stay allowed everywhere.
const writeRights = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo |
	ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate | ll.AccessFSIoctlDev)

// dirRights are what a writable directory gets: every write right but
// ioctl(2) on devices and making device nodes. Making them stays handled,
// so it is denied everywhere: a device node the harness made in its tree
// would open the device it names (for root, the disk under the file
// system) with the tree's write rights. fileRights are what a single
// writable file gets; deviceRights what a device gets.
const (
	dirRights    = writeRights &^ landlock.AccessFSSet(ll.AccessFSIoctlDev|ll.AccessFSMakeChar|ll.AccessFSMakeBlock)
	fileRights   = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSTruncate)
	deviceRights = fileRights | landlock.AccessFSSet(ll.AccessFSIoctlDev)
)

// scopes returns the IPC scopes applied on ABI abi: the signal scope
// where the kernel has it. The abstract Unix socket scope is left alone
// (see the package documentation).
func scopes(abi int) landlock.ScopedSet {
	if abi >= SignalScopeABI {
		return landlock.ScopedSet(ll.ScopeSignal)
	}
	return 0
}

// presets are go-landlock's configurations per ABI, V1 first.
var presets = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6,
	landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// handledRights returns the write rights ABI abi can restrict.
func handledRights(abi int) landlock.AccessFSSet {
	if abi < 1 {
		return 0
	}
	return writeRights & presets[min(abi, len(presets))-1].HandledAccessFS
}

// apply confines the calling process, and what it executes, to p on
// Landlock ABI abi (at most the kernel's): it returns nil only when the
// kernel enforces the write rights of that ABI, at least MinABI, and its
// signal scope from SignalScopeABI on.
func apply(p Policy, abi int) error {
	if err := p.Check(); err != nil {
		return err
	}
	if abi < MinABI {
		return &UnavailableError{ABI: abi, GOOS: "linux"}
	}
	handled := handledRights(abi)
	var rules []landlock.Rule
	add := func(what string, paths []string, rights func(os.FileInfo) (landlock.AccessFSSet, error)) error {
		for _, path := range paths {
			fi, err := os.Stat(path)
			if err == nil {
				var r landlock.AccessFSSet
				if r, err = rights(fi); err == nil {
					rules = append(rules, landlock.PathAccess(r&handled, path))
					continue
				}
			}
			return fmt.Errorf("sandbox %s %q: %w", what, path, err)
		}
		return nil
	}
	err := add("writable directory", p.Dirs, func(fi os.FileInfo) (landlock.AccessFSSet, error) {
		if !fi.IsDir() {
			return 0, errors.New("not a directory")
		}
		return dirRights, nil
	})
	if err == nil {
		err = add("writable file", p.Files, func(fi os.FileInfo) (landlock.AccessFSSet, error) {
			if fi.IsDir() {
				return 0, errors.New("a directory, not a file")
			}
			return fileRights, nil
		})
	}
	if err == nil {
		err = add("device", p.Devices, func(fi os.FileInfo) (landlock.AccessFSSet, error) {
			if !fi.IsDir() && fi.Mode()&os.ModeDevice == 0 {
				return 0, errors.New("not a device")
			}
			return deviceRights, nil
		})
	}
	if err != nil {
		return err
	}
	// The read rights (reads.go), when the policy restricts reads.
	readRules, done, err := readRules(p)
	defer done()
	if err != nil {
		return err
	}
	if p.Read != nil {
		handled |= readDirRights
		rules = append(rules, readRules...)
	}
	cfg, err := landlock.NewConfig(handled, scopes(abi))
	if err != nil {
		return err
	}
	// Not best effort: the kernel enforces all of handled and the
	// scopes, or this fails.
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("cannot apply the Landlock policy: %w", err)
	}
	return nil
}

// maxMessage bounds the launcher's message: the policy and the harness's
// environment, which the kernel caps far below this at execve(2).
const maxMessage = 64 << 20

// Start starts cmd, not started yet, confined by p: the process started
// is workforce's launcher, which applies p and then executes cmd's program
// with cmd's arguments (Args[0] included), environment and directory, in
// the same process (cmd.Process is the harness). Start returns once the
// program runs confined, or with an error when the system cannot confine
// (*UnavailableError), p is refused (Policy.Check, or a path missing) or
// the launcher failed (*LaunchError): then the program never ran, and
// cmd's process has been waited for.
//
// The launcher itself starts with an empty environment: cmd's environment
// (cmd.Environ, as cmd.Start would have passed it) travels in the message
// Start writes to it on a pipe, with the policy, and is the program's
// only once Landlock and the seccomp filter are in place; a loader
// variable in it (LD_PRELOAD) reaches the confined program, never the
// launcher. The program keeps descriptors 0 to 2 and cmd.ExtraFiles;
// every other descriptor the launcher inherited (workforce's own, from
// its caller) is closed when the program starts.
//
// Start changes cmd: its Path, Args and Env become the launcher's (the
// program's path and arguments follow LauncherArg and the message's
// descriptor), and two descriptors are added to its ExtraFiles; the
// program sees none of them. cmd.Process.Pid is the program's process id.
//
// With p.Net, the launcher starts in new user, network, PID and mount
// namespaces (see Namespaces and the package documentation), and stays
// there as process 1, the program its child: cmd.Process is the
// launcher, which passes the caller's signals on (SIGTERM, SIGHUP) and
// exits with the program's status, and the Launched returned holds the
// listeners it made and, once cmd.Wait returned, how the program ended
// and what it left running (Launched.Ending). A third descriptor is
// added to cmd.ExtraFiles, and cmd.SysProcAttr is replaced by a copy
// with the namespaces (its parent-death signal travels in the message).
// The caller closes the Launched once the program ended.
func Start(cmd *exec.Cmd, p Policy) (*Launched, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	pending, err := Spawn(cmd, p.Shape())
	if err != nil {
		return nil, err
	}
	return pending.launch(p, "", nil, true)
}

// Spawn starts the launcher for cmd as Start does, but sends it nothing
// yet: the launcher, its runtime started, waits for Pending.Launch to
// send the policy, which must be of shape s. So the launcher starts (a
// few milliseconds: a process, the Go runtime) while the caller makes
// what the policy names, the session's tree and the overlay's layers.
// cmd.Dir is where the launcher starts; Launch can name the program's
// directory instead, one that does not exist yet when Spawn is called.
// Spawn changes cmd as Start does. The caller calls Launch or Abort.
func Spawn(cmd *exec.Cmd, s Shape) (*Pending, error) {
	if cmd.Process != nil {
		return nil, errors.New("confine: command already started")
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	if s.Overlay && !s.Namespaces {
		return nil, errors.New("confine: an overlay needs the namespaces")
	}
	pending := &Pending{cmd: cmd, shape: s, env: cmd.Environ(), files: len(cmd.ExtraFiles), path: cmd.Path}
	if a := cmd.SysProcAttr; a != nil && a.Pdeathsig != 0 {
		pending.parentDeath = int(a.Pdeathsig)
	}
	// With namespaces, a socket pair: the listeners and the program's
	// end come back on it.
	var theirs *os.File
	if s.Namespaces {
		var err error
		if pending.sock, theirs, err = socketPair(); err != nil {
			return nil, err
		}
		defer theirs.Close()
		caps := nsCaps
		if s.Overlay {
			caps = overlayCaps
		}
		cmd.SysProcAttr = nsProcAttr(cmd.SysProcAttr, caps)
	}
	fail := func(err error) (*Pending, error) {
		pending.close()
		return nil, err
	}
	// Two pipes: the message to the launcher, and its report back.
	mr, mw, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	pending.mw = mw
	r, w, err := os.Pipe()
	if err != nil {
		mr.Close()
		return fail(err)
	}
	pending.r = r
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	cmd.Env = launcherEnv()
	cmd.Args = append([]string{os.Args[0], LauncherArg, strconv.Itoa(3 + pending.files), cmd.Path}, args...)
	cmd.Path = launcherPath()
	cmd.ExtraFiles = append(cmd.ExtraFiles, mr, w)
	if theirs != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, theirs)
	}
	err = cmd.Start()
	mr.Close()
	w.Close()
	if err != nil {
		if s.Namespaces {
			err = fmt.Errorf("cannot start in new namespaces: %w", err)
		}
		return fail(err)
	}
	return pending, nil
}

// Pending is a launcher Spawn started, waiting for its policy.
type Pending struct {
	cmd   *exec.Cmd
	shape Shape
	// env is the program's environment and path its executable, as
	// the command had them; files is how many descriptors it keeps.
	env   []string
	path  string
	files int
	// parentDeath is the parent-death signal the command asked for.
	parentDeath int
	// mw is the message's pipe, r the report's, sock workforce's end of
	// the socket pair (namespaces).
	mw, r, sock *os.File
	done        bool
}

// Launch sends the launcher its policy p, which must be of the shape
// Spawn was given: the launcher confines itself and executes the program
// in dir (the command's directory when dir is ""), with the environment
// env (the command's when nil). It returns once the program runs, as
// Start does, or with the launcher's error, the launcher then reaped.
// Launch is called once, and never after Abort.
func (pd *Pending) Launch(p Policy, dir string, env []string) (*Launched, error) {
	return pd.launch(p, dir, env, false)
}

// launch is Launch; checked says p was checked already (Start).
func (pd *Pending) launch(p Policy, dir string, env []string, checked bool) (*Launched, error) {
	if pd.done {
		return nil, errors.New("confine: the launcher was launched or aborted already")
	}
	pd.done = true
	cmd := pd.cmd
	fail := func(err error) (*Launched, error) {
		pd.kill()
		return nil, err
	}
	if p.Shape() != pd.shape {
		return fail(fmt.Errorf("confine: the policy's shape %+v is not the one the launcher was started for, %+v", p.Shape(), pd.shape))
	}
	if !checked {
		if err := p.Check(); err != nil {
			return fail(err)
		}
	}
	if env == nil {
		env = pd.env
	}
	for _, kv := range env {
		if strings.IndexByte(kv, 0) >= 0 {
			// As cmd.Start would refuse it.
			return fail(errors.New("exec: environment variable contains NUL"))
		}
	}
	m := message{V: messageVersion, Policy: p, ABI: ABI(), Files: pd.files, StatusFD: 4 + pd.files, Dir: dir,
		Env: make([][]byte, len(env))}
	for i, kv := range env {
		m.Env[i] = []byte(kv)
	}
	if pd.parentDeath != 0 {
		m.ParentDeath, m.Parent = pd.parentDeath, os.Getpid()
	}
	if pd.sock != nil {
		m.Sock = 5 + pd.files
	}
	value, err := encodeMessage(m)
	if err != nil {
		return fail(err)
	}
	// The launcher reads all of it before anything else; a launcher that
	// died early is reported by its status or its exit.
	_, _ = pd.mw.Write(value)
	pd.mw.Close()
	// The launcher closes its end when it executes the program (or
	// exits): what it wrote before is its error.
	report, _ := io.ReadAll(io.LimitReader(pd.r, 64<<10))
	pd.r.Close()
	launched := &Launched{sock: pd.sock}
	if len(report) > 0 {
		_ = cmd.Wait()
		_ = launched.Close()
		return nil, &LaunchError{Path: pd.path, Msg: strings.TrimSpace(string(report))}
	}
	if pd.sock != nil {
		if launched.Listeners, err = receiveListeners(pd.sock, p.Net.ports()); err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			_ = launched.Close()
			return nil, &LaunchError{Path: pd.path, Msg: err.Error()}
		}
	}
	return launched, nil
}

// Abort ends a launcher that was not launched: its message's pipe is
// closed (a launcher that reads the empty message exits without a word),
// it is killed, and reaped. Abort after Launch, or on a nil Pending, does
// nothing.
func (pd *Pending) Abort() {
	if pd == nil || pd.done {
		return
	}
	pd.done = true
	pd.kill()
}

// kill ends the launcher, which was not launched, and reaps it.
func (pd *Pending) kill() {
	pd.close()
	_ = pd.cmd.Process.Kill()
	_ = pd.cmd.Wait()
}

// close closes workforce's ends of the pipes and the socket.
func (pd *Pending) close() {
	for _, f := range []*os.File{pd.mw, pd.r, pd.sock} {
		if f != nil {
			f.Close()
		}
	}
}

// errAborted is readMessage's error for an empty message: workforce
// started the launcher (Spawn) and then ended it, or died, before it sent
// one. The launcher exits without a word: nobody is there to read it,
// or the run's own error says why.
var errAborted = errors.New("no message: the launch was called off")

// readMessage reads and decodes the launcher's message from descriptor
// fd, to its end, and closes fd.
func readMessage(fd int) (message, error) {
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
		return message{}, fmt.Errorf("%s: message descriptor %d: %w (the launcher is started by workforce itself)", LauncherArg, fd, err)
	}
	f := os.NewFile(uintptr(fd), "message")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMessage+1))
	switch {
	case err != nil:
		return message{}, fmt.Errorf("%s: cannot read the message on descriptor %d: %w", LauncherArg, fd, err)
	case len(data) > maxMessage:
		return message{}, fmt.Errorf("%s: the message on descriptor %d is over %d bytes", LauncherArg, fd, maxMessage)
	case len(data) == 0:
		return message{}, errAborted
	}
	m, err := decodeMessage(data)
	if err == nil && 3+m.Files > fd {
		err = fmt.Errorf("invalid launcher message: %d descriptors to keep from 3, the message's is %d", m.Files, fd)
	}
	return m, err
}

// closeOnExecFrom marks every descriptor from first on close-on-exec, so
// that the program the launcher executes inherits none of them: those
// workforce inherited from its caller (a descriptor open for writing on
// a file outside the policy would keep its access under Landlock, which
// checks a file when it is opened), and the launcher's own.
func closeOnExecFrom(first int) error {
	err := unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		// Before Linux 5.11 (a kernel with Landlock backported).
		return markCloseOnExec(first)
	}
	return err
}

// markCloseOnExec is closeOnExecFrom for a kernel without
// close_range(CLOSE_RANGE_CLOEXEC): descriptor by descriptor, as
// /proc/self/fd lists them.
func markCloseOnExec(first int) error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("cannot list the open descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < first {
			continue
		}
		// The directory's own descriptor is closed by now: EBADF.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && !errors.Is(err, unix.EBADF) {
			return fmt.Errorf("descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// Main is the launcher: main calls it first when IsLauncher(os.Args),
// with the arguments after LauncherArg: FD PATH ARGV0 [ARG...]. It reads
// its message (the policy and the program's environment) from descriptor
// FD, applies the policy with the signal scope where the kernel has it,
// marks every descriptor but the standard streams and the ones the
// message keeps close-on-exec, installs the seccomp filter that keeps the
// program from pushing input into a terminal (TIOCSTI), and executes PATH
// with ARGV0 and the ARGs in the message's environment. It returns only
// when that failed, with the exit status, having reported why on its
// status descriptor (or stderr).
//
// Nothing of the program's environment is the launcher's: Start runs it
// with an empty one, so that no loader variable of the program's
// (LD_PRELOAD, LD_LIBRARY_PATH, ...) runs code in it before Landlock
// applies.
func Main(args []string) int {
	var status io.Writer = os.Stderr
	fail := func(code int, err error) int {
		if status == os.Stderr {
			fmt.Fprintf(os.Stderr, "workforce: error: %v\n", err)
		} else {
			fmt.Fprintln(status, err)
		}
		return code
	}
	if len(args) == 1 && args[0] == probeArg {
		return probeMainNS()
	}
	if len(args) == 2 && args[0] == probeOverlayArg {
		return probeOverlayMain(args[1])
	}
	if len(args) == 1 && args[0] == closeAsideArg {
		return closeAsideMain() // CloseAside's: what it inherited closes as it exits
	}
	if len(args) < 3 {
		return fail(ExitCannotRun, fmt.Errorf("usage: %s FD PATH ARGV0 [ARG...]: the launcher is started by workforce itself", LauncherArg))
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil || fd < 3 {
		return fail(ExitCannotRun, fmt.Errorf("%s: message descriptor %q: want a number from 3", LauncherArg, args[0]))
	}
	// Process 1 of a PID namespace is the launcher in namespaces, which
	// catches the signals it passes on: asked for while the message is
	// still to come (a launcher Spawn started early waits for it).
	var sigc chan os.Signal
	if os.Getpid() == 1 {
		sigc = catchSignals()
	}
	m, err := readMessage(fd)
	if errors.Is(err, errAborted) {
		return ExitCannotRun
	}
	if err != nil {
		return fail(ExitCannotRun, err)
	}
	if m.StatusFD > 0 {
		if _, err := unix.FcntlInt(uintptr(m.StatusFD), unix.F_GETFD, 0); err != nil {
			return fail(ExitCannotRun, fmt.Errorf("status descriptor %d: %w", m.StatusFD, err))
		}
		syscall.CloseOnExec(m.StatusFD)
		status = os.NewFile(uintptr(m.StatusFD), "status")
	}
	env := make([]string, len(m.Env))
	for i, kv := range m.Env {
		env[i] = string(kv)
	}
	path, argv := args[1], args[2:]
	if !strings.Contains(path, "/") {
		// Looked up on the program's PATH: the launcher has none of
		// its own.
		os.Setenv("PATH", envValue(env, "PATH"))
		if path, err = exec.LookPath(path); err != nil {
			return fail(ExitNotFound, err)
		}
	}
	if m.Policy.Net != nil {
		return mainNS(m, path, argv, env, status, sigc, fail)
	}
	if err := closeOnExecFrom(3 + m.Files); err != nil {
		return fail(ExitCannotRun, fmt.Errorf("cannot close the inherited descriptors: %w", err))
	}
	if m.Dir != "" {
		if err := unix.Chdir(m.Dir); err != nil {
			return fail(ExitCannotRun, fmt.Errorf("cannot change to the directory %s: %w", m.Dir, err))
		}
	}
	if err := confineSelf(m); err != nil {
		return fail(ExitCannotRun, err)
	}
	if err := parentDeath(m); err != nil {
		return fail(ExitCannotRun, err)
	}
	err = syscall.Exec(path, argv, env)
	code := ExitCannotRun
	if errors.Is(err, syscall.ENOENT) {
		code = ExitNotFound
	}
	return fail(code, fmt.Errorf("cannot execute %s: %w", path, err))
}

// parentDeath sets the parent-death signal m asks for on the calling
// thread, the one that executes the program: the kernel keeps it per
// thread, and only the thread the launcher started on got it from the
// fork. When the parent died before, the signal would never come: the
// launcher stops rather than run a harness nobody waits for.
func parentDeath(m message) error {
	if m.ParentDeath == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(m.ParentDeath), 0, 0, 0); err != nil {
		return fmt.Errorf("cannot set the parent-death signal: %w", err)
	}
	if os.Getppid() != m.Parent {
		return fmt.Errorf("workforce (process %d) exited before the harness started", m.Parent)
	}
	return nil
}

// envValue returns the value of the last variable key in env, as a
// program reads it.
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// confineSelf confines the launcher, and what it executes or starts, to
// m's policy: Landlock on the ABI m allows (at most the kernel's), then
// the seccomp filter. The calling thread stays locked to its goroutine:
// the one that executes (or forks) the program.
func confineSelf(m message) error {
	abi := ABI()
	if m.ABI > 0 {
		abi = min(abi, m.ABI)
	}
	// apply checks the policy again (Policy.Check), without the home
	// directory test: the launcher has no HOME. Start ran the whole check
	// with workforce's.
	if err := apply(m.Policy, abi); err != nil {
		return err
	}
	// The filter goes on every thread (TSYNC); the thread that installs
	// it is the one that executes the harness all the same.
	runtime.LockOSThread()
	if err := denyTerminalInjection(); err != nil {
		return fmt.Errorf("cannot install the seccomp filter: %w", err)
	}
	return nil
}
