package session

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this process the reaper of its descendants' orphans
// (PR_SET_CHILD_SUBREAPER), so that a process the harness leaves running,
// however it detached itself, stays a child of workforce that leftovers
// finds.
func adoptOrphans() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// leftovers returns the process ids of this process's children that are
// still running (zombies do not count): after the harness exited, the
// processes it left behind.
func leftovers() []int {
	// Without a child, dead or alive, waitid says so at once: the
	// common case, which needs no look at every process.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); errors.Is(err, unix.ECHILD) {
		return nil
	}
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if st, ok := parseStat(data); ok && st.ppid == self && st.state != 'Z' && st.state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}
