package proctree

import (
	"bytes"
	"os"
	"strconv"
	"strings"
)

// table reads every process of the system from /proc.
func table() []Proc {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]Proc, 0, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := look(pid); ok {
			out = append(out, p)
		}
	}
	return out
}

// look reads /proc/PID/stat.
func look(pid int) (Proc, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, false
	}
	p, ok := parseStat(data)
	p.PID = pid
	return p, ok
}

// parseStat parses a /proc/PID/stat line: "PID (COMM) STATE PPID PGRP
// ...", with the start time, in clock ticks after boot, the 22nd field.
// COMM may hold spaces and parentheses; it ends at the last ')'.
func parseStat(data []byte) (Proc, bool) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	f := strings.Fields(string(data[end+1:]))
	if len(f) < 20 || len(f[0]) != 1 {
		return Proc{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Proc{}, false
	}
	start, err := strconv.ParseUint(f[19], 10, 64)
	if err != nil {
		return Proc{}, false
	}
	return Proc{PPID: ppid, State: f[0][0], Comm: string(data[open+1 : end]), Start: start}, true
}
