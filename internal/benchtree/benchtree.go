// Package benchtree writes persona trees for benchmarks: n personas spread
// over three layers the way real catalogs are (a full persona at the base,
// overrides above it), with sidecar files.
package benchtree

import (
	"fmt"
	"os"
	"path/filepath"
)

// Layers writes n personas into base, user and project directories under
// root: every persona has a full definition with three tiers and a sidecar
// in base; every second one is overridden in user (a sidecar and an env
// key); every fourth in project (one tier's model). It returns the three
// directories, highest first.
func Layers(root string, n int) (project, user, base string, err error) {
	project = filepath.Join(root, "project")
	user = filepath.Join(root, "user")
	base = filepath.Join(root, "base")
	for _, d := range []string{project, user, base} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", "", "", err
		}
	}
	for i := range n {
		id := fmt.Sprintf("persona-%05d", i)
		files := map[string]string{
			filepath.Join(base, id+".json"): fmt.Sprintf(fullPersona, id, id),
			filepath.Join(base, id+".md"):   "# " + id + "\n\nFollow the project's conventions; keep changes small and tested.\n",
		}
		if i%2 == 0 {
			files[filepath.Join(user, id+".json")] = fmt.Sprintf(`{"id": %q, "claudeMd": "%s.md", "claudeMdMode": "extend", "env": {"TEAM": "core"}}`, id, id)
			files[filepath.Join(user, id+".md")] = "Team notes for " + id + ".\n"
		}
		if i%4 == 0 {
			files[filepath.Join(project, id+".json")] = fmt.Sprintf(`{"id": %q, "tiers": {"best": {"model": "project-model"}}}`, id)
		}
		for path, content := range files {
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				return "", "", "", err
			}
		}
	}
	return project, user, base, nil
}

const fullPersona = `{
  "id": %q,
  "intent": "review",
  "tags": ["review", "quality"],
  "description": "Reviews changes for correctness, risk and maintainability.",
  "defaultTier": "best-value",
  "inputs": {"TARGET": {"description": "branch to compare with", "default": "main"}},
  "permissions": {"allow": ["Read", "Grep"], "deny": ["WebFetch"]},
  "mount": {"ignoredPatterns": ["*.log", "dist/"]},
  "agentsMd": "%s.md",
  "tiers": {
    "best": {
      "harness": "claude",
      "model": "claude-opus",
      "systemPrompt": "You are an experienced code reviewer. Review changes against $TARGET in this order: correctness, security, performance, maintainability, then style. Classify each finding as Blocker, Suggestion, Nit, or Question.",
      "harnessSettings": {"reasoning": "high", "timeoutSeconds": 1200}
    },
    "best-value": {
      "harness": "opencode",
      "model": "opencode/gpt-5-nano",
      "systemPrompt": "You are an experienced code reviewer. Keep the same quality bar; only reduce verbosity.",
      "harnessSettings": {"reasoning": "medium", "timeoutSeconds": 900}
    },
    "minimum": {
      "harness": "codex",
      "model": "openai/gpt-5-mini",
      "systemPrompt": "You are a code reviewer in concise mode. Focus on blockers first.",
      "harnessSettings": {"reasoning": "low", "timeoutSeconds": 600, "sandboxMode": "read-only"}
    }
  }
}
`
