package session

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// proc is what the system says of a process.
type proc struct {
	// exists says a process has the id and has not exited (a zombie,
	// exited but not yet reaped, does not count).
	exists bool
	// start is when it started, nil when the system does not say.
	start *ProcStart
}

// lookProc reads /proc/PID/stat.
func lookProc(pid int) proc {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
		return proc{}
	}
	st, ok := parseStat(data)
	if err != nil || !ok {
		// No /proc to read: the id alone.
		return proc{exists: alive(pid)}
	}
	p := proc{exists: st.state != 'Z' && st.state != 'X'}
	if boot := bootID(); boot != "" {
		p.start = &ProcStart{Boot: boot, Ticks: st.ticks}
	}
	return p
}

// stat is what parseStat reads.
type stat struct {
	state      byte
	ppid, pgrp int
	ticks      uint64
}

// parseStat parses a /proc/PID/stat line: "PID (COMM) STATE PPID PGRP
// ...", with the start time, in clock ticks after boot, the 22nd field.
// COMM may hold spaces and parentheses; it ends at the last ')'.
func parseStat(data []byte) (stat, bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return stat{}, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return stat{}, false
	}
	pgrp, err := strconv.Atoi(f[2])
	if err != nil {
		return stat{}, false
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return stat{}, false
	}
	return stat{state: f[0][0], ppid: ppid, pgrp: pgrp, ticks: ticks}, true
}

// bootID returns the id of the current boot, "" when unknown.
func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// procStart returns when process pid started, nil when unknown.
func procStart(pid int) *ProcStart { return lookProc(pid).start }

// groupMember returns a process of process group pgrp that has not
// exited and started no earlier than start, in the same boot (a member
// of the group that a process started then led), or 0.
func groupMember(pgrp int, start *ProcStart) int {
	if bootID() != start.Boot {
		return 0
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		st, ok := parseStat(data)
		if ok && st.pgrp == pgrp && st.state != 'Z' && st.state != 'X' && st.ticks >= start.Ticks {
			return pid
		}
	}
	return 0
}
