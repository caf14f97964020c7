// Package picker is the terminal persona picker that `workforce` opens
// when it is started with no arguments on a terminal. It shows the items
// it is given (the personas), the recent ones first, filters them by fuzzy
// match as the user types, lets the user pick a tier, asks for the
// persona's required inputs on a screen of its own, and returns the
// choice: it runs nothing. A tier its caller marks as unable to start
// (Tier.Missing: its harness not installed) is shown so and never
// picked; the status line says why.
//
// It is a Bubble Tea program (charm.land/bubbletea/v2) drawn in the
// terminal's alternate screen with Lip Gloss styles, the query an input
// line of Bubbles (textinput), the key help Bubbles' help; fuzzy matching
// is github.com/sahilm/fuzzy's. It follows the terminal's size, and its
// colours are the terminal's own sixteen, dropped under NO_COLOR or on a
// terminal without colour (text attributes, such as the reverse video of
// the selected row, stay). docs/picker.md says how it behaves and why.
package picker

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"unicode"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/sahilm/fuzzy"
)

// RecentCount is how many recent items come first.
const RecentCount = 3

// Tier is one tier of an item: its name, and the harness and model it
// runs.
type Tier struct {
	Name, Harness, Model string
	// Missing, when set, says why the tier cannot start and what to do
	// about it ("claude is not installed: npm install -g ..."): the
	// picker marks the tier and Enter on it says this instead of
	// picking it.
	Missing string
}

// Input is an input the picker asks for once its item is picked: one
// the run has no value for otherwise.
type Input struct {
	Name, Description string
}

// Item is a persona as the picker shows it.
type Item struct {
	ID          string
	Intent      string
	Description string
	Tags        []string
	// Source is the layer the persona comes from.
	Source string
	// Tiers are the tiers it serves, and Default the index of its
	// default tier among them.
	Tiers   []Tier
	Default int
	// Inputs are asked for, in this order, on a screen of their own
	// after the item is picked; each needs a value that is not blank.
	Inputs []Input
}

// startable reports whether a tier of it can start (an item without
// tiers is not known not to).
func (it Item) startable() bool {
	return len(it.Tiers) == 0 || slices.ContainsFunc(it.Tiers, func(t Tier) bool { return t.Missing == "" })
}

// Choice is what the user picked: a persona, a tier, and the value given
// to each of the persona's Inputs (nil when it has none).
type Choice struct {
	ID, Tier string
	Inputs   map[string]string
}

// ErrQuit is Run's error when the user quit (Esc), and ErrInterrupted
// when the user pressed Ctrl-C.
var (
	ErrQuit        = errors.New("quit")
	ErrInterrupted = errors.New("interrupted")
)

// SignalError is Run's error when a signal (SIGINT, SIGTERM, SIGHUP) sent
// from elsewhere quit the picker: the caller exits as that signal stops a
// run.
type SignalError struct{ Signal os.Signal }

func (e *SignalError) Error() string { return "stopped by " + e.Signal.String() }

// quitSignals are the signals that quit the picker, the terminal restored.
var quitSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// Options are a picker's items and terminal.
type Options struct {
	// Items are the personas, in the order they are listed after the
	// recent ones.
	Items []Item
	// Recent are ids of personas run lately, newest first: the first
	// RecentCount of them that are among Items come first.
	Recent []string
	// In and Out are the terminal; Environ the environment (TERM,
	// NO_COLOR, ...).
	In      io.Reader
	Out     io.Writer
	Environ []string
	// Signals is the program's signal source: it starts catching sigs
	// on c until the stop it returns is called (as signal.Notify and
	// signal.Stop). The picker quits on SIGINT, SIGTERM and SIGHUP that
	// come through it; nil catches none.
	Signals func(c chan<- os.Signal, sigs ...os.Signal) (stop func())
}

// Run shows the picker until the user picks a persona (Enter) and
// answers its inputs, quits (Esc: ErrQuit) or interrupts (Ctrl-C:
// ErrInterrupted), or a signal quits it (*SignalError). A tier that
// cannot start (Tier.Missing) is never picked: Enter on it says why.
//
// The signals are Run's own, not Bubble Tea's handler (which takes
// SIGTERM for a plain quit, and SIGINT for an error): whichever comes, the
// program quits as on Esc, restoring the terminal, and Run says which.
func Run(ctx context.Context, o Options) (Choice, error) {
	m := newModel(o.Items, o.Recent)
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out), tea.WithEnvironment(o.Environ),
		tea.WithoutSignalHandler()}
	if noColor(o.Environ) {
		opts = append(opts, tea.WithColorProfile(colorprofile.ASCII))
	}
	p := tea.NewProgram(m, opts...)
	sigs := make(chan os.Signal, 1)
	unwire := func() {}
	if o.Signals != nil {
		unwire = o.Signals(sigs, quitSignals...)
	}
	var caught atomic.Value
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			caught.Store(sig)
			p.Quit()
		case <-done:
		}
	}()
	final, err := p.Run()
	unwire()
	close(done)
	if sig, ok := caught.Load().(os.Signal); ok {
		return Choice{}, &SignalError{Signal: sig}
	}
	if err != nil {
		return Choice{}, err
	}
	fm := final.(*model)
	switch {
	case fm.choice != nil:
		return *fm.choice, nil
	case fm.interrupted:
		return Choice{}, ErrInterrupted
	}
	return Choice{}, ErrQuit
}

// noColor reports whether NO_COLOR is set to anything (no-color.org).
func noColor(environ []string) bool {
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, "NO_COLOR="); ok && v != "" {
			return true
		}
	}
	return false
}

// keyMap are the picker's keys; the help line shows them.
type keyMap struct {
	Up, Down, Tier, TierBack, Run, Quit key.Binding
}

// inputKeys are the keys of the screen that asks for an input.
type inputKeys struct {
	Answer, Quit key.Binding
}

func (k inputKeys) ShortHelp() []key.Binding  { return []key.Binding{k.Answer, k.Quit} }
func (k inputKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

func newKeyMap() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "ctrl+p"), key.WithHelp("↑/↓", "move")),
		Down:     key.NewBinding(key.WithKeys("down", "ctrl+n")),
		Tier:     key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "tier")),
		TierBack: key.NewBinding(key.WithKeys("shift+tab")),
		Run:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run")),
		Quit:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "quit")),
	}
}

func (k keyMap) ShortHelp() []key.Binding  { return []key.Binding{k.Up, k.Tier, k.Run, k.Quit} }
func (k keyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// model is the picker's state.
type model struct {
	items []Item
	// base is the order of the items without a query: the recent ones
	// (the first nRecent), then the rest in their order.
	base    []int
	nRecent int
	// rows are the items shown, as indexes into items; cursor indexes
	// rows, and top is the first line of the list on the screen.
	rows   []int
	cursor int
	top    int
	// tier is the tier chosen for each item, an index into its Tiers.
	tier []int
	// fields are what the query is matched against.
	fields fieldIndex

	input textinput.Model
	keys  keyMap
	// status is a line on what the last key did not do (why a tier
	// cannot start, that an input needs a value); any other key
	// clears it.
	status string

	// asking is the picked item whose Inputs are asked for, one at a
	// time on a screen of their own (-1 on the list), picked its
	// persona and tier, answers the values given so far, answer the
	// line being typed.
	asking     int
	picked     Choice
	answers    []string
	answer     textinput.Model
	answerKeys inputKeys

	help          help.Model
	width, height int
	styles        styles

	choice      *Choice
	interrupted bool
}

func newModel(items []Item, recent []string) *model {
	m := &model{items: items, keys: newKeyMap(), help: help.New(), width: 80, height: 24, styles: newStyles(), asking: -1}
	m.help.Styles = m.styles.help
	m.tier = make([]int, len(items))
	byID := map[string]int{}
	for i, it := range items {
		m.tier[i] = min(max(it.Default, 0), max(len(it.Tiers)-1, 0))
		byID[it.ID] = i
	}
	seen := map[int]bool{}
	for _, id := range recent {
		i, ok := byID[id]
		if !ok || seen[i] {
			continue
		}
		seen[i] = true
		m.base = append(m.base, i)
		if len(m.base) == RecentCount {
			break
		}
	}
	m.nRecent = len(m.base)
	for i := range items {
		if !seen[i] {
			m.base = append(m.base, i)
		}
	}
	m.fields = indexFields(items)
	m.input = textinput.New()
	m.input.Prompt = "› "
	m.input.Placeholder = "type to filter by id, intent, tags or description"
	m.input.SetVirtualCursor(false)
	m.input.SetWidth(m.width - 3)
	st := m.input.Styles()
	st.Focused.Prompt = m.styles.accent
	st.Focused.Placeholder = m.styles.dim
	m.input.SetStyles(st)
	m.input.Focus()
	m.answer = textinput.New()
	m.answer.Prompt = "› "
	m.answer.SetVirtualCursor(false)
	m.answer.SetWidth(m.width - 3)
	m.answer.SetStyles(st)
	m.answerKeys = inputKeys{
		Answer: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "answer")),
		Quit:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "quit")),
	}
	m.filter()
	return m
}

func (m *model) Init() tea.Cmd { return nil }

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.input.SetWidth(max(msg.Width-3, 1))
		m.answer.SetWidth(max(msg.Width-3, 1))
		m.scroll()
		return m, nil
	case tea.KeyPressMsg:
		if msg.String() == "ctrl+c" {
			m.interrupted = true
			return m, tea.Quit
		}
		m.status = ""
		if m.asking >= 0 {
			return m.updateAnswer(msg)
		}
		switch {
		case key.Matches(msg, m.keys.Quit):
			return m, tea.Quit
		case key.Matches(msg, m.keys.Run):
			return m.pick()
		case key.Matches(msg, m.keys.Up):
			m.move(-1)
			return m, nil
		case key.Matches(msg, m.keys.Down):
			m.move(1)
			return m, nil
		case key.Matches(msg, m.keys.Tier):
			m.cycleTier(1)
			return m, nil
		case key.Matches(msg, m.keys.TierBack):
			m.cycleTier(-1)
			return m, nil
		}
	}
	var cmd tea.Cmd
	if m.asking >= 0 {
		m.answer, cmd = m.answer.Update(msg)
		return m, cmd
	}
	before := m.input.Value()
	m.input, cmd = m.input.Update(msg)
	if m.input.Value() != before {
		m.filter()
	}
	return m, cmd
}

// pick is Enter on the list: the selected item's tier is picked, and its
// inputs asked for, unless the tier cannot start, which the status line
// then says.
func (m *model) pick() (tea.Model, tea.Cmd) {
	if len(m.rows) == 0 {
		return m, nil
	}
	i := m.rows[m.cursor]
	it := m.items[i]
	c := Choice{ID: it.ID}
	if t := m.tier[i]; t < len(it.Tiers) {
		c.Tier = it.Tiers[t].Name
		if why := it.Tiers[t].Missing; why != "" {
			m.status = why
			switch {
			case !it.startable():
				m.status += " · no tier of " + it.ID + " can start"
			case len(it.Tiers) > 1:
				m.status += " · tab: another tier"
			}
			m.scroll() // a long status takes a line from the list
			return m, nil
		}
	}
	if len(it.Inputs) > 0 {
		m.asking, m.picked, m.answers = i, c, nil
		m.answer.Reset()
		return m, m.answer.Focus()
	}
	m.choice = &c
	return m, tea.Quit
}

// updateAnswer is a key on the screen that asks for an input: Enter
// takes the answer, unless it is blank, and asks for the next input, or
// ends with the choice after the last; Esc quits.
func (m *model) updateAnswer(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch {
	case key.Matches(msg, m.answerKeys.Quit):
		return m, tea.Quit
	case key.Matches(msg, m.answerKeys.Answer):
		inputs := m.items[m.asking].Inputs
		in := inputs[len(m.answers)]
		v := strings.TrimSpace(m.answer.Value())
		if v == "" {
			m.status = in.Name + " needs a value: type it, or esc to quit"
			return m, nil
		}
		m.answers = append(m.answers, v)
		m.answer.Reset()
		if len(m.answers) < len(inputs) {
			return m, nil
		}
		c := m.picked
		c.Inputs = make(map[string]string, len(inputs))
		for k, in := range inputs {
			c.Inputs[in.Name] = m.answers[k]
		}
		m.choice = &c
		return m, tea.Quit
	}
	var cmd tea.Cmd
	m.answer, cmd = m.answer.Update(msg)
	return m, cmd
}

// move moves the cursor by d rows, wrapping around at either end.
func (m *model) move(d int) {
	if n := len(m.rows); n > 0 {
		m.cursor = ((m.cursor+d)%n + n) % n
		m.scroll()
	}
}

// cycleTier moves the selected item's tier by d, wrapping around.
func (m *model) cycleTier(d int) {
	if len(m.rows) == 0 {
		return
	}
	i := m.rows[m.cursor]
	if n := len(m.items[i].Tiers); n > 0 {
		m.tier[i] = ((m.tier[i]+d)%n + n) % n
	}
}

// filter recomputes the rows from the query: the base order without one,
// else the items matching every word of it, best first.
func (m *model) filter() {
	m.rows = m.fields.match(m.input.Value(), m.base)
	m.cursor, m.top = 0, 0
	m.scroll()
}

// searching reports whether a query filters the rows.
func (m *model) searching() bool { return strings.TrimSpace(m.input.Value()) != "" }

// A line of the list: a section header, or the row of an item.
type line struct {
	header string
	row    int // index into rows; -1 for a header
}

// lines are the list's lines: headers and rows.
func (m *model) lines() []line {
	var out []line
	switch {
	case m.searching():
		out = append(out, line{header: "MATCHES", row: -1})
	case m.nRecent > 0:
		out = append(out, line{header: "RECENT", row: -1})
	default:
		out = append(out, line{header: "PERSONAS", row: -1})
	}
	for r := range m.rows {
		if !m.searching() && m.nRecent > 0 && r == m.nRecent && r < len(m.rows) {
			out = append(out, line{header: "ALL PERSONAS", row: -1})
		}
		out = append(out, line{row: r})
	}
	return out
}

// Fixed lines around the list: title, query, a blank line above the list;
// a blank line, the selected item's details (two lines) and the help below.
const (
	linesAbove = 3
	linesBelow = 4
)

// listHeight is how many lines the list has on the screen.
// A status wider than the terminal takes a second line from the list.
func (m *model) listHeight() int {
	return max(m.height-linesAbove-linesBelow-len(m.statusLines())+1, 1)
}

// scroll moves the list so that the cursor's line, and the header above
// the first row, are on the screen.
func (m *model) scroll() {
	ls := m.lines()
	at := 0
	for i, l := range ls {
		if l.row == m.cursor {
			at = i
			break
		}
	}
	if at == 1 {
		at = 0 // the first row: its header too
	}
	h := m.listHeight()
	if at < m.top {
		m.top = at
	}
	if at >= m.top+h {
		m.top = at - h + 1
	}
	m.top = max(min(m.top, len(ls)-h), 0)
}

func (m *model) View() tea.View {
	if m.asking >= 0 {
		return m.answerView()
	}
	var b strings.Builder
	st := m.styles
	title := st.title.Render("workforce") + st.dim.Render(" · pick a persona to run here")
	if m.searching() {
		title += st.dim.Render(" · " + count(len(m.rows), "match", "matches"))
	}
	b.WriteString(ansi.Truncate(title, m.width, "…") + "\n")
	b.WriteString(m.input.View() + "\n\n")
	ls := m.lines()
	h := m.listHeight()
	cols := m.columns()
	shown := 0
	for _, l := range ls[min(m.top, len(ls)):] {
		if shown == h {
			break
		}
		shown++
		if l.row < 0 {
			b.WriteString(st.header.Render(l.header) + "\n")
			continue
		}
		b.WriteString(m.rowView(l.row, cols) + "\n")
	}
	if len(m.rows) == 0 {
		b.WriteString(st.dim.Render(ansi.Truncate("no persona's id, intent, tags or description matches "+quoteQuery(m.input.Value()), m.width, "…")) + "\n")
		shown++
	}
	for ; shown < h; shown++ {
		b.WriteString("\n")
	}
	b.WriteString(strings.Join(m.statusLines(), "\n") + "\n" + m.details() + m.helpLine(m.keys))
	v := tea.NewView(b.String())
	v.AltScreen = true
	v.WindowTitle = "workforce"
	if c := m.input.Cursor(); c != nil {
		c.Position.Y = 1
		v.Cursor = c
	}
	return v
}

// helpLine is the keys' help, cut to the terminal's width: Bubbles' help
// cuts it with "…" only where the "…" fits, and otherwise leaves it
// whole.
func (m *model) helpLine(keys help.KeyMap) string {
	return ansi.Truncate(m.help.View(keys), max(m.width, 1), "")
}

// statusLines are the status, on the line above the details: one empty
// line when there is none, else the status wrapped to the terminal's
// width on one line or two, cut at the end of the second.
func (m *model) statusLines() []string {
	if m.status == "" {
		return []string{""}
	}
	w := max(m.width, 1)
	// Wrapped between its parts (" · ") where it can be.
	var lines []string
	for _, part := range strings.Split(oneLine(m.status), " · ") {
		if n := len(lines); n > 0 && ansi.StringWidth(lines[n-1]+" · "+part) <= w {
			lines[n-1] += " · " + part
			continue
		}
		lines = append(lines, strings.Split(ansi.Wrap(part, w, ""), "\n")...)
	}
	if len(lines) > 2 {
		lines = []string{lines[0], strings.Join(lines[1:], " ")}
	}
	for i, l := range lines {
		lines[i] = m.styles.status.Render(ansi.Truncate(l, w, "…"))
	}
	return lines
}

// answerView is the screen that asks for an input of the picked item:
// the persona and tier picked, the input's name and description (wrapped
// to the terminal's width), the answer's line; below, as on the list,
// the status, the persona's details and the keys.
func (m *model) answerView() tea.View {
	st := m.styles
	it := m.items[m.asking]
	// After the last answer, the program's last frame asks it still.
	k := min(len(m.answers), len(it.Inputs)-1)
	in := it.Inputs[k]
	ref := m.picked.ID
	if m.picked.Tier != "" {
		ref += "@" + m.picked.Tier
	}
	title := st.title.Render("workforce") + st.dim.Render(" · run "+ref+" · input "+strconv.Itoa(k+1)+" of "+strconv.Itoa(len(it.Inputs)))
	lines := []string{ansi.Truncate(title, m.width, "…"), ""}
	question := st.title.Render(oneLine(in.Name))
	if d := oneLine(in.Description); d != "" {
		question += ": " + d
	}
	for _, l := range strings.Split(ansi.Wrap(question, max(m.width, 1), ""), "\n") {
		lines = append(lines, ansi.Truncate(l, m.width, "…"))
	}
	at := len(lines)
	lines = append(lines, m.answer.View())
	status := m.statusLines()
	h := max(m.height-linesBelow-len(status)+1, 1)
	for len(lines) < h {
		lines = append(lines, "")
	}
	if cut := len(lines) - h; cut > 0 {
		// A screen too short: the answer's line stays, the title goes.
		lines = lines[cut:]
		at = max(at-cut, 0)
	}
	v := tea.NewView(strings.Join(lines, "\n") + "\n" + strings.Join(status, "\n") + "\n" + m.details() + m.helpLine(m.answerKeys))
	v.AltScreen = true
	v.WindowTitle = "workforce"
	if c := m.answer.Cursor(); c != nil {
		c.Position.Y = at
		v.Cursor = c
	}
	return v
}

// quoteQuery is the query as the user typed it, quoted.
func quoteQuery(q string) string { return "“" + strings.TrimSpace(q) + "”" }

func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// columns are the widths of a row's columns.
type columns struct {
	id, source, tier, harness, model, desc int
}

// maxID and maxModel bound the id and model columns; a longer name is cut
// with "…".
const (
	maxID    = 32
	maxModel = 24
	gap      = 2
	marker   = 2 // "› "
	// minDesc and minModel are the narrowest the description and the
	// model columns get: a narrower description is left out, and a
	// model column is not cut below minModel.
	minDesc  = 10
	minModel = 6
)

// columns fits the columns to the terminal's width, by all the items (so
// that they stay put as the rows change): the description takes what is
// left, and is left out when too little is; then the model's column
// narrows; a row still too wide is cut at the screen's edge.
func (m *model) columns() columns {
	var c columns
	w := func(s string) int { return ansi.StringWidth(oneLine(s)) }
	for _, it := range m.items {
		c.id = max(c.id, w(it.ID))
		c.source = max(c.source, w(it.Source))
		for _, t := range it.Tiers {
			c.tier = max(c.tier, w(t.Name))
			c.harness = max(c.harness, w(t.Harness))
			c.model = max(c.model, w(modelCell(t)))
		}
	}
	c.id, c.model = min(c.id, maxID), min(c.model, maxModel)
	used := marker + c.id + gap + c.source + gap + c.tier + gap + c.harness + gap + c.model
	if rest := m.width - used - gap; rest >= minDesc {
		c.desc = rest
	}
	if over := used - m.width; over > 0 {
		// The model's name is cut before the row is.
		c.model = max(c.model-over, min(c.model, minModel))
	}
	return c
}

// modelName is how a tier's model is shown: "default" when the persona
// leaves it to the harness.
func modelName(s string) string {
	if s == "" || s == "inherit" {
		return "default"
	}
	return s
}

// notInstalled is what the model's column says of a tier that cannot
// start.
const notInstalled = "not installed"

// modelCell is what the model's column says of t: its model, or that it
// cannot start.
func modelCell(t Tier) string {
	if t.Missing != "" {
		return notInstalled
	}
	return modelName(t.Model)
}

// rowView is the line of row r. A tier that cannot start is faint, its
// model's column saying so; the whole row is faint when no tier of the
// item can start.
func (m *model) rowView(r int, c columns) string {
	i := m.rows[r]
	it := m.items[i]
	var t Tier
	if k := m.tier[i]; k < len(it.Tiers) {
		t = it.Tiers[k]
	}
	cell := func(s string, w int) string {
		s = ansi.Truncate(oneLine(s), w, "…")
		return s + strings.Repeat(" ", max(w-ansi.StringWidth(s), 0))
	}
	st := m.styles
	sep := strings.Repeat(" ", gap)
	selected := r == m.cursor
	tier := cell(t.Name, c.tier)
	if len(it.Tiers) > 1 {
		tier = st.tier.Render(tier)
	}
	runtime := tier + sep + cell(t.Harness, c.harness) + sep + cell(modelCell(t), c.model)
	if t.Missing != "" {
		runtime = st.dim.Render(ansi.Strip(runtime))
	}
	body := cell(it.ID, c.id) + sep + st.source.Render(cell(it.Source, c.source)) + sep + runtime
	if c.desc > 0 {
		body += sep + st.dim.Render(cell(it.Description, c.desc))
	}
	switch {
	case selected && !it.startable():
		body = st.selected.Faint(true).Render(ansi.Strip(body))
	case selected:
		body = st.selected.Render(ansi.Strip(body))
	case !it.startable():
		body = st.dim.Render(ansi.Strip(body))
	}
	body = ansi.Truncate(body, max(m.width-marker, 1), "…")
	if selected {
		return st.accent.Render("›") + " " + body
	}
	return "  " + body
}

// details are two lines on the selected item: its intent and tags, and
// its description, cut to the terminal's width.
func (m *model) details() string {
	if len(m.rows) == 0 {
		return "\n\n"
	}
	it := m.items[m.rows[m.cursor]]
	first := it.ID
	if it.Intent != "" {
		first += " · " + it.Intent
	}
	if len(it.Tags) > 0 {
		first += " · " + strings.Join(it.Tags, ", ")
	}
	st := m.styles
	return st.dim.Render(ansi.Truncate(oneLine(first), m.width, "…")) + "\n" +
		st.dim.Render(ansi.Truncate(oneLine(it.Description), m.width, "…")) + "\n"
}

// oneLine is s on one line, its runs of white space one space, and
// only what prints as itself kept (unicode.IsGraphic, as internal/quote
// decides): control characters, and the format characters that reorder
// or hide text (bidirectional overrides and isolates, zero-width
// characters), are dropped. Persona files are anyone's text.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case !unicode.IsGraphic(r):
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// styles are the picker's styles: the terminal's own colours (ANSI 0-15),
// so that they follow its theme.
type styles struct {
	title, dim, header, accent, source, tier, selected, status lipgloss.Style
	help                                                       help.Styles
}

func newStyles() styles {
	dim := lipgloss.NewStyle().Faint(true)
	return styles{
		title:    lipgloss.NewStyle().Bold(true),
		dim:      dim,
		header:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan),
		accent:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Cyan),
		source:   lipgloss.NewStyle().Foreground(lipgloss.Blue),
		tier:     lipgloss.NewStyle().Foreground(lipgloss.Magenta),
		selected: lipgloss.NewStyle().Reverse(true),
		status:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Yellow),
		help: help.Styles{
			ShortKey: lipgloss.NewStyle().Bold(true), ShortDesc: dim, ShortSeparator: dim, Ellipsis: dim,
			FullKey: lipgloss.NewStyle().Bold(true), FullDesc: dim, FullSeparator: dim,
		},
	}
}

// fieldIndex holds the text the query is matched against: each item's
// id, intent and tags whole, and the words of its description one by one
// (a word of the query matched across a whole description, one letter
// here and one there, would match nearly every persona).
type fieldIndex struct {
	texts []string
	// owner is the item of each text, and weight what a match in it
	// adds to the match's score.
	owner  []int
	weight []int
}

// The weights of the fields: a match in the id counts most, so that
// typing "rev" brings code-reviewer before a persona whose description
// says "reviews" (the original's rule).
const (
	weightID          = 0
	weightIntentOrTag = -2
	weightDescription = -5
)

func indexFields(items []Item) fieldIndex {
	var f fieldIndex
	add := func(i int, s string, w int) {
		if s = oneLine(s); s != "" {
			f.texts = append(f.texts, s)
			f.owner = append(f.owner, i)
			f.weight = append(f.weight, w)
		}
	}
	for i, it := range items {
		add(i, it.ID, weightID)
		add(i, it.Intent, weightIntentOrTag)
		for _, t := range it.Tags {
			add(i, t, weightIntentOrTag)
		}
		for _, w := range strings.FieldsFunc(it.Description, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			add(i, w, weightDescription)
		}
	}
	return f
}

// match returns the items of order that match every word of query: each
// word fuzzily (its letters in order) in one of the item's texts. They
// are sorted by their score, the sum over the words of the best match's
// (fuzzy.Find: a match at the start of a word or of the text, or of
// adjacent letters, counts more, every letter of the text left over
// less; plus the field's weight), ties in the order of order. An empty
// query returns order.
func (f fieldIndex) match(query string, order []int) []int {
	words := strings.Fields(query)
	if len(words) == 0 {
		return slices.Clone(order)
	}
	n := 0
	for _, i := range f.owner {
		n = max(n, i+1)
	}
	total := make([]int, n)
	hits := make([]int, n)
	for _, w := range words {
		best := map[int]int{}
		for _, mt := range fuzzy.Find(w, f.texts) {
			i, s := f.owner[mt.Index], mt.Score+f.weight[mt.Index]
			if b, ok := best[i]; !ok || s > b {
				best[i] = s
			}
		}
		for i, s := range best {
			total[i] += s
			hits[i]++
		}
	}
	var out []int
	for _, i := range order {
		if i < n && hits[i] == len(words) {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return total[b] - total[a] })
	return out
}
