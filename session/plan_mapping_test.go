package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
)

// TestPlanMapping checks that a plan carries the harness's mapping, keeps
// a refusal for the caller (a dry run still shows the plan), allows it
// with a warning per value, and gives codex an instruction budget that
// holds the materialized AGENTS.md.
func TestPlanMapping(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("persona rule\n", 3000) // 39000 bytes
	tests := []struct {
		name          string
		deny          []string
		allowUnmapped bool
		text          string
		wantRefusal   string
		wantWarning   string
		wantArg       string
	}{
		{name: "mapped", deny: []string{"WebFetch"}, text: "short", wantArg: `web_search="disabled"`},
		{name: "refused", deny: []string{"Bash(git push:*)"}, text: "short",
			wantRefusal: `codex cannot apply permissions.deny "Bash(git push:*)"`},
		{name: "allowed", deny: []string{"Bash(git push:*)"}, allowUnmapped: true, text: "short",
			wantWarning: `codex does not apply permissions.deny "Bash(git push:*)" (--allow-unmapped)`},
		{name: "a long AGENTS.md", text: long, wantArg: "project_doc_max_bytes=39000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &persona.Resolved{ID: "rev", Tier: "best", Harness: "codex", Model: "gpt-5",
				Permissions: persona.Permissions{Deny: tt.deny},
				Agents:      persona.Sidecar{Channel: persona.ChannelAgents, Mode: persona.ModeOverwrite, Content: tt.text}}
			p, err := NewPlan(PlanOptions{Home: t.TempDir(), Persona: "rev", Resolved: r, Root: root, Cwd: root,
				Env: []string{"PATH=/nowhere"}, AllowUnmapped: tt.allowUnmapped,
				Profile: func(h string) (discover.Profile, string, error) {
					prof, _ := discover.ForHarness(h)
					return prof, "", nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if p.Mapping == nil || p.Mapping.Harness != "codex" {
				t.Fatalf("Mapping = %+v, want codex's", p.Mapping)
			}
			var ue *harness.UnmappedError
			switch err := p.Refusal(); {
			case tt.wantRefusal == "" && err != nil:
				t.Errorf("Refusal() = %v, want nil", err)
			case tt.wantRefusal != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tt.wantRefusal)):
				t.Errorf("Refusal() = %v, want an UnmappedError containing %q", err, tt.wantRefusal)
			}
			warned := false
			for _, w := range p.Warnings {
				warned = warned || tt.wantWarning != "" && strings.Contains(w, tt.wantWarning)
			}
			if warned != (tt.wantWarning != "") {
				t.Errorf("Warnings = %q, want one containing %q", p.Warnings, tt.wantWarning)
			}
			if tt.wantArg != "" && !strings.Contains(strings.Join(p.Argv, " "), tt.wantArg) {
				t.Errorf("argv %q lacks %s", p.Argv, tt.wantArg)
			}
		})
	}
}
