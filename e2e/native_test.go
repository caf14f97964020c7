//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// wf runs workforce with e's environment in dir and fails the test when it
// fails.
func (e *env) wf(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(workforce, args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("workforce %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// sentAll is every string the harness sent, joined.
func (e *env) sentAll() string { return strings.Join(e.rec.strings(), "\n") }

// TestNativePlugin: the Claude Code plugin workforce pack makes, loaded
// with claude --plugin-dir, puts the persona's agent (named
// plugin:agent, with its description) and its skill into the model's
// request.
func TestNativePlugin(t *testing.T) {
	e := newEnv(t)
	root := t.TempDir()
	files := map[string]string{
		"pack/package.json": `{"name": "@acme/wf-pack", "version": "1.0.0", "agentworkforce": {"personas": "personas"}}`,
		"pack/personas/reviewer.json": `{"id": "reviewer", "intent": "review", "description": "Reviews changes, agent-marker-7f3a.",
  "skills": [{"id": "hello", "source": "./skills/hello"}],
  "harness": "claude", "model": "claude-sonnet-4-5", "systemPrompt": "Review the change."}`,
		"pack/personas/skills/hello/SKILL.md": "---\nname: hello\ndescription: Greets, skill-marker-9c1e.\n---\n\nSay hello.\n",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.wf(t, root, "pack", "pack", "-o", "p.tgz")
	os.MkdirAll(filepath.Join(root, "x"), 0o755)
	if out, err := exec.Command("tar", "-xzf", filepath.Join(root, "p.tgz"), "-C", filepath.Join(root, "x")).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
	work := t.TempDir()
	e.run(t, work, filepath.Join(binDir, "claude"), "--plugin-dir", filepath.Join(root, "x", "package"), "-p", "hello")
	sent := e.sentAll()
	for _, want := range []string{"wf-pack:reviewer", "agent-marker-7f3a", "skill-marker-9c1e"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the model's request lacks %q", want)
		}
	}
}

// TestNativeOpencodeAgent: an opencode agent file workforce export writes,
// started with opencode run --agent, sends the persona's prompt.
func TestNativeOpencodeAgent(t *testing.T) {
	e := newEnv(t)
	project := t.TempDir()
	os.MkdirAll(filepath.Join(project, ".git"), 0o755)
	installPersona(t, e.home, "scout", `{"id": "scout", "intent": "explore", "description": "Explores.",
  "harness": "opencode", "model": "mock/m", "systemPrompt": "You are scout, prompt-marker-41d2."}`)
	e.wf(t, project, "export", "scout", "--harness", "opencode")
	if _, err := os.Stat(filepath.Join(project, ".opencode", "agents", "scout.md")); err != nil {
		t.Fatal(err)
	}
	e.run(t, project, filepath.Join(binDir, "opencode"), "run", "--agent", "scout", "hello")
	if sent := e.sentAll(); !strings.Contains(sent, "prompt-marker-41d2") {
		t.Errorf("opencode --agent scout did not send the persona's prompt")
	}
}

// TestNativeCodexAgent: a codex agent file workforce export writes into
// $CODEX_HOME/agents puts its name and description into real codex's
// request (the spawn_agent tool's roles).
func TestNativeCodexAgent(t *testing.T) {
	e := newEnv(t)
	project := t.TempDir()
	installPersona(t, e.home, "mapper", `{"id": "mapper", "intent": "explore", "description": "Maps the code, role-marker-c0de.",
  "harness": "codex", "model": "gpt-5.5", "systemPrompt": "Map the code."}`)
	e.wf(t, project, "export", "mapper", "--harness", "codex", "--out", filepath.Join(e.home, ".codex", "agents"))
	e.run(t, project, append([]string{filepath.Join(binDir, "codex")}, harnessArgs["codex"]...)...)
	sent := e.sentAll()
	if !strings.Contains(sent, "mapper: {") || !strings.Contains(sent, "role-marker-c0de") {
		t.Errorf("codex did not offer the exported agent mapper with its description")
	}
}
