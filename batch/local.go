package batch

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// Hooks are told what a batch's run does, for its output; a nil one is
// not called. They may be called from several goroutines.
type Hooks struct {
	// Planned: toRun tasks run now, doneBefore were done before, jobs at
	// a time (the local pool only).
	Planned func(toRun, doneBefore, jobs int)
	// Skipped: a task done before, left as it is.
	Skipped func(TaskState)
	// Start and Finish bracket the runs (or the following of a queue's).
	Start, Finish func()
	// Running: a task starts; Event: a running task's event.
	Running func(id string)
	Event   func(report.Event)
	// Done: a task ended (or its result came).
	Done func(TaskState)
	// Stopping: a signal stops the batch.
	Stopping func(os.Signal)
	// Warn: what the user should know at once (a queue's result that is
	// not its task's worker's).
	Warn func(msg string)
}

// Filled is h with a no-op for each hook not set, so that a caller
// calls any of them.
func (h Hooks) Filled() Hooks {
	if h.Planned == nil {
		h.Planned = func(int, int, int) {}
	}
	if h.Skipped == nil {
		h.Skipped = func(TaskState) {}
	}
	if h.Start == nil {
		h.Start = func() {}
	}
	if h.Warn == nil {
		h.Warn = func(string) {}
	}
	if h.Finish == nil {
		h.Finish = func() {}
	}
	if h.Running == nil {
		h.Running = func(string) {}
	}
	if h.Event == nil {
		h.Event = func(report.Event) {}
	}
	if h.Done == nil {
		h.Done = func(TaskState) {}
	}
	if h.Stopping == nil {
		h.Stopping = func(os.Signal) {}
	}
	return h
}

// Signals starts catching the signals that stop a batch (Ctrl-C, SIGTERM,
// SIGHUP) and returns them as they come, until stop. The command layer
// owns the process's signals: a package asks through this, at the moment
// it can handle them.
type Signals func() (sigs <-chan os.Signal, stop func())

// LocalOptions are a run of a batch on this machine.
type LocalOptions struct {
	// Exe is the workforce binary that runs each task; "" is this
	// process's (os.Executable).
	Exe string
	// Jobs run at once; 0: DefaultJobs of the tasks' harnesses.
	Jobs  int
	Retry Retry
	// Command, when set, adjusts each task's command before it starts
	// (its environment, its flags).
	Command func(*exec.Cmd)
	// Signals catches the signals that stop the batch, from the moment
	// its tasks are about to run; nil catches none.
	Signals Signals
}

// Ended is how a batch's run ended: its tasks' states as the batch's
// directory has them, and the signal that stopped it (nil when none did).
type Ended struct {
	IDs    []string
	States map[string]TaskState
	Signal os.Signal
}

// RunLocal runs the batch's tasks on this machine: those Plan runs, a few
// at a time (Pool), each as a child workforce (Command, RunTask) whose
// state, events and stderr go to the batch's directory. A signal stops
// the running tasks (passed on to them) and starts no more.
func (b *Batch) RunLocal(o LocalOptions, h Hooks) (Ended, error) {
	h = h.Filled()
	exe := o.Exe
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return Ended{}, fmt.Errorf("cannot find the workforce binary to run the tasks: %w", err)
		}
	}
	var harnesses []string
	for _, t := range b.Tasks {
		harnesses = append(harnesses, t.Harness)
	}
	if err := b.State.WriteInfo(Info{ID: b.ID, File: b.File, Tasks: b.IDs, Updated: time.Now().UTC()}); err != nil {
		return Ended{}, err
	}
	jobs := o.Jobs
	if jobs == 0 {
		jobs = DefaultJobs(harnesses)
	}
	var toRun []Task
	for _, d := range Plan(b.Entries, b.States, o.Retry) {
		if d.Run {
			toRun = append(toRun, d.Task)
			continue
		}
		h.Skipped(*d.Prev)
	}
	h.Planned(len(toRun), len(b.Tasks)-len(toRun), jobs)

	pool := &Pool{Jobs: jobs}
	stoppedBy, stopCatching := b.catch(o.Signals, pool, h)
	defer stopCatching()
	h.Start()
	var writeErr error
	stopped := pool.Run(toRun, b.runner(exe, o, h), func(t Task, out Outcome) {
		ts := StateOf(t, out)
		if err := b.State.WriteTask(ts); err != nil && writeErr == nil {
			writeErr = err
		}
		h.Done(ts)
	})
	h.Finish()
	if writeErr != nil {
		return Ended{}, fmt.Errorf("cannot write the batch's state: %w", writeErr)
	}
	final, err := b.State.ReadTasks(b.IDs)
	if err != nil {
		return Ended{}, err
	}
	sig := stoppedBy()
	if stopped && sig == nil {
		sig = os.Interrupt
	}
	return Ended{IDs: b.IDs, States: final, Signal: sig}, nil
}

// catch catches the signals of signals for the pool: each is passed on to
// the running tasks. stoppedBy is the first that came.
func (b *Batch) catch(signals Signals, pool *Pool, h Hooks) (stoppedBy func() os.Signal, stop func()) {
	var mu sync.Mutex
	var first os.Signal
	stoppedBy = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return first
	}
	if signals == nil {
		return stoppedBy, func() {}
	}
	sigs, stop := signals()
	go func() {
		for sig := range sigs {
			mu.Lock()
			if first == nil {
				first = sig
			}
			mu.Unlock()
			h.Stopping(sig)
			pool.Signal(Forwarded(sig))
		}
	}()
	return stoppedBy, stop
}

// runner is the pool's RunFunc of the batch: a task's state goes running,
// then it runs with its stderr and events in its directory.
func (b *Batch) runner(exe string, o LocalOptions, h Hooks) RunFunc {
	return func(t Task, started func(*os.Process)) Outcome {
		p := b.ByID[t.ID]
		now := time.Now().UTC()
		ts := TaskState{ID: t.ID, Digest: t.Digest(), Entry: t, Phase: PhaseRunning, Started: &now}
		if err := b.State.WriteTask(ts); err != nil {
			return Outcome{Status: report.StatusFailed, ExitCode: 1, Error: err.Error(), Started: now, Finished: time.Now()}
		}
		dir := b.State.TaskDir(t.ID)
		stderr, _ := os.Create(filepath.Join(dir, "stderr.txt"))
		events, _ := os.Create(filepath.Join(dir, "events.jsonl"))
		defer closeAll(stderr, events)
		cmd := Command(exe, t, p.Dir)
		if o.Command != nil {
			o.Command(cmd)
		}
		h.Running(t.ID)
		return RunTask(cmd, t.ID, writerOrNil(events), writerOrNil(stderr), h.Event, started)
	}
}

// StateOf is the state of task t after its run ended as o: done, but for
// an interrupted run, which is pending again.
func StateOf(t Task, o Outcome) TaskState {
	started, finished := o.Started.UTC(), o.Finished.UTC()
	code := o.ExitCode
	ts := TaskState{ID: t.ID, Digest: t.Digest(), Entry: t, Phase: PhaseDone, Status: o.Status,
		Started: &started, Finished: &finished, DurationMS: o.Duration().Milliseconds(), ExitCode: &code, Error: o.Error, Result: o.Result}
	if o.Status == report.StatusInterrupted {
		ts.Phase = PhasePending
	}
	return ts
}

func writerOrNil(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}
