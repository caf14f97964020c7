package main

// The hookup of the live display of a batch (package batchview, which
// draws and runs nothing): batchOutput starts it when stdout and stderr
// are a terminal that can take it, and feeds it the tasks' starts, events
// and ends; Ctrl-C and q on it send workforce SIGINT, so that the stop
// goes through the batch's one signal handler.

import (
	"fmt"
	"io"
	"os"

	"github.com/seed-3bc194a6/workforce/batchview"
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
