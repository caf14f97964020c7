//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// workforceJSON runs workforce with args in dir, with no wrapper in
// between and stdin not a terminal, and returns the result it printed on
// stdout and its exit status.
func workforceJSON(t *testing.T, e *scriptedEnv, dir string, args ...string) (report.Result, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workforce, args...)
	cmd.Dir = dir
	cmd.Env = e.vars
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("workforce %s timed out:\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), stdout.String(), stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("workforce %s: %v", strings.Join(args, " "), err)
	}
	t.Logf("workforce %s: exit %d; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	var res report.Result
	if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
		t.Fatalf("stdout is not one result: %v", err)
	}
	return res, code
}

// TestWorkforceResume runs, with each real harness, `workforce run editor
// "write the file" --keep --json`, then `workforce sessions resume ID
// "say it again" --json`: the resumed run continues the same
// conversation (its model requests carry the first task, and the harness
// names the same session), in the same sandbox, and ends succeeded with
// the session kept for the conversation to go on.
func TestWorkforceResume(t *testing.T) {
	const firstTask, secondTask = "write the file", "say it again"
	for _, h := range []string{"claude", "codex", "opencode"} {
		t.Run(h, func(t *testing.T) {
			dir, s, e := oneShotProject(t, h, "editor", writerPermissions[h], writeStep(h), step{Text: "finished"}, step{Text: "resumed"})

			first, code := workforceJSON(t, e, dir, "run", "editor", firstTask, "--keep", "--json")
			if first.Status != report.Status("succeeded") || code != 0 || first.HarnessSessionID == "" {
				t.Fatalf("first run: status %q, exit %d, harness session %q; want succeeded, 0, a session", first.Status, code, first.HarnessSessionID)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
				t.Errorf("out.txt after the first run = %q, %v; want %q", got, err, written)
			}
			home := filepath.Join(e.home, ".agentworkforce", "workforce")
			record, err := os.ReadFile(filepath.Join(home, "sessions", first.SessionID, "session.json"))
			if err != nil || !bytes.Contains(record, []byte(`"harnessSessionId": "`+first.HarnessSessionID+`"`)) {
				t.Errorf("the kept session's record lacks the harness session %s: %v\n%s", first.HarnessSessionID, err, record)
			}

			before := len(s.requests())
			again, code := workforceJSON(t, e, dir, "sessions", "resume", first.SessionID, secondTask, "--json")
			if again.Status != report.Status("succeeded") || code != 0 {
				t.Errorf("resumed run: status %q, exit %d; want succeeded, 0", again.Status, code)
			}
			if again.SessionID != first.SessionID || again.HarnessSessionID != first.HarnessSessionID {
				t.Errorf("resumed run: session %q, harness session %q; want %q, %q", again.SessionID, again.HarnessSessionID, first.SessionID, first.HarnessSessionID)
			}
			if again.Message != "resumed" {
				t.Errorf("resumed run: message %q, want %q", again.Message, "resumed")
			}
			if u := again.Usage; u == nil || u.InputTokens == nil || *u.InputTokens <= 0 {
				t.Errorf("resumed run: usage %+v, want input tokens above zero", u)
			}
			sawFirst, sawSecond := false, false
			for _, body := range s.requests()[before:] {
				sawFirst = sawFirst || bytes.Contains(body, []byte(firstTask))
				sawSecond = sawSecond || bytes.Contains(body, []byte(secondTask))
			}
			if !sawFirst || !sawSecond {
				t.Errorf("the resumed run's model requests carry the first task: %v, the second: %v", sawFirst, sawSecond)
			}
			if again.Files == nil || len(again.Files.Created)+len(again.Files.Updated)+len(again.Files.Conflicts) != 0 {
				t.Errorf("resumed run: files %+v, want nothing synced again", again.Files)
			}
			if _, err := os.Stat(filepath.Join(home, "sessions", first.SessionID)); err != nil {
				t.Errorf("the resumed session is gone (%v); it stays for the conversation to go on", err)
			}
		})
	}
}

// TestWorkforceResumeStore: a run workforce starts as an interactive one,
// with the harness's one-shot mode given as harness arguments (as TestRun
// does), prints no session id for workforce to read: kept, its record
// gets the conversation the harness's own session store says ran in the
// sandbox (codex's rollout files, opencode session list), and sessions
// resume continues it.
func TestWorkforceResumeStore(t *testing.T) {
	for _, h := range []string{"codex", "opencode"} {
		t.Run(h, func(t *testing.T) {
			dir, s, e := oneShotProject(t, h, "editor", `{}`, writeStep(h), step{Text: "finished"}, step{Text: "resumed"})
			start := time.Now()
			out := e.run(t, dir, append([]string{workforce, "run", "editor", "--keep", "--"}, runArgs[h]...)...)
			t.Logf("workforce run: %v\n%s", time.Since(start), out)
			if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
				t.Fatalf("out.txt after the first run = %q, %v; want %q\n%s", got, err, written, out)
			}
			home := filepath.Join(e.home, ".agentworkforce", "workforce")
			sessions, _ := os.ReadDir(filepath.Join(home, "sessions"))
			if len(sessions) != 1 {
				t.Fatalf("%d sessions kept, want 1\n%s", len(sessions), out)
			}
			id := sessions[0].Name()
			data, err := os.ReadFile(filepath.Join(home, "sessions", id, "session.json"))
			var rec struct {
				HarnessSessionID string `json:"harnessSessionId"`
			}
			if err != nil || json.Unmarshal(data, &rec) != nil || rec.HarnessSessionID == "" {
				t.Fatalf("the kept session's record names no conversation: %v\n%s\nworkforce run:\n%s", err, data, out)
			}

			before := len(s.requests())
			again, code := workforceJSON(t, e, dir, "sessions", "resume", id, "say it again", "--json")
			if again.Status != report.Status("succeeded") || code != 0 || again.Message != "resumed" {
				t.Errorf("resumed run: status %q, exit %d, message %q; want succeeded, 0, resumed", again.Status, code, again.Message)
			}
			if again.HarnessSessionID != rec.HarnessSessionID {
				t.Errorf("resumed run: harness session %q, want the store's %q", again.HarnessSessionID, rec.HarnessSessionID)
			}
			saw := false
			for _, body := range s.requests()[before:] {
				saw = saw || bytes.Contains(body, []byte(runArgs[h][len(runArgs[h])-1]))
			}
			if !saw {
				t.Errorf("the resumed run's model requests do not carry the first task %q", runArgs[h][len(runArgs[h])-1])
			}
		})
	}
}
