package confine

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
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

// fileRights are what a single writable file gets; deviceRights what a
// device gets.
const (
	fileRights   = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSTruncate)
	deviceRights = fileRights | landlock.AccessFSSet(ll.AccessFSIoctlDev)
)

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

// apply confines the calling process, and what it executes, to p: it
// returns nil only when the kernel enforces the write rights of the
// kernel's ABI, at least MinABI.
func apply(p Policy) error {
	if err := p.Check(); err != nil {
		return err
	}
	abi := ABI()
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
		return writeRights &^ landlock.AccessFSSet(ll.AccessFSIoctlDev), nil
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
	cfg, err := landlock.NewConfig(handled)
	if err != nil {
		return err
	}
	// Not best effort: the kernel enforces all of handled, or this fails.
	if err := cfg.RestrictPaths(rules...); err != nil {
		return fmt.Errorf("cannot apply the Landlock policy: %w", err)
	}
	return nil
}

// Start starts cmd, not started yet, confined by p: the process started
// is workforce's launcher, which applies p and then executes cmd's program
// with cmd's arguments (Args[0] included), environment and directory, in
// the same process (cmd.Process is the harness). Start returns once the
// program runs confined, or with an error when the system cannot confine
// (*UnavailableError), p is refused (Policy.Check, or a path missing) or
// the launcher failed (*LaunchError): then the program never ran, and
// cmd's process has been waited for. Start changes cmd: its Path and Args
// become the launcher's (the program's follow LauncherArg), a descriptor
// is added to its ExtraFiles and PolicyEnv to its environment; the
// program sees neither. cmd.Process.Pid is the program's process id.
func Start(cmd *exec.Cmd, p Policy) error {
	if cmd.Process != nil {
		return errors.New("confine: command already started")
	}
	if cmd.Err != nil {
		return cmd.Err
	}
	if err := Available(); err != nil {
		return err
	}
	if err := p.Check(); err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	value, err := encodeMessage(message{V: messageVersion, Policy: p, StatusFD: 3 + len(cmd.ExtraFiles)})
	if err != nil {
		w.Close()
		return err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	path := cmd.Path
	cmd.Env = append(without(env, PolicyEnv), PolicyEnv+"="+value)
	cmd.Args = append([]string{os.Args[0], LauncherArg, path}, args...)
	cmd.Path = launcherPath()
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	// The launcher closes its end when it executes the program (or
	// exits): what it wrote before is its error.
	report, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	if len(report) > 0 {
		_ = cmd.Wait()
		return &LaunchError{Path: path, Msg: strings.TrimSpace(string(report))}
	}
	return nil
}

// launcherPath is the executable of the launcher: this very binary.
// /proc/self/exe is the file running even when its path was replaced
// since (an upgrade during the run).
func launcherPath() string {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe"
	}
	if exe, err := os.Executable(); err == nil {
		return exe
	}
	return os.Args[0]
}

// without returns env without the variable key.
func without(env []string, key string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return out
}

// Main is the launcher: main calls it first when IsLauncher(os.Args),
// with the arguments after LauncherArg: PATH ARGV0 [ARG...]. It applies
// the policy in PolicyEnv, installs the seccomp filter that keeps the
// program from pushing input into a terminal (TIOCSTI), and executes
// PATH with ARGV0 and the ARGs, the environment without PolicyEnv. It returns only when that failed, with
// the exit status, having reported why on its status descriptor (or
// stderr).
func Main(args []string) int {
	value := os.Getenv(PolicyEnv)
	env := without(os.Environ(), PolicyEnv)
	var status io.Writer = os.Stderr
	fail := func(code int, err error) int {
		if status == os.Stderr {
			fmt.Fprintf(os.Stderr, "workforce: error: %v\n", err)
		} else {
			fmt.Fprintln(status, err)
		}
		return code
	}
	if value == "" {
		return fail(ExitCannotRun, fmt.Errorf("%s: no policy in %s: the launcher is started by workforce itself", LauncherArg, PolicyEnv))
	}
	m, err := decodeMessage(value)
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
	if len(args) < 2 {
		return fail(ExitCannotRun, fmt.Errorf("usage: %s PATH ARGV0 [ARG...]", LauncherArg))
	}
	path, argv := args[0], args[1:]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return fail(ExitNotFound, err)
		}
	}
	if err := apply(m.Policy); err != nil {
		return fail(ExitCannotRun, err)
	}
	// The filter goes on every thread (TSYNC); the thread that installs
	// it is the one that executes the harness all the same.
	runtime.LockOSThread()
	if err := denyTerminalInjection(); err != nil {
		return fail(ExitCannotRun, fmt.Errorf("cannot install the seccomp filter: %w", err))
	}
	err = syscall.Exec(path, argv, env)
	code := ExitCannotRun
	if errors.Is(err, syscall.ENOENT) {
		code = ExitNotFound
	}
	return fail(code, fmt.Errorf("cannot execute %s: %w", path, err))
}
