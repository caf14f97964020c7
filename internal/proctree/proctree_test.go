package proctree

import (
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	procs := []Proc{{PID: 12, Comm: "sleep"}, {PID: 13, Comm: `a"b), 14 (x`}, {PID: 15, Comm: "\x1b[2J"}}
	tests := []struct {
		name  string
		procs []Proc
		limit int
		want  string
	}{
		{"none", nil, 10, ""},
		{"one", procs[:1], 10, `12 ("sleep")`},
		{"names the agent chose are quoted", procs, 10, `12 ("sleep"), 13 ("a\"b), 14 (x"), 15 ("\x1b[2J")`},
		{"cut after the limit", procs, 1, `12 ("sleep"), and 2 more`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Describe(tt.procs, tt.limit); got != tt.want {
				t.Errorf("Describe = %s, want %s", got, tt.want)
			}
		})
	}
}

// startTree starts sh, which starts two sleeps, one of them in a session
// of its own, and waits until both run; it returns sh's process.
func startTree(t *testing.T, trapTerm bool) *exec.Cmd {
	t.Helper()
	script := "sleep 60 & setsid sleep 60 & wait"
	if trapTerm {
		script = "trap '' TERM; " + script
	}
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	// sh and its two sleeps, each child past its exec: on a loaded
	// machine the tree can be seen while a child is still the forked sh
	// or setsid.
	started := func() bool {
		var names []string
		for _, p := range Below([]int{cmd.Process.Pid}) {
			names = append(names, p.Comm)
		}
		slices.Sort(names)
		return slices.Equal(names, []string{"sh", "sleep", "sleep"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for !started() {
		if time.Now().After(deadline) {
			t.Fatalf("the tree did not start: %v", Below([]int{cmd.Process.Pid}))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cmd
}

// TestKill kills a tree: sh and its two sleeps (one in a session of its
// own), all stopped first, none left.
func TestKill(t *testing.T) {
	if _, ok := Look(1); !ok {
		t.Skip("no process table here")
	}
	cmd := startTree(t, false)
	root := cmd.Process.Pid
	killed := Kill(func() []int { return []int{root} })
	if len(killed) != 3 || killed[0].PID != root {
		t.Errorf("Kill killed %v, want sh and its two sleeps, sh first", killed)
	}
	// Not reaped yet, sh is a zombie; its sleeps were handed on.
	if left := Below([]int{root}); len(left) != 0 {
		t.Errorf("left after Kill: %v", left)
	}
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != syscall.SIGKILL {
		t.Errorf("sh ended %v, want killed by SIGKILL", cmd.ProcessState)
	}
	for _, p := range killed[1:] {
		if q, ok := Look(p.PID); ok && q.Alive() && q.Start == p.Start {
			t.Errorf("%d (%s) still runs", p.PID, p.Comm)
		}
	}
}

// TestEnd ends a tree kindly: SIGTERM, then SIGKILL for what ignores it
// (sh, here); what it signalled is every process of the tree.
func TestEnd(t *testing.T) {
	if _, ok := Look(1); !ok {
		t.Skip("no process table here")
	}
	for _, trap := range []bool{false, true} {
		cmd := startTree(t, trap)
		root := cmd.Process.Pid
		ended := End(func() []int { return []int{root} }, 200*time.Millisecond)
		var names []string
		for _, p := range ended {
			names = append(names, p.Comm)
		}
		if strings.Join(names, " ") != "sh sleep sleep" {
			t.Errorf("trap %v: End ended %v, want sh and its two sleeps", trap, ended)
		}
		if left := Below([]int{root}); len(left) != 0 {
			t.Errorf("trap %v: left after End: %v", trap, left)
		}
		cmd.Wait()
		want := syscall.SIGTERM
		if trap {
			want = syscall.SIGKILL
		}
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signal() != want {
			t.Errorf("trap %v: sh ended %v, want killed by %v", trap, cmd.ProcessState, want)
		}
	}
}
