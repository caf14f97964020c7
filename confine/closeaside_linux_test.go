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
// reader sees its end. The child here waits for the test's word before
// it exits, so that it is seen holding them; each real program, true(1)
// and the launcher in closeAsideArg mode, is then seen to close them as
// it exits.
func TestCloseAside(t *testing.T) {
	orig := closeAsideCommand
	defer func() { closeAsideCommand = orig }()
	hold, release, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	closeAsideCommand = func() *exec.Cmd {
		// Its standard input is hold: it exits when release closes.
		cmd := exec.Command("/bin/sh", "-c", "read x")
		cmd.Stdin = hold
		return cmd
	}
	held := closeAsideRun(t, func(target string) {
		if !childHolds(target) {
			t.Errorf("no child of the test holds %s after CloseAside: it was closed here, not aside", target)
		}
		release.Close()
	})
	if !held {
		t.Fatal("the pipe's writer was never closed")
	}
	for _, c := range []struct {
		name string
		cmd  func() *exec.Cmd
	}{{"default", orig}, {"launcher", func() *exec.Cmd { return exec.Command(launcherPath(), LauncherArg, closeAsideArg) }}} {
		closeAsideCommand = c.cmd
		if !closeAsideRun(t, func(string) {}) {
			t.Errorf("%s: the pipe still has a writer 30 s after CloseAside", c.name)
		}
	}
}

// closeAsideRun hands a pipe's writer to CloseAside, checks the
// caller's copy is closed, calls check with the pipe's /proc/PID/fd text,
// and reports whether the reader then sees the end within 30 s.
func closeAsideRun(t *testing.T, check func(target string)) bool {
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
	target := fmt.Sprintf("pipe:[%d]", st.Ino)
	CloseAside(p[1])
	if _, err := unix.FcntlInt(uintptr(p[1]), unix.F_GETFD, 0); err != unix.EBADF {
		t.Errorf("the caller's descriptor after CloseAside: F_GETFD gives %v, want EBADF", err)
	}
	check(target)
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
