package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/seed-3bc194a6/workforce/skill"
	"github.com/seed-3bc194a6/workforce/toreport"
)

// The golden files of testdata/report hold the JSON the commands printed
// before their output had types of its own (package report): each was
// made once by printing the internal value itself, as the commands did.
// TestReportGolden checks that the conversion of the same values prints
// the same bytes, so that the output of every command stays what it was
// whatever the internal types become. Never regenerate them from this
// code: a difference is a change of the command-line contract.

func yes() *bool { b := true; return &b }
func no() *bool  { b := false; return &b }

func fullSpec() *persona.Spec {
	def := "x"
	return &persona.Spec{
		Schema: "https://example.com/s.json", ID: "full", Extends: "base", Inherit: no(), Intent: "review",
		Tags: []string{"a", "b"}, Description: "<Full> & \u2028",
		Tiers: map[string]*persona.Runtime{
			"best":    {Harness: "claude", Model: "opus", HarnessSettings: &persona.HarnessSettings{Reasoning: "high", TimeoutSeconds: 9}, Sidecars: persona.Sidecars{ClaudeMd: "/c.md", ClaudeMdMode: persona.ModeExtend}},
			"minimum": nil,
			"cheap":   {},
		},
		DefaultTier: "best",
		Skills:      []persona.Skill{{ID: "s", Source: "./s", Description: "d", Files: map[string]string{"SKILL.md": "x", "a": "b"}, Path: "/hidden"}},
		Inputs:      map[string]persona.Input{"Z": {}, "A": {Description: "d", Env: "E", Default: &def, Optional: true, Picker: &persona.InputPicker{Provider: "p", Resource: "r"}}},
		Env:         map[string]string{"B": "2", "A": "1"},
		MCPServers:  map[string]persona.MCPServer{"m": {Type: "stdio", URL: "u", Headers: map[string]string{"h": "v"}, Command: "c", Args: []string{"a"}, Env: map[string]string{"e": "f"}}, "empty": {}},
		Permissions: &persona.Permissions{Allow: []string{"Read"}, Deny: []string{}, Mode: "plan"},
		Mount:       &persona.Mount{Enabled: no(), IgnoredPatterns: []string{"*.log"}, ReadonlyPatterns: []string{}},
		Native:      &persona.Native{Claude: json.RawMessage(`{"b": 1, "a": [1, 2]}`), Codex: json.RawMessage(`{}`)},
		Runtime: persona.Runtime{Harness: "codex", Model: "o3", SystemPrompt: "be \"good\"",
			HarnessSettings: &persona.HarnessSettings{SandboxMode: "s", ApprovalPolicy: "a", WorkspaceWriteNetworkAccess: yes(), WebSearch: no(), DangerouslyBypassApprovalsAndSandbox: yes()},
			Sidecars:        persona.Sidecars{ClaudeMd: "/a", ClaudeMdMode: "overwrite", ClaudeMdContent: "c", AgentsMd: "/b", AgentsMdMode: "extend", AgentsMdContent: "d"}},
		CloudFields: persona.CloudFields{Sandbox: yes(), Cloud: no(), UseSubscription: yes(), Integrations: json.RawMessage(`[1]`),
			Capabilities: json.RawMessage(`{"x":true}`), Memory: json.RawMessage(`null`), Relay: json.RawMessage(`"r"`), OnEvent: "e"},
	}
}

func fullResolved() *persona.Resolved {
	def := ""
	return &persona.Resolved{
		ID: "full", Tier: "best", Flat: true, Harness: "claude", Model: "opus", SystemPrompt: "p",
		HarnessSettings: persona.HarnessSettings{Reasoning: "low", WebSearch: yes()},
		Claude:          persona.Sidecar{Channel: persona.ChannelClaude, Path: "/c.md", Mode: persona.ModeExtend, Origin: persona.Origin{Layer: "user", File: "/u.json"}},
		Agents:          persona.Sidecar{Channel: persona.ChannelAgents, Content: "inline", Mode: persona.ModeOverwrite},
		Inputs:          map[string]persona.Input{"I": {Default: &def}},
		Env:             map[string]string{"K": "V"},
		MCPServers:      map[string]persona.MCPServer{"s": {Type: "http", URL: "https://x"}},
		Permissions:     persona.Permissions{Allow: []string{"Bash(go test:*)"}},
		Mount:           persona.Mount{Enabled: yes()},
		Skills:          []persona.Skill{{ID: "k", Source: "npm:k"}},
		Native:          &persona.Native{Opencode: json.RawMessage(`{"temperature":0.5}`)},
		Origins:         map[string]persona.Origin{"model": {Layer: "l", File: "f"}, "harness": {Layer: "m", File: "g"}},
	}
}

func fullMapping() *harness.Mapping {
	return &harness.Mapping{Harness: "claude", Measured: "2.1", Fields: []harness.FieldMapping{
		{Field: "model", Value: "opus", Applied: "--model opus"}, {Field: "permissions.mode", Value: "x", Refused: "no"}}}
}

func fullPlan() *session.Plan {
	return &session.Plan{
		Persona: "full", Tier: "best", Harness: "claude", HarnessVersion: "2.1.0", Profile: "claude",
		Layers:   []persona.Origin{{Layer: "built-in", File: "built-in:full.json"}, {Layer: "user", File: "/u.json"}},
		Resolved: fullResolved(), Root: "/r", Cwd: "/r/sub", Sandbox: "/h/sessions/x", Workdir: "/h/sessions/x/tree/sub",
		Materialized: &session.Materialized{Path: "/h/sessions/x/tree/sub/CLAUDE.md", Mode: "extend", Text: "text\n"},
		Extend: &session.Extend{
			Real: &discover.Result{Profile: "claude", Dir: "/r/sub", Root: "/r",
				Files:   []discover.File{{Path: "/r/CLAUDE.md", Canonical: "/r/CLAUDE.md", Dir: "/r", Name: "CLAUDE.md", Scope: "project", Bytes: 5, Truncated: true, Text: "hidden"}},
				Dropped: []discover.File{}, Problems: []string{"p"}, Text: "t"},
			Folded: []string{"/r/CLAUDE.md"}, LoadedAnyway: nil, Extra: []string{}, Surfaced: []string{"s"}, Hide: []string{"CLAUDE.md"}, Text: "x",
		},
		Hidden: []string{"AGENTS.md"}, Ignored: []string{}, Readonly: nil, Argv: []string{"claude", "--model", "opus"},
		Env: []string{"PWD=/h"}, Sealed: []mount.SealedVar{{Name: "A", Value: "b"}, {Name: "C", Dropped: true}},
		ConfigFiles: map[string]string{"/z.json": "{}", "/a.json": "[]"}, Notes: []string{"n"}, InRepo: true,
		Skills: &skill.Plan{Harness: "claude", Read: []string{".claude/skills"}, Dir: "/d", Notes: []string{"note"},
			Items: []*skill.Item{{ID: "k", Name: "k", Source: "npm:k", Kind: "npm", Path: "/p", Cache: "hit", CacheDir: "/c", Version: "1.0.0", Dest: "/d/k", Replaces: []string{".claude/skills/k"}}, nil}},
		Mapping: fullMapping(),
		Confine: &session.Confinement{Mode: confine.Strict, Confined: true, Policy: confine.Policy{
			Dirs: []string{"/s/tree", "/s/tmp"}, Files: []string{"/c/f"}, Devices: []string{"/dev/null"}}},
		Warnings: []string{"not printed"},
	}
}

func fullReport() *mount.Report {
	return &mount.Report{Created: []string{"a"}, Updated: []string{}, Deleted: nil, Unapplied: []string{"u"},
		Conflicts: []mount.Conflict{{Path: "c", Real: "/r/c", Saved: "/s/c"}, {Path: "d", Real: "/r/d"}},
		NotSynced: []string{"n"}, Failed: []mount.Failure{{Path: "f", Error: "e"}}, Blocked: []string{"b"}, OnBranch: []string{"o"}, Interrupted: true}
}

func fullRecord() session.Record {
	code := 143
	t := time.Date(2026, 11, 23, 10, 15, 0, 123456789, time.UTC)
	return session.Record{Format: 2, ID: "x", Persona: "p", Tier: "best", Harness: "claude", Root: "/r", Cwd: "/r", PID: 12,
		Started: t, HarnessPID: 13, HarnessStart: &session.ProcStart{Boot: "b", Ticks: 99}, Phase: session.Review,
		ExitCode: &code, Error: "e", Report: fullReport(), Branch: "workforce/x", Commits: 2, Head: "abc", Updated: t.Add(time.Second)}
}

// goldenCase is one value a command prints, converted from the internal
// values that make it.
type goldenCase struct {
	name string
	v    func() any
}

func goldenCases() []goldenCase {
	show := func(mapping *harness.Mapping, prov persona.Provenance) func() any {
		return func() any {
			return report.Show{ID: "full", Source: "user", Path: "/u.json", Chain: toreport.Each([]persona.Origin{{Layer: "user", File: "/u.json"}}, toreport.Origin),
				Overrides: toreport.Ptr(&persona.Origin{Layer: "built-in", File: "b"}, toreport.Origin), Inherits: []string{"env"}, Form: "flat",
				Spec: toreport.Ptr(fullSpec(), toreport.Persona), Provenance: toreport.Provenance(prov), Resolved: toreport.Ptr(fullResolved(), toreport.Resolved),
				Warnings: []string{}, Mapping: toreport.Ptr(mapping, toreport.Mapping)}
		}
	}
	return []goldenCase{
		{"plan", func() any { return toreport.Plan(fullPlan()) }},
		{"plan-sparse", func() any {
			return toreport.Plan(&session.Plan{Persona: "p", Resolved: &persona.Resolved{}, Hidden: []string{}, Sealed: []mount.SealedVar{}, Extend: &session.Extend{}, Skills: &skill.Plan{}, Mapping: &harness.Mapping{}})
		}},
		{"plan-zero", func() any { return toreport.Plan(&session.Plan{}) }},
		{"spec", func() any { return toreport.Persona(*fullSpec()) }},
		{"spec-zero", func() any { return toreport.Persona(persona.Spec{}) }},
		{"show", show(fullMapping(), persona.Provenance{"model": {{Layer: "user", File: "/u.json"}, {Layer: "built-in", File: "b"}}, "env.A": nil})},
		{"show-no-mapping", show(nil, nil)},
		{"session-show", func() any {
			return report.SessionShow{Record: toreport.Record(fullRecord()), Changes: toreport.Ptr(fullReport(), toreport.SyncReport)}
		}},
		{"session-show-zero", func() any {
			return report.SessionShow{Record: toreport.Record(session.Record{}), Changes: toreport.Ptr(&mount.Report{}, toreport.SyncReport)}
		}},
		{"warm", func() any {
			return toreport.Each([]session.Warm{{Root: "/r", Dir: "/d", Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}}, toreport.Warm)
		}},
		{"install", func() any {
			return toreport.Install(install.Result{Target: "/t", Installed: []install.Installed{
				{ID: "a", File: "/t/a.json", Assets: []string{"a.md", "skills/s/SKILL.md"}, Overrides: &persona.Origin{Layer: "user", File: "/u"}, Inherits: []string{"env"}},
				{ID: "b", File: "/t/b.json", Assets: []string{}, Shadows: &persona.Origin{Layer: "built-in", File: "b"}}}})
		}},
		{"outdated", func() any {
			return toreport.Each([]install.Status{{Source: "s", Locked: "l", Current: "c", Outdated: true, Why: "w"}, {Source: "t"}}, toreport.Outdated)
		}},
		{"dropped", func() any {
			return toreport.Each([]native.Dropped{{Field: "f", Value: "v", Why: "w"}, {}}, toreport.Dropped)
		}},
		{"resolution", func() any {
			return toreport.Resolution(discover.Resolution{Files: []discover.ResolvedFile{{Path: "/a/AGENTS.md", Reason: "new"}}, Remaining: 2})
		}},
		{"resolution-zero", func() any { return toreport.Resolution(discover.Resolution{}) }},
		{"resume", func() any {
			return toreport.Resume(discover.Diff{Cwd: [2]string{"/a", "/b"}, Changed: []string{"c"}, Removed: []string{}, Added: []string{"a"}})
		}},
		{"resume-zero", func() any { return toreport.Resume(discover.Diff{}) }},
		{"harness-check", func() any {
			sts := []harness.Status{{Harness: "claude", Installed: true, Path: "/bin/claude", Version: "2.1", Package: "@anthropic-ai/claude-code"}, {Harness: "codex", Package: "@openai/codex"}}
			out := report.Harnesses{Harnesses: toreport.Each(sts, toreport.HarnessStatus)}
			out.Harnesses[0].Profile, out.Harnesses[0].ProfileNote = "claude", "not measured"
			return out
		}},
	}
}

func TestReportGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", "report", tc.name+".json")
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := writeJSON(&got, tc.v()); err != nil {
				t.Fatal(err)
			}
			if got.String() != string(want) {
				t.Errorf("%s prints\n%s\nwant (%s)\n%s", tc.name, got.String(), path, want)
			}
		})
	}
}
