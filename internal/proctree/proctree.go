// Package proctree finds the processes below a process and ends them: the
// processes a harness left running when it exited (package session), and
// a run of a batch's pool, with everything below it, when it outlived its
// time limit (package batch).
//
// It reads the system's process table (Linux: /proc): a process below
// another is one whose parent, or its parent's parent and so on, is that
// one. A process that left its process group and session (setsid) and
// whose parent exited (a double fork) is below the nearest ancestor that
// adopts orphans (PR_SET_CHILD_SUBREAPER): a run of workforce adopts them
// while its harness runs, so that they stay below it.
//
// Ending stops before it kills (Kill): every process found is sent
// SIGSTOP, and the table read again until no process below is new and
// each is stopped, so that none can start another or continue one
// already stopped while they are killed; then each is sent SIGKILL.
// Elsewhere than Linux there is no table to read: nothing is found.
package proctree

import (
	"strconv"
	"syscall"
	"time"
)

// Proc is a process as the system's table says.
type Proc struct {
	PID, PPID int
	// State is the state letter: R, S, D, T (stopped), t (stopped
	// by a tracer), Z (a zombie: exited, not yet reaped), ...
	State byte
	// Comm is the command name the process gives itself (at most 15
	// bytes): the agent's to choose, so print it quoted.
	Comm string
	// Start is when the process started, in clock ticks after boot.
	Start uint64
}

// Alive reports whether p has not exited (a zombie has).
func (p Proc) Alive() bool { return p.State != 'Z' && p.State != 'X' && p.State != 'x' }

// Stopped reports whether p is stopped (SIGSTOP, or by a tracer).
func (p Proc) Stopped() bool { return p.State == 'T' || p.State == 't' }

// Children returns the processes whose parent is pid and that have not
// exited.
func Children(pid int) []Proc {
	var out []Proc
	for _, p := range table() {
		if p.PPID == pid && p.Alive() {
			out = append(out, p)
		}
	}
	return out
}

// Below returns the processes of roots and every process below them that
// have not exited, parents before their children.
func Below(roots []int) []Proc {
	all := table()
	kids := map[int][]Proc{}
	byPID := map[int]Proc{}
	for _, p := range all {
		kids[p.PPID] = append(kids[p.PPID], p)
		byPID[p.PID] = p
	}
	var out []Proc
	seen := map[int]bool{}
	var visit func(p Proc)
	visit = func(p Proc) {
		if seen[p.PID] {
			return
		}
		seen[p.PID] = true
		if p.Alive() {
			out = append(out, p)
		}
		// A zombie has no children: they were handed on when it exited.
		for _, c := range kids[p.PID] {
			visit(c)
		}
	}
	for _, r := range roots {
		if p, ok := byPID[r]; ok {
			visit(p)
		}
	}
	return out
}

// Look returns what the table says of pid; false when there is no such
// process.
func Look(pid int) (Proc, bool) { return look(pid) }

// killRounds bounds the rounds of Kill: each reads the table once.
const killRounds = 500

// Kill ends, at once, the processes roots returns and every process below
// them: it stops them all (SIGSTOP), reading the table again (roots too:
// a process whose parent exits meanwhile is handed on to the process that
// adopts orphans) until no process is new and each is stopped, then kills
// them (SIGKILL), and again until none is left that has not exited. It
// returns the processes it killed.
func Kill(roots func() []int) []Proc {
	found := map[int]Proc{}
	var order []int
	note := func(p Proc) bool {
		if _, ok := found[p.PID]; ok {
			return false
		}
		found[p.PID] = p
		order = append(order, p.PID)
		return true
	}
	for range killRounds {
		settled := true
		for _, p := range Below(roots()) {
			if note(p) || !p.Stopped() {
				settled = false
				syscall.Kill(p.PID, syscall.SIGSTOP)
			}
		}
		if settled {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, pid := range order {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for range killRounds {
		left := Below(roots())
		if len(left) == 0 {
			break
		}
		for _, p := range left {
			note(p)
			syscall.Kill(p.PID, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond)
	}
	// A process killed may still be on its way out, and one that left
	// the tree (its parent died first, and an adopter out of reach took
	// it) is no longer below roots: wait until each one found is gone,
	// so that none runs when Kill returns.
	for range killRounds {
		if !anyAlive(found) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	out := make([]Proc, 0, len(order))
	for _, pid := range order {
		out = append(out, found[pid])
	}
	return out
}

// anyAlive reports whether a process of found (by its id and start time)
// is still alive.
func anyAlive(found map[int]Proc) bool {
	for pid, p := range found {
		if q, ok := look(pid); ok && q.Start == p.Start && q.Alive() {
			return true
		}
	}
	return false
}

// pollEvery is how often End looks whether the processes exited.
const pollEvery = 20 * time.Millisecond

// End ends the processes roots returns and every process below them, as a
// kind parent does: SIGCONT (a stopped one could not act on the next
// signal) and SIGTERM to each, then, for those still there grace later,
// Kill. A process that appears meanwhile gets the same. It returns every
// process it signalled, in the order it found them.
func End(roots func() []int, grace time.Duration) []Proc {
	found := map[int]Proc{}
	var order []int
	term := func(ps []Proc) {
		for _, p := range ps {
			if _, ok := found[p.PID]; ok {
				continue
			}
			found[p.PID] = p
			order = append(order, p.PID)
			syscall.Kill(p.PID, syscall.SIGCONT)
			syscall.Kill(p.PID, syscall.SIGTERM)
		}
	}
	left := Below(roots())
	if len(left) == 0 {
		return nil
	}
	term(left)
	for deadline := time.Now().Add(grace); len(left) > 0 && time.Now().Before(deadline); {
		time.Sleep(pollEvery)
		left = Below(roots())
		term(left)
	}
	if len(left) > 0 {
		for _, p := range Kill(roots) {
			if _, ok := found[p.PID]; !ok {
				found[p.PID] = p
				order = append(order, p.PID)
			}
		}
	}
	out := make([]Proc, 0, len(order))
	for _, pid := range order {
		out = append(out, found[pid])
	}
	return out
}

// Describe lists procs for a message, each as its process id and its
// command name in double quotes with Go escapes (the agent chose the
// name): `1234 ("sleep"), 1240 ("sh")`; after limit of them, how many
// more.
func Describe(procs []Proc, limit int) string {
	var b []byte
	for i, p := range procs {
		if i == limit {
			b = append(b, ", and "...)
			b = strconv.AppendInt(b, int64(len(procs)-limit), 10)
			b = append(b, " more"...)
			break
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(p.PID), 10)
		b = append(b, " ("...)
		b = strconv.AppendQuote(b, p.Comm)
		b = append(b, ')')
	}
	return string(b)
}
