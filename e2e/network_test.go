//go:build e2e

package e2e

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

// shellStep makes the harness run command with its own shell tool.
func shellStep(harness, command string) step {
	switch harness {
	case "claude":
		return step{Tool: "Bash", Args: map[string]any{"command": command, "description": "try the network"}}
	case "opencode":
		return step{Tool: "bash", Args: map[string]any{"command": command, "description": "try the network"}}
	case "gemini":
		return step{Tool: "run_shell_command", Args: map[string]any{"command": command, "description": "try the network"}}
	default:
		return step{Tool: "exec_command", Args: map[string]any{"cmd": command}}
	}
}

// nameModel makes the scripted model of e a host name, model.test, where
// the runs of e reach it: in e's variables and the configuration files of
// its home, the loopback address becomes the name, and
// WORKFORCE_TEST_HOSTS maps the name (and denied.test) to it. It returns
// the model's port.
func nameModel(t *testing.T, e *scriptedEnv) string {
	t.Helper()
	var loop string
	for _, kv := range e.vars {
		if v, ok := strings.CutPrefix(kv, "ANTHROPIC_BASE_URL="); ok {
			u, err := url.Parse(v)
			if err != nil {
				t.Fatal(err)
			}
			loop = u.Host
		}
	}
	if loop == "" {
		t.Fatal("no scripted model URL in the environment")
	}
	_, port, _ := strings.Cut(loop, ":")
	named := "model.test:" + port
	for i, kv := range e.vars {
		e.vars[i] = strings.ReplaceAll(kv, loop, named)
	}
	filepath.WalkDir(e.home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".toml") || strings.HasSuffix(path, ".json")) {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), loop) {
			os.WriteFile(path, []byte(strings.ReplaceAll(string(b), loop, named)), 0o644)
		}
		return nil
	})
	e.vars = append(e.vars, "WORKFORCE_TEST_HOSTS=model.test="+loop+",denied.test="+loop)
	return port
}

// TestNetworkConfined runs each real harness confined, in its namespaces,
// against the scripted model by a host name: the model is reached through
// workforce's proxy (the name allowed, no provider's real host contacted),
// the turn completes, and the scripted tool call running curl to a host
// the policy does not allow is denied and in the result's network.
// shellPerms are the permissions under which each harness runs the
// scripted model's shell command without asking.
var shellPerms = map[string]string{
	"claude":   `{"mode": "acceptEdits", "allow": ["Read", "Write", "Bash"]}`,
	"opencode": `{"mode": "bypassPermissions"}`,
	"codex":    `{"mode": "bypassPermissions"}`,
	"gemini":   `{"mode": "bypassPermissions"}`,
}

func TestNetworkConfined(t *testing.T) {
	if _, err := os.Stat("/usr/bin/curl"); err != nil {
		t.Skip("no curl on this system")
	}
	perms := shellPerms
	providers := []string{"api.anthropic.com", "api.openai.com", "chatgpt.com", "generativelanguage.googleapis.com", "models.opencode.ai"}
	for _, h := range []string{"claude", "codex", "opencode", "gemini"} {
		t.Run(h, func(t *testing.T) {
			curl := shellStep(h, "curl -s -o /dev/null -w 'status %{http_code}' --max-time 10 http://denied.test/")
			var dir string
			var e *scriptedEnv
			if h == "gemini" {
				dir, _, e = geminiRunProject(t, perms[h], "", curl, step{Text: "finished"})
			} else {
				dir, _, e = oneShotProject(t, h, "editor", perms[h], curl, step{Text: "finished"})
			}
			nameModel(t, e)
			res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "try the network", "--network-allow", "model.test")
			if res.Status != report.StatusSucceeded {
				t.Errorf("status %s (exit %d), want succeeded: the turn through the proxy did not complete\nstderr:\n%s", res.Status, code, stderr)
			}
			n := res.Network
			if n == nil {
				t.Fatalf("the result has no network: the harness did not run in namespaces\nstderr:\n%s", stderr)
			}
			var allowed, denied []string
			for _, a := range n.Allowed {
				allowed = append(allowed, a.Host)
			}
			for _, d := range n.Denied {
				denied = append(denied, d.Host)
			}
			if !slices.Contains(allowed, "model.test") {
				t.Errorf("allowed %v: the model was not reached through the proxy", allowed)
			}
			if !slices.Contains(denied, "denied.test") {
				t.Errorf("denied %v, want denied.test (the curl of the tool call)", denied)
			}
			for _, p := range providers {
				if slices.Contains(allowed, p) {
					t.Errorf("allowed %v: the harness reached %s, a real provider host", allowed, p)
				}
			}
		})
	}
}
