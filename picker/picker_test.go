package picker

import (
	"bytes"
	"context"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// items are personas as the picker gets them, in the order of list.
var items = []Item{
	{ID: "code-reviewer", Intent: "review", Description: "Reviews a change for correctness.", Tags: []string{"review", "quality"}, Source: "built-in",
		Tiers: []Tier{{Name: "best", Harness: "claude", Model: "opus"}, {Name: "best-value", Harness: "opencode", Model: "openai/gpt-5-mini"}, {Name: "minimum", Harness: "codex"}}, Default: 1},
	{ID: "debugger", Intent: "debug", Description: "Finds the root cause of a failure.", Source: "built-in",
		Tiers: []Tier{{Name: "best", Harness: "claude", Model: "opus"}}},
	{ID: "gamma", Intent: "gathering", Description: "Gathers data and reports what it reviews.", Tags: []string{"collect"}, Source: "user",
		Tiers: []Tier{{Name: "best", Harness: "claude", Model: "g1"}, {Name: "minimum", Harness: "codex", Model: "g2"}}},
	{ID: "release-auditor", Intent: "audit", Description: "Audits a release branch.", Source: "dir:1",
		Tiers: []Tier{{Name: "best", Harness: "codex", Model: "inherit"}}},
	{ID: "test-writer", Intent: "test", Description: "Writes tests that pin down behaviour.", Tags: []string{"testing"}, Source: "project",
		Tiers: []Tier{{Name: "best", Harness: "codex", Model: "m"}}},
}

// ids are the ids of the rows of m.
func ids(m *model) []string {
	var out []string
	for _, r := range m.rows {
		out = append(out, m.items[r].ID)
	}
	return out
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name       string
		recent     []string
		want       []string
		wantRecent int
	}{
		{name: "no history", want: []string{"code-reviewer", "debugger", "gamma", "release-auditor", "test-writer"}},
		{name: "recent first, newest first", recent: []string{"test-writer", "gamma"},
			want: []string{"test-writer", "gamma", "code-reviewer", "debugger", "release-auditor"}, wantRecent: 2},
		{name: "three at most", recent: []string{"test-writer", "gamma", "debugger", "code-reviewer"},
			want: []string{"test-writer", "gamma", "debugger", "code-reviewer", "release-auditor"}, wantRecent: 3},
		{name: "gone and repeated ids left out", recent: []string{"gone", "gamma", "gamma", "old", "debugger", "test-writer"},
			want: []string{"gamma", "debugger", "test-writer", "code-reviewer", "release-auditor"}, wantRecent: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(items, tt.recent)
			if got := ids(m); !slices.Equal(got, tt.want) || m.nRecent != tt.wantRecent {
				t.Errorf("rows = %q (%d recent), want %q (%d)", got, m.nRecent, tt.want, tt.wantRecent)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"", []string{"gamma", "code-reviewer", "debugger", "release-auditor", "test-writer"}},
		{"   ", []string{"gamma", "code-reviewer", "debugger", "release-auditor", "test-writer"}},
		// The id first, then the personas whose intent, tag or description
		// says it.
		{"rev", []string{"code-reviewer", "gamma"}},
		{"review", []string{"code-reviewer", "gamma"}},
		// By intent, by tag, by a word of the description.
		{"audit", []string{"release-auditor"}},
		{"collect", []string{"gamma"}},
		{"behaviour", []string{"test-writer"}},
		// Fuzzy: the letters in order.
		{"tstwr", []string{"test-writer"}},
		{"CODE", []string{"code-reviewer"}},
		// Every word must match, each anywhere.
		{"gath rev", []string{"gamma"}},
		{"debug rev", nil},
		// Not across the words of a description.
		{"cause failure root", []string{"debugger"}},
		{"zzz", nil},
	}
	for _, tt := range tests {
		m := newModel(items, []string{"gamma"})
		m.input.SetValue(tt.query)
		m.filter()
		if got := ids(m); !slices.Equal(got, tt.want) {
			t.Errorf("filter(%q) = %q, want %q", tt.query, got, tt.want)
		}
	}
}

// pressAll types keys into m and reports whether the picker quit at the
// last; a key after it quit fails the test.
func pressAll(t *testing.T, m *model, keys []string) bool {
	t.Helper()
	quit := false
	for _, k := range keys {
		if quit {
			t.Fatalf("key %s after the picker quit", k)
		}
		_, cmd := m.Update(press(k))
		if cmd != nil {
			_, quit = cmd().(tea.QuitMsg)
		}
	}
	return quit
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		name        string
		keys        []string
		want        *Choice
		quit        bool
		interrupted bool
	}{
		{name: "enter runs the first row, its default tier", keys: []string{"enter"}, want: &Choice{ID: "code-reviewer", Tier: "best-value"}},
		{name: "down", keys: []string{"down", "enter"}, want: &Choice{ID: "debugger", Tier: "best"}},
		{name: "up wraps to the last", keys: []string{"up", "enter"}, want: &Choice{ID: "test-writer", Tier: "best"}},
		{name: "down wraps to the first", keys: []string{"up", "down", "enter"}, want: &Choice{ID: "code-reviewer", Tier: "best-value"}},
		{name: "tab cycles the tier", keys: []string{"tab", "enter"}, want: &Choice{ID: "code-reviewer", Tier: "minimum"}},
		{name: "tab wraps", keys: []string{"tab", "tab", "enter"}, want: &Choice{ID: "code-reviewer", Tier: "best"}},
		{name: "shift+tab goes back", keys: []string{"shift+tab", "enter"}, want: &Choice{ID: "code-reviewer", Tier: "best"}},
		{name: "tier kept per persona", keys: []string{"tab", "down", "down", "tab", "up", "up", "enter"}, want: &Choice{ID: "code-reviewer", Tier: "minimum"}},
		{name: "one tier: tab does nothing", keys: []string{"down", "tab", "enter"}, want: &Choice{ID: "debugger", Tier: "best"}},
		{name: "typing filters", keys: []string{"g", "a", "m", "enter"}, want: &Choice{ID: "gamma", Tier: "best"}},
		{name: "backspace widens", keys: []string{"z", "z", "backspace", "backspace", "down", "enter"}, want: &Choice{ID: "debugger", Tier: "best"}},
		{name: "typing resets the cursor", keys: []string{"down", "down", "r", "e", "v", "enter"}, want: &Choice{ID: "code-reviewer", Tier: "best-value"}},
		{name: "enter with no rows does nothing", keys: []string{"z", "z", "z", "enter", "esc"}, quit: true},
		{name: "esc quits", keys: []string{"down", "esc"}, quit: true},
		{name: "ctrl+c interrupts", keys: []string{"ctrl+c"}, quit: true, interrupted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(items, nil)
			quit := pressAll(t, m, tt.keys)
			if !quit {
				t.Fatalf("keys %q: the picker did not end", tt.keys)
			}
			switch {
			case tt.want != nil && (m.choice == nil || !reflect.DeepEqual(*m.choice, *tt.want)):
				t.Errorf("keys %q: choice %v, want %v", tt.keys, m.choice, *tt.want)
			case tt.want == nil && m.choice != nil:
				t.Errorf("keys %q: choice %v, want none", tt.keys, *m.choice)
			case m.interrupted != tt.interrupted:
				t.Errorf("keys %q: interrupted %v, want %v", tt.keys, m.interrupted, tt.interrupted)
			}
		})
	}
}

// screen is the view of m at width x height, without styles, as lines.
func screen(t *testing.T, m *model, width, height int) []string {
	t.Helper()
	m.Update(tea.WindowSizeMsg{Width: width, Height: height})
	v := m.View()
	if !v.AltScreen {
		t.Error("the picker is not on the alternate screen")
	}
	lines := strings.Split(strings.TrimSuffix(ansi.Strip(v.Content), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	if len(lines) != height {
		t.Errorf("%d lines at height %d, want the screen's:\n%s", len(lines), height, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if w := ansi.StringWidth(l); w > width {
			t.Errorf("line %q is %d wide, more than the screen's %d", l, w, width)
		}
	}
	return lines
}

func TestView(t *testing.T) {
	m := newModel(items, []string{"gamma"})
	lines := screen(t, m, 80, 24)
	want := []string{
		"workforce · pick a persona to run here",
		"› type to filter by id, intent, tags or description",
		"",
		"RECENT",
		"› gamma            user      best        claude    g1                 Gathers d…",
		"ALL PERSONAS",
		"  code-reviewer    built-in  best-value  opencode  openai/gpt-5-mini  Reviews a…",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
	if got := lines[21] + "|" + lines[22]; got != "gamma · gathering · collect|Gathers data and reports what it reviews." {
		t.Errorf("details line = %q, want the selected persona's description", got)
	}
	if got := lines[23]; got != "↑/↓ move • tab tier • enter run • esc quit" {
		t.Errorf("help line = %q", got)
	}
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "  release-auditor  dir:1     best        codex     default ")
	}) {
		t.Errorf("no row of release-auditor with its model shown as default:\n%s", strings.Join(lines, "\n"))
	}

	// A narrow terminal: the description goes first, then what does not
	// fit.
	lines = screen(t, m, 70, 24)
	if got := lines[4]; got != "› gamma            user      best        claude    g1" {
		t.Errorf("at 70 columns, row = %q", got)
	}
	lines = screen(t, m, 40, 24)
	if got := lines[6]; got != "  code-reviewer    built-in  best-value…" {
		t.Errorf("at 40 columns, row = %q", got)
	}

	// A query matching nothing says so.
	m.input.SetValue("zzz")
	m.filter()
	lines = screen(t, m, 80, 24)
	if lines[0] != "workforce · pick a persona to run here · 0 matches" || lines[3] != "MATCHES" || !strings.HasPrefix(lines[4], "no persona's id") {
		t.Errorf("no match screen:\n%s", strings.Join(lines, "\n"))
	}
}

// TestScroll: on a short screen the list scrolls to keep the cursor on
// it, the first row's header with it.
func TestScroll(t *testing.T) {
	m := newModel(items, []string{"gamma"})
	const h = 10 // 3 list lines
	screen(t, m, 80, h)
	for range len(items) - 1 {
		m.Update(press("down"))
		lines := screen(t, m, 80, h)
		sel := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "› ") && l != lines[1] })
		if sel < linesAbove || sel >= h-linesBelow {
			t.Fatalf("cursor at line %d, off the list:\n%s", sel, strings.Join(lines, "\n"))
		}
	}
	m.Update(press("down")) // wraps to the first
	lines := screen(t, m, 80, h)
	if lines[3] != "RECENT" || !strings.HasPrefix(lines[4], "› gamma") {
		t.Errorf("after wrapping, the top of the list:\n%s", strings.Join(lines, "\n"))
	}
}

// TestUntrustedText: control characters of a persona's text never reach
// the terminal.
func TestUntrustedText(t *testing.T) {
	evil := []Item{{ID: "x", Description: "line one\n\x1b]0;title\x07\x1b[2Jline two\ttab", Intent: "a\rb", Source: "user",
		Tags:  []string{"rev\u202eesrever", "zero\u200bwidth\ufeff"},
		Tiers: []Tier{{Name: "best", Harness: "claude", Model: "m\x1b[31m\u2066isolated\u2069\u009b31m"}}}}
	m := newModel(evil, nil)
	v := m.View().Content
	// Control characters, and what reorders or hides text (bidirectional
	// overrides and isolates, zero-width and other format characters),
	// as internal/quote escapes them elsewhere.
	for _, bad := range []string{"\x1b]0;title", "\x1b[2J", "\x07", "\r", "\t", "\x1b[31m", "\u202e", "\u2066", "\u2069", "\u200b", "\ufeff", "\u009b"} {
		if strings.Contains(v, bad) {
			t.Errorf("the view holds %q", bad)
		}
	}
	if !strings.Contains(ansi.Strip(v), "line one ]0;title[2Jline two tab") {
		t.Errorf("the description is not on one line, its control characters dropped:\n%s", ansi.Strip(v))
	}
}

// TestRun runs the program on a byte stream as a terminal would send
// it, with its output to a buffer.
func TestRun(t *testing.T) {
	tests := []struct {
		input string
		want  Choice
		err   error
	}{
		{input: "gam\t\r", want: Choice{ID: "gamma", Tier: "minimum"}},
		{input: "\x1b[B\r", want: Choice{ID: "debugger", Tier: "best"}},
		{input: "\x03", err: ErrInterrupted},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := Run(ctx, Options{Items: items, In: strings.NewReader(tt.input), Out: &out, Environ: []string{"TERM=xterm", "NO_COLOR=1"}})
		cancel()
		if !reflect.DeepEqual(got, tt.want) || !errors.Is(err, tt.err) {
			t.Errorf("Run(%q) = %v, %v; want %v, %v", tt.input, got, err, tt.want, tt.err)
		}
		// The alternate screen, left at the end.
		if o := out.String(); !strings.Contains(o, "\x1b[?1049h") || !strings.Contains(o, "\x1b[?1049l") {
			t.Errorf("Run(%q) wrote %q: not the alternate screen, or not restored", tt.input, o)
		}
	}
}

// asks are items with inputs to ask for and tiers that cannot start.
var asks = []Item{
	{ID: "debugger", Intent: "debug", Description: "Finds the root cause of a failure.", Source: "built-in",
		Tiers:  []Tier{{Name: "best", Harness: "claude", Model: "opus"}},
		Inputs: []Input{{Name: "SYMPTOM", Description: "what goes wrong: an error message, a failing test"}, {Name: "AREA", Description: "where"}}},
	{ID: "mixed", Description: "Runs where it can.", Source: "user",
		Tiers: []Tier{{Name: "best", Harness: "claude", Model: "m1", Missing: "claude is not installed: npm install -g @anthropic-ai/claude-code"},
			{Name: "minimum", Harness: "opencode", Model: "m2"}}},
	{ID: "stuck", Description: "Runs nowhere.", Source: "user",
		Tiers: []Tier{{Name: "best", Harness: "codex", Model: "m3", Missing: "codex is not installed: npm install -g @openai/codex"}}},
}

// TestAsk: a persona's inputs are asked for after Enter, one at a time,
// a blank answer asked again; a tier that cannot start is not picked,
// and the status line says why.
func TestAsk(t *testing.T) {
	tests := []struct {
		name        string
		keys        []string
		want        *Choice
		quit        bool
		interrupted bool
		status      string
	}{
		{name: "enter asks for each input", keys: []string{"enter", "b", "u", "g", "enter", "x", "enter"}, quit: true,
			want: &Choice{ID: "debugger", Tier: "best", Inputs: map[string]string{"SYMPTOM": "bug", "AREA": "x"}}},
		{name: "a blank answer is asked again", keys: []string{"enter", " ", "enter"},
			status: "SYMPTOM needs a value: type it, or esc to quit"},
		{name: "and then taken", keys: []string{"enter", " ", "enter", "a", " ", "b", " ", "enter", "c", "enter"}, quit: true,
			want: &Choice{ID: "debugger", Tier: "best", Inputs: map[string]string{"SYMPTOM": "a b", "AREA": "c"}}},
		{name: "the first answer is kept, the second asked", keys: []string{"enter", "a", "enter", "enter"},
			status: "AREA needs a value: type it, or esc to quit"},
		{name: "esc quits while asking", keys: []string{"enter", "a", "enter", "esc"}, quit: true},
		{name: "ctrl+c interrupts while asking", keys: []string{"enter", "ctrl+c"}, quit: true, interrupted: true},
		{name: "a tier that cannot start says why", keys: []string{"down", "enter"},
			status: "claude is not installed: npm install -g @anthropic-ai/claude-code · tab: another tier"},
		{name: "another tier starts", keys: []string{"down", "enter", "tab", "enter"}, quit: true,
			want: &Choice{ID: "mixed", Tier: "minimum"}},
		{name: "any other key clears the status", keys: []string{"down", "enter", "tab"}},
		{name: "a persona none of whose tiers can start", keys: []string{"up", "enter"},
			status: "codex is not installed: npm install -g @openai/codex · no tier of stuck can start"},
		{name: "esc still quits", keys: []string{"up", "enter", "esc"}, quit: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newModel(asks, nil)
			quit := pressAll(t, m, tt.keys)
			if quit != tt.quit {
				t.Fatalf("keys %q: quit %v, want %v", tt.keys, quit, tt.quit)
			}
			switch {
			case tt.want != nil && (m.choice == nil || !reflect.DeepEqual(*m.choice, *tt.want)):
				t.Errorf("keys %q: choice %v, want %v", tt.keys, m.choice, *tt.want)
			case tt.want == nil && m.choice != nil:
				t.Errorf("keys %q: choice %v, want none", tt.keys, *m.choice)
			case m.interrupted != tt.interrupted:
				t.Errorf("keys %q: interrupted %v, want %v", tt.keys, m.interrupted, tt.interrupted)
			case m.status != tt.status:
				t.Errorf("keys %q: status %q, want %q", tt.keys, m.status, tt.status)
			}
		})
	}
}

// TestAskView: the rows of tiers that cannot start say so, faint; the
// status line is above the details; the screen asking for an input shows
// its name and description, and fills the terminal.
func TestAskView(t *testing.T) {
	m := newModel(asks, nil)
	lines := screen(t, m, 80, 24)
	want := map[int]string{
		4:  "› debugger  built-in  best     claude    opus           Finds the root cause of…",
		5:  "  mixed     user      best     claude    not installed  Runs where it can.",
		6:  "  stuck     user      best     codex     not installed  Runs nowhere.",
		20: "",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d = %q, want %q", i, lines[i], w)
		}
	}
	faint := regexp.MustCompile(`\x1b\[[0-9;]*2[;m]`)
	for _, r := range []struct {
		row   int
		faint string
	}{{0, ""}, {1, "best     claude    not installed"}, {2, "stuck     user      best     codex     not installed"}} {
		got := m.rowView(r.row, m.columns())
		var faintText []string
		for _, part := range strings.Split(got, "\x1b[") {
			if strings.HasPrefix(part, "2m") || strings.HasPrefix(part, "2;") {
				faintText = append(faintText, strings.TrimRight(ansi.Strip("\x1b["+part), " "))
			}
		}
		if r.faint == "" && faint.MatchString(got) || r.faint != "" && !slices.ContainsFunc(faintText, func(s string) bool { return strings.Contains(s, r.faint) }) {
			t.Errorf("row %d = %q: faint text %q, want %q", r.row, got, faintText, r.faint)
		}
	}

	m.Update(press("down"))
	m.Update(press("enter"))
	lines = screen(t, m, 80, 24)
	// Too long for one line: it takes two, between its parts, and the
	// list one line less.
	if got := lines[19] + "|" + lines[20]; got != "claude is not installed: npm install -g @anthropic-ai/claude-code|tab: another tier" {
		t.Errorf("status lines = %q", got)
	}
	if lines[18] != "" || lines[21] != "mixed" {
		t.Errorf("around the status:\n%s", strings.Join(lines, "\n"))
	}
	lines = screen(t, m, 100, 24)
	if got := lines[19] + "|" + lines[20]; got != "|claude is not installed: npm install -g @anthropic-ai/claude-code · tab: another tier" {
		t.Errorf("at 100 columns, status lines = %q", got)
	}
	m.Update(press("tab"))
	if lines = screen(t, m, 80, 24); lines[20] != "" {
		t.Errorf("after tab, the status line = %q", lines[20])
	}

	m.Update(press("up"))
	m.Update(press("enter"))
	lines = screen(t, m, 80, 24)
	for i, w := range map[int]string{
		0:  "workforce · run debugger@best · input 1 of 2",
		2:  "SYMPTOM: what goes wrong: an error message, a failing test",
		3:  "›",
		20: "",
		21: "debugger · debug",
		23: "enter answer • esc quit",
	} {
		if lines[i] != w {
			t.Errorf("asking, line %d = %q, want %q", i, lines[i], w)
		}
	}
	if c := m.View().Cursor; c == nil || c.Position.Y != 3 {
		t.Errorf("asking, the cursor is at %+v, want on line 3", c)
	}
	// Narrow: the description is wrapped; short: the answer's line stays.
	lines = screen(t, m, 30, 24)
	if lines[2] != "SYMPTOM: what goes wrong: an" || lines[3] != "error message, a failing test" || lines[4] != "›" {
		t.Errorf("at 30 columns:\n%s", strings.Join(lines, "\n"))
	}
	lines = screen(t, m, 30, 6)
	if lines[1] != "›" {
		t.Errorf("at 6 lines:\n%s", strings.Join(lines, "\n"))
	}
}

// TestRunAsks runs the program on what a user types: the inputs answered
// on the second screen, a tier that cannot start passed over.
func TestRunAsks(t *testing.T) {
	tests := []struct {
		input string
		want  Choice
		err   error
	}{
		{input: "\rthe build fails\r\rcmd/x\r", want: Choice{ID: "debugger", Tier: "best", Inputs: map[string]string{"SYMPTOM": "the build fails", "AREA": "cmd/x"}}},
		{input: "\x1b[B\r\t\r", want: Choice{ID: "mixed", Tier: "minimum"}},
		{input: "\x1b[A\r\r\x1b", err: ErrQuit},
		{input: "\rx\x03", err: ErrInterrupted},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		got, err := Run(ctx, Options{Items: asks, In: strings.NewReader(tt.input), Out: &out, Environ: []string{"TERM=xterm", "NO_COLOR=1"}})
		cancel()
		if !reflect.DeepEqual(got, tt.want) || !errors.Is(err, tt.err) {
			t.Errorf("Run(%q) = %v, %v; want %v, %v", tt.input, got, err, tt.want, tt.err)
		}
	}
}

func TestStartable(t *testing.T) {
	missing := Tier{Name: "best", Harness: "claude", Missing: "claude is not installed"}
	tests := []struct {
		tiers []Tier
		want  bool
	}{
		{nil, true}, // not known not to start: run says
		{[]Tier{{Name: "best", Harness: "claude"}}, true},
		{[]Tier{missing, {Name: "minimum", Harness: "codex"}}, true},
		{[]Tier{missing}, false},
		{[]Tier{missing, missing}, false},
	}
	for _, tt := range tests {
		if got := (Item{ID: "x", Tiers: tt.tiers}).startable(); got != tt.want {
			t.Errorf("startable(%+v) = %v, want %v", tt.tiers, got, tt.want)
		}
	}
}

// FuzzAnswerView: whatever a persona file says of an input, and whatever
// the status, the screen asking for it fits the terminal and holds no
// control character of the persona's text.
func FuzzAnswerView(f *testing.F) {
	f.Add("SYMPTOM", "what goes wrong: an error message, a failing test", "claude is not installed: npm install -g x · tab: another tier", 80, 24)
	f.Add("A\x1b[2J", "line\none\u202e\x07", "", 12, 9)
	f.Add("N", strings.Repeat("word ", 60), strings.Repeat("long ", 40), 30, 10)
	f.Fuzz(func(t *testing.T, name, desc, status string, width, height int) {
		width, height = 10+abs(width)%150, 9+abs(height)%60
		its := []Item{{ID: "p", Tiers: []Tier{{Name: "best", Harness: "claude"}}, Inputs: []Input{{Name: name, Description: desc}}}}
		m := newModel(its, nil)
		m.Update(tea.WindowSizeMsg{Width: width, Height: height})
		m.Update(press("enter"))
		if m.asking < 0 {
			t.Fatal("enter did not ask for the input")
		}
		m.status = status
		v := m.View()
		lines := strings.Split(strings.TrimSuffix(ansi.Strip(v.Content), "\n"), "\n")
		if len(lines) != height {
			t.Errorf("%d lines at height %d", len(lines), height)
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("line %q is %d wide, more than %d", l, w, width)
			}
			if strings.ContainsFunc(l, func(r rune) bool { return !unicode.IsGraphic(r) }) {
				t.Errorf("line %q holds a character that does not print as itself", l)
			}
		}
		if c := v.Cursor; c == nil || c.Position.Y < 0 || c.Position.Y >= height || !strings.HasPrefix(lines[c.Position.Y], "›") {
			t.Errorf("the cursor %+v is not on the answer's line:\n%s", c, strings.Join(lines, "\n"))
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
