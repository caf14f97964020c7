package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// liveAt is a display of total tasks at a fixed time, width columns wide.
func liveAt(env procEnv, total, width, height int) (liveModel, time.Time) {
	t0 := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	m := newLiveModel(env, total, map[string]int{"succeeded": 1}, nil)
	m.began, m.clock = t0, func() time.Time { return t0.Add(75 * time.Second) }
	m.width, m.height = width, height
	return m, t0
}

// update gives m the messages in turn.
func update(m liveModel, msgs ...tea.Msg) liveModel {
	for _, msg := range msgs {
		next, _ := m.Update(msg)
		m = next.(liveModel)
	}
	return m
}

// TestLiveLines: a line per running task with its elapsed time and last
// event, then the counts by status; every line cut to the width, never
// longer; as many task lines as the height has room for.
func TestLiveLines(t *testing.T) {
	noColor := procEnv{Environ: []string{"NO_COLOR=1"}}
	tests := []struct {
		name          string
		width, height int
		msgs          func(t0 time.Time) []tea.Msg
		want          []string
	}{
		{"running and done", 80, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{liveStarted{"parser", t0.Add(10 * time.Second)}, liveStarted{"lexer", t0.Add(70 * time.Second)},
				liveEvent{"parser", "Bash go test ./..."}, liveEnded{"docs", "failed", "task docs: failed"}, liveEnded{"x", "conflict", "l"}}
		}, []string{
			"  parser    1m5s  Bash go test ./...",
			"  lexer       5s",
			"3/6 done (1 succeeded, 1 conflict, 1 failed), 2 running, 1 pending, 1m15s",
		}},
		{"an event of a task that ended is dropped", 80, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{liveStarted{"a", t0}, liveEnded{"a", "succeeded", "l"}, liveEvent{"a", "late"}}
		}, []string{"2/6 done (2 succeeded), 0 running, 4 pending, 1m15s"}},
		{"interrupted and stopping", 80, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{liveStarted{"a", t0}, liveStarted{"b", t0}, liveStopping{}, liveEnded{"a", "interrupted", "l"}}
		}, []string{
			"  b   1m15s",
			"1/6 done (1 succeeded), 1 interrupted, 1 running, 3 pending, 1m15s, stopping",
		}},
		{"narrow: cut, not wrapped", 30, 24, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{liveStarted{"a-very-long-task-identifier", t0}, liveEvent{"a-very-long-task-identifier", "Read a/long/path/to/a/file.go"}}
		}, []string{
			"  a-very-lo…   1m15s  Read a/…",
			"1/6 done (1 succeeded), 1 run…",
		}},
		{"more tasks than lines", 80, 5, func(t0 time.Time) []tea.Msg {
			return []tea.Msg{liveStarted{"a", t0}, liveStarted{"b", t0}, liveStarted{"c", t0}, liveStarted{"d", t0}, liveStarted{"e", t0}}
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
		env  procEnv
		want bool
	}{
		{procEnv{Environ: []string{"TERM=xterm"}}, true},
		{procEnv{Environ: []string{"TERM=xterm", "NO_COLOR=1"}}, false},
		{procEnv{Environ: []string{"NO_COLOR=yes"}}, false},
	} {
		m, _ := liveAt(tt.env, 3, 80, 24)
		m = update(m, liveEnded{"a", "failed", "l"})
		got := strings.Contains(strings.Join(m.lines(), "\n"), "\x1b[")
		if got != tt.want {
			t.Errorf("%v: colours %v, want %v: %q", tt.env.Environ, got, tt.want, m.lines())
		}
	}
}

// TestLiveTerminal: a dumb terminal, or none named, gets plain lines.
func TestLiveTerminal(t *testing.T) {
	for term, want := range map[string]bool{"xterm-256color": true, "screen": true, "dumb": false, "": false} {
		if got := liveTerminal(procEnv{Environ: []string{"TERM=" + term}}); got != want {
			t.Errorf("TERM=%q: live %v, want %v", term, got, want)
		}
	}
}

// TestLiveKeys: Ctrl-C and q send the stop (interrupt), each time they
// are pressed; other keys do nothing.
func TestLiveKeys(t *testing.T) {
	m, _ := liveAt(procEnv{}, 1, 80, 24)
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
	m, _ := liveAt(procEnv{}, 2, 80, 24)
	next, cmd := m.Update(liveEnded{"a", "succeeded", "task a: succeeded (1s)"})
	m = next.(liveModel)
	if cmd == nil || len(m.printing) != 1 {
		t.Fatalf("the line of a is not being printed: %v", m.printing)
	}
	next, cmd = m.Update(liveFinish{})
	m = next.(liveModel)
	if cmd != nil {
		t.Fatalf("quits while a line is being printed")
	}
	if m.View().Content != "" {
		t.Errorf("the display stays once finishing: %q", m.View().Content)
	}
	next, cmd = m.Update(livePrinted{})
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
	ios := &iostreams{Out: &out, Err: &out}
	l := startBatchLive(ios, procEnv{Environ: []string{"TERM=xterm"}}, 400, nil, func(lines []string, err error) {
		t.Errorf("the display stopped: %v", err)
	})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				id := fmt.Sprintf("g%d-%d", g, i)
				l.send(liveStarted{id: id, at: time.Now()})
				for range 20 {
					l.send(liveEvent{id: id, text: "Bash ls"})
				}
				l.send(liveEnded{id: id, key: "succeeded", line: fmt.Sprintf("task %s: succeeded", id)})
			}
		}()
	}
	wg.Wait()
	l.stop()
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
		{report.Event{Type: report.EventUsage}, ""},
		{report.Event{Type: report.EventFinished}, ""},
	}
	for _, tt := range tests {
		if got := describeEvent(tt.e); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.e, got, tt.want)
		}
	}
}

// TestParentDeathSignal: the signal the pool asks the kernel to send its
// tasks' runs when it dies is the one run takes once (package batch may
// not import session, so each names it).
func TestParentDeathSignal(t *testing.T) {
	if batch.ParentDeathSignal != session.ParentDeathSignal {
		t.Errorf("the pool's parent-death signal is %v, run takes %v once", batch.ParentDeathSignal, session.ParentDeathSignal)
	}
}
