package main

// The progress of a batch's run, which batch and eval share (batchOutput:
// a line per task as it ends, or its result), and the hookup of the live
// display of a batch (package batchview, which draws and runs nothing):
// batchOutput starts it when stdout and stderr are a terminal that can
// take it, and feeds it the tasks' starts, events and ends; Ctrl-C and q
// on it send workforce SIGINT, so that the stop goes through the batch's
// one signal handler.

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/batchview"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// liveTerminal reports whether the terminal of env can take a display
// redrawn in place (batchview.Redraws).
func liveTerminal(env procEnv) bool {
	return batchview.Redraws(env.getenv("TERM"))
}

// startBatchLive starts the live display on ios.Out, with the counts of
// the tasks done before; it reads the keys of ios.In when that is a
// terminal. failed is called, from the display's goroutine, with the
// lines it did not print when the program stopped before it was told to
// (an error of the terminal).
func startBatchLive(ios *iostreams, env procEnv, total int, counts map[string]int, failed func(lines []string, err error)) *batchview.Display {
	o := batchview.Options{Total: total, Counts: counts, Out: ios.Out, Environ: env.Environ, Interrupt: interruptSelf, Failed: failed}
	if in, ok := ios.In.(*os.File); ok && ios.InTTY {
		o.In = in
	}
	return batchview.Start(o)
}

// interruptSelf sends workforce SIGINT, as a terminal's Ctrl-C would.
func interruptSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

// printLines prints lines on w, the display gone.
func printLines(w io.Writer, lines []string) {
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
}

// batchOutput prints a batch's progress: a line per task as it ends (or
// its result, with --json), under a live display of the running tasks and
// the counts on a terminal (package batchview, batchlive.go). Its methods may be called
// from several goroutines; none waits for the display.
type batchOutput struct {
	mu    sync.Mutex
	ios   *iostreams
	json  bool
	total int
	// counts are the tasks ended (or done before), by batch.CountKey.
	counts map[string]int
	// prepared are the tasks of the file, by id: the tier and harness
	// of the result of a task that never started.
	prepared map[string]batch.Prepared
	// env is what the live display reads of the environment (TERM,
	// NO_COLOR): the process's unless set.
	env procEnv
	// live is the live display while it runs, nil when there is none.
	live *batchview.Display
	// line is a task's line as it ends: batch.DoneLine, or eval's;
	// stopped says what becomes of the tasks a signal stops.
	line    func(batch.TaskState) string
	stopped string
}

func newBatchOutput(ios *iostreams, asJSON bool, total int) *batchOutput {
	return &batchOutput{ios: ios, json: asJSON, total: total, counts: map[string]int{}, env: procEnv{Environ: os.Environ()}, line: batch.DoneLine,
		stopped: "their work is synced back"}
}

// skipped reports a task done before, left as it is.
func (o *batchOutput) skipped(ts batch.TaskState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.counts[batch.CountKey(ts)]++
	if o.json {
		o.printResult(ts)
		return
	}
	fmt.Fprintf(o.ios.Out, "task %s: skipped, done before: %s\n", ts.ID, quote.Name(string(ts.Status)))
}

func (o *batchOutput) printResult(ts batch.TaskState) {
	line, err := marshalJSONLine(batch.ResultOf(ts, o.prepared[ts.ID], persona.SplitRef))
	if err == nil {
		o.ios.Out.Write(line)
	}
}

// start marks the start of the runs: the live display starts when stdout
// and stderr are a terminal that can take it, and not with --json. The
// caller handles SIGINT by then: Ctrl-C on the display sends it.
func (o *batchOutput) start() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json || !isTerminal(o.ios.Out) || !isTerminal(o.ios.Err) || !liveTerminal(o.env) {
		return
	}
	var l *batchview.Display
	l = startBatchLive(o.ios, o.env, o.total, o.counts, func(lines []string, err error) {
		// The display stopped before its time: what it did not print
		// is printed plainly, and so is what follows.
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.live == l {
			o.live = nil
		}
		printLines(o.ios.Out, lines)
		if err != nil {
			warnf(o.ios.Err, "the live display stopped: %v", err)
		}
	})
	o.live = l
}

// running reports a task that starts.
func (o *batchOutput) running(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.live != nil {
		o.live.Started(id, time.Now())
	}
}

// event reports an event of a running task.
func (o *batchOutput) event(e report.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.live != nil {
		o.live.Event(e)
	}
}

// done reports a task that ended.
func (o *batchOutput) done(ts batch.TaskState) {
	o.mu.Lock()
	defer o.mu.Unlock()
	key := batch.CountKey(ts)
	o.counts[key]++
	if o.json {
		o.printResult(ts)
		return
	}
	line := o.line(ts)
	if o.live != nil {
		o.live.Ended(ts.ID, key, line)
		return
	}
	fmt.Fprintln(o.ios.Out, line)
}

// stopping reports the signal that stops the batch: on stderr, or above
// the live display (the same terminal).
func (o *batchOutput) stopping(sig os.Signal) {
	o.mu.Lock()
	defer o.mu.Unlock()
	msg := fmt.Sprintf("workforce: %v: stopping the running tasks (%s); the rest stay pending", sig, o.stopped)
	if o.live != nil {
		o.live.Print(msg)
		o.live.Stopping()
		return
	}
	fmt.Fprintln(o.ios.Err, msg)
}

// warn says msg on stderr, above the live display when there is one.
func (o *batchOutput) warn(msg string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.live != nil {
		o.live.Print("workforce: warning: " + quote.Text(msg))
		return
	}
	warnf(o.ios.Err, "%s", msg)
}

// finish ends the batch's progress: the live display goes, once it
// printed every line.
func (o *batchOutput) finish() {
	o.mu.Lock()
	l := o.live
	o.live = nil
	o.mu.Unlock()
	if l != nil {
		l.Stop()
	}
}

// hooks are o's methods as the hooks of a batch's run.
func (o *batchOutput) hooks() batch.Hooks {
	return batch.Hooks{Skipped: o.skipped, Start: o.start, Finish: o.finish, Running: o.running,
		Event: o.event, Done: o.done, Stopping: o.stopping, Warn: o.warn}
}
