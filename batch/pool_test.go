package batch

import (
	"fmt"
	"github.com/seed-3bc194a6/workforce/report"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestPoolRun: every task runs once, never more than Jobs at a time, and
// done is called once a task, from one goroutine at a time.
func TestPoolRun(t *testing.T) {
	for _, jobs := range []int{1, 2, 4, 10} {
		t.Run(fmt.Sprint(jobs), func(t *testing.T) {
			var tasks []Task
			for i := range 7 {
				tasks = append(tasks, Task{ID: fmt.Sprintf("t%d", i)})
			}
			var active, most, inDone atomic.Int32
			var mu sync.Mutex
			ran := map[string]int{}
			var done []string
			run := func(tk Task, _ func(*os.Process)) Outcome {
				n := active.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(5 * time.Millisecond)
				mu.Lock()
				ran[tk.ID]++
				mu.Unlock()
				active.Add(-1)
				return Outcome{Status: "succeeded"}
			}
			p := &Pool{Jobs: jobs}
			stopped := p.Run(tasks, run, func(tk Task, o Outcome) {
				if inDone.Add(1) != 1 {
					t.Errorf("done called for %s while another done runs", tk.ID)
				}
				done = append(done, tk.ID)
				inDone.Add(-1)
			})
			if stopped {
				t.Error("stopped without a signal")
			}
			if m := int(most.Load()); m > jobs {
				t.Errorf("%d tasks ran at once, want at most %d", m, jobs)
			}
			for _, tk := range tasks {
				if ran[tk.ID] != 1 {
					t.Errorf("task %s ran %d times", tk.ID, ran[tk.ID])
				}
			}
			slices.Sort(done)
			if len(done) != len(tasks) || len(slices.Compact(done)) != len(tasks) {
				t.Errorf("done called for %v", done)
			}
		})
	}
}

// TestPoolDoneApart: a slot starts its next task without waiting for the
// done of the last one (here done waits for the next task to start: with
// one slot, a pool that called done in the slot would wait forever).
func TestPoolDoneApart(t *testing.T) {
	secondStarted := make(chan struct{})
	run := func(tk Task, _ func(*os.Process)) Outcome {
		if tk.ID == "b" {
			close(secondStarted)
		}
		return Outcome{Status: "succeeded"}
	}
	var order []string
	p := &Pool{Jobs: 1}
	p.Run([]Task{{ID: "a"}, {ID: "b"}}, run, func(tk Task, o Outcome) {
		if tk.ID == "a" {
			select {
			case <-secondStarted:
			case <-time.After(10 * time.Second):
				t.Error("task b did not start while the done of task a ran")
			}
		}
		order = append(order, tk.ID)
	})
	if !slices.Equal(order, []string{"a", "b"}) {
		t.Errorf("done called for %v, want a then b (the order they ended)", order)
	}
}

// TestPoolSignal: after Signal no task starts, and Run reports it
// stopped.
func TestPoolSignal(t *testing.T) {
	p := &Pool{Jobs: 1}
	var ran []string
	stopped := p.Run([]Task{{ID: "a"}, {ID: "b"}, {ID: "c"}}, func(tk Task, _ func(*os.Process)) Outcome {
		ran = append(ran, tk.ID)
		if tk.ID == "a" {
			p.Signal(os.Interrupt)
		}
		return Outcome{Status: "interrupted"}
	}, func(Task, Outcome) {})
	if !stopped {
		t.Error("not stopped")
	}
	if !slices.Equal(ran, []string{"a"}) {
		t.Errorf("ran %v, want a alone", ran)
	}
}

// TestPoolStoppedEarly: a run that died of the pool's signal before it
// printed a result (the signal came while the child was starting) is
// interrupted, to run again, not failed; one that died so while the pool
// was not stopping, or that exited with a status of its own, failed.
func TestPoolStoppedEarly(t *testing.T) {
	tests := []struct {
		name   string
		signal bool
		out    Outcome
		want   report.Status
	}{
		{"killed by the pool's signal", true, Outcome{Status: report.StatusFailed, ExitCode: 128 + 15, Error: "the run printed no result"}, report.StatusInterrupted},
		{"killed, the pool not stopping", false, Outcome{Status: report.StatusFailed, ExitCode: 128 + 15}, report.StatusFailed},
		{"an exit status of its own", true, Outcome{Status: report.StatusFailed, ExitCode: 2}, report.StatusFailed},
		{"a result", true, Outcome{Status: report.StatusFailed, ExitCode: 143, Result: &report.Result{Status: report.StatusFailed}}, report.StatusFailed},
	}
	for _, tt := range tests {
		p := &Pool{Jobs: 1}
		var got Outcome
		p.Run([]Task{{ID: "a"}}, func(Task, func(*os.Process)) Outcome {
			if tt.signal {
				p.Signal(os.Interrupt)
			}
			return tt.out
		}, func(_ Task, o Outcome) { got = o })
		if got.Status != tt.want {
			t.Errorf("%s: status %s, want %s (%s)", tt.name, got.Status, tt.want, got.Error)
		}
	}
}
