package batchview

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// The messages of the display.
type (
	// started: task id started at at.
	started struct {
		id string
		at time.Time
	}
	// event: the last event of running task id, as text.
	event struct{ id, text string }
	// ended: task id ended; key is the count it adds to, line what to
	// print above the display.
	ended struct{ id, key, line string }
	// printLine: a line to print above the display.
	printLine struct{ line string }
	// stopping: the batch is stopping.
	stopping struct{}
	// finish: the batch ended: the display goes once every line is out.
	finish struct{}
	// printed: the lines handed to the program are out.
	printed struct{}
	// tick: a second went by.
	tick struct{}
)

// task is a running task, as the display shows it.
type task struct {
	id    string
	since time.Time
	last  string // its last event, as text
}

// model is the display's state, the program's alone (its slices and map
// are changed in place: no one else holds a copy).
type model struct {
	width, height int
	began         time.Time
	total         int
	running       []task
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

// newModel is the display of a batch of total tasks, counts of them done
// before, in colour unless environ has NO_COLOR; interrupt is what Ctrl-C
// and q do.
func newModel(environ []string, total int, counts map[string]int, interrupt func()) model {
	c := map[string]int{}
	for k, n := range counts {
		c[k] = n
	}
	return model{width: 80, height: 24, began: time.Now(), total: total, counts: c, color: getenv(environ, "NO_COLOR") == "",
		clock: time.Now, interrupt: interrupt}
}

func ticker() tea.Cmd {
	return tea.Tick(time.Second, func(time.Time) tea.Msg { return tick{} })
}

func (m model) Init() tea.Cmd { return ticker() }

func (m model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
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
	case tick:
		return m, ticker()
	case started:
		m.running = append(m.running, task{id: msg.id, since: msg.at})
	case event:
		if i := m.find(msg.id); i >= 0 {
			m.running[i].last = msg.text
		}
	case ended:
		if i := m.find(msg.id); i >= 0 {
			m.running = slices.Delete(m.running, i, i+1)
		}
		m.counts[msg.key]++
		m.pending = append(m.pending, msg.line)
	case printLine:
		m.pending = append(m.pending, msg.line)
	case stopping:
		m.stopping = true
	case finish:
		m.finishing = true
	case printed:
		m.printing = nil
	}
	return m.flush()
}

// flush hands the pending lines to the program, once the last ones are
// out, and quits when the batch ended and every line is out.
func (m model) flush() (tea.Model, tea.Cmd) {
	switch {
	case m.printing != nil:
		return m, nil
	case len(m.pending) > 0:
		m.printing, m.pending = m.pending, nil
		return m, tea.Sequence(tea.Println(strings.Join(m.printing, "\n")), func() tea.Msg { return printed{} })
	case m.finishing:
		return m, tea.Quit
	}
	return m, nil
}

func (m model) find(id string) int {
	return slices.IndexFunc(m.running, func(t task) bool { return t.id == id })
}

func (m model) View() tea.View {
	if m.finishing {
		return tea.NewView("")
	}
	return tea.NewView(strings.Join(m.lines(), "\n"))
}

// The display's styles, when it has colours: made on first use, so that
// a command that draws no display does no work for them at start-up.
var (
	faintStyle     = sync.OnceValue(func() lipgloss.Style { return lipgloss.NewStyle().Faint(true) })
	succeededStyle = sync.OnceValue(func() lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Green) })
	conflictStyle  = sync.OnceValue(func() lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Yellow) })
	failedStyle    = sync.OnceValue(func() lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Red) })
)

// style is text in s when the display has colours.
func (m model) style(s func() lipgloss.Style, text string) string {
	if !m.color {
		return text
	}
	return s().Render(text)
}

// lines are the display's lines: a line per running task, as many as the
// terminal has room for, then the counts; each cut to the terminal's
// width.
func (m model) lines() []string {
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
			out = append(out, m.style(faintStyle, fmt.Sprintf("  and %d more", len(m.running)-i)))
			break
		}
		id := ansi.Truncate(t.id, idWidth, "…")
		line := fmt.Sprintf("  %-*s  %6s", idWidth, id, elapsed(now.Sub(t.since)))
		if t.last != "" {
			line += "  " + m.style(faintStyle, t.last)
		}
		out = append(out, ansi.Truncate(line, width, "…"))
	}
	return append(out, ansi.Truncate(m.status(now), width, "…"))
}

// status is the display's last line: the counts, what runs and is
// pending, the time since the start.
func (m model) status(now time.Time) string {
	done := m.counts[Succeeded] + m.counts[Conflict] + m.counts[Failed]
	var by []string
	for _, k := range []struct {
		key string
		s   func() lipgloss.Style
	}{{Succeeded, succeededStyle}, {Conflict, conflictStyle}, {Failed, failedStyle}} {
		if n := m.counts[k.key]; n > 0 {
			by = append(by, m.style(k.s, fmt.Sprintf("%d %s", n, k.key)))
		}
	}
	status := fmt.Sprintf("%d/%d done", done, m.total)
	if len(by) > 0 {
		status += " (" + strings.Join(by, ", ") + ")"
	}
	if n := m.counts[Interrupted]; n > 0 {
		status += fmt.Sprintf(", %d %s", n, Interrupted)
	}
	pending := max(0, m.total-done-len(m.running)-m.counts[Interrupted])
	status += fmt.Sprintf(", %d running, %d pending, %s", len(m.running), pending, elapsed(now.Sub(m.began)))
	if m.stopping {
		status += ", " + m.style(conflictStyle, "stopping")
	}
	return status
}

// elapsed prints an elapsed time to the second.
func elapsed(d time.Duration) string {
	return max(0, d).Round(time.Second).String()
}
