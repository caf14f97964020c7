//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCreate runs `workforce create DESCRIPTION` with the built-in
// persona-author on its default tier (opencode, openai/gpt-5-mini, which
// the scripted environment serves), confined: the scripted model writes a
// persona and its sidecar with opencode's write tool into its working
// directory, the staging directory's sandbox, unattended (the persona
// author's allow of Edit and Write lets the write through), and tries to write into
// the project it was told about. workforce installs the persona into the
// user layer, and nothing reaches the project.
func TestCreate(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitInit(t, dir)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("e2e\n"), 0o644)
	persona := `{"id": "sql-reviewer", "intent": "review", "tags": ["review"], "description": "Reviews SQL migrations.",
 "agentsMd": "sql-reviewer.md", "tiers": {"best": {"harness": "opencode", "model": "mock/m", "systemPrompt": "Review."}}}`
	// opencode offers a gpt-5 model apply_patch, not write (measured on
	// 1.18.33).
	patch := func(files ...string) step {
		text := "*** Begin Patch\n"
		for i := 0; i < len(files); i += 2 {
			text += "*** Add File: " + files[i] + "\n"
			for _, line := range strings.Split(strings.TrimSuffix(files[i+1], "\n"), "\n") {
				text += "+" + line + "\n"
			}
		}
		return step{Tool: "apply_patch", Args: map[string]any{"patchText": text + "*** End Patch\n"}}
	}
	s := newScripted(
		patch("sql-reviewer.json", persona, "sql-reviewer.md", "Check the locks.\n"),
		patch(filepath.Join(dir, "leak.txt"), "leaked\n"),
		step{Text: "Wrote sql-reviewer."},
	)
	e := newScriptedEnv(t, s)
	vars := workforceEnv(e, dir, filepath.Dir(dir))
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workforce, "create", "reviews SQL migrations", "--save-in-directory=user")
	cmd.Dir, cmd.Env = dir, vars
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("workforce create: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("workforce create failed")
	}
	layer := filepath.Join(e.home, ".agentworkforce", "workforce", "personas")
	if !strings.Contains(stdout.String(), "created sql-reviewer: "+filepath.Join(layer, "sql-reviewer.json")+" (+1 sidecar)") {
		t.Errorf("stdout does not say where the persona is")
	}
	var installed struct{ ID, AgentsMd string }
	b, err := os.ReadFile(filepath.Join(layer, "sql-reviewer.json"))
	if err != nil || json.Unmarshal(b, &installed) != nil || installed.ID != "sql-reviewer" {
		t.Fatalf("the installed persona: %s, %v", b, err)
	}
	if got, err := os.ReadFile(filepath.Join(layer, installed.AgentsMd)); err != nil || string(got) != "Check the locks.\n" {
		t.Errorf("its sidecar %s: %q, %v", installed.AgentsMd, got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "leak.txt")); err == nil {
		t.Errorf("the persona author wrote into the project")
	}
	if entries, _ := os.ReadDir(filepath.Join(e.home, ".agentworkforce", "workforce", "create")); len(entries) != 0 {
		t.Errorf("the staging directory is left: %v", entries)
	}
	// The persona author was told what to write, where, and for which project.
	reqs := s.requests()
	var all string
	for _, i := range s.mainRequests() {
		all += string(reqs[i])
	}
	for _, want := range []string{"The new persona: reviews SQL migrations.", "installs it into " + layer, "The project it is for is " + dir} {
		if !strings.Contains(all, want) {
			t.Errorf("the model was not told %q", want)
		}
	}
}
