package batch

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/proctree"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestPoolLimit: the pool holds a task's run to its timeout from outside
// (limit.go): a run still there past it is stopped (SIGTERM to its
// process group), then killed when it does not end, a run found stopped
// (SIGSTOP) is continued first; each ends timed_out, saying what the
// pool did, and a run that ends in time is left alone. The runs here are
// sh scripts in a process group of their own, as Command's are; one that
// never ends would hang the test (go test -timeout guards it), not fail
// it.
func TestPoolLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the pool reads /proc to find a stopped run")
	}
	tests := []struct {
		name, script, timeout string
		// result: the run prints a result with this status when it
		// exits, as a run that synced its work back does.
		result     report.Status
		wantStatus report.Status
		want       []string // in the error, or the result's last warning
		notWant    string
	}{
		{name: "ends in time", script: "exit 0", timeout: "1m", result: report.StatusSucceeded, wantStatus: report.StatusSucceeded},
		{name: "stops on SIGTERM", script: "sleep 60", timeout: "100ms", wantStatus: report.StatusTimedOut,
			want: []string{"its run was still there ", " past its time limit of 100ms: the pool stopped it (SIGTERM to its process group)"}, notWant: "SIGKILL"},
		{name: "stopped on SIGTERM, its result says interrupted", script: "sleep 60", timeout: "100ms", result: report.StatusInterrupted,
			wantStatus: report.StatusTimedOut, want: []string{"the pool stopped it (SIGTERM to its process group)"}},
		{name: "ignores SIGTERM: killed with what is below it", script: "trap '' TERM; sleep 60 & setsid sleep 60 & wait", timeout: "100ms",
			wantStatus: report.StatusTimedOut, want: []string{"the pool stopped it (SIGTERM to its process group), then killed it (SIGKILL), with every process below it"}},
		{name: "stopped", script: "kill -STOP $$; sleep 60", timeout: "100ms", wantStatus: report.StatusTimedOut,
			want: []string{"its run was found stopped (SIGSTOP) past its time limit of 100ms: the pool continued it and stopped it (SIGTERM to its process group)"}, notWant: "SIGKILL"},
		{name: "held stopped", script: "trap '' TERM; kill -STOP $$; while kill -STOP $$; do sleep 0.01; done", timeout: "100ms", wantStatus: report.StatusTimedOut,
			want: []string{"found stopped (SIGSTOP)", "then killed it (SIGKILL)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var below []proctree.Proc
			run := func(tk Task, started func(*os.Process)) Outcome {
				cmd := exec.Command("sh", "-c", tt.script)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				started(cmd.Process)
				if strings.Contains(tt.script, "setsid") {
					// sh and its two sleeps, one in a session of its own.
					for below = nil; len(below) < 3; time.Sleep(5 * time.Millisecond) {
						below = proctree.Below([]int{cmd.Process.Pid})
					}
				}
				err := cmd.Wait()
				o := Outcome{Status: report.StatusFailed, ExitCode: exitCode(cmd, err), Error: "the run printed no result"}
				if tt.result != "" {
					o.Result = &report.Result{Status: tt.result, Warnings: []string{"the run's own"}}
					o.Status, o.Error = tt.result, ""
				}
				return o
			}
			var got Outcome
			p := &Pool{Jobs: 1, LimitGrace: 300 * time.Millisecond, KillGrace: time.Second}
			p.Run([]Task{{ID: "a", Timeout: tt.timeout}}, run, func(_ Task, o Outcome) { got = o })
			for _, b := range below {
				if pr, ok := proctree.Look(b.PID); ok && pr.Alive() && pr.Start == b.Start {
					t.Errorf("process %d (%s) below the run still runs", b.PID, b.Comm)
				}
			}
			if got.Status != tt.wantStatus {
				t.Errorf("status %s, want %s (%+v)", got.Status, tt.wantStatus, got)
			}
			msg := got.Error
			if got.Result != nil {
				if got.Result.Status != got.Status {
					t.Errorf("the result says %s, the outcome %s", got.Result.Status, got.Status)
				}
				w := got.Result.Warnings
				if len(w) == 0 || w[0] != "the run's own" {
					t.Errorf("warnings %q: the run's own are lost", w)
				}
				msg = w[len(w)-1]
			}
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
			if tt.notWant != "" && strings.Contains(msg, tt.notWant) {
				t.Errorf("%q says %q", msg, tt.notWant)
			}
			if len(tt.want) == 0 && got.Result != nil && len(got.Result.Warnings) != 1 {
				t.Errorf("warnings %q: the pool added one", got.Result.Warnings)
			}
		})
	}
}
