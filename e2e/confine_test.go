//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// escapeStep makes the harness write the file path, outside its sandbox,
// with its own tool: claude's Write, opencode's bash, codex's shell.
func escapeStep(harness, path string) step {
	switch harness {
	case "claude":
		return step{Tool: "Write", Args: map[string]any{"file_path": path, "content": "escaped\n"}}
	case "opencode":
		return step{Tool: "bash", Args: map[string]any{"command": "echo escaped > " + path, "description": "write outside"}}
	default:
		return step{Tool: "exec_command", Args: map[string]any{"cmd": "echo escaped > " + path}}
	}
}

// TestWorkforceConfined runs `workforce run editor TASK --json` with each
// real harness, confined by default (Landlock): the scripted model writes
// out.txt in the sandbox, then a file outside it by absolute path. The
// run completes, out.txt comes back through sync-back, and the file
// outside is not written; with --sandbox=off the same run writes it, so
// the check can fail.
func TestWorkforceConfined(t *testing.T) {
	allow := map[string]string{
		"claude":   `{"mode": "acceptEdits", "allow": ["Read", "Write", "Bash"]}`,
		"opencode": `{"mode": "bypassPermissions"}`,
		"codex":    `{"mode": "bypassPermissions"}`,
	}
	for _, h := range []string{"claude", "codex", "opencode"} {
		for _, mode := range []string{"on", "off", "overlay"} {
			t.Run(h+"/"+mode, func(t *testing.T) {
				// Outside the sandbox and the project: the model is told the
				// path; workforce does not rewrite it.
				outside, _ := filepath.EvalSymlinks(t.TempDir())
				target := filepath.Join(outside, "escaped.txt")
				dir, _, e := oneShotProject(t, h, "editor", allow[h], writeStep(h), escapeStep(h, target), step{Text: "finished"})
				if h == "opencode" {
					// opencode asks before a command touches a directory
					// outside its own; allow it, so that only the sandbox stops it.
					oc := filepath.Join(e.home, "opencode-e2e.json")
					b, err := os.ReadFile(oc)
					if err != nil {
						t.Fatal(err)
					}
					os.WriteFile(oc, bytes.Replace(b, []byte(`"bash": "allow"}`), []byte(`"bash": "allow", "external_directory": "allow"}`), 1), 0o644)
				}
				// overlay: confined, the project shown through an overlay
				// (issue 44) instead of a copy.
				args := []string{"--sandbox=" + mode}
				if mode == "overlay" {
					args = []string{"--sandbox=on", "--tree=overlay"}
				}
				res, _, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file", args...)
				if res.Files == nil || len(res.Files.Created) != 1 || res.Files.Created[0] != "out.txt" {
					t.Errorf("files %+v, want out.txt created", res.Files)
				}
				if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
					t.Errorf("out.txt in the real repository = %q, %v; want %q", got, err, written)
				}
				_, serr := os.Stat(target)
				switch mode {
				case "overlay":
					if strings.Contains(stderr, "copied instead") {
						t.Skipf("no overlay here:\n%s", stderr)
					}
					fallthrough
				case "on":
					if serr == nil {
						t.Errorf("confined, the harness wrote %s outside its sandbox", target)
					}
					if strings.Contains(stderr, "cannot confine") {
						t.Errorf("the run says it cannot confine:\n%s", stderr)
					}
					// Confined by workforce-launcher, built beside
					// workforce (TestMain), as make build puts it.
					if got, want := planLauncher(t, e, dir, args...), filepath.Join(filepath.Dir(workforce), "workforce-launcher"); got != want {
						t.Errorf("the plan's launcher is %q, want %q", got, want)
					}
				case "off":
					if serr != nil {
						t.Errorf("unconfined, the harness did not write %s (%v): the check above proves nothing", target, serr)
					}
				}
			})
		}
	}
}

// planLauncher returns the launcher the plan of the editor persona's run
// in dir names (--dry-run --json).
func planLauncher(t *testing.T, e *scriptedEnv, dir string, flags ...string) string {
	t.Helper()
	cmd := exec.Command(workforce, append([]string{"run", "editor", "write the file", "--dry-run", "--json"}, flags...)...)
	cmd.Dir, cmd.Env = dir, e.vars
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("workforce run --dry-run: %v\n%s", err, out)
	}
	var plan struct {
		Confine *struct {
			Launcher string `json:"launcher"`
		} `json:"confine"`
	}
	if err := json.Unmarshal(out, &plan); err != nil || plan.Confine == nil {
		t.Fatalf("the plan is not one with confine (%v):\n%s", err, out)
	}
	return plan.Confine.Launcher
}
