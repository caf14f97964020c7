// Package batchview is the live display of a batch on a terminal: a
// bubbletea program that draws, under the lines of the tasks that ended,
// a line per running task (its elapsed time and its last event) and the
// counts, follows the terminal's width (a line too long is cut, never
// wrapped), and is gone before the batch's table. It draws rows from what
// it is told (a task started, an event, a task ended) and runs nothing:
// the command that runs the batch hooks it up and feeds it.
//
// The pool never waits for it: the Display's methods, which may be called
// from the pool's goroutines, only queue messages, and one goroutine hands
// them to the program in their order; the model is the program's alone.
// The lines of the tasks that ended go through the model too, printed
// above the display in their order, and the program quits once the last
// one is out.
//
// The terminal is in raw mode while the program reads keys: Ctrl-C and q
// call Options.Interrupt (the command sends itself SIGINT, as the terminal
// would, so that the stop goes through the batch's one signal handler; a
// second Ctrl-C is its second signal); Ctrl-Z suspends as the terminal
// would. Without a terminal to read keys from (Options.In nil), or in the
// background, no keys are read and the terminal's own Ctrl-C does the
// same.
package batchview

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/seed-3bc194a6/workforce/report"
	"golang.org/x/sys/unix"
)

// Redraws reports whether a terminal of type term (TERM) can take a
// display redrawn in place: not a dumb one (or none named), which cannot
// move the cursor.
func Redraws(term string) bool {
	return term != "" && term != "dumb"
}

// The count keys of Options.Counts and Display.Ended: what a task's end
// adds to.
const (
	Succeeded   = "succeeded"
	Conflict    = "conflict"
	Failed      = "failed"
	Interrupted = "interrupted"
)

// Options are what a display shows and where.
type Options struct {
	// Total is the number of the batch's tasks; Counts the tasks done
	// before, by count key (Succeeded, Conflict, Failed, Interrupted).
	Total  int
	Counts map[string]int
	// Out is the terminal the display is drawn on. In, when not nil, is
	// the terminal whose keys it reads, while workforce is in its
	// foreground (reading keys in the background would stop workforce
	// with SIGTTOU).
	Out io.Writer
	In  *os.File
	// Environ is the environment the display reads (TERM, NO_COLOR: in
	// colour unless NO_COLOR is set).
	Environ []string
	// Interrupt is what Ctrl-C and q do.
	Interrupt func()
	// Failed is called, from the display's goroutine, with the lines it
	// did not print when the program stopped before it was told to (an
	// error of the terminal), and the error.
	Failed func(lines []string, err error)
}

// Display runs the live display: the program and the queue of its
// messages.
type Display struct {
	prog *tea.Program

	mu    sync.Mutex
	queue []tea.Msg
	// events are the indexes in queue of the tasks' events not yet
	// handed on: a newer event of a task takes its place.
	events map[string]int
	wake   chan struct{}

	// ended is closed when the program returned.
	ended chan struct{}
}

// Start starts the display o describes on o.Out.
func Start(o Options) *Display {
	m := newModel(o.Environ, o.Total, o.Counts, o.Interrupt)
	opts := []tea.ProgramOption{tea.WithOutput(o.Out), tea.WithEnvironment(o.Environ), tea.WithoutSignalHandler()}
	if o.In != nil && foreground(o.In) {
		opts = append(opts, tea.WithInput(o.In))
	} else {
		opts = append(opts, tea.WithInput(nil))
	}
	d := &Display{prog: tea.NewProgram(m, opts...), events: map[string]int{}, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		m, err := d.prog.Run()
		if fm, _ := m.(model); (err != nil || !fm.finishing) && o.Failed != nil {
			o.Failed(append(fm.printing, fm.pending...), err)
		}
		close(d.ended) // after Failed printed, so before the table
	}()
	go d.forward()
	return d
}

// foreground reports whether workforce is in the foreground of the
// terminal f: only then may it read its keys (raw mode), which would stop
// a process in the background (SIGTTOU).
func foreground(f *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// Started shows task id, started at at, as running.
func (d *Display) Started(id string, at time.Time) { d.send(started{id: id, at: at}) }

// Event shows what event e says of its running task (e.TaskID), if it
// says anything new (Describe).
func (d *Display) Event(e report.Event) {
	if text := Describe(e); text != "" {
		d.send(event{id: e.TaskID, text: text})
	}
}

// Ended shows task id ended: it is no longer running, the count key (a
// count key: Succeeded...) adds one, and line is printed above the
// display.
func (d *Display) Ended(id, key, line string) { d.send(ended{id: id, key: key, line: line}) }

// Print prints line above the display.
func (d *Display) Print(line string) { d.send(printLine{line: line}) }

// Stopping shows that the batch is stopping.
func (d *Display) Stopping() { d.send(stopping{}) }

// Stop ends the display once every line queued is printed, and waits for
// the terminal to be as it was.
func (d *Display) Stop() {
	d.send(finish{})
	<-d.ended
}

// send queues msg for the program; it never waits.
func (d *Display) send(msg tea.Msg) {
	d.mu.Lock()
	if e, ok := msg.(event); ok {
		if i, ok := d.events[e.id]; ok {
			d.queue[i] = e
			d.mu.Unlock()
			return
		}
		d.events[e.id] = len(d.queue)
	}
	d.queue = append(d.queue, msg)
	d.mu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// forward hands the queued messages to the program in their order, until
// it ends.
func (d *Display) forward() {
	for {
		select {
		case <-d.ended:
			return
		case <-d.wake:
		}
		d.mu.Lock()
		q := d.queue
		d.queue, d.events = nil, map[string]int{}
		d.mu.Unlock()
		for _, msg := range q {
			d.prog.Send(msg) // returns at once once the program ended
		}
	}
}

// getenv is the value of name in environ ("" when unset).
func getenv(environ []string, name string) string {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}
