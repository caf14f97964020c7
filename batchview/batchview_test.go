package batchview

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/seed-3bc194a6/workforce/internal/syncbuf"
	"github.com/seed-3bc194a6/workforce/report"
)

// liveAt is a display of total tasks at a fixed time, width columns wide.
func liveAt(environ []string, total, width, height int) (model, time.Time) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	m := newModel(environ, total, map[string]int{"succeeded": 1}, nil)
	m.began, m.clock = t0, func() time.Time { return t0.Add(75 * time.Second) }
	m.width, m.height = width, height
	return m, t0
}

// update gives m the messages in turn.
func update(m model, msgs ...tea.Msg) model {
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(model)
	}
	return m
}

// TestLiveLines: a line per running task with its elapsed time and last
// event, then the counts by status; every line cut to the width, never
// longer; as many task lines as the height has room for.
func TestLiveLines(t *testing.T) {
	noColor := []string{"NO_COLOR=1"}
	tests := []struct {
		name          string
		width, height int
		msgs          func(t0 time.Time) []tea.Msg
		want          []string
	}{
		{"running and done", 80, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{started{"parser", t0.Add(10 * time.Second)}, started{"lexer", t0.Add(70 * time.Second)},
				event{"parser", "Bash go test ./..."}, ended{"docs", "failed", "task docs: failed"}, ended{"x", "conflict", "l"}}
		}, []string{
			"  parser    1m5s  Bash go test ./...",
			"  lexer       5s",
			"3/6 done (1 succeeded, 1 conflict, 1 failed), 2 running, 1 pending, 1m15s",
		}},
		{"an event of a task that ended is dropped", 80, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{started{"a", t0}, ended{"a", "succeeded", "l"}, event{"a", "late"}}
		}, []string{"2/6 done (2 succeeded), 0 running, 4 pending, 1m15s"}},
		{"interrupted and stopping", 80, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{started{"a", t0}, started{"b", t0}, stopping{}, ended{"a", "interrupted", "l"}}
		}, []string{
			"  b   1m15s",
			"1/6 done (1 succeeded), 1 interrupted, 1 running, 3 pending, 1m15s, stopping",
		}},
		{"narrow: cut, not wrapped", 30, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{started{"a-very-long-task-identifier", t0}, event{"a-very-long-task-identifier", "Read a/long/path/to/a/file.go"}}
		}, []string{
			"  a-very-lo…   1m15s  Read a/…",
			"1/6 done (1 succeeded), 1 run…",
		}},
		{"more tasks than lines", 80, 5, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{started{"a", t0}, started{"b", t0}, started{"c", t0}, started{"d", t0}, started{"e", t0}}
		}, []string{
			"  a   1m15s",
			"  b   1m15s",
			"  and 3 more",
			"1/6 done (1 succeeded), 5 running, 0 pending, 1m15s",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, t0 := liveAt(noColor, 6, tt.width, tt.height)
			m = update(m, tt.msgs(t0)...)
			got := m.lines()
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			for _, l := range got {
				if w := ansi.StringWidth(l); w > tt.width {
					t.Errorf("line %q is %d columns wide, the terminal %d", l, w, tt.width)
				}
			}
		})
	}
}

// TestLiveColor: the counts are coloured, unless NO_COLOR is set.
func TestLiveColor(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want bool
	}{
		{[]string{"TERM=xterm"}, true},
		{[]string{"TERM=xterm", "NO_COLOR=1"}, false},
		{[]string{"NO_COLOR=yes"}, false},
	} {
		m, _ := liveAt(tt.env, 3, 80, 24)
		m = update(m, ended{"a", "failed", "l"})
		got := strings.Contains(strings.Join(m.lines(), "\n"), "\x1b[")
		if got != tt.want {
			t.Errorf("%v: colours %v, want %v: %q", tt.env, got, tt.want, m.lines())
		}
	}
}

// TestLiveTerminal: a dumb terminal, or none named, gets plain lines.
func TestLiveTerminal(t *testing.T) {
	for term, want := range map[string]bool{"xterm-256color": true, "screen": true, "dumb": false, "": false} {
		if got := Redraws(term); got != want {
			t.Errorf("TERM=%q: live %v, want %v", term, got, want)
		}
	}
}

// TestLiveKeys: Ctrl-C and q send the stop (interrupt), each time they
// are pressed; other keys do nothing.
func TestLiveKeys(t *testing.T) {
	m, _ := liveAt(nil, 1, 80, 24)
	n := 0
	m.interrupt = func() { n++ }
	m = update(m, tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}, tea.KeyPressMsg{Code: 'x', Text: "x"},
		tea.KeyPressMsg{Code: 'q', Text: "q"}, tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if n != 3 {
		t.Errorf("%d stops sent, want 3 (Ctrl-C, q, Ctrl-C)", n)
	}
}

// TestLiveFinish: the display quits once the lines handed to it are out,
// not before.
func TestLiveFinish(t *testing.T) {
	m, _ := liveAt(nil, 2, 80, 24)
	next, cmd := m.Update(ended{"a", "succeeded", "task a: succeeded (1s)"})
	m = next.(model)
	if cmd == nil || len(m.printing) != 1 {
		t.Fatalf("the line of a is not being printed: %v", m.printing)
	}
	next, cmd = m.Update(finish{})
	m = next.(model)
	if cmd != nil {
		t.Fatalf("quits while a line is being printed")
	}
	if m.View().Content != "" {
		t.Errorf("the display stays once finishing: %q", m.View().Content)
	}
	next, cmd = m.Update(printed{})
	if cmd == nil {
		t.Fatal("does not quit once the lines are out")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Errorf("the last command is not quit")
	}
	_ = next
}

// TestBatchLiveLines: through the program, every task's line comes out
// once, those of a task in their order, while many goroutines send at
// once without waiting for the display; stop returns once they are out.
func TestBatchLiveLines(t *testing.T) {
	var out syncBuffer
	l := Start(Options{Total: 400, Out: &out, Environ: []string{"TERM=xterm"}, Failed: func(lines []string, err error) {
		t.Errorf("the display stopped: %v", err)
	}})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := fmt.Sprintf("g%d-%d", g, i)
				l.Started(id, time.Now())
				for range 20 {
					l.Event(report.Event{Type: report.EventMessage, TaskID: id, Text: "Bash ls"})
				}
				l.Ended(id, Succeeded, fmt.Sprintf("task %s: succeeded", id))
			}
		}()
	}
	wg.Wait()
	l.Stop()
	text := out.String()
	for g := range 8 {
		last := -1
		for i := range 50 {
			line := fmt.Sprintf("task g%d-%d: succeeded", g, i)
			if n := strings.Count(text, line); n != 1 {
				t.Fatalf("%q printed %d times", line, n)
			}
			at := strings.Index(text, line)
			if at < last {
				t.Errorf("%q printed before the task before it", line)
			}
			last = at
		}
	}
}

// TestDescribeEvent: what a running task's line says of its last event,
// the agent's names quoted.
func TestDescribeEvent(t *testing.T) {
	tests := []struct {
		e    report.Event
		want string
	}{
		{report.Event{Type: report.EventStarted}, "started"},
		{report.Event{Type: report.EventToolUse, Tool: "Bash", Detail: "go test ./..."}, "Bash go test ./..."},
		{report.Event{Type: report.EventToolUse, Tool: "Write", Detail: "a.go", Status: "denied"}, "Write a.go (denied)"},
		{report.Event{Type: report.EventToolUse, Tool: "Bash", Detail: "echo \x1b[31mred"}, `Bash echo \033[31mred`},
		{report.Event{Type: report.EventMessage, Text: "Done.\nSecond line"}, "Done."},
		{report.Event{Type: report.EventError, Text: "rate limited"}, "error: rate limited"},
		{report.Event{Type: report.EventSync, Path: "a\tb.go", Action: "updated"}, `sync: updated "a\tb.go"`},
		{report.Event{Type: report.EventNetwork, Host: "evil.example", Port: 443}, "network denied: evil.example:443"},
		{report.Event{Type: report.EventUsage}, ""},
		{report.Event{Type: report.EventFinished}, ""},
	}
	for _, tt := range tests {
		if got := Describe(tt.e); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
}

// syncBuffer is a buffer several goroutines write.
type syncBuffer = syncbuf.Buffer

// TestDisplayQueue: what the Display's methods queue for the program, in
// their order; a task's newer event takes the place of the one not yet
// handed on, and an event that says nothing new queues nothing.
func TestDisplayQueue(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	msg := func(text string) report.Event {
		return report.Event{Type: report.EventMessage, TaskID: "a", Text: text}
	}
	tests := []struct {
		name  string
		calls func(d *Display)
		want  []tea.Msg
	}{
		{"each call in its order", func(d *Display) {
			d.Started("a", t0)
			d.Event(msg("reading"))
			d.Print("stopping")
			d.Stopping()
			d.Ended("a", Interrupted, "task a: interrupted")
		}, []tea.Msg{started{"a", t0}, event{"a", "reading"}, printLine{"stopping"}, stopping{}, ended{"a", Interrupted, "task a: interrupted"}}},
		{"a newer event in the older one's place", func(d *Display) {
			d.Started("a", t0)
			d.Event(msg("first"))
			d.Started("b", t0)
			d.Event(msg("second"))
			d.Event(report.Event{Type: report.EventToolUse, TaskID: "b", Tool: "Bash"})
		}, []tea.Msg{started{"a", t0}, event{"a", "second"}, started{"b", t0}, event{"b", "Bash"}}},
		{"an event that says nothing new", func(d *Display) {
			d.Event(report.Event{Type: report.EventUsage, TaskID: "a"})
			d.Event(report.Event{Type: report.EventFinished, TaskID: "a"})
			d.Event(msg("  \n"))
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Display{events: map[string]int{}, wake: make(chan struct{}, 1)}
			tt.calls(d)
			if fmt.Sprint(d.queue) != fmt.Sprint(tt.want) {
				t.Errorf("queued %v, want %v", d.queue, tt.want)
			}
		})
	}
}
