package confine

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCloseAside: the caller's descriptors are closed when CloseAside
// returns, a child of its own holds them then, and it exits: the pipe's
// reader sees its end. For each program, cat(1) and the launcher in
// closeAsideArg mode: at the moment the caller lets the child go
// (asideHeld), the caller's copy is closed already, the child still holds
// its own, and it does not exit before it is let go, so that the last
// reference is always the child's (a child that exits at once, as true(1)
// did, fails here, and so does a caller that closes its copy last). The
// child is in a process group of its own.
func TestCloseAside(t *testing.T) {
	orig, origHeld := closeAsideCommand, asideHeld
	defer func() { closeAsideCommand, asideHeld = orig, origHeld }()
	for _, c := range []struct {
		name string
		cmd  func() *exec.Cmd
	}{{"default", orig}, {"launcher", func() *exec.Cmd { return exec.Command(launcherPath(), LauncherArg, closeAsideArg) }}} {
		closeAsideCommand = c.cmd
		var target string
		var fd int
		held := false
		asideHeld = func(pid int) {
			held = true
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF {
				t.Errorf("%s: the caller's descriptor is still open when the child is let go (F_GETFD gives %v): the caller's close could come last", c.name, err)
			}
			if pgid, err := unix.Getpgid(pid); err != nil || pgid != pid {
				t.Errorf("%s: the child's process group is %d (%v), want its own, %d: a Ctrl-C on the caller's terminal would end it early", c.name, pgid, err, pid)
			}
			if !childHolds(target) {
				t.Errorf("%s: no child of the test holds %s once the caller closed its copies", c.name, target)
			}
			if exitedWithin(t, pid, 300*time.Millisecond) {
				t.Errorf("%s: the process CloseAside started exited before the caller let it go: the caller's close could be the last", c.name)
			}
		}
		if !closeAsideRun(t, func(tg string, n int) { target, fd = tg, n }) {
			t.Errorf("%s: the pipe still has a writer 30 s after CloseAside", c.name)
		}
		if !held {
			t.Errorf("%s: CloseAside started no process", c.name)
		}
	}
}

// exitedWithin reports whether the process pid exits (or exited) within
// d, without reaping it.
func exitedWithin(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			t.Fatalf("poll of the pidfd of %d: %v", pid, err)
		}
		return n > 0
	}
}

// closeAsideRun hands a pipe's writer to CloseAside, after it called
// name with the pipe's /proc/PID/fd text and the writer's descriptor,
// checks the caller's copy is closed, and reports whether the reader
// then sees the end within 30 s.
func closeAsideRun(t *testing.T, name func(target string, fd int)) bool {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	var st unix.Stat_t
	if err := unix.Fstat(p[1], &st); err != nil {
		t.Fatal(err)
	}
	name(fmt.Sprintf("pipe:[%d]", st.Ino), p[1])
	CloseAside(p[1])
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("the caller's descriptor after CloseAside: F_GETFD gives %v, want EBADF", err)
	}
	// The child exits with the last copy: the reader sees the end.
	if err := unix.SetNonblock(p[0], true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := unix.Read(p[0], make([]byte, 1))
		if n == 0 && err == nil {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// childHolds reports whether a child process of the test has a
// descriptor open on target (a /proc/PID/fd link's text).
func childHolds(target string) bool {
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		data, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		for _, pid := range strings.Fields(string(data)) {
			if _, err := strconv.Atoi(pid); err != nil {
				continue
			}
			fds, _ := os.ReadDir("/proc/" + pid + "/fd")
			for _, fd := range fds {
				if l, err := os.Readlink("/proc/" + pid + "/fd/" + fd.Name()); err == nil && l == target {
					return true
				}
			}
		}
	}
	return false
}
