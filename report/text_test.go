package report

import (
	"strings"
	"testing"
	"time"
)

// TestNetSpecText: a network policy on one line, "the default" when it
// sets nothing, "presets none" for an empty list of presets.
func TestNetSpecText(t *testing.T) {
	none, dev := []string{}, []string{"dev", "go"}
	tests := []struct {
		s    NetSpec
		want string
	}{
		{NetSpec{Origin: "config.json"}, "the default (config.json)"},
		{NetSpec{Mode: "none", Origin: "--network"}, "mode none (--network)"},
		{NetSpec{Allow: []string{"a.example", "b:8080"}, Presets: &dev, Origin: "batch task t1"}, "allow a.example b:8080, presets dev go (batch task t1)"},
		{NetSpec{Mode: "allowlist", Presets: &none, Origin: "persona"}, "mode allowlist, presets none (persona)"},
	}
	for _, tt := range tests {
		if got := tt.s.text(); got != tt.want {
			t.Errorf("%+v.text() = %q, want %q", tt.s, got, tt.want)
		}
	}
}

// TestConfineText: the write sandbox's lines, the read policy's below a
// confined one, the home directory's default denials counted on one line.
func TestConfineText(t *testing.T) {
	reads := &Reads{
		Deny:  []ReadEntry{{"/h/.ssh", "default"}, {"/h/.aws", "default"}, {"/h/.claude", "harness claude (the run uses its session's copy)"}, {"/srv/secret", "--sandbox-deny-read"}},
		Allow: []ReadEntry{{"/h/.ssh/known_hosts", "config.json sandbox.allowRead"}},
	}
	tests := []struct {
		name string
		c    Confine
		want string
	}{
		{"off", Confine{Mode: "off"}, "write sandbox: off: not confined\n"},
		{"not confined, why", Confine{Mode: "on", Why: "no Landlock"}, "write sandbox: on: not confined: no Landlock\n"},
		{"confined", Confine{Mode: "strict", Confined: true, Writable: []string{"/s\tb"}, Files: []string{"/f"}, Devices: []string{"/dev/null"}, Reads: reads},
			"write sandbox: strict: the harness may write only\n" +
				"  writable: \"/s\\tb\"\n  writable file: /f\n  device: /dev/null\n" +
				"read sandbox: strict: the harness may not read\n" +
				"  unreadable: /srv/secret (--sandbox-deny-read)\n" +
				"  unreadable: 3 credentials and harness configurations in the home directory (~/.ssh, ~/.aws, ~/.claude...: --json lists them)\n" +
				"  readable: /h/.ssh/known_hosts (config.json sandbox.allowRead)\n"},
		{"strict reads", Confine{Mode: "strict", Confined: true, Reads: &Reads{Strict: true, Roots: []ReadEntry{{"/opt", "--sandbox-allow-read"}}}},
			"write sandbox: strict: the harness may write only\n" +
				"read sandbox: strict: the harness reads only the system directories and what it may write, and\n" +
				"  readable: /opt (--sandbox-allow-read)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tt.c.writeText(&b)
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

// TestPlanText: the plan's lines in their order, names quoted, the
// sections of what the plan carries only.
func TestPlanText(t *testing.T) {
	p := Plan{
		Persona: "rev", Tier: "best", Harness: "codex", Resolved: &Resolved{Model: "m1"}, Root: "/r",
		Sandbox: "/s", Workdir: "/s/w", Layers: []Origin{{Layer: "user", File: "/u/rev.json"}},
		Hidden: []string{"AGENTS.md"}, Env: []string{"A=1"}, Sealed: []SealedVar{{Name: "X", Dropped: true}, {Name: "Y", Value: "y"}},
		ConfigFiles: map[string]string{"/s/b": "", "/s/a": ""},
		Mapping:     &Mapping{Harness: "codex", Measured: "0.1"},
		Network:     &NetworkPolicy{User: NetSpec{Origin: "default"}, Narrow: []NetSpec{{Mode: "none", Origin: "--network-narrow"}}},
		Argv:        []string{"codex", "a b"},
	}
	want := "persona: rev@best on codex\nlayer: user /u/rev.json\nmodel: m1\nroot: /r\nsandbox: /s\nruns in: /s/w\n" +
		"hidden: AGENTS.md\nmaterialized: none\nenv: A=1\nenv dropped: X\nenv rewritten: Y=y\n" +
		"config file: /s/a\nconfig file: /s/b\nmapping for codex (measured on 0.1):\n  nothing to map\n" +
		"network: the default (default)\nnetwork narrowed: mode none (--network-narrow)\nargv: codex 'a b'\n"
	var b strings.Builder
	p.WriteText(&b)
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	p.InRepo, p.Sandbox = true, ""
	b.Reset()
	p.WriteText(&b)
	if !strings.Contains(b.String(), "runs in: /s/w (no sandbox)\n") || strings.Contains(b.String(), "sandbox: ") {
		t.Errorf("a run in the repository printed\n%s", b.String())
	}
}

// TestShowText: where the persona comes from, each field's value
// (shortened to 48 characters) with who set it, the tier resolved, flat said.
func TestShowText(t *testing.T) {
	no := false
	s := Show{
		ID: "rev", Source: "project", Path: "/p/rev.json", Form: "flat",
		Chain:   []Origin{{Layer: "built-in", File: "rev.json"}, {Layer: "project", File: "/p/rev.json"}},
		Shadows: &Origin{Layer: "user", File: "/u/rev.json"},
		Spec:    &Persona{ID: "rev", Inherit: &no, Description: strings.Repeat("long ", 12), Runtime: Runtime{Model: "m"}},
		Provenance: map[string][]Origin{
			"model":       {{Layer: "project", File: "/p/rev.json"}, {Layer: "built-in", File: "rev.json"}},
			"description": {{Layer: "project", File: "/p/rev.json"}},
		},
		Resolved: &Resolved{Tier: "default", Harness: "claude", Model: "m", Claude: Sidecar{Channel: "CLAUDE.md", Content: "hi", Mode: "append", Origin: Origin{Layer: "project"}}, Agents: Sidecar{Channel: "AGENTS.md"}},
	}
	want := "persona rev from project (/p/rev.json)\nmerged from: built-in:rev.json <- project:/p/rev.json\n" +
		"shadows: the user rev (/u/rev.json); takes nothing from it: \"inherit\": false\n\n" +
		"FIELD        VALUE                                             LAYER     FILE\n" +
		"description  \"long long long long long long long long long l…  project   /p/rev.json\n" +
		"model        \"m\"                                               project   /p/rev.json\n" +
		"model                                                          built-in  rev.json\n" +
		"\ntier default (flat: one runtime serves every tier): harness claude, model m\n" +
		"CLAUDE.md: inline, 2 bytes (append, from project)\nAGENTS.md: none\n"
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestShowTextBuiltin: a built-in file's name, which says its layer, is
// not prefixed with it again; a field whose value is an object (an
// input) or an inline instruction file (claudeMd) shows a value.
func TestShowTextBuiltin(t *testing.T) {
	f := Origin{Layer: "built-in", File: "built-in:rev.json"}
	main := "main"
	s := Show{
		ID: "rev", Source: "built-in", Path: f.File, Form: "tiered", Chain: []Origin{f},
		Spec: &Persona{ID: "rev", Inputs: map[string]Input{"BASE": {Default: &main}},
			Runtime: Runtime{Model: "m", Sidecars: Sidecars{ClaudeMdContent: "four"}}},
		Provenance: map[string][]Origin{"inputs.BASE": {f}, "claudeMd": {f}, "model": {f}},
		Resolved: &Resolved{Tier: "best", Harness: "claude", Model: "m", Origins: map[string]Origin{"model": f},
			Claude: Sidecar{Channel: "CLAUDE.md", Content: "four", Origin: f}, Agents: Sidecar{Channel: "AGENTS.md", Path: "/a.md"}},
	}
	var b strings.Builder
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, line string }{
		{"chain", "merged from: built-in:rev.json\n"},
		{"origin", "model from built-in:rev.json\n"},
		{"input", `inputs.BASE  {"default":"main"}  built-in  built-in:rev.json` + "\n"},
		{"inline file", "claudeMd     inline, 4 bytes     built-in  built-in:rev.json\n"},
		{"no mode", "CLAUDE.md: inline, 4 bytes (from built-in)\n"},
		{"neither mode nor layer", "AGENTS.md: /a.md\n"},
	} {
		if !strings.Contains(b.String(), tc.line) {
			t.Errorf("%s: no line %q in\n%s", tc.name, tc.line, b.String())
		}
	}
	if strings.Contains(b.String(), "built-in:built-in:") || strings.Contains(b.String(), "built-in built-in:") {
		t.Errorf("a doubled layer in\n%s", b.String())
	}
}

// TestFlatten: dotted names to compact JSON, objects walked into and
// kept whole too, arrays leaves.
func TestFlatten(t *testing.T) {
	got := flatten(map[string]any{"a": map[string]any{"b": 1, "c": []int{1, 2}}, "d": "x"})
	want := map[string]string{"a": `{"b":1,"c":[1,2]}`, "a.b": "1", "a.c": "[1,2]", "d": `"x"`}
	if len(got) != len(want) {
		t.Errorf("flatten = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("flatten[%q] = %q, want %q", k, got[k], v)
		}
	}
}

// TestFilesSummary: the count of the files changed and the first few
// names, sorted and quoted; nothing for none.
func TestFilesSummary(t *testing.T) {
	tests := []struct {
		name string
		f    *Files
		n    int
		want string
	}{
		{"nil", nil, 3, ""},
		{"none", &Files{Conflicts: []Conflict{{Path: "c"}}}, 3, ""},
		{"one", &Files{Created: []string{"out.txt"}}, 3, "1 file changed: out.txt"},
		{"sorted over the kinds", &Files{Created: []string{"b"}, Updated: []string{"c"}, Deleted: []string{"a"}}, 3, "3 files changed: a, b, c"},
		{"more than n", &Files{Updated: []string{"a", "b", "c", "d", "e"}}, 3, "5 files changed: a, b, c and 2 more"},
		{"a name quoted", &Files{Created: []string{"x\x1b[2J"}}, 3, `1 file changed: "x\033[2J"`},
	}
	for _, tc := range tests {
		if got := tc.f.Summary(tc.n); got != tc.want {
			t.Errorf("%s: Summary(%d) = %q, want %q", tc.name, tc.n, got, tc.want)
		}
	}
}

// TestWriteHeld: the session, the count, each file with its kind, sorted
// and quoted; a nil list names the session alone.
func TestWriteHeld(t *testing.T) {
	var b strings.Builder
	(&Files{Created: []string{"new.txt"}, Updated: []string{"a\nb"}, Deleted: []string{"z"}, Conflicts: []Conflict{{Path: "m"}}}).WriteHeld(&b, "s1")
	want := "held for review: s1 (4 files)\n  updated: \"a\\nb\"\n  conflict: m\n  created: new.txt\n  deleted: z\n"
	if b.String() != want {
		t.Errorf("WriteHeld =\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	(*Files)(nil).WriteHeld(&b, "s1")
	if b.String() != "held for review: s1\n" {
		t.Errorf("WriteHeld of nil = %q", b.String())
	}
}

// TestPublishedText: the branch, the repository and the count; nothing
// pushed said so.
func TestPublishedText(t *testing.T) {
	if got, want := (Published{Repo: "https://h/r.git", Branch: "workforce/e-1", Files: 2}).Text(), "branch workforce/e-1 pushed to https://h/r.git, 2 files changed"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if got := (Published{Repo: "r"}).Text(); got != "nothing pushed" {
		t.Errorf("Text() of nothing = %q", got)
	}
}

// TestSyncReportText: each file a line under its label, names the agent
// chose quoted, conflicts and failures in words.
func TestSyncReportText(t *testing.T) {
	r := SyncReport{Created: []string{"a.go"}, Updated: []string{"b\x1b[2J.go"}, Deleted: []string{}, Unapplied: []string{"gone.txt"},
		Conflicts: []Conflict{{Path: "c.go", Real: "c.go", Saved: "/s/c.go"}, {Path: "d.go", Real: "d.go"}},
		Failed:    []Failure{{Path: "e.go", Error: "permission denied"}}}
	var b strings.Builder
	r.WriteText(&b)
	want := "created: a.go\nupdated: \"b\\033[2J.go\"\ndeleted in the sandbox, kept: gone.txt\n" +
		"conflict: c.go changed in the repository too; yours: c.go; the agent's: /s/c.go\n" +
		"conflict: d.go was deleted by the agent but changed in the repository; kept: d.go\n" +
		"failed: e.go: permission denied\n"
	if b.String() != want {
		t.Errorf("WriteText =\n%s\nwant\n%s", b.String(), want)
	}
}

// TestAge: an age in the unit people read it in.
func TestAge(t *testing.T) {
	for d, want := range map[time.Duration]string{59 * time.Second: "59s", 90 * time.Second: "1m", 3 * time.Hour: "3h", 47 * time.Hour: "47h", 72 * time.Hour: "3d"} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}
