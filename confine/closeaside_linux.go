package confine

import (
	"os"
	"os/exec"
)

// closeAsideArg, after LauncherArg, makes the launcher exit at once: the
// descriptors it inherited (CloseAside's) close with its exit.
const closeAsideArg = "close-aside"

// CloseAside closes the descriptors fds (which the caller gives up) in a
// short-lived process that nobody waits for: the system's true(1), which
// inherits them and exits, or where there is none workforce's own
// launcher started with closeAsideArg, which does the same (true starts
// in a tenth of the CPU time a Go program of workforce's size takes,
// which a run pays beside its sync-back). It
// is for what costs its closer a wait: closing an inotify instance
// waits for the kernel's grace period of its marks, 10-20 ms, and a
// process's exit waits for it too, so that a run ending right after its
// read watch (mount.ReadWatch) paid it whole, where the process that
// now holds the last reference pays it instead. Where the process
// cannot be started, they are closed here.
func CloseAside(fds ...int) {
	files, closeAll := fdFiles(fds, "close-aside")
	defer closeAll()
	cmd := closeAsideCommand()
	// Nothing of the caller's but the descriptors: no terminal, no
	// working directory in a session that is to be removed.
	cmd.ExtraFiles, cmd.Dir, cmd.Env = files, "/", launcherEnv()
	if cmd.Start() != nil {
		return
	}
	// Started: it holds its own copies now, so the caller's close, by
	// the deferred call, is not the last. It is reaped if the caller
	// lives long enough, else by whoever inherits it.
	go func() { _ = cmd.Wait() }()
}

// closeAsideCommand is the command CloseAside starts: true(1) at its
// system path (never looked up on PATH), else the launcher.
var closeAsideCommand = func() *exec.Cmd {
	for _, p := range []string{"/bin/true", "/usr/bin/true"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return exec.Command(p)
		}
	}
	return exec.Command(launcherPath(), LauncherArg, closeAsideArg)
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
