package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

func TestSkillDirsFor(t *testing.T) {
	tests := []struct {
		harness, version string
		wantWrite        string
		wantNote         string
		wantErr          bool
	}{
		{harness: "claude", version: "2.1.330 (Claude Code)", wantWrite: ".claude/skills"},
		{harness: "claude", version: "2.1.331 (Claude Code)", wantWrite: ".claude/skills"},
		{harness: "claude", version: "2.1.332 (Claude Code)", wantWrite: ".claude/skills"},
		{harness: "claude", version: "2.1.197 (Claude Code)", wantWrite: ".claude/skills"},
		{harness: "claude", version: "", wantWrite: ".claude/skills"},
		{harness: "claude", version: "2.2.0", wantWrite: ".claude/skills", wantNote: "claude 2.2.0 were not measured"},
		{harness: "codex", version: "codex-cli 0.169.0", wantWrite: ".agents/skills"},
		{harness: "codex", version: "codex-cli 0.171.0", wantWrite: ".agents/skills"},
		{harness: "codex", version: "codex-cli 0.170.0", wantWrite: ".agents/skills", wantNote: "measured on codex 0.169.0, 0.171.0"},
		{harness: "opencode", version: "1.18.33", wantWrite: ".agents/skills"},
		{harness: "opencode", version: "0.1.0", wantWrite: ".agents/skills", wantNote: "measured on opencode 1.18.33"},
		{harness: "grok", version: "1.0.0", wantErr: true},
	}
	for _, tt := range tests {
		d, note, err := SkillDirsFor(tt.harness, tt.version)
		if (err != nil) != tt.wantErr {
			t.Errorf("SkillDirsFor(%q, %q) error = %v", tt.harness, tt.version, err)
			continue
		}
		if err != nil {
			continue
		}
		if d.Write != tt.wantWrite || d.Harness != tt.harness {
			t.Errorf("SkillDirsFor(%q, %q) = %+v, want Write %s", tt.harness, tt.version, d, tt.wantWrite)
		}
		if tt.wantNote == "" && note != "" || !strings.Contains(note, tt.wantNote) {
			t.Errorf("SkillDirsFor(%q, %q) note = %q, want %q", tt.harness, tt.version, note, tt.wantNote)
		}
	}
}

// TestSkillTable: every harness has an entry, each writes where it reads,
// and each was measured.
func TestSkillTable(t *testing.T) {
	for _, h := range persona.Harnesses {
		if _, _, err := SkillDirsFor(h, ""); err != nil {
			t.Errorf("harness %s has no skill directories: %v", h, err)
		}
	}
	for _, d := range SkillTable {
		if !slices.Contains(d.Read, d.Write) {
			t.Errorf("%s writes skills to %s, which it does not read (%v)", d.Harness, d.Write, d.Read)
		}
		if len(d.Measured) == 0 {
			t.Errorf("%s: no measured version", d.Harness)
		}
	}
}
