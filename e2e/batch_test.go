//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/history/sessions"
	"github.com/seed-3bc194a6/workforce/report"
)

// setVar is vars with kv ("NAME=VALUE") in place of NAME's value.
func setVar(vars []string, kv string) []string {
	name, _, _ := strings.Cut(kv, "=")
	out := slices.DeleteFunc(slices.Clone(vars), func(v string) bool { return strings.HasPrefix(v, name+"=") })
	return append(out, kv)
}

// varOf is NAME's value in vars.
func varOf(vars []string, name string) string {
	for _, v := range vars {
		if val, ok := strings.CutPrefix(v, name+"="); ok {
			return val
		}
	}
	return ""
}

// runBatch runs workforce with args in dir, with no wrapper in between
// and stdin not a terminal, and returns its stdout and exit status.
func runBatch(t *testing.T, vars []string, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workforce, args...)
	cmd.Dir = dir
	cmd.Env = vars
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
	return stdout.String(), code
}

// jsonLines decodes each line of out into a new T.
func jsonLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var all []T
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("not a JSON line: %v: %q", err, sc.Text())
		}
		all = append(all, v)
	}
	return all
}

// TestBatch runs a batch of three one-shot tasks through the local pool,
// all at once, on the real harnesses claude, codex, opencode and gemini, each task
// in a project of its own (a git repository). Each harness talks to a
// scripted model of its own, which makes it write out.txt: a batch's
// tasks share one environment, and a scripted model serves one
// conversation at a time. Every task's result (--json, with its task id)
// says succeeded with out.txt created and the usage its scripted model
// reported; out.txt is in each project, synced
// back; the batch's state has every task done and succeeded; running the
// file again skips them all, and no harness runs.
func TestBatch(t *testing.T) {
	harnesses := []string{"claude", "codex", "opencode", "gemini"}
	models := map[string]*scripted{}
	envs := map[string]*scriptedEnv{}
	for _, h := range harnesses {
		models[h] = newScripted(writeStep(h), step{Text: "finished"})
		envs[h] = newScriptedEnv(t, models[h])
	}
	// The environment of the claude one, with codex's, opencode's and
	// gemini's configurations naming their own scripted models.
	home := envs["claude"].home
	vars := setVar(envs["claude"].vars, "CODEX_HOME="+varOf(envs["codex"].vars, "CODEX_HOME"))
	vars = setVar(vars, "OPENCODE_CONFIG="+varOf(envs["opencode"].vars, "OPENCODE_CONFIG"))
	vars = setVar(vars, "GOOGLE_GEMINI_BASE_URL="+varOf(envs["gemini"].vars, "GOOGLE_GEMINI_BASE_URL"))
	vars = append(vars, "AGENT_WORKFORCE_HOME="+filepath.Join(home, ".agentworkforce", "workforce"))

	root, _ := filepath.EvalSymlinks(t.TempDir())
	var lines []string
	for _, h := range harnesses {
		dir := filepath.Join(root, h)
		os.MkdirAll(dir, 0o755)
		gitInit(t, dir)
		os.WriteFile(filepath.Join(dir, "README.md"), []byte("e2e\n"), 0o644)
		writeOneShotPersona(t, home, "editor-"+h, h, writerPermissions[h])
		lines = append(lines, fmt.Sprintf(`{"id": "write-%s", "persona": "editor-%s", "task": "write the file", "dir": %q}`, h, h, h))
	}
	file := filepath.Join(root, "tasks.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	vars = append(vars, "PWD="+root)

	out, code := runBatch(t, vars, root, "batch", "tasks.jsonl", "--jobs", "4", "--json")
	if code != 0 {
		t.Errorf("exit %d, want 0", code)
	}
	results := map[string]report.Result{}
	for _, r := range jsonLines[report.Result](t, out) {
		results[r.TaskID] = r
	}
	if len(results) != len(harnesses) {
		t.Errorf("%d results, want one a task", len(results))
	}
	for _, h := range harnesses {
		id := "write-" + h
		r, ok := results[id]
		switch {
		case !ok:
			t.Errorf("task %s: no result", id)
			continue
		case r.Status != report.StatusSucceeded || r.Harness != h || r.SessionID == "" || r.HarnessSessionID == "":
			t.Errorf("task %s: status %q on %q, session %q, harness session %q; want succeeded on %s, both sessions", id, r.Status, r.Harness, r.SessionID, r.HarnessSessionID, h)
		case r.Files == nil || !slices.Equal(r.Files.Created, []string{"out.txt"}):
			t.Errorf("task %s: files %+v, want out.txt created", id, r.Files)
		}
		if got, err := os.ReadFile(filepath.Join(root, h, "out.txt")); err != nil || string(got) != written {
			t.Errorf("task %s: out.txt in its project = %q, %v; want %q (synced back)", id, got, err, written)
		}
		if len(models[h].mainRequests()) == 0 {
			t.Errorf("task %s: the scripted model of %s got no request", id, h)
		}
		checkResultUsage(t, id, []report.Result{r}, reportedTokens(models[h], h))
	}

	status, code := runBatch(t, vars, root, "batch", "status", "tasks.jsonl", "--json")
	if code != 0 {
		t.Errorf("batch status: exit %d", code)
	}
	states := jsonLines[batch.TaskState](t, status)
	if len(states) != len(harnesses) {
		t.Errorf("%d task states, want %d", len(states), len(harnesses))
	}
	for _, ts := range states {
		if ts.Phase != batch.PhaseDone || ts.Status != report.StatusSucceeded || ts.ExitCode == nil || *ts.ExitCode != 0 ||
			ts.Result == nil || ts.Result.SessionID != results[ts.ID].SessionID {
			t.Errorf("task %s: state %+v, want done, succeeded, exit 0, with its result", ts.ID, ts)
		}
	}

	// Again: every task is done and unchanged, so none runs.
	before := map[string]int{}
	for _, h := range harnesses {
		before[h] = len(models[h].mainRequests())
	}
	again, code := runBatch(t, vars, root, "batch", "tasks.jsonl")
	if code != 0 {
		t.Errorf("again: exit %d, want 0", code)
	}
	for _, h := range harnesses {
		if !strings.Contains(again, "task write-"+h+": skipped, done before: succeeded\n") {
			t.Errorf("again: task write-%s not skipped", h)
		}
		if n := len(models[h].mainRequests()); n != before[h] {
			t.Errorf("again: %s was asked %d more times", h, n-before[h])
		}
	}
}

// checkResultUsage checks that the usage of results sums to what the
// scripted model reported (want, counted as package sessions counts).
func checkResultUsage(t *testing.T, what string, results []report.Result, want sessions.Tokens) {
	t.Helper()
	var got sessions.Tokens
	for _, r := range results {
		u := r.Usage
		if u == nil || u.InputTokens == nil || u.OutputTokens == nil || u.CachedTokens == nil {
			t.Errorf("%s: usage %+v, want tokens", what, u)
			return
		}
		got.Add(sessions.Tokens{Input: *u.InputTokens, Output: *u.OutputTokens, CacheRead: *u.CachedTokens})
	}
	want.CacheWrite = 0
	if got != want {
		t.Errorf("%s: usage %+v, the scripted model reported %+v", what, got, want)
	}
}
