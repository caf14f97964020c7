//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// writeOneShotPersona installs persona id in the user layer of home for
// harness, with the permissions given as JSON.
func writeOneShotPersona(t *testing.T, home, id, harness, permissions string) {
	t.Helper()
	pdir := filepath.Join(home, ".agentworkforce", "workforce", "personas")
	os.MkdirAll(pdir, 0o755)
	spec := fmt.Sprintf(`{"id": %q, "intent": "test", "description": "e2e one-shot persona",
 "permissions": %s, "tiers": {"best": {"harness": %q, "model": %q}}}`, id, permissions, harness, runModels[harness])
	if err := os.WriteFile(filepath.Join(pdir, id+".json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writerPermissions are, per harness, permissions under which the
// scripted model's write (writeStep) goes through in a one-shot run.
var writerPermissions = map[string]string{
	"claude":   `{"mode": "acceptEdits", "allow": ["Read", "Write"]}`,
	"opencode": `{"mode": "acceptEdits"}`,
	"codex":    `{"mode": "bypassPermissions"}`,
	"gemini":   `{"mode": "acceptEdits"}`,
}

// oneShotProject makes a project (a git repository with a README) and a
// scripted environment answering with steps, installs persona id for
// harness with permissions (JSON), and returns the project, the scripted
// model and the environment, its variables those of a workforce run in
// the project.
func oneShotProject(t *testing.T, harness, id, permissions string, steps ...step) (string, *scripted, *scriptedEnv) {
	t.Helper()
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitInit(t, dir)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("e2e\n"), 0o644)
	s := newScripted(steps...)
	e := newScriptedEnv(t, s)
	writeOneShotPersona(t, e.home, id, harness, permissions)
	e.vars = workforceEnv(e, dir, filepath.Dir(dir))
	return dir, s, e
}

// runWorkforceJSON starts `workforce run PERSONA TASK --json` in dir with
// no wrapper in between, stdin not a terminal, and returns the result it
// printed on stdout, its exit status and its stderr; flags go after
// --json.
func runWorkforceJSON(t *testing.T, e *scriptedEnv, dir, persona, task string, flags ...string) (report.Result, int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workforce, append([]string{"run", persona, task, "--json"}, flags...)...)
	cmd.Dir = dir
	cmd.Env = e.vars
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("workforce run timed out:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("workforce run: %v", err)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("stdout is not one result: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("exit %d; stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	return res, code, stderr.String()
}

// TestWorkforceOneShot runs `workforce run PERSONA TASK --json` with each
// real harness: a persona that may write makes the scripted model's write
// succeed and come back through sync-back; for claude and opencode a
// persona whose permission mode would ask ends denied, exit status 1,
// with nothing written.
func TestWorkforceOneShot(t *testing.T) {
	for _, h := range []string{"claude", "codex", "opencode"} {
		t.Run(h, func(t *testing.T) {
			dir, _, e := oneShotProject(t, h, "editor", writerPermissions[h], writeStep(h), step{Text: "finished"})
			res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file")
			if res.Status != report.Status("succeeded") || code != 0 {
				t.Errorf("status %q, exit %d; want succeeded, 0\nstderr:\n%s", res.Status, code, stderr)
			}
			if res.ExitCode == nil || *res.ExitCode != 0 {
				t.Errorf("harness exit code %v, want 0", res.ExitCode)
			}
			if res.HarnessSessionID == "" {
				t.Errorf("no harness session id")
			}
			if res.Message != "finished" {
				t.Errorf("message %q, want %q", res.Message, "finished")
			}
			if u := res.Usage; u == nil || u.InputTokens == nil || *u.InputTokens <= 0 || u.OutputTokens == nil || *u.OutputTokens <= 0 {
				t.Errorf("usage %+v, want input and output tokens above zero", u)
			}
			if res.Files == nil || len(res.Files.Created) != 1 || res.Files.Created[0] != "out.txt" {
				t.Errorf("files %+v, want out.txt created", res.Files)
			}
			if len(res.Denials) != 0 {
				t.Errorf("denials %+v, want none", res.Denials)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
				t.Errorf("out.txt in the real repository = %q, %v; want %q", got, err, written)
			}
			if h == "claude" {
				checkOwnSandboxOff(t, e, res, dir)
			}
		})
		if h == "codex" {
			continue
		}
		t.Run(h+"/denied", func(t *testing.T) {
			dir, _, e := oneShotProject(t, h, "asker", `{"mode": "default"}`, writeStep(h), step{Text: "could not write"})
			res, code, stderr := runWorkforceJSON(t, e, dir, "asker", "write the file")
			if res.Status != report.Status("denied") || code != 1 {
				t.Errorf("status %q, exit %d; want denied, 1\nstderr:\n%s", res.Status, code, stderr)
			}
			if len(res.Denials) == 0 {
				t.Errorf("no denials reported")
			}
			if h == "opencode" && !hasWarning(res.Warnings, "opencode run cannot ask") {
				t.Errorf("warnings %q lack the one printed before the run", res.Warnings)
			}
			if res.HarnessSessionID == "" {
				t.Errorf("no harness session id")
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
				t.Errorf("out.txt was created in the real repository")
			}
		})
	}
}

// checkOwnSandboxOff reads the init line of a confined claude run's
// output, kept in its result directory: Claude Code (2.1.332 on) reports
// its own sandbox there, which workforce turns off where it confines
// claude itself, so sandbox_enabled must be false and the result carry
// no warning of it. With WORKFORCE_E2E_RECORD=1 the output is recorded as
// harness/testdata/oneshot/claude-confined.jsonl.
func checkOwnSandboxOff(t *testing.T, e *scriptedEnv, res report.Result, dir string) {
	t.Helper()
	if res.Network == nil {
		t.Fatalf("the run was not confined (no network policy): warnings %q", res.Warnings)
	}
	path := filepath.Join(e.home, ".agentworkforce", "workforce", session.ResultsDir, res.SessionID, session.OutputFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the run's output: %v", err)
	}
	record(t, "claude-confined.jsonl", raw, map[string]string{dir: "/project", e.home: "/home"})
	out, err := harness.ParseOutput("claude", raw)
	if err != nil {
		t.Fatalf("ParseOutput: %v", err)
	}
	if out.OwnSandbox == nil || *out.OwnSandbox {
		t.Errorf("sandbox_enabled of the confined run = %v, want false (workforce turns claude's own sandbox off)", out.OwnSandbox)
	}
	if hasWarning(res.Warnings, "own sandbox") {
		t.Errorf("warnings %q name claude's own sandbox", res.Warnings)
	}
}

// hasWarning reports whether one of warnings contains text.
func hasWarning(warnings []string, text string) bool {
	for _, w := range warnings {
		if strings.Contains(w, text) {
			return true
		}
	}
	return false
}
