//go:build linux

package session

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHelperProcess is not a test: it is the process the tests below
// start as a harness. SESSION_HELPER=wait waits until its standard input
// is closed; spawn starts a wait helper on the same input, prints its
// process id and exits, leaving it in its process group.
func TestHelperProcess(t *testing.T) {
	switch os.Getenv("SESSION_HELPER") {
	case "wait":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "spawn":
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "SESSION_HELPER=wait")
		cmd.Stdin = os.Stdin
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(cmd.Process.Pid)
		os.Exit(0)
	}
}

// helper starts a helper process (mode wait or spawn), in a process group
// of its own when group; closing the returned writer ends it.
func helper(t *testing.T, mode string, group bool) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	// GORACE: under -race, no second of sleep at exit.
	cmd.Env = append(os.Environ(), "SESSION_HELPER="+mode, "GORACE=atexit_sleep_ms=0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: group}
	// A pipe of the test's own, not StdinPipe: Wait closes that one
	// when the helper exits, which would end the wait helper a spawn
	// helper left running before the test looked for it.
	stdin, in, err := os.Pipe()
	must(t, err)
	cmd.Stdin = stdin
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	stdin.Close()
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	return cmd, in, bufio.NewReader(out)
}

// needProc skips a test that needs the system to say when a process
// started.
func needProc(t *testing.T) {
	t.Helper()
	if procStart(os.Getpid()) == nil {
		t.Skip("the system does not say when a process started")
	}
}

// awaitZombie waits, at most 30 s, until process pid has exited (its
// parent, the test, has not reaped it yet).
func awaitZombie(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if st, ok := parseStat(data); err == nil && ok && st.state == 'Z' {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not exit within 30 s", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestHarnessRunning(t *testing.T) {
	t.Parallel()
	needProc(t)
	cmd, in, _ := helper(t, "wait", false)
	pid := cmd.Process.Pid
	start := procStart(pid)
	other := func(f func(p *ProcStart)) *ProcStart {
		p := *start
		f(&p)
		return &p
	}
	zero := 0
	tests := []struct {
		name    string
		r       Record
		running bool
	}{
		{"the harness, still running", Record{HarnessPID: pid, HarnessStart: start}, true},
		{"a format 1 record: the id alone", Record{HarnessPID: pid}, true},
		{"a harness its run saw exit", Record{HarnessPID: pid, HarnessStart: start, ExitCode: &zero}, false},
		{"no harness started", Record{HarnessStart: start}, false},
		{"another process, given the id later", Record{HarnessPID: pid, HarnessStart: other(func(p *ProcStart) { p.Ticks-- })}, false},
		{"a process of an earlier boot", Record{HarnessPID: pid, HarnessStart: other(func(p *ProcStart) { p.Boot = "earlier" })}, false},
		{"no such process", Record{HarnessPID: deadPID, HarnessStart: start}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.ID = "s-1"
			err := harnessRunning(&tt.r)
			var he *HarnessRunningError
			if got := errors.As(err, &he); got != tt.running || got && (he.PID != pid || he.Member != 0) {
				t.Errorf("harnessRunning() = %v; want running %v", err, tt.running)
			}
		})
	}
	in.Close()
	awaitZombie(t, pid)
	if err := harnessRunning(&Record{ID: "s-1", HarnessPID: pid, HarnessStart: start}); err != nil {
		t.Errorf("harnessRunning() of a harness that exited, not yet reaped = %v, want nil", err)
	}
}

// TestHarnessGroupRunning: a harness that led a process group is gone,
// one of the group still runs: that is a harness still running too.
func TestHarnessGroupRunning(t *testing.T) {
	t.Parallel()
	needProc(t)
	cmd, in, out := helper(t, "spawn", true)
	line, err := out.ReadString('\n')
	must(t, err)
	member, err := strconv.Atoi(strings.TrimSpace(line))
	must(t, err)
	r := Record{ID: "s-1", HarnessPID: cmd.Process.Pid, HarnessStart: procStart(cmd.Process.Pid)}
	must(t, cmd.Wait()) // the harness exits and is reaped; its child runs on
	var he *HarnessRunningError
	if err := harnessRunning(&r); !errors.As(err, &he) || he.Member != member || !strings.Contains(err.Error(), "process "+strconv.Itoa(member)+" of its process group") {
		t.Fatalf("harnessRunning() = %v; want process %d of its group named", err, member)
	}
	in.Close() // the member's input: it exits
	deadline := time.Now().Add(30 * time.Second)
	for lookProc(member).exists {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not exit within 30 s", member)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := harnessRunning(&r); err != nil {
		t.Errorf("harnessRunning() once the group is gone = %v, want nil", err)
	}
}

// TestOrphanHarness: a session whose run died while its harness runs on
// is neither synced nor removed until the harness exits, unless forced.
func TestOrphanHarness(t *testing.T) {
	t.Parallel()
	needProc(t)
	_, root, s := staleSession(t, 2)
	cmd, in, _ := helper(t, "wait", false)
	s.Record.HarnessPID, s.Record.HarnessStart = cmd.Process.Pid, procStart(cmd.Process.Pid)
	must(t, s.save())

	_, kept, err := s.Sync(context.Background(), SyncOptions{})
	var he *HarnessRunningError
	if !errors.As(err, &he) || he.PID != cmd.Process.Pid || !kept {
		t.Fatalf("Sync() = kept %v, %v; want the harness %d named, the session kept", kept, err, cmd.Process.Pid)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "fa.txt")); string(b) != "real" {
		t.Errorf("fa.txt = %q after a refused sync", b)
	}
	if err := s.RemoveIdle(false); !errors.As(err, &he) {
		t.Errorf("RemoveIdle() = %v; want the harness named", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, RecordFile)); err != nil {
		t.Fatalf("the refused removal removed: %v", err)
	}

	rep, kept, err := s.Sync(context.Background(), SyncOptions{Force: true, Keep: true})
	if err != nil || !kept || len(rep.Updated) != 2 {
		t.Fatalf("Sync(force) = %+v, kept %v, %v; want 2 updated, kept", rep, kept, err)
	}
	// Synced by force, the harness may still write: still refused.
	if _, _, err := s.Sync(context.Background(), SyncOptions{}); !errors.As(err, &he) {
		t.Fatalf("Sync() after a forced one = %v; want the harness named", err)
	}

	in.Close()
	must(t, cmd.Wait())
	rep, kept, err = s.Sync(context.Background(), SyncOptions{})
	if err != nil || kept || rep.Interrupted {
		t.Fatalf("Sync() once the harness exited = %+v, kept %v, %v; want done, removed", rep, kept, err)
	}
	if _, err := os.Stat(s.Dir); err == nil {
		t.Error("the synced session is still there")
	}
}
