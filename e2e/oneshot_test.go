//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
)

// recordEnv, set to 1, makes TestOneShot save each harness's raw one-shot
// output as the parser fixtures of package harness.
const recordEnv = "WORKFORCE_E2E_RECORD"

// oneShotTask is the task of the first run; the resumed run's model
// requests must carry it (the model sees the earlier turn).
const oneShotTask = "write the file out.txt"

// oneShotModes are the permission modes a persona that may write runs in:
// as root claude refuses bypassPermissions, and codex's own sandbox
// cannot start in the test container, so it runs bypassing it.
var oneShotModes = map[string]string{"claude": "acceptEdits", "opencode": "acceptEdits", "codex": "bypassPermissions", "gemini": "acceptEdits"}

// claudeSessionID is the id fixed before claude's first run.
const claudeSessionID = "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"

// runOneShot plans a one-shot run of r with PlanOneShot, runs the real
// harness in dir against e's scripted model, and returns its stdout and
// what ParseOutput reads from it.
func runOneShot(t *testing.T, e *scriptedEnv, dir string, r *persona.Resolved, s harness.OneShot) ([]byte, *harness.Outcome, error) {
	t.Helper()
	inv, err := harness.PlanOneShot(r, harness.Options{ConfigDir: t.TempDir(), Env: e.vars, Root: dir}, s)
	if err != nil {
		t.Fatalf("PlanOneShot: %v", err)
	}
	if err := inv.WriteFiles(); err != nil {
		t.Fatal(err)
	}
	t.Logf("argv: %q", inv.Argv())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	start := time.Now()
	exit, err := harness.Run(ctx, inv, dir, strings.NewReader(inv.Stdin), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("timed out:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	t.Logf("exit %+v in %v; stderr:\n%s", exit, time.Since(start).Round(time.Millisecond), stderr.String())
	out, perr := harness.ParseOutput(r.Harness, stdout.Bytes())
	return stdout.Bytes(), out, perr
}

// record saves out as the fixture harness/testdata/oneshot/NAME, with the
// test's directories replaced by fixed ones.
func record(t *testing.T, name string, out []byte, dirs map[string]string) {
	t.Helper()
	if os.Getenv(recordEnv) != "1" {
		return
	}
	for from, to := range dirs {
		out = bytes.ReplaceAll(out, []byte(from), []byte(to))
	}
	path := filepath.Join("..", "harness", "testdata", "oneshot", name)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", path)
}

// TestOneShot runs each real harness in its one-shot mode with the argv
// PlanOneShot builds: a run that writes a file, a run whose persona's
// permission mode would ask before the write (claude and opencode: a
// denial, though they exit 0), and a resumed conversation. It checks
// what ParseOutput reads: the session id, the final message, usage above
// zero, the denial.
func TestOneShot(t *testing.T) {
	for _, h := range []string{"claude", "codex", "opencode"} {
		// claude's one-shot runs print stream-json too: JSONL for all
		// (the older claude-*.json fixtures are its json format).
		ext := ".jsonl"
		t.Run(h, func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			gitInit(t, dir)
			s := newScripted(writeStep(h), step{Text: "finished"}, step{Text: "resumed"})
			e := newScriptedEnv(t, s)
			dirs := map[string]string{dir: "/sandbox", e.home: "/home"}
			r := &persona.Resolved{ID: "editor", Harness: h, Model: runModels[h],
				Permissions: persona.Permissions{Mode: oneShotModes[h]}}
			if h == "claude" {
				r.Permissions.Allow = []string{"Read", "Write"}
			}
			first := harness.OneShot{Task: oneShotTask}
			if h == "claude" {
				first.SessionID = claudeSessionID
			}
			raw, out, err := runOneShot(t, e, dir, r, first)
			record(t, h+"-write"+ext, raw, dirs)
			if err != nil {
				t.Fatalf("ParseOutput: %v\n%s", err, raw)
			}
			checkOutcome(t, out, "finished")
			if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
				t.Errorf("out.txt = %q, %v; want %q", got, err, written)
			}
			if h == "claude" && out.SessionID != claudeSessionID {
				t.Errorf("session id %q, want the one fixed before the run, %q", out.SessionID, claudeSessionID)
			}
			if len(out.Denials) > 0 {
				t.Errorf("denials %+v, want none", out.Denials)
			}

			before := len(s.requests())
			raw, again, err := runOneShot(t, e, dir, r, harness.OneShot{Task: "say it again", Resume: out.SessionID})
			record(t, h+"-resume"+ext, raw, dirs)
			if err != nil {
				t.Fatalf("ParseOutput (resume): %v\n%s", err, raw)
			}
			checkOutcome(t, again, "resumed")
			if again.SessionID != out.SessionID {
				t.Errorf("resumed session id %q, want %q", again.SessionID, out.SessionID)
			}
			saw := false
			for _, body := range s.requests()[before:] {
				saw = saw || bytes.Contains(body, []byte(oneShotTask))
			}
			if !saw {
				t.Errorf("the resumed run's requests do not carry the first task %q", oneShotTask)
			}
		})
		t.Run(h+"/stdin", func(t *testing.T) {
			// A task that would read as a flag goes on stdin; codex's
			// persona system prompt goes before it.
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			gitInit(t, dir)
			s := newScripted(step{Text: "read"})
			e := newScriptedEnv(t, s)
			r := &persona.Resolved{ID: "editor", Harness: h, Model: runModels[h], SystemPrompt: "Persona prompt for stdin.",
				Permissions: persona.Permissions{Mode: oneShotModes[h]}}
			const task = "--- task given on stdin"
			raw, out, err := runOneShot(t, e, dir, r, harness.OneShot{Task: task})
			if err != nil {
				t.Fatalf("ParseOutput: %v\n%s", err, raw)
			}
			checkOutcome(t, out, "read")
			sawTask, sawPrompt := false, false
			for _, body := range s.requests() {
				sawTask = sawTask || bytes.Contains(body, []byte(task))
				sawPrompt = sawPrompt || bytes.Contains(body, []byte(r.SystemPrompt))
			}
			if !sawTask || !sawPrompt {
				t.Errorf("the model saw the task: %v, the system prompt: %v", sawTask, sawPrompt)
			}
		})
		if h == "codex" {
			continue
		}
		t.Run(h+"/denied", func(t *testing.T) {
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			gitInit(t, dir)
			s := newScripted(writeStep(h), step{Text: "could not write"})
			e := newScriptedEnv(t, s)
			r := &persona.Resolved{ID: "editor", Harness: h, Model: runModels[h],
				Permissions: persona.Permissions{Mode: "default"}}
			raw, out, err := runOneShot(t, e, dir, r, harness.OneShot{Task: oneShotTask})
			record(t, h+"-denied"+ext, raw, map[string]string{dir: "/sandbox", e.home: "/home"})
			if err != nil {
				t.Fatalf("ParseOutput: %v\n%s", err, raw)
			}
			if out.SessionID == "" || out.Usage.Input == 0 {
				t.Errorf("outcome %+v: want a session id and usage", out)
			}
			if len(out.Denials) == 0 {
				t.Errorf("no denial read from:\n%s", raw)
			}
			if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
				t.Errorf("out.txt was written")
			}
		})
	}
}

func checkOutcome(t *testing.T, out *harness.Outcome, final string) {
	t.Helper()
	if out.SessionID == "" {
		t.Errorf("no session id")
	}
	if out.Final != final {
		t.Errorf("final message %q, want %q", out.Final, final)
	}
	if out.Usage.Input == 0 || out.Usage.Output == 0 {
		t.Errorf("usage %+v, want input and output above zero", out.Usage)
	}
	if out.Error {
		t.Errorf("error reported: %s", out.ErrorText)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
}
