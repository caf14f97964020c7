package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// noToolsGeminiPolicy is the policy file given to gemini with --policy
// for a run without tools: one rule that denies every tool, which a
// headless gemini then does not offer. A persona's deny rules alone left
// gemini 0.61.0 offering update_topic and enter_plan_mode, which no Claude
// Code tool name says (e2e/pick_test.go).
const noToolsGeminiPolicy = `# workforce pick: the model gets no tool
[[rule]]
toolName = "*"
decision = "deny"
priority = 999
denyMessage = "workforce pick: the model gets no tool"
`

// NoToolsArgs are the arguments that leave harness h's model no tool at
// all in a one-shot run (workforce pick's question), beyond what a
// persona's deny rules say: claude's --tools "" offers the model no
// built-in tool (claude 2.1.330, e2e/pick_test.go), which no permission
// rule can say for the tools Claude Code adds from version to version
// (ListAgents, ToolSearch, Workflow, ...); gemini gets --policy with a
// rule denying every tool (noToolsGeminiPolicy), written into dir, a
// directory the caller removes. opencode and codex need none: the
// persona's rules and codex's disabled shell say it.
func NoToolsArgs(h, dir string) ([]string, error) {
	switch h {
	case persona.HarnessClaude:
		return []string{"--tools", ""}, nil
	case persona.HarnessGemini:
	default:
		return nil, nil
	}
	p := filepath.Join(dir, "pick-policy.toml")
	if strings.Contains(p, ",") {
		// gemini splits --policy at commas.
		return nil, fmt.Errorf("gemini cannot read a policy file whose path holds a comma (%s): set TMPDIR to a directory without one", p)
	}
	if err := os.WriteFile(p, []byte(noToolsGeminiPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{"--policy", p}, nil
}
