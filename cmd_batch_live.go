package main

// The live display of a batch on a terminal: a bubbletea program that
// draws, under the lines of the tasks that ended, a line per running task
// (its elapsed time and its last event) and the counts, follows the
// terminal's width (a line too long is cut, never wrapped), and is gone
// before the table.
//
// The pool never waits for it: batchOutput's methods, called from the
// pool's goroutines, only queue messages (batchLive.send), and one
// goroutine hands them to the program in their order; the model is the
// program's alone. The lines of the tasks that ended go through the model
// too, printed above the display in their order, and the program quits
// once the last one is out.
//
// The terminal is in raw mode while the program reads keys: Ctrl-C and q
// send workforce SIGINT, as the terminal would, so that the stop goes
// through the batch's one signal handler (a second Ctrl-C is its second
// signal); Ctrl-Z suspends as the terminal would. Without a terminal on
// stdin, or in the background, no keys are read and the terminal's own
// Ctrl-C does the same.

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
	"golang.org/x/sys/unix"
)

// liveTerminal reports whether the terminal of env can take a display
// redrawn in place: not a dumb one (or none named), which cannot move the
// cursor.
func liveTerminal(env procEnv) bool {
	t := env.getenv("TERM")
	return t != "" && t != "dumb"
}

// The messages of the live display.
type (
	// liveStarted: task id started at at.
	liveStarted struct {
		id string
		at time.Time
	}
	// liveEvent: the last event of running task id, as text.
	liveEvent struct{ id, text string }
	// liveEnded: task id ended; key is the count it adds to (countKey),
	// line what to print above the display.
	liveEnded struct{ id, key, line string }
	// livePrint: a line to print above the display.
	livePrint struct{ line string }
	// liveStopping: the batch is stopping.
	liveStopping struct{}
	// liveFinish: the batch ended: the display goes once every line is
	// out.
	liveFinish struct{}
	// livePrinted: the lines handed to the program are out.
	livePrinted struct{}
	// liveTick: a second went by.
	liveTick struct{}
)

// liveTask is a running task, as the display shows it.
type liveTask struct {
	id    string
	since time.Time
	last  string // its last event, as text
}

// liveModel is the live display's state, the program's alone (its
// slices and map are changed in place: no one else holds a copy).
type liveModel struct {
	width, height int
	began         time.Time
	total         int
	running       []liveTask
	counts        map[string]int
	stopping      bool
	// pending are lines to print above the display, in order; printing
	// the lines handed to the program and not yet out.
	pending, printing []string
	finishing         bool
	color             bool
	// clock is the time; interrupt sends the stop (Ctrl-C, q).
	clock     func() time.Time
	interrupt func()
}

// newLiveModel is the display of a batch of total tasks, counts of them
// done before, in colour unless env has NO_COLOR; interrupt is what
// Ctrl-C and q do.
func newLiveModel(env procEnv, total int, counts map[string]int, interrupt func()) liveModel {
	c := map[string]int{}
	for k, n := range counts {
		c[k] = n
	}
	return liveModel{width: 80, height: 24, began: time.Now(), total: total, counts: c, color: env.getenv("NO_COLOR") == "",
		clock: time.Now, interrupt: interrupt}
}

func liveTicker() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return liveTick{} })
}

func (m liveModel) Init() tea.Cmd { return liveTicker() }

func (m liveModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		switch msg.String() {
		case "ctrl+c", "q":
			if m.interrupt != nil {
				m.interrupt()
			}
		case "ctrl+z":
			return m, tea.Suspend
		}
	case liveTick:
		return m, liveTicker()
	case liveStarted:
		m.running = append(m.running, liveTask{id: msg.id, since: msg.at})
	case liveEvent:
		if i := m.find(msg.id); i >= 0 {
			m.running[i].last = msg.text
		}
	case liveEnded:
		if i := m.find(msg.id); i >= 0 {
			m.running = slices.Delete(m.running, i, i+1)
		}
		m.counts[msg.key]++
		m.pending = append(m.pending, msg.line)
	case livePrint:
		m.pending = append(m.pending, msg.line)
	case liveStopping:
		m.stopping = true
	case liveFinish:
		m.finishing = true
	case livePrinted:
		m.printing = nil
	}
	return m.flush()
}

// flush hands the pending lines to the program, once the last ones are
// out, and quits when the batch ended and every line is out.
func (m liveModel) flush() (tea.Model, tea.Cmd) {
	switch {
	case m.printing != nil:
		return m, nil
	case len(m.pending) > 0:
		m.printing, m.pending = m.pending, nil
		return m, tea.Sequence(tea.Println(strings.Join(m.printing, "\n")), func() tea.Msg { return livePrinted{} })
	case m.finishing:
		return m, tea.Quit
	}
	return m, nil
}

func (m liveModel) find(id string) int {
	return slices.IndexFunc(m.running, func(t liveTask) bool { return t.id == id })
}

func (m liveModel) View() tea.View {
	if m.finishing {
		return tea.NewView("")
	}
	return tea.NewView(strings.Join(m.lines(), "\n"))
}

// The display's styles, when it has colours.
var (
	liveFaint     = lipgloss.NewStyle().Faint(true)
	liveSucceeded = lipgloss.NewStyle().Foreground(lipgloss.Green)
	liveConflict  = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	liveFailed    = lipgloss.NewStyle().Foreground(lipgloss.Red)
)

// lines are the display's lines: a line per running task, as many as the
// terminal has room for, then the counts; each cut to the terminal's
// width.
func (m liveModel) lines() []string {
	style := func(s lipgloss.Style, text string) string {
		if !m.color {
			return text
		}
		return s.Render(text)
	}
	now := m.clock()
	width := max(m.width, 20)
	room := max(1, m.height-2)
	idWidth := 0
	for _, t := range m.running {
		idWidth = max(idWidth, len(t.id))
	}
	idWidth = min(idWidth, max(8, width/3))
	var out []string
	for i, t := range m.running {
		if i == room-1 && len(m.running) > room {
			out = append(out, style(liveFaint, fmt.Sprintf("  and %d more", len(m.running)-i)))
			break
		}
		id := ansi.Truncate(t.id, idWidth, "…")
		line := fmt.Sprintf("  %-*s  %6s", idWidth, id, liveElapsed(now.Sub(t.since)))
		if t.last != "" {
			line += "  " + style(liveFaint, t.last)
		}
		out = append(out, ansi.Truncate(line, width, "…"))
	}
	done := m.counts["succeeded"] + m.counts["conflict"] + m.counts["failed"]
	var by []string
	for _, k := range []struct {
		key string
		s   lipgloss.Style
	}{{"succeeded", liveSucceeded}, {"conflict", liveConflict}, {"failed", liveFailed}} {
		if n := m.counts[k.key]; n > 0 {
			by = append(by, style(k.s, fmt.Sprintf("%d %s", n, k.key)))
		}
	}
	status := fmt.Sprintf("%d/%d done", done, m.total)
	if len(by) > 0 {
		status += " (" + strings.Join(by, ", ") + ")"
	}
	if n := m.counts["interrupted"]; n > 0 {
		status += fmt.Sprintf(", %d interrupted", n)
	}
	pending := max(0, m.total-done-len(m.running)-m.counts["interrupted"])
	status += fmt.Sprintf(", %d running, %d pending, %s", len(m.running), pending, liveElapsed(now.Sub(m.began)))
	if m.stopping {
		status += ", " + style(liveConflict, "stopping")
	}
	return append(out, ansi.Truncate(status, width, "…"))
}

// liveElapsed prints an elapsed time to the second.
func liveElapsed(d time.Duration) string {
	return max(0, d).Round(time.Second).String()
}

// describeEvent is a running task's event as the display shows it: what
// the agent does, its names quoted; "" for an event that says nothing new
// (usage, the end).
func describeEvent(e report.Event) string {
	switch e.Type {
	case report.EventStarted:
		return "started"
	case report.EventToolUse:
		s := firstLine(e.Tool)
		if e.Detail != "" {
			s += " " + firstLine(e.Detail)
		}
		if e.Status == "failed" || e.Status == "denied" {
			s += " (" + e.Status + ")"
		}
		return s
	case report.EventMessage:
		return firstLine(e.Text)
	case report.EventError:
		return "error: " + firstLine(e.Text)
	case report.EventSync:
		return "sync: " + e.Action + " " + quote.Name(e.Path)
	}
	return ""
}

// firstLine is the first line of s that is not blank, quoted, at most
// 200 characters: the display's line is cut to the terminal anyway.
func firstLine(s string) string {
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			return oneLine(quote.Text(l), 200)
		}
	}
	return ""
}

// batchLive runs the live display: the program and the queue of its
// messages.
type batchLive struct {
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

// startBatchLive starts the live display on ios.Out, with the counts of
// the tasks done before; failed is called, from the display's goroutine,
// with the lines it did not print when the program stopped before it was
// told to (an error of the terminal).
func startBatchLive(ios *iostreams, env procEnv, total int, counts map[string]int, failed func(lines []string, err error)) *batchLive {
	model := newLiveModel(env, total, counts, interruptSelf)
	opts := []tea.ProgramOption{tea.WithOutput(ios.Out), tea.WithEnvironment(env.Environ), tea.WithoutSignalHandler()}
	if in, ok := ios.In.(*os.File); ok && ios.InTTY && foreground(in) {
		opts = append(opts, tea.WithInput(in))
	} else {
		opts = append(opts, tea.WithInput(nil))
	}
	l := &batchLive{prog: tea.NewProgram(model, opts...), events: map[string]int{}, wake: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		m, err := l.prog.Run()
		if fm, _ := m.(liveModel); err != nil || !fm.finishing {
			failed(append(fm.printing, fm.pending...), err)
		}
		close(l.ended) // after failed printed, so before the table
	}()
	go l.forward()
	return l
}

// foreground reports whether workforce is in the foreground of the
// terminal f: only then may it read its keys (raw mode), which would stop
// a process in the background (SIGTTOU).
func foreground(f *os.File) bool {
	pgrp, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCGPGRP)
	return err == nil && pgrp == unix.Getpgrp()
}

// interruptSelf sends workforce SIGINT, as a terminal's Ctrl-C would.
func interruptSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

// send queues msg for the program; it never waits.
func (l *batchLive) send(msg tea.Msg) {
	l.mu.Lock()
	if e, ok := msg.(liveEvent); ok {
		if i, ok := l.events[e.id]; ok {
			l.queue[i] = e
			l.mu.Unlock()
			return
		}
		l.events[e.id] = len(l.queue)
	}
	l.queue = append(l.queue, msg)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// forward hands the queued messages to the program in their order, until
// it ends.
func (l *batchLive) forward() {
	for {
		select {
		case <-l.ended:
			return
		case <-l.wake:
		}
		l.mu.Lock()
		q := l.queue
		l.queue, l.events = nil, map[string]int{}
		l.mu.Unlock()
		for _, msg := range q {
			l.prog.Send(msg) // returns at once once the program ended
		}
	}
}

// stop ends the display once every line queued is printed, and waits
// for the terminal to be as it was.
func (l *batchLive) stop() {
	l.send(liveFinish{})
	<-l.ended
}

// printLines prints lines on w, the display gone.
func printLines(w io.Writer, lines []string) {
	for _, line := range lines {
		fmt.Fprintln(w, line)
	}
}
