//go:build e2e

// Gemini CLI (@google/gemini-cli, pinned in versions.json) against the
// scripted model, speaking the Gemini API. What was measured on 0.61.0
// (node 20):
//
// Endpoints. The conversation is POST
// /v1beta/models/MODEL:streamGenerateContent?alt=sse, its tools one object
// {"functionDeclarations": [...]}; a tool call is a functionCall part of
// the model's content, its result a functionResponse part of the next
// request. Without -m, the model router first asks a small model
// (:generateContent, generationConfig.responseJsonSchema) for a
// complexity score, five times when the answer does not fit the schema
// (about 90 s of back-off): writeGemini answers such a request with a
// JSON object that fits the schema, and the tests name a model anyway.
// :countTokens gets {"totalTokens": 1}.
//
// Login. GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL are not enough: without
// security.auth.selectedType "gemini-api-key" in its settings it exits 41
// ("Invalid auth method selected."). geminiVars writes it into the test
// home's ~/.gemini/settings.json, as a user who logged in with a key has
// it.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// geminiModel is the model every gemini run names (-m): an explicit model
// skips the router's side requests.
const geminiModel = "gemini-2.5-pro"

// geminiHello starts gemini non-interactively with a one-word prompt. The
// test directories are trusted by the environment (geminiVars); -m skips
// the model router.
var geminiHello = []string{"-p", "hello", "-m", geminiModel}

// geminiMarker starts each loaded file's block in the text gemini sends.
const geminiMarker = "--- Context from: "

// geminiFileNames are the instruction file names the test user configures
// (context.fileName): with GEMINI.md, which gemini always keeps, they make
// the discovery trees of e2e_test.go, written for AGENTS.md and
// CLAUDE.md, say something about gemini.
var geminiFileNames = []string{"AGENTS.md", "CLAUDE.md"}

// geminiVars writes the test user's gemini settings into home (a login
// with an API key, no usage statistics, the file names of
// geminiFileNames) and returns the variables that point gemini at the
// scripted model url. The test directories are trusted
// (GEMINI_CLI_TRUST_WORKSPACE): headless gemini refuses an untrusted one
// (exit 55), and the trees are the user's own.
func geminiVars(t *testing.T, home, url string) []string {
	t.Helper()
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
		"general":  map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"context":  map[string]any{"fileName": geminiFileNames},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{
		"GEMINI_API_KEY=e2e",
		"GOOGLE_GEMINI_BASE_URL=" + url,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}
}

// writeGemini answers a request of the Gemini API: a streamed
// conversation turn (server-sent events), a JSON answer fitting the
// request's responseJsonSchema, or a token count.
func writeGemini(w http.ResponseWriter, path string, body []byte, st step, n int) {
	switch {
	case strings.HasSuffix(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 1})
		return
	case strings.HasSuffix(path, ":generateContent"):
		var req struct {
			GenerationConfig struct {
				ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
				ResponseSchema     map[string]any `json:"responseSchema"`
			} `json:"generationConfig"`
		}
		json.Unmarshal(body, &req)
		schema := req.GenerationConfig.ResponseJSONSchema
		if schema == nil {
			schema = req.GenerationConfig.ResponseSchema
		}
		if schema != nil {
			b, _ := json.Marshal(fitSchema(schema))
			st = step{Text: string(b)}
		}
		writeJSON(w, geminiResponse(st, n))
		return
	case strings.HasSuffix(path, ":streamGenerateContent"):
		e := newSSE(w)
		e.send("", geminiResponse(st, n))
		return
	}
	writeJSON(w, map[string]any{})
}

// geminiResponse is one GenerateContentResponse: a text part or a
// functionCall part, with the step's usage (usageOf) as the Gemini API
// reports it: promptTokenCount counts the cached tokens
// (cachedContentTokenCount) among the input; no cache writes.
func geminiResponse(st step, n int) map[string]any {
	u := usageOf(st)
	part := map[string]any{"text": st.Text}
	if st.Tool != "" {
		args := st.Args
		if args == nil {
			args = map[string]any{}
		}
		part = map[string]any{"functionCall": map[string]any{"name": st.Tool, "args": args}}
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": u.Input, "candidatesTokenCount": u.Output,
			"cachedContentTokenCount": u.CacheRead, "totalTokenCount": u.Input + u.Output},
		"modelVersion": geminiModel,
		"responseId":   fmt.Sprintf("e2e-%d", n),
	}
}

// fitSchema returns a value that fits a Gemini API schema (OBJECT,
// STRING, INTEGER, ...; an enum's first value).
func fitSchema(schema map[string]any) any {
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	t, _ := schema["type"].(string)
	switch strings.ToUpper(t) {
	case "OBJECT":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				out[k] = fitSchema(m)
			}
		}
		return out
	case "ARRAY":
		return []any{}
	case "INTEGER", "NUMBER":
		return 1
	case "BOOLEAN":
		return false
	}
	return "e2e"
}

// geminiBlocks finds the loaded instruction files in a text gemini sends:
// the project's in the first user message, inside <project_context>, the
// global ones in the system instruction, inside <loaded_context>.
var (
	geminiProject = regexp.MustCompile(`(?s)<project_context>\n(.*?)\n</project_context>`)
	geminiGlobal  = regexp.MustCompile(`(?s)<loaded_context>\n(--- Context from: .*?)\n</loaded_context>`)
)

// geminiSent returns the instruction text gemini sent in its first
// request, as the gemini profile renders it: the global blocks, then the
// project's, joined by a blank line; "" when it sent none.
func (e *env) geminiSent() string {
	e.rec.mu.Lock()
	var first []byte
	if len(e.rec.bodies) > 0 {
		first = e.rec.bodies[0]
	}
	e.rec.mu.Unlock()
	var global, project string
	for _, s := range stringsOf(first) {
		if m := geminiProject.FindStringSubmatch(s); m != nil {
			project = m[1]
		} else if m := geminiGlobal.FindStringSubmatch(s); m != nil && !strings.Contains(s, "<session_context>") {
			global = m[1]
		}
	}
	switch {
	case global == "":
		return project
	case project == "":
		return global
	}
	return global + "\n\n" + project
}

// geminiOptions are the discovery options of the gemini profile in the
// environment vars: its settings, read as `workforce context` reads them.
func geminiOptions(p discover.Profile, vars []string) discover.Options {
	return discover.FromEnv(p, envLookup(vars))
}

// envLookup returns a lookup of the variables vars (NAME=VALUE).
func envLookup(vars []string) func(string) string {
	m := map[string]string{}
	for _, kv := range vars {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// geminiTrees are layouts that only gemini's rules tell apart, beside the
// shared trees of e2e_test.go; settings, when set, replaces the test
// user's settings.json, and skipTrust runs gemini with --skip-trust in a
// directory nothing trusts.
var geminiTrees = []struct {
	name, dir, archive string
	settings           map[string]any
	skipTrust          bool
	// geminiHome, when set, is GEMINI_CLI_HOME, relative to the tree.
	geminiHome string
	// want and notWant are texts the expected instruction text must
	// hold, and must not.
	want, notWant []string
}{
	{name: "GEMINI.md files", dir: "repo/a", archive: `
-- repo/.git/HEAD --
-- repo/GEMINI.md --
root gemini
-- repo/.gemini/GEMINI.md --
dot gemini, never read
-- repo/a/GEMINI.md --
a gemini
-- repo/a/b/GEMINI.md --
b gemini, below the working directory
-- home/.gemini/AGENTS.md --
global agents
-- home/.gemini/GEMINI.md --
global gemini
`, want: []string{"root gemini", "a gemini", "global agents", "global gemini"}, notWant: []string{"dot gemini", "b gemini"}},
	{name: "sorted by path", dir: "repo/A", archive: `
-- repo/.git/HEAD --
-- repo/CLAUDE.md --
root claude
-- repo/GEMINI.md --
root gemini
-- repo/A/AGENTS.md --
A agents, sorted first
`, want: []string{"A agents", "root claude"}},
	{name: "imports", dir: "repo", archive: `
-- repo/.git/HEAD --
-- repo/GEMINI.md --
Read @./docs/rules.md and @docs/missing.md, not ` + "`@./docs/rules.md`" + ` in code, nor @../outside.md.
-- repo/docs/rules.md --
the rules, then @./more.md
-- repo/docs/more.md --
more rules
-- outside.md --
outside the repository
`, want: []string{"<!-- Imported from: ./docs/rules.md -->", "more rules", "Import failed: docs/missing.md", "Path traversal attempt"}, notWant: []string{"outside the repository"}},
	{name: "no git", dir: "plain/sub", archive: `
-- plain/GEMINI.md --
plain gemini, above the working directory
-- plain/sub/GEMINI.md --
sub gemini
`, want: []string{"sub gemini"}, notWant: []string{"plain gemini"}},
	{name: "boundary markers", dir: "up/repo/a", archive: `
-- up/ROOT --
-- up/GEMINI.md --
above the git root, below the marker
-- up/repo/.git/HEAD --
-- up/repo/a/GEMINI.md --
a gemini
`, settings: map[string]any{"context": map[string]any{"memoryBoundaryMarkers": []string{"ROOT"}}},
		want: []string{"above the git root", "a gemini"}},
	{name: "project settings in a trusted directory", dir: "repo", archive: `
-- repo/.git/HEAD --
-- repo/.gemini/settings.json --
{"context": {"fileName": "TEAM.md"}}
-- repo/TEAM.md --
team rules from the project's settings
`, want: []string{"team rules"}},
	{name: "project settings with --skip-trust", dir: "repo", archive: `
-- repo/.git/HEAD --
-- repo/.gemini/settings.json --
{"context": {"fileName": "TEAM.md"}}
-- repo/TEAM.md --
team rules from the project's settings
-- repo/GEMINI.md --
gemini rules
`, skipTrust: true, want: []string{"gemini rules"}, notWant: []string{"team rules"}},
	{name: "GEMINI_CLI_HOME", dir: "repo", archive: `
-- repo/.git/HEAD --
-- repo/NOTES.md --
notes, a name of the settings in GEMINI_CLI_HOME
-- ghome/.gemini/settings.json --
{"security": {"auth": {"selectedType": "gemini-api-key"}}, "context": {"fileName": ["NOTES.md"]}}
-- ghome/.gemini/GEMINI.md --
global gemini of GEMINI_CLI_HOME
-- home/.gemini/GEMINI.md --
global gemini of the home, not read
`, geminiHome: "ghome", want: []string{"notes, a name", "global gemini of GEMINI_CLI_HOME"}, notWant: []string{"of the home, not read"}},
}

// geminiTreeEnv makes tree's files (home/ goes into the test user's home)
// and returns the environment and the working directory.
func geminiTreeEnv(t *testing.T, archive string, settings map[string]any, skipTrust bool, geminiHome string) (*env, string) {
	t.Helper()
	root := makeTree(t, archive)
	e := newEnv(t)
	if fi, err := os.Stat(filepath.Join(root, "home")); err == nil && fi.IsDir() {
		if out, err := exec.Command("cp", "-a", filepath.Join(root, "home")+"/.", e.home).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v: %s", err, out)
		}
	}
	if settings != nil {
		path := filepath.Join(e.home, ".gemini", "settings.json")
		cur, err := discover.ReadGeminiSettings(path)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range settings {
			cur[k] = v
		}
		b, _ := json.Marshal(cur)
		os.WriteFile(path, b, 0o644)
	}
	if skipTrust {
		var vars []string
		for _, kv := range e.vars {
			if !strings.HasPrefix(kv, "GEMINI_CLI_TRUST_WORKSPACE=") {
				vars = append(vars, kv)
			}
		}
		e.vars = vars
	}
	if geminiHome != "" {
		e.vars = append(e.vars, "GEMINI_CLI_HOME="+filepath.Join(root, geminiHome))
	}
	return e, root
}

// TestGeminiProfile runs gemini on the trees only its rules tell apart
// and compares what it sent with the gemini profile, which reads the
// test user's settings (discover.FromEnv) as `workforce context` does.
func TestGeminiProfile(t *testing.T) {
	p, _ := discover.ForHarness("gemini")
	bin := filepath.Join(binDir, "gemini")
	for _, tree := range geminiTrees {
		t.Run(tree.name, func(t *testing.T) {
			e, root := geminiTreeEnv(t, tree.archive, tree.settings, tree.skipTrust, tree.geminiHome)
			dir := filepath.Join(root, tree.dir)
			want, err := discover.Chain(p, dir, geminiOptions(p, e.vars))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tree.want {
				if !strings.Contains(want.Text, w) {
					t.Errorf("the profile's text lacks %q:\n%s", w, want.Text)
				}
			}
			for _, w := range tree.notWant {
				if strings.Contains(want.Text, w) {
					t.Errorf("the profile's text holds %q:\n%s", w, want.Text)
				}
			}
			args := geminiHello
			if tree.skipTrust {
				args = append(slices.Clone(args), "--skip-trust")
			}
			e.run(t, dir, append([]string{bin}, args...)...)
			if err := checkSent("gemini", e.geminiSent(), want.Text); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestGeminiProfileCanFail shows the check catches a wrong gemini
// profile: blocks joined by one newline, files in walk order instead of
// sorted, imports left as written.
func TestGeminiProfileCanFail(t *testing.T) {
	good, _ := discover.ForHarness("gemini")
	bin := filepath.Join(binDir, "gemini")
	for _, c := range []struct {
		tree  int
		wrong func(*discover.Profile)
	}{
		{0, func(p *discover.Profile) { p.Join = "\n" }},
		{1, func(p *discover.Profile) { p.SortPaths = false }},
		{2, func(p *discover.Profile) { p.Imports = false }},
	} {
		tree := geminiTrees[c.tree]
		e, root := geminiTreeEnv(t, tree.archive, tree.settings, tree.skipTrust, tree.geminiHome)
		dir := filepath.Join(root, tree.dir)
		p := good
		c.wrong(&p)
		want, err := discover.Chain(p, dir, geminiOptions(p, e.vars))
		if err != nil {
			t.Fatal(err)
		}
		e.run(t, dir, append([]string{bin}, geminiHello...)...)
		if checkSent("gemini", e.geminiSent(), want.Text) == nil {
			t.Errorf("%s: a deliberately wrong profile passed the check", tree.name)
		}
	}
}

// geminiSessionID is the id fixed before gemini's first run.
const geminiSessionID = "8c4f5a1e-2b6d-4e7f-9a0b-1c2d3e4f5a6b"

// TestGeminiOneShot runs gemini in its one-shot mode with the argv
// PlanOneShot builds (-p TASK -o stream-json): a run that writes a file
// (acceptEdits: --approval-mode auto_edit), with the session id fixed
// before it; its resumed conversation; a run whose mode (default) does
// not offer the write, which fails as tool_not_registered and gemini
// still exits 0 (a denial); and the failures: an HTTP 400 from the model
// (exit 144), no auth method in the settings (exit 41), an untrusted
// directory without --skip-trust (exit 55). With WORKFORCE_E2E_RECORD=1
// it saves the outputs as package harness's fixtures.
func TestGeminiOneShot(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	gitInit(t, dir)
	s := newScripted(writeStep("gemini"), step{Text: "finished"}, step{Text: "resumed"})
	e := newScriptedEnv(t, s)
	dirs := map[string]string{dir: "/sandbox", e.home: "/home"}
	r := &persona.Resolved{ID: "editor", Harness: "gemini", Model: geminiModel,
		Permissions: persona.Permissions{Mode: oneShotModes["gemini"]}}
	raw, out, err := runOneShot(t, e, dir, r, harness.OneShot{Task: oneShotTask, SessionID: geminiSessionID})
	record(t, "gemini-write.jsonl", raw, dirs)
	if err != nil {
		t.Fatalf("ParseOutput: %v\n%s", err, raw)
	}
	checkOutcome(t, out, "finished")
	if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
		t.Errorf("out.txt = %q, %v; want %q", got, err, written)
	}
	if out.SessionID != geminiSessionID {
		t.Errorf("session id %q, want the one fixed before the run, %q", out.SessionID, geminiSessionID)
	}
	if len(out.Denials) > 0 {
		t.Errorf("denials %+v, want none", out.Denials)
	}
	sawWrite := false
	for _, ev := range out.Events {
		sawWrite = sawWrite || ev.Type == harness.EventToolUse && ev.Tool == "write_file" && ev.Status == "completed"
	}
	if !sawWrite {
		t.Errorf("no completed write_file among the events %+v", out.Events)
	}

	before := len(s.requests())
	raw, again, err := runOneShot(t, e, dir, r, harness.OneShot{Task: "say it again", Resume: out.SessionID})
	record(t, "gemini-resume.jsonl", raw, dirs)
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

	t.Run("denied", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		gitInit(t, dir)
		s := newScripted(writeStep("gemini"), step{Text: "could not write"})
		e := newScriptedEnv(t, s)
		r := &persona.Resolved{ID: "editor", Harness: "gemini", Model: geminiModel, Permissions: persona.Permissions{Mode: "default"}}
		raw, out, err := runOneShot(t, e, dir, r, harness.OneShot{Task: oneShotTask})
		record(t, "gemini-denied.jsonl", raw, map[string]string{dir: "/sandbox", e.home: "/home"})
		if err != nil {
			t.Fatalf("ParseOutput: %v\n%s", err, raw)
		}
		if len(out.Denials) != 1 || out.Denials[0].Tool != "write_file" {
			t.Errorf("denials %+v, want write_file", out.Denials)
		}
		if offered := s.toolNames(s.mainRequests()[0]); slices.Contains(offered, "write_file") {
			t.Errorf("write_file offered in default mode: %v", offered)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
			t.Errorf("out.txt was written")
		}
	})

	t.Run("http 400", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		gitInit(t, dir)
		e := newScriptedEnv(t, newScripted())
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"code":400,"message":"workforce e2e: a bad request","status":"INVALID_ARGUMENT"}}`)
		}))
		t.Cleanup(srv.Close)
		e.vars = append(e.vars, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
		r := &persona.Resolved{ID: "editor", Harness: "gemini", Model: geminiModel}
		stdout, stderr, code := runGeminiPlanned(t, e, dir, r, harness.OneShot{Task: "hello"})
		record(t, "gemini-http400.jsonl", stdout, map[string]string{dir: "/sandbox", e.home: "/home"})
		if code != 144 {
			t.Errorf("exit %d, want 144 (400 modulo 256)\nstderr:\n%s", code, stderr)
		}
		out, err := harness.ParseOutput("gemini", stdout)
		if err != nil || !out.Error || !strings.Contains(out.ErrorText, "a bad request") {
			t.Errorf("outcome %+v, %v: want the error of the model", out, err)
		}
	})

	t.Run("no auth method", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		gitInit(t, dir)
		e := newScriptedEnv(t, newScripted())
		os.WriteFile(filepath.Join(e.home, ".gemini", "settings.json"), []byte(`{"privacy": {"usageStatisticsEnabled": false}}`), 0o644)
		r := &persona.Resolved{ID: "editor", Harness: "gemini", Model: geminiModel}
		stdout, stderr, code := runGeminiPlanned(t, e, dir, r, harness.OneShot{Task: "hello"})
		record(t, "gemini-auth41.jsonl", stdout, map[string]string{dir: "/sandbox", e.home: "/home"})
		record(t, "gemini-auth41.stderr", []byte(stderr), map[string]string{dir: "/sandbox", e.home: "/home"})
		if code != 41 {
			t.Errorf("exit %d, want 41\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		if _, err := harness.ParseOutput("gemini", stdout); err == nil {
			t.Errorf("a result read from the output of a run that could not start:\n%s", stdout)
		}
	})

	t.Run("untrusted", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		gitInit(t, dir)
		e := newScriptedEnv(t, newScripted())
		var vars []string
		for _, kv := range e.vars {
			if !strings.HasPrefix(kv, "GEMINI_CLI_TRUST_WORKSPACE=") {
				vars = append(vars, kv)
			}
		}
		e.vars = vars
		// Without PlanOneShot, which passes --skip-trust here.
		cmd := exec.Command(filepath.Join(binDir, "gemini"), "-p", "hello", "-o", "stream-json", "-m", geminiModel)
		cmd.Dir, cmd.Env = dir, e.vars
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 55 {
			t.Errorf("%v, want exit 55\nstderr:\n%s", err, stderr.String())
		}
		record(t, "gemini-untrusted55.jsonl", stdout.Bytes(), map[string]string{dir: "/sandbox", e.home: "/home"})
		record(t, "gemini-untrusted55.stderr", stderr.Bytes(), map[string]string{dir: "/sandbox", e.home: "/home"})
		if !strings.Contains(stderr.String(), "not running in a trusted directory") {
			t.Errorf("stderr does not say why:\n%s", stderr.String())
		}
	})
}

// runGeminiPlanned runs gemini as PlanOneShot plans it and returns its
// output and exit status.
func runGeminiPlanned(t *testing.T, e *scriptedEnv, dir string, r *persona.Resolved, s harness.OneShot) ([]byte, string, int) {
	t.Helper()
	inv, err := harness.PlanOneShot(r, harness.Options{ConfigDir: t.TempDir(), Env: e.vars, Root: dir}, s)
	if err != nil {
		t.Fatalf("PlanOneShot: %v", err)
	}
	if err := inv.WriteFiles(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	exit, err := harness.Run(ctx, inv, dir, strings.NewReader(inv.Stdin), &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return stdout.Bytes(), stderr.String(), exit.Status()
}

// Markers of the persona TestGeminiWorkforce runs, each found nowhere
// else.
const (
	geminiPromptMarker = "Persona prompt of the gemini e2e run."
	geminiTextMarker   = "Persona instructions of the gemini e2e run."
	geminiRepoMarker   = "The repository's own GEMINI.md, hidden in overwrite mode."
)

// geminiPersona installs persona id for gemini in home: its prompt,
// instructions (the agentsMd channel), effort and permissions (JSON),
// and harness settings (JSON, without braces).
func geminiPersona(t *testing.T, home, id, permissions, settings string) {
	t.Helper()
	pdir := filepath.Join(home, ".agentworkforce", "workforce", "personas")
	os.MkdirAll(pdir, 0o755)
	spec := fmt.Sprintf(`{"id": %q, "intent": "test", "description": "e2e gemini persona",
 "agentsMdContent": %q, "permissions": %s,
 "tiers": {"best": {"harness": "gemini", "model": %q, "systemPrompt": %q, "harnessSettings": {%s}}}}`,
		id, geminiTextMarker+"\n", permissions, geminiModel, geminiPromptMarker, settings)
	if err := os.WriteFile(filepath.Join(pdir, id+".json"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
}

// geminiRunProject is oneShotProject for a gemini persona of geminiPersona,
// the repository holding a GEMINI.md of its own.
func geminiRunProject(t *testing.T, permissions, settings string, steps ...step) (string, *scripted, *scriptedEnv) {
	t.Helper()
	dir, s, e := oneShotProject(t, "gemini", "unused", "{}", steps...)
	os.WriteFile(filepath.Join(dir, "GEMINI.md"), []byte(geminiRepoMarker+"\n"), 0o644)
	geminiPersona(t, e.home, "editor", permissions, settings)
	return dir, s, e
}

// TestGeminiWorkforce runs `workforce run editor TASK --json` with the real
// gemini, confined (the default): the scripted model's write comes back
// through sync-back, with usage and gemini's session id; the first
// request carries the persona's prompt (in the system instruction), its
// instructions (the materialized GEMINI.md, the repository's hidden) and
// its effort (thinkingBudget 1024 for gemini-2.5-pro); the user's gemini
// home is left as it was. A persona whose mode would ask ends denied;
// a kept session resumes.
func TestGeminiWorkforce(t *testing.T) {
	dir, s, e := geminiRunProject(t, `{"mode": "acceptEdits"}`, `"reasoning": "low"`, writeStep("gemini"), step{Text: "finished"})
	before := homeSnapshot(t, e.home)
	res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file", "--keep")
	if res.Status != report.Status("succeeded") || code != 0 {
		t.Fatalf("status %q, exit %d; want succeeded, 0\nstderr:\n%s", res.Status, code, stderr)
	}
	if strings.Contains(stderr, "cannot confine") {
		t.Errorf("the run was not confined:\n%s", stderr)
	}
	if res.HarnessSessionID == "" || res.Message != "finished" {
		t.Errorf("session id %q, message %q", res.HarnessSessionID, res.Message)
	}
	if u := res.Usage; u == nil || u.InputTokens == nil || *u.InputTokens <= 0 || u.OutputTokens == nil || *u.OutputTokens <= 0 {
		t.Errorf("usage %+v, want input and output tokens above zero", u)
	}
	if res.Files == nil || !slices.Equal(res.Files.Created, []string{"out.txt"}) {
		t.Errorf("files %+v, want out.txt created", res.Files)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
		t.Errorf("out.txt in the real repository = %q, %v; want %q", got, err, written)
	}
	body := firstMain(t, s, stderr)
	system, _ := dig(body, "systemInstruction", "parts").([]any)
	var sys string
	for _, p := range system {
		if m, ok := p.(map[string]any); ok {
			sys += fmt.Sprint(m["text"])
		}
	}
	if !strings.Contains(sys, geminiPromptMarker) {
		t.Errorf("the system instruction lacks the persona's prompt")
	}
	user := strings.Join(stringsOf(mustJSON(t, dig(body, "contents"))), "\n")
	if strings.Count(user, geminiTextMarker) != 1 {
		t.Errorf("the first user message holds the persona's instructions %d times, want once:\n%s", strings.Count(user, geminiTextMarker), user)
	}
	if strings.Contains(user, geminiRepoMarker) || strings.Contains(sys, geminiRepoMarker) {
		t.Errorf("the repository's GEMINI.md reached the model in overwrite mode")
	}
	if b, ok := dig(body, "generationConfig", "thinkingConfig", "thinkingBudget").(float64); !ok || b != 1024 {
		t.Errorf("thinkingBudget %v, want 1024 (effort low)", dig(body, "generationConfig", "thinkingConfig"))
	}
	if diff := diffSnapshots(before, homeSnapshot(t, e.home)); len(diff) > 0 {
		t.Errorf("the user's home changed: %v", diff)
	}
	// What gemini wrote in its per-session home (its write set there).
	sessions, _ := filepath.Glob(filepath.Join(e.home, ".agentworkforce", "workforce", "sessions", "editor-*"))
	if len(sessions) == 1 {
		var wrote []string
		filepath.WalkDir(filepath.Join(sessions[0], "state", "gemini"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(sessions[0], p)
				wrote = append(wrote, rel)
			}
			return nil
		})
		t.Logf("the session's gemini home holds:\n%s", strings.Join(wrote, "\n"))
	}

	t.Run("resume", func(t *testing.T) {
		s.mu.Lock()
		s.steps, s.next = append(s.steps, step{Text: "resumed"}), len(s.steps)
		s.mu.Unlock()
		n := len(s.requests())
		again, code := workforceJSON(t, e, dir, "sessions", "resume", "editor", "say it again", "--json")
		if again.Status != report.Status("succeeded") || code != 0 || again.Message != "resumed" {
			t.Fatalf("status %q, exit %d, message %q; want succeeded, 0, resumed", again.Status, code, again.Message)
		}
		if again.HarnessSessionID != res.HarnessSessionID {
			t.Errorf("resumed session %q, want %q", again.HarnessSessionID, res.HarnessSessionID)
		}
		saw := false
		for _, b := range s.requests()[n:] {
			saw = saw || bytes.Contains(b, []byte("write the file"))
		}
		if !saw {
			t.Errorf("the resumed conversation's requests lack the first task")
		}
	})

	t.Run("denied", func(t *testing.T) {
		dir, _, e := geminiRunProject(t, `{"mode": "default"}`, "", writeStep("gemini"), step{Text: "could not write"})
		res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file")
		if res.Status != report.Status("denied") || code != 1 {
			t.Errorf("status %q, exit %d; want denied, 1\nstderr:\n%s", res.Status, code, stderr)
		}
		if len(res.Denials) != 1 || res.Denials[0].Tool != "write_file" {
			t.Errorf("denials %+v, want write_file", res.Denials)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
			t.Errorf("out.txt was created in the real repository")
		}
	})
}

// mustJSON returns v as JSON bytes.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGeminiConfined: confined, gemini's shell cannot write outside the
// sandbox while its write inside comes back; with --sandbox=off the same
// run writes outside, so the check can fail.
func TestGeminiConfined(t *testing.T) {
	for _, mode := range []string{"on", "off"} {
		t.Run(mode, func(t *testing.T) {
			outside, _ := filepath.EvalSymlinks(t.TempDir())
			target := filepath.Join(outside, "escaped.txt")
			escape := step{Tool: "run_shell_command", Args: map[string]any{"command": "echo escaped > " + target, "description": "write outside"}}
			dir, _, e := geminiRunProject(t, `{"mode": "bypassPermissions"}`, "", writeStep("gemini"), escape, step{Text: "finished"})
			res, _, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file", "--sandbox="+mode)
			if res.Files == nil || !slices.Equal(res.Files.Created, []string{"out.txt"}) {
				t.Errorf("files %+v, want out.txt created\nstderr:\n%s", res.Files, stderr)
			}
			_, serr := os.Stat(target)
			if mode == "on" && serr == nil {
				t.Errorf("confined, gemini wrote %s outside its sandbox", target)
			}
			if mode == "off" && serr != nil {
				t.Errorf("unconfined, gemini did not write %s (%v): the check above proves nothing", target, serr)
			}
		})
	}
}

// TestGeminiTimeout: a model that answers 500 makes gemini retry for
// minutes, and SIGTERM does not stop it (measured: it exits when its
// retries end, 200 s later); the persona's time limit ends the run all
// the same, by SIGKILL 5 s after SIGTERM: timed_out, exit 124.
func TestGeminiTimeout(t *testing.T) {
	dir, _, e := geminiRunProject(t, `{"mode": "acceptEdits"}`, `"timeoutSeconds": 5`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":{"code":500,"message":"workforce e2e: always failing","status":"INTERNAL"}}`)
	}))
	t.Cleanup(srv.Close)
	e.vars = append(e.vars, "GOOGLE_GEMINI_BASE_URL="+srv.URL)
	start := time.Now()
	res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file")
	took := time.Since(start)
	if res.Status != report.Status("timed_out") || code != 124 {
		t.Errorf("status %q, exit %d; want timed_out, 124\nstderr:\n%s", res.Status, code, stderr)
	}
	if took > 60*time.Second {
		t.Errorf("the run took %v with a limit of 5 s", took)
	}
	if res.HarnessSessionID == "" {
		t.Errorf("no session id: the one fixed before the start names the conversation")
	}
}

// TestGeminiMapping runs `workforce run` with personas that deny tools
// and checks the tools gemini offers in its first request: a deny rule
// removes the tool (policy deny), its control without the deny offers
// it; MCP servers of the persona reach gemini through its session
// settings (mcp_SERVER_TOOL), one tool denied by name; an effort on a
// Gemini 3 model is its thinkingLevel.
func TestGeminiMapping(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mcp := fmt.Sprintf(`"mcpServers": {"e2e": {"type": "stdio", "command": %q, "env": {%q: "1"}}},`, self, mcpEnv)
	for _, c := range []struct {
		name, spec          string
		offered, notOffered []string
		thinkingLevel       string
		// call, when set, is a tool the model calls, which must end denied.
		call string
		// userPolicy, when set, is a policy file of the user's
		// (~/.gemini/policies), which must still apply.
		userPolicy string
	}{
		{name: "the user's policies beside the persona's", spec: `"permissions": {"mode": "acceptEdits", "deny": ["Write"]},`,
			userPolicy: "[[rule]]\ntoolName = \"glob\"\ndecision = \"deny\"\npriority = 100\n",
			offered:    []string{"replace"}, notOffered: []string{"write_file", "glob"}},
		{name: "deny Edit and Write", spec: `"permissions": {"mode": "acceptEdits", "deny": ["Edit", "Write"]},`,
			offered: []string{"read_file"}, notOffered: []string{"replace", "write_file"}},
		{name: "acceptEdits alone", spec: `"permissions": {"mode": "acceptEdits"},`, offered: []string{"replace", "write_file"}},
		{name: "MCP one tool denied", spec: mcp + `"permissions": {"mode": "bypassPermissions", "deny": ["mcp__e2e__pong"]},`,
			offered: []string{"mcp_e2e_ping", "run_shell_command"}, notOffered: []string{"mcp_e2e_pong"}, call: "mcp_e2e_pong"},
		{name: "MCP", spec: mcp + `"permissions": {"mode": "bypassPermissions"},`, offered: []string{"mcp_e2e_ping", "mcp_e2e_pong"}},
		{name: "MCP the server denied", spec: mcp + `"permissions": {"mode": "bypassPermissions", "deny": ["mcp__e2e"]},`,
			offered: []string{"run_shell_command"}, notOffered: []string{"mcp_e2e_ping", "mcp_e2e_pong"}},
		{name: "effort on a Gemini 3 model", spec: `"model": "gemini-3-pro-preview", "harnessSettings": {"reasoning": "low"},`, thinkingLevel: "LOW"},
	} {
		t.Run(c.name, func(t *testing.T) {
			steps := []step{{Text: "done"}}
			if c.call != "" {
				steps = []step{{Tool: c.call, Args: map[string]any{}}, {Text: "done"}}
			}
			dir, s, e := oneShotProject(t, "gemini", "unused", "{}", steps...)
			spec := `{"id": "m", "intent": "test", "description": "e2e gemini mapping", ` + c.spec + `
 "tiers": {"best": {"harness": "gemini"}}}`
			if !strings.Contains(c.spec, `"model"`) {
				spec = strings.Replace(spec, `"harness": "gemini"`, `"harness": "gemini", "model": "`+geminiModel+`"`, 1)
			}
			installPersona(t, e.home, "m", spec)
			if c.userPolicy != "" {
				os.MkdirAll(filepath.Join(e.home, ".gemini", "policies"), 0o755)
				os.WriteFile(filepath.Join(e.home, ".gemini", "policies", "mine.toml"), []byte(c.userPolicy), 0o644)
			}
			res, _, stderr := runWorkforceJSON(t, e, dir, "m", "review")
			if c.call != "" {
				if res.Status != report.Status("denied") || len(res.Denials) != 1 || res.Denials[0].Tool != c.call {
					t.Errorf("status %q, denials %+v: want %s denied", res.Status, res.Denials, c.call)
				}
			} else if res.Status != report.Status("succeeded") {
				t.Fatalf("status %q\nstderr:\n%s", res.Status, stderr)
			}
			got := s.toolNames(s.mainRequests()[0])
			for _, n := range c.offered {
				if !slices.Contains(got, n) {
					t.Errorf("%s not offered: %v", n, got)
				}
			}
			for _, n := range c.notOffered {
				if slices.Contains(got, n) {
					t.Errorf("%s offered: %v", n, got)
				}
			}
			if c.thinkingLevel != "" {
				body := firstMain(t, s, stderr)
				if l := dig(body, "generationConfig", "thinkingConfig", "thinkingLevel"); l != c.thinkingLevel {
					t.Errorf("thinkingLevel %v, want %s", l, c.thinkingLevel)
				}
			}
		})
	}
}
