//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// pickModel is a loopback Anthropic model for workforce pick: it answers
// every Messages request with the text answer, as the model answers pick,
// and records each request. (The scripted model answers only the requests
// that offer tools, and pick offers the model none.)
type pickModel struct {
	mu     sync.Mutex
	answer string
	bodies [][]byte
	paths  []string
}

func (m *pickModel) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var in struct {
		Model  string
		Stream bool
	}
	json.Unmarshal(body, &in)
	m.mu.Lock()
	n := len(m.bodies)
	m.bodies = append(m.bodies, body)
	m.paths = append(m.paths, req.Method+" "+req.URL.Path)
	answer := m.answer
	m.mu.Unlock()
	switch {
	case strings.Contains(req.URL.Path, ":"):
		writeGemini(w, req.URL.Path, body, step{Text: answer}, n) // gemini_test.go
	case strings.HasSuffix(req.URL.Path, "/messages/count_tokens"):
		writeJSON(w, map[string]any{"input_tokens": 1})
	case strings.HasSuffix(req.URL.Path, "/messages"):
		writeAnthropic(w, in.Model, in.Stream, step{Text: answer}, n)
	default:
		writeJSON(w, map[string]any{})
	}
}

// messages returns the Messages requests recorded since the first from,
// decoded.
func (m *pickModel) messages(t *testing.T, from int) []map[string]any {
	return m.requests(t, from, "/messages")
}

// requests returns the requests to paths ending in suffix recorded since
// the first from, decoded.
func (m *pickModel) requests(t *testing.T, from int, suffix string) []map[string]any {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []map[string]any
	for i := from; i < len(m.bodies); i++ {
		if !strings.HasSuffix(m.paths[i], suffix) {
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(m.bodies[i], &v); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		out = append(out, v)
	}
	return out
}

func (m *pickModel) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.bodies)
}

// runPick runs `workforce pick ARGS...` in dir with vars, stdin not a
// terminal, and returns its stdout, stderr and exit status.
func runPick(t *testing.T, vars []string, dir string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, workforce, append([]string{"pick"}, args...)...)
	cmd.Dir, cmd.Env = dir, vars
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("workforce pick timed out:\nstdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("workforce pick: %v", err)
	}
	t.Logf("workforce pick %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	return stdout.String(), stderr.String(), code
}

// TestPick runs `workforce pick` through the real claude against a
// loopback model that answers with the JSON line: the request carries the
// system prompt, the task and the candidates, with the Haiku model and no
// tool offered; a match prints the id (exit 0), an answer of low
// confidence or naming no persona is no match (exit 2), and --run runs the
// persona picked on the task.
func TestPick(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitInit(t, dir)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("e2e\n"), 0o644)
	model := &pickModel{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	e := newScriptedEnv(t, newScripted())
	pdir := filepath.Join(e.home, ".agentworkforce", "workforce", "personas")
	os.MkdirAll(pdir, 0o755)
	os.WriteFile(filepath.Join(pdir, "sql-reviewer.json"), []byte(`{"id": "sql-reviewer", "intent": "review",
 "description": "Reviews SQL migrations for locks and rollback safety.",
 "tiers": {"best": {"harness": "claude", "model": "`+runModels["claude"]+`"}}}`), 0o644)
	var vars []string
	for _, v := range workforceEnv(e, dir, filepath.Dir(dir)) {
		if strings.HasPrefix(v, "ANTHROPIC_BASE_URL=") {
			v = "ANTHROPIC_BASE_URL=" + srv.URL
		}
		vars = append(vars, v)
	}
	const task = "check the new migration in db/ for table locks"

	t.Run("match", func(t *testing.T) {
		model.answer = `{"persona": "sql-reviewer", "confidence": "high", "reason": "The task reviews a migration."}`
		from := model.count()
		stdout, stderr, code := runPick(t, vars, dir, task)
		if code != 0 || stdout != "sql-reviewer\n" {
			t.Fatalf("exit %d, stdout %q; want 0, sql-reviewer\nstderr:\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stderr, "picked sql-reviewer (high): The task reviews a migration.") {
			t.Errorf("stderr %q lacks the confidence and reason", stderr)
		}
		reqs := model.messages(t, from)
		if len(reqs) != 1 {
			t.Fatalf("%d Messages requests, want 1", len(reqs))
		}
		req := reqs[0]
		if req["model"] != "claude-haiku-4-5-20251001" {
			t.Errorf("model %v, want the Haiku of pick", req["model"])
		}
		if tools, _ := req["tools"].([]any); len(tools) != 0 {
			var names []string
			for _, tl := range tools {
				names = append(names, toolName(tl.(map[string]any)))
			}
			t.Errorf("the model is offered tools %v, want none", names)
		}
		all := strings.Join(appendStrings(nil, map[string]any(req)["system"]), "\n")
		if !strings.Contains(all, "You pick the single best persona") {
			t.Errorf("the system prompt lacks pick's:\n%s", all)
		}
		msgs := strings.Join(appendStrings(nil, req["messages"]), "\n")
		for _, want := range []string{"Task:\n" + task, "- sql-reviewer (review): Reviews SQL migrations for locks and rollback safety.", "- code-reviewer (review): "} {
			if !strings.Contains(msgs, want) {
				t.Errorf("the request lacks %q:\n%s", want, msgs)
			}
		}
		sessions, _ := os.ReadDir(filepath.Join(e.home, ".agentworkforce", "workforce", "sessions"))
		if len(sessions) != 0 {
			t.Errorf("pick left sessions %v", sessions)
		}
	})

	t.Run("json/low", func(t *testing.T) {
		model.answer = `{"persona": "sql-reviewer", "confidence": "low", "reason": "Maybe."}`
		stdout, _, code := runPick(t, vars, dir, task, "--json")
		if code != 2 || stdout != `{"persona":null,"confidence":"low","reason":"only low confidence in sql-reviewer: Maybe."}`+"\n" {
			t.Errorf("exit %d, stdout %q; want 2 and no persona", code, stdout)
		}
	})

	t.Run("unknown", func(t *testing.T) {
		model.answer = `{"persona": "dba", "confidence": "high", "reason": "A DBA knows."}`
		stdout, stderr, code := runPick(t, vars, dir, task)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "the model named dba, which is no persona of the layers") {
			t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, the unknown name", code, stdout, stderr)
		}
	})

	t.Run("run", func(t *testing.T) {
		model.answer = `{"persona": "sql-reviewer", "confidence": "medium", "reason": "A migration."}`
		from := model.count()
		stdout, stderr, code := runPick(t, vars, dir, task, "--run", "--json")
		var res report.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("stdout is not one result: %v\n%s", err, stdout)
		}
		if code != 0 || res.Status != "succeeded" || res.Persona != "sql-reviewer" {
			t.Errorf("exit %d, status %q, persona %q; want 0, succeeded, sql-reviewer\nstderr:\n%s", code, res.Status, res.Persona, stderr)
		}
		reqs := model.messages(t, from)
		if len(reqs) < 2 {
			t.Fatalf("%d Messages requests, want pick's and the run's", len(reqs))
		}
		run := reqs[len(reqs)-1]
		if run["model"] != runModels["claude"] || !strings.Contains(strings.Join(appendStrings(nil, run["messages"]), "\n"), task) {
			t.Errorf("the run's request (model %v) lacks the task", run["model"])
		}
	})
}

// TestPickGemini runs `workforce pick` through the real gemini-cli, chosen
// by "pick": {"harness": "gemini", "model": ...} in config.json, against a
// loopback Gemini API model that answers with the JSON line: one
// conversation request, with the model named, pick's system prompt, the
// task and the candidates, and no tool offered; the answer is read as
// claude's is (a match prints the id; low confidence is no match).
func TestPickGemini(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitInit(t, dir)
	model := &pickModel{}
	srv := httptest.NewServer(model)
	t.Cleanup(srv.Close)
	e := newScriptedEnv(t, newScripted())
	home := filepath.Join(e.home, ".agentworkforce", "workforce")
	pdir := filepath.Join(home, "personas")
	os.MkdirAll(pdir, 0o755)
	os.WriteFile(filepath.Join(pdir, "sql-reviewer.json"), []byte(`{"id": "sql-reviewer", "intent": "review",
 "description": "Reviews SQL migrations for locks and rollback safety.",
 "tiers": {"best": {"harness": "gemini", "model": "`+geminiModel+`"}}}`), 0o644)
	os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"pick": {"harness": "gemini", "model": "gemini-2.5-flash"}}`), 0o644)
	var vars []string
	for _, v := range workforceEnv(e, dir, filepath.Dir(dir)) {
		if strings.HasPrefix(v, "GOOGLE_GEMINI_BASE_URL=") {
			v = "GOOGLE_GEMINI_BASE_URL=" + srv.URL
		}
		vars = append(vars, v)
	}
	const task = "check the new migration in db/ for table locks"

	t.Run("match", func(t *testing.T) {
		model.answer = `{"persona": "sql-reviewer", "confidence": "high", "reason": "The task reviews a migration."}`
		from := model.count()
		stdout, stderr, code := runPick(t, vars, dir, task)
		if code != 0 || stdout != "sql-reviewer\n" {
			t.Fatalf("exit %d, stdout %q; want 0, sql-reviewer\nstderr:\n%s", code, stdout, stderr)
		}
		if !strings.Contains(stderr, "picked sql-reviewer (high): The task reviews a migration.") {
			t.Errorf("stderr %q lacks the confidence and reason", stderr)
		}
		model.mu.Lock()
		t.Logf("requests: %v", model.paths[from:])
		model.mu.Unlock()
		reqs := model.requests(t, from, ":streamGenerateContent")
		if len(reqs) != 1 {
			t.Fatalf("%d conversation requests, want 1", len(reqs))
		}
		req := reqs[0]
		var offered []string
		tools, _ := req["tools"].([]any)
		for _, tl := range tools {
			fds, _ := tl.(map[string]any)["functionDeclarations"].([]any)
			for _, fd := range fds {
				offered = append(offered, toolName(fd.(map[string]any)))
			}
		}
		if len(offered) != 0 {
			t.Errorf("the model is offered tools %v, want none", offered)
		}
		sys := strings.Join(appendStrings(nil, req["systemInstruction"]), "\n")
		if !strings.Contains(sys, "You pick the single best persona") {
			t.Errorf("the system instruction lacks pick's:\n%s", sys)
		}
		msgs := strings.Join(appendStrings(nil, req["contents"]), "\n")
		for _, want := range []string{"Task:\n" + task, "- sql-reviewer (review): Reviews SQL migrations for locks and rollback safety.", "- code-reviewer (review): "} {
			if !strings.Contains(msgs, want) {
				t.Errorf("the request lacks %q:\n%s", want, msgs)
			}
		}
		model.mu.Lock()
		path := model.paths[from+slices.IndexFunc(model.paths[from:], func(p string) bool { return strings.HasSuffix(p, ":streamGenerateContent") })]
		model.mu.Unlock()
		if !strings.Contains(path, "/models/gemini-2.5-flash:") {
			t.Errorf("request %s, want the model of config.json, gemini-2.5-flash", path)
		}
		sessions, _ := os.ReadDir(filepath.Join(home, "sessions"))
		if len(sessions) != 0 {
			t.Errorf("pick left sessions %v", sessions)
		}
	})

	t.Run("json/low", func(t *testing.T) {
		model.answer = `{"persona": "sql-reviewer", "confidence": "low", "reason": "Maybe."}`
		stdout, _, code := runPick(t, vars, dir, task, "--json")
		if code != 2 || stdout != `{"persona":null,"confidence":"low","reason":"only low confidence in sql-reviewer: Maybe."}`+"\n" {
			t.Errorf("exit %d, stdout %q; want 2 and no persona", code, stdout)
		}
	})
}
