package confine

import (
	"io"
	"os"
	"os/exec"
	"syscall"
)

// closeAsideArg, after LauncherArg, makes the launcher read its standard
// input to its end and exit: the descriptors it inherited (CloseAside's)
// close with its exit.
const closeAsideArg = "close-aside"

// CloseAside closes the descriptors fds (which the caller gives up) in a
// short-lived process that nobody waits for: the system's cat(1), which
// inherits them, reads its standard input, a pipe, to the end, and
// exits; or where there is none, workforce's own launcher started with
// closeAsideArg, which does the same (cat starts in a tenth of the CPU
// time a Go program of workforce's size takes, which a run pays beside
// its sync-back). It is for what costs its closer a wait: closing an
// inotify instance waits for the kernel's grace period of its marks,
// 10-20 ms, and a process's exit waits for it too, so that a run ending
// right after its read watch (mount.ReadWatch) paid it whole, where the
// process that now holds the last reference pays it instead.
//
// The caller closes its copies before it closes the pipe's other end, so
// the process cannot exit first: the last reference is always its.
// (With a process that exits at once, true(1), the caller's close came
// last whenever the caller was held up for the half millisecond true
// runs in, one run in eight on a busy 2-core machine, and paid the wait.)
// Where the process cannot be started, the descriptors are closed here.
func CloseAside(fds ...int) {
	files, closeAll := fdFiles(fds, "close-aside")
	r, w, err := os.Pipe()
	if err != nil {
		closeAll()
		return
	}
	cmd := closeAsideCommand()
	// Nothing of the caller's but the descriptors and the pipe: no
	// terminal, no working directory in a session that is to be removed;
	// a process group of its own, so that a Ctrl-C on the caller's
	// terminal does not end it before the caller let it go.
	cmd.Stdin, cmd.ExtraFiles, cmd.Dir, cmd.Env = r, files, "/", launcherEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	started := cmd.Start() == nil
	r.Close()
	// The caller's copies first: the process, started, holds its own
	// until w closes.
	closeAll()
	if started {
		asideHeld(cmd.Process.Pid)
		// Reaped if the caller lives long enough, else by whoever
		// inherits it.
		go func() { _ = cmd.Wait() }()
	}
	w.Close()
}

// asideHeld is called once CloseAside closed the caller's copies, before
// it lets the process go, with the process's id: a test's view of the
// moment the process must still hold them.
var asideHeld = func(pid int) {}

// closeAsideCommand is the command CloseAside starts: cat(1) at its
// system path (never looked up on PATH), else the launcher.
var closeAsideCommand = func() *exec.Cmd {
	for _, p := range []string{"/bin/cat", "/usr/bin/cat"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return exec.Command(p)
		}
	}
	return exec.Command(launcherPath(), LauncherArg, closeAsideArg)
}

// closeAsideMain is the launcher's closeAsideArg mode: it reads its
// standard input to the end, and exits.
func closeAsideMain() int {
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// fdFiles returns the descriptors fds as files named name, and a
// function that closes them all.
func fdFiles(fds []int, name string) ([]*os.File, func()) {
	files := make([]*os.File, len(fds))
	for i, fd := range fds {
		files[i] = os.NewFile(uintptr(fd), name)
	}
	return files, func() {
		for _, f := range files {
			f.Close()
		}
	}
}
