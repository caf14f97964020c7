package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestListText: the text forms of the lists, as the commands print them
// without --json: unknown values as "-", names quoted, counts of sidecars
// and skills by kind and number.
func TestListText(t *testing.T) {
	cost := 0.01234
	hist := HistoryRuns{
		{Persona: "rev", Tier: "best", Harness: "claude", Model: "opus", Project: "/p", Status: "succeeded", DurationMS: 61400, CostUSD: &cost, SessionID: "s1", Resumable: true},
		{Persona: "a\tb", Tier: "fast", Harness: "codex", Project: "/q", Status: "failed", DurationMS: 400},
	}
	outdated := OutdatedSources{
		{Source: "git+file:///r", Locked: "abc", Current: "def", Outdated: true, Why: "the ref moved"},
		{Source: "./pack", Locked: "x", Current: "x"},
		{Source: "@acme/p", Outdated: true, Why: "gone"},
	}
	sources := Sources{Sources: []Source{{Name: "project", Dir: "/p/.agentworkforce", Exists: true, Personas: 2}, {Name: "user", Dir: "/h/personas"}, {Name: "builtin", Exists: true, Personas: 9}}}
	inst := Install{Target: "/t", Installed: []Installed{
		{ID: "a", File: "/t/a.json"},
		{ID: "b", File: "/t/b.json", Assets: []string{"b__assets/p.md"}},
		{ID: "c", File: "/t/c.json", Assets: []string{"skills/s/SKILL.md", "skills/s/x.md"}},
		{ID: "d", File: "/t/d.json", Assets: []string{"d.md", "e.md", "skills/s/SKILL.md"}},
	}}
	exports := Exports{{Persona: "p", Tier: "best", File: "/a/p.md", Content: "one\n"}, {Persona: "p", Tier: "fast", File: "/a/p-fast.md", Content: "two\n"}}
	imports := Imports{{ID: "a", File: "/t/a.json", Source: "/s/a.md"}}
	tests := []struct {
		name  string
		write func(*strings.Builder)
		want  string
	}{
		{"history", func(b *strings.Builder) { _ = hist.WriteText(b, "/h/history.jsonl") },
			"PERSONA  TIER  HARNESS  MODEL  PROJECT  STATUS     DURATION  COST     SESSION  RESUMABLE\n" +
				"rev      best  claude   opus   /p       succeeded  1m1s      $0.0123  s1       yes\n" +
				"\"a\\tb\"   fast  codex    -      /q       failed     0s        -        -        no\n"},
		{"history, none", func(b *strings.Builder) { _ = HistoryRuns(nil).WriteText(b, "/h/a b\tc.jsonl") },
			"no runs in the history (\"/h/a b\\tc.jsonl\")\n"},
		{"outdated", func(b *strings.Builder) { outdated.WriteText(b) },
			"git+file:///r\tabc\tdef\tthe ref moved\n@acme/p\t-\t-\tgone\n"},
		{"sources", func(b *strings.Builder) { _ = sources.WriteText(b) },
			"LAYER    PERSONAS  DIR\nproject  2         /p/.agentworkforce\nuser     0         /h/personas (missing)\nbuiltin  9         \n"},
		{"install", func(b *strings.Builder) { inst.WriteText(b) },
			"installed a: /t/a.json\ninstalled b: /t/b.json (+1 sidecars)\ninstalled c: /t/c.json (+2 skills)\ninstalled d: /t/d.json (+2 sidecars, +1 skills)\n"},
		{"create", func(b *strings.Builder) { inst.WriteCreatedText(b) },
			"created a: /t/a.json\ncreated b: /t/b.json (+1 sidecar)\ncreated c: /t/c.json (+2 skills)\ncreated d: /t/d.json (+2 sidecars) (+1 skill)\n" +
				"run it: workforce run a\nrun it: workforce run b\nrun it: workforce run c\nrun it: workforce run d\n"},
		{"export", func(b *strings.Builder) { exports.WriteText(b) }, "exported p@best: /a/p.md\nexported p@fast: /a/p-fast.md\n"},
		{"export --dry-run", func(b *strings.Builder) { exports.WriteFilesText(b) }, "# /a/p.md\none\n# /a/p-fast.md\ntwo\n"},
		{"export --json", func(b *strings.Builder) {
			for _, e := range exports.WithoutContent() {
				fmt.Fprintf(b, "%s %q\n", e.File, e.Content)
			}
		}, "/a/p.md \"\"\n/a/p-fast.md \"\"\n"},
		{"import", func(b *strings.Builder) { imports.WriteText(b) }, "imported a: /t/a.json (from /s/a.md)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tt.write(&b)
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}
