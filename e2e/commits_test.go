//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// commitStep makes the harness commit everything in its working
// directory with its own shell tool.
func commitStep(harness string) step {
	const cmd = "git add -A && git commit -q -m 'committed by the model'"
	switch harness {
	case "claude":
		return step{Tool: "Bash", Args: map[string]any{"command": cmd, "description": "commit"}}
	case "opencode":
		return step{Tool: "bash", Args: map[string]any{"command": cmd, "description": "commit"}}
	default:
		return step{Tool: "exec_command", Args: map[string]any{"cmd": cmd}}
	}
}

// commitArgs are runArgs with the shell allowed.
var commitArgs = map[string][]string{
	"claude":   {"-p", "write out.txt and commit", "--permission-mode", "acceptEdits", "--allowedTools", "Bash,Read,Write"},
	"opencode": {"run", "write out.txt and commit"},
	"codex":    {"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "write out.txt and commit"},
}

// TestRunCommits: a real harness, driven by the scripted model, writes a
// file and runs git commit in the sandbox; the commit comes back as the
// branch workforce/<session-id> of the real repository, with its message
// and its file, while the user's HEAD, index and working tree stay as
// they were (the committed file is on the branch, not synced as a loose
// change).
func TestRunCommits(t *testing.T) {
	for _, h := range []string{"claude", "opencode", "codex"} {
		t.Run(h, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			s := newScripted(writeStep(h), commitStep(h), step{Text: "finished"})
			e := newScriptedEnv(t, s)
			os.WriteFile(filepath.Join(e.home, ".gitconfig"), []byte("[user]\n\tname = Model\n\temail = model@example.com\n[commit]\n\tgpgsign = false\n"), 0o644)
			git := func(args ...string) string {
				cmd := exec.Command("git", args...)
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
				}
				return strings.TrimSpace(string(out))
			}
			git("init", "-q")
			os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)
			git("add", "-A")
			git("commit", "-q", "-m", "by the user")
			head := git("rev-parse", "HEAD")
			index, _ := os.ReadFile(filepath.Join(root, ".git", "index"))
			writePersona(t, e.home, h, "overwrite")
			e.vars = workforceEnv(e, root, root)
			out := e.run(t, root, append([]string{workforce, "run", "e2e", "--"}, commitArgs[h]...)...)

			branches := git("branch", "--list", "workforce/*", "--format=%(refname:short)")
			if !strings.HasPrefix(branches, "workforce/") || strings.Contains(branches, "\n") {
				t.Fatalf("branches workforce/*: %q, want one\nworkforce output:\n%s", branches, out)
			}
			if !strings.Contains(out, "the agent made 1 commit: branch "+branches) {
				t.Errorf("workforce did not say so:\n%s", out)
			}
			if got := git("log", "-1", "--format=%s|%an", branches); got != "committed by the model|Model" {
				t.Errorf("the branch's commit: %q", got)
			}
			if got := git("show", branches+":out.txt"); got+"\n" != written {
				t.Errorf("out.txt on the branch: %q", got)
			}
			if got := git("rev-parse", "HEAD"); got != head {
				t.Errorf("the user's HEAD moved to %s", got)
			}
			if got, _ := os.ReadFile(filepath.Join(root, ".git", "index")); string(got) != string(index) {
				t.Error("the user's index changed")
			}
			if _, err := os.Stat(filepath.Join(root, "out.txt")); err == nil {
				t.Error("out.txt, committed by the agent, was synced as a loose change too")
			}
		})
	}
}
