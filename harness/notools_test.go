package harness

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// TestNoToolsArgs checks each harness's arguments of a run without tools:
// claude's --tools "", gemini's policy denying every tool, none for
// opencode and codex (the persona's rules say it).
func TestNoToolsArgs(t *testing.T) {
	for _, tt := range []struct {
		h    string
		want []string
	}{
		{persona.HarnessClaude, []string{"--tools", ""}},
		{persona.HarnessOpencode, nil},
		{persona.HarnessCodex, nil},
		{persona.HarnessGemini, []string{"--policy"}},
	} {
		t.Run(tt.h, func(t *testing.T) {
			dir := t.TempDir()
			args, err := NoToolsArgs(tt.h, dir)
			if err != nil {
				t.Fatal(err)
			}
			if tt.h != persona.HarnessGemini {
				if !slices.Equal(args, tt.want) {
					t.Errorf("NoToolsArgs(%s) = %q, want %q", tt.h, args, tt.want)
				}
				return
			}
			if len(args) != 2 || args[0] != "--policy" || !strings.HasPrefix(args[1], dir) {
				t.Fatalf("NoToolsArgs(gemini) = %q, want --policy FILE in %s", args, dir)
			}
			if b, err := os.ReadFile(args[1]); err != nil || !strings.Contains(string(b), "toolName = \"*\"\ndecision = \"deny\"") {
				t.Errorf("%s: %q, %v; want a rule denying every tool", args[1], b, err)
			}
		})
	}
	if _, err := NoToolsArgs(persona.HarnessGemini, t.TempDir()+"/a,b"); err == nil {
		t.Error("NoToolsArgs(gemini) took a policy path holding a comma, which gemini splits")
	}
}

// TestOneShotFacts checks the per-harness facts of one-shot runs that
// the commands read: the mode named in run's help, and which usage
// figures are the conversation's total when resumed.
func TestOneShotFacts(t *testing.T) {
	for _, tt := range []struct {
		h    string
		mode string
		cum  Cumulative
	}{
		{persona.HarnessClaude, "claude -p", Cumulative{Cost: true}},
		{persona.HarnessOpencode, "opencode run", Cumulative{}},
		{persona.HarnessCodex, "codex exec", Cumulative{Tokens: true}},
		{persona.HarnessGemini, "gemini -p", Cumulative{}},
		{persona.HarnessGrok, "", Cumulative{}},
	} {
		if got := OneShotMode(tt.h); got != tt.mode {
			t.Errorf("OneShotMode(%s) = %q, want %q", tt.h, got, tt.mode)
		}
		if got := CumulativeOnResume(tt.h); got != tt.cum {
			t.Errorf("CumulativeOnResume(%s) = %+v, want %+v", tt.h, got, tt.cum)
		}
	}
	if got, want := OneShotModes(), []string{"claude -p", "opencode run", "codex exec", "gemini -p"}; !slices.Equal(got, want) {
		t.Errorf("OneShotModes() = %q, want %q", got, want)
	}
}
