package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// These tests call the run function of every command with an options
// value and fake streams, without parsing a command line, and check what
// it prints.

// world is a workforce home with a user persona, a project (a directory
// with .git) and a directory of harnesses, as a command's process sees
// them.
type world struct {
	t                    *testing.T
	dir, home, proj, bin string
	env                  procEnv
}

// workerPersona runs on claude, whose stand-in (fakeClaude) writes
// agent.txt in the directory it works in.
const workerPersona = `{"id": "worker", "intent": "test", "description": "Works in the sandbox.",
 "claudeMdContent": "Persona text.\n", "agentsMdContent": "Persona text.\n",
 "tiers": {"best": {"harness": "claude", "model": "m"}}}
`

// fakeClaude stands in for claude: it answers --version, sleeps when
// $FAKE_SLEEP says so, and otherwise writes agent.txt where it works.
const fakeClaude = `#!/bin/sh
if [ "$1" = --version ]; then echo "2.1.197 (Claude Code)"; exit 0; fi
if [ -n "$FAKE_SLEEP" ]; then exec sleep "$FAKE_SLEEP"; fi
echo "agent was here" > agent.txt
`

func newWorld(t *testing.T) *world {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{t: t, dir: dir, home: filepath.Join(dir, "home"), proj: filepath.Join(dir, "proj"), bin: filepath.Join(dir, "bin")}
	w.write(filepath.Join(w.home, "personas", "worker.json"), workerPersona)
	w.write(filepath.Join(w.proj, "main.go"), "package main\n")
	w.mkdir(filepath.Join(w.proj, ".git"))
	w.write(filepath.Join(w.bin, "claude"), fakeClaude)
	if err := os.Chmod(filepath.Join(w.bin, "claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Unconfined, as the scripts run (main_test.go): the fake harness
	// writes outside its sandbox.
	w.env = procEnv{Dir: w.proj, Home: w.home, Environ: []string{"PATH=" + w.bin + ":/usr/bin:/bin", "HOME=" + dir, session.SandboxEnv + "=off"}}
	return w
}

func (w *world) write(path, content string) {
	w.t.Helper()
	w.mkdir(filepath.Dir(path))
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) mkdir(path string) {
	w.t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		w.t.Fatal(err)
	}
}

// fakeStreams are streams that read in and write into buffers, none a
// terminal.
func fakeStreams(in string) (ios *iostreams, stdout, stderr *bytes.Buffer) {
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	return &iostreams{In: strings.NewReader(in), Out: stdout, Err: stderr}, stdout, stderr
}

// status is the exit status of a run function's error, as main turns it
// into one.
func status(err error) int { return printError(&bytes.Buffer{}, err) }

// call runs f with fake streams and returns what it printed and its exit
// status.
func call(f func(*iostreams) error) (stdout, stderr string, code int) {
	ios, out, errs := fakeStreams("")
	err := f(ios)
	code = printError(errs, err)
	return out.String(), errs.String(), code
}

// want checks that s matches each pattern.
func want(t *testing.T, what, s string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile(p).MatchString(s) {
			t.Errorf("%s does not match %q:\n%s", what, p, s)
		}
	}
}

func TestRunFunctions(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.write(filepath.Join(w.proj, "AGENTS.md"), "Project rules.\n")
	w.write(filepath.Join(w.proj, "sub", "AGENTS.md"), "Sub rules.\n")
	agents := filepath.Join(w.dir, "agents")
	tests := []struct {
		name         string
		run          func(*iostreams) error
		code         int
		stdout       []string
		stderr       []string
		stdoutIsJSON any
	}{
		{name: "list", run: func(ios *iostreams) error { return runList(ctx, ios, listOptions{Env: w.env}) },
			stdout: []string{`(?m)^ID +SOURCE +TIERS`, `(?m)^worker +user +best +best +claude +Works in the sandbox\.$`, `(?m)^debugger +built-in `}},
		{name: "list --json with a pattern", run: func(ios *iostreams) error {
			return runList(ctx, ios, listOptions{Patterns: []string{"work*"}, JSON: true, Env: w.env})
		}, stdout: []string{`"id": "worker"`, `"source": "user"`}, stdoutIsJSON: &report.List{}},
		{name: "list, a pattern matching nothing", run: func(ios *iostreams) error {
			return runList(ctx, ios, listOptions{Patterns: []string{"nobody*"}, Env: w.env})
		}, code: exitFailure, stderr: []string{`workforce: error: .*nobody\*`}},
		{name: "show", run: func(ios *iostreams) error { return runShow(ctx, ios, showOptions{Ref: "worker@best", Env: w.env}) },
			stdout: []string{`(?m)^persona worker from user \(` + regexp.QuoteMeta(filepath.Join(w.home, "personas", "worker.json")) + `\)$`, `(?m)^tier best: harness claude, model m$`, `(?m)^claudeMd: inline, 14 bytes \(overwrite, from user\)$`}},
		{name: "show --harness --json", run: func(ios *iostreams) error {
			return runShow(ctx, ios, showOptions{Ref: "worker", Harness: "codex", JSON: true, Env: w.env})
		}, stdout: []string{`"id": "worker"`, `"mapping": \{\s+"harness": "codex"`}, stdoutIsJSON: &report.Show{}},
		{name: "show, an unknown persona", run: func(ios *iostreams) error { return runShow(ctx, ios, showOptions{Ref: "nobody", Env: w.env}) },
			code: exitFailure, stderr: []string{`workforce: error: unknown persona "nobody"`, "workforce: hint: `workforce list` shows the personas of every layer"}},
		{name: "sources list", run: func(ios *iostreams) error { return runSourcesList(ctx, ios, sourcesListOptions{Env: w.env}) },
			stdout: []string{`(?m)^LAYER +PERSONAS +DIR$`, `(?m)^user +1 +` + regexp.QuoteMeta(filepath.Join(w.home, "personas")) + `$`, `(?m)^built-in +\d+ +$`}},
		{name: "sources remove, not a source", run: func(ios *iostreams) error {
			return runSourcesRemove(ctx, ios, sourcesEditOptions{Dir: "elsewhere", Env: w.env})
		}, code: exitFailure, stderr: []string{`workforce: error: ` + regexp.QuoteMeta(filepath.Join(w.proj, "elsewhere")) + ` is not a persona directory`}},
		{name: "validate", run: func(ios *iostreams) error {
			return runValidate(ctx, ios, validateOptions{Paths: []string{filepath.Join(w.home, "personas")}, Env: w.env})
		}, stdout: []string{`(?m)^ok ` + regexp.QuoteMeta(filepath.Join(w.home, "personas", "worker.json")) + `$`}},
		{name: "validate, a path relative to the options' directory", run: func(ios *iostreams) error {
			return runValidate(ctx, ios, validateOptions{Paths: []string{"../home/personas/worker.json"}, Env: w.env})
		}, stdout: []string{`(?m)^ok ` + regexp.QuoteMeta(filepath.Join(w.home, "personas", "worker.json")) + `$`}},
		{name: "context", run: func(ios *iostreams) error {
			return runContext(ctx, ios, contextOptions{Dir: filepath.Join(w.proj, "sub"), Harness: "agents", NoGlobals: true, Env: w.env})
		}, stdout: []string{`(?m)^harness: agents \(profile agents\)$`, `(?m)^root: ` + regexp.QuoteMeta(w.proj) + `$`, `(?m)^  project +\d+ B  ` + regexp.QuoteMeta(filepath.Join(w.proj, "sub", "AGENTS.md")) + `$`, `Sub rules\.`}},
		{name: "context --json", run: func(ios *iostreams) error {
			return runContext(ctx, ios, contextOptions{Harness: "agents", NoGlobals: true, JSON: true, Env: w.env})
		}, stdout: []string{`"profile": "agents"`, `"content": "Project rules.\\n"`}, stdoutIsJSON: &report.Context{}},
		{name: "context, a harness not measured", run: func(ios *iostreams) error {
			return runContext(ctx, ios, contextOptions{Harness: "grok", Env: w.env})
		}, code: exitFailure, stderr: []string{`harness grok is not supported yet`}},
		{name: "harness check", run: func(ios *iostreams) error {
			return runHarnessCheck(ctx, ios, harnessCheckOptions{JSON: true, Env: w.env})
		},
			stdout:       []string{`"harness": "claude",\s+"installed": true,\s+"path": "` + regexp.QuoteMeta(filepath.Join(w.bin, "claude")) + `"`, `"harness": "codex",\s+"installed": false,\s+"package": "@openai/codex"`},
			stdoutIsJSON: &report.Harnesses{}},
		{name: "export --dry-run", run: func(ios *iostreams) error {
			return runExport(ctx, ios, exportOptions{Ref: "worker", Harness: "claude", Out: agents, DryRun: true, Env: w.env})
		}, stdout: []string{`(?m)^# ` + regexp.QuoteMeta(filepath.Join(agents, "worker-best.md")) + `$`, `(?m)^name: worker-best$`}},
		{name: "export", run: func(ios *iostreams) error {
			return runExport(ctx, ios, exportOptions{Ref: "worker@best", Harness: "claude", Out: agents, Env: w.env})
		}, stdout: []string{`(?m)^exported worker@best: ` + regexp.QuoteMeta(filepath.Join(agents, "worker.md")) + `$`}},
		{name: "export over a file", run: func(ios *iostreams) error {
			return runExport(ctx, ios, exportOptions{Ref: "worker@best", Harness: "claude", Out: agents, Env: w.env})
		}, code: exitConflict, stderr: []string{`workforce: error: conflict: ` + regexp.QuoteMeta(filepath.Join(agents, "worker.md")) + ` already exists`, `workforce: hint: use --overwrite`}},
		{name: "import --dry-run", run: func(ios *iostreams) error {
			return runImport(ctx, ios, importOptions{Paths: []string{filepath.Join(agents, "worker.md")}, Harness: "claude", DryRun: true, Env: w.env})
		}, stdout: []string{`(?m)^# worker\.json, from ` + regexp.QuoteMeta(filepath.Join(agents, "worker.md")) + `$`, `"inherit": false`}},
		{name: "import", run: func(ios *iostreams) error {
			return runImport(ctx, ios, importOptions{Paths: []string{filepath.Join(agents, "worker.md")}, Harness: "claude", Dir: filepath.Join(w.dir, "imported"), Env: w.env})
		}, stdout: []string{`(?m)^imported worker: ` + regexp.QuoteMeta(filepath.Join(w.dir, "imported", "worker.json")) + ` \(from `}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := call(tt.run)
			if code != tt.code {
				t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			want(t, "stdout", stdout, tt.stdout...)
			want(t, "stderr", stderr, tt.stderr...)
			if tt.stdoutIsJSON != nil {
				if err := json.Unmarshal([]byte(stdout), tt.stdoutIsJSON); err != nil {
					t.Errorf("stdout is not the JSON of %T: %v", tt.stdoutIsJSON, err)
				}
			}
		})
	}
}

func TestSourcesAddRemove(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	opts := sourcesEditOptions{Dir: "team", First: true, Env: w.env}
	_, stderr, code := call(func(ios *iostreams) error { return runSourcesAdd(ctx, ios, opts) })
	if code != 0 {
		t.Fatalf("sources add: exit %d: %s", code, stderr)
	}
	want(t, "stderr", stderr, `workforce: warning: `+regexp.QuoteMeta(filepath.Join(w.proj, "team"))+` does not exist yet`)
	cfg, _ := os.ReadFile(filepath.Join(w.home, "config.json"))
	want(t, "config.json", string(cfg), regexp.QuoteMeta(filepath.Join(w.proj, "team")))
	_, stderr, _ = call(func(ios *iostreams) error { return runSourcesAdd(ctx, ios, opts) })
	want(t, "stderr", stderr, `is already a persona directory`)
	if _, stderr, code := call(func(ios *iostreams) error { return runSourcesRemove(ctx, ios, opts) }); code != 0 {
		t.Fatalf("sources remove: exit %d: %s", code, stderr)
	}
	cfg, _ = os.ReadFile(filepath.Join(w.home, "config.json"))
	if strings.Contains(string(cfg), "team") {
		t.Errorf("config.json still names the directory:\n%s", cfg)
	}
}

func TestPackInstallOutdated(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	src := filepath.Join(w.dir, "src")
	w.write(filepath.Join(src, "package.json"), `{"name": "@acme/review", "version": "1.2.0"}`)
	w.write(filepath.Join(src, "personas", "reviewer.json"), `{"id": "reviewer", "intent": "review", "description": "Reviews.", "tiers": {"best": {"harness": "claude", "model": "m"}}}`)
	tgz := filepath.Join(w.dir, "out", "review.tgz")
	stdout, stderr, code := call(func(ios *iostreams) error { return runPack(ctx, ios, packOptions{Dir: src, Output: tgz}) })
	if code != 0 {
		t.Fatalf("pack: exit %d: %s", code, stderr)
	}
	want(t, "pack's stdout", stdout, `(?m)^`+regexp.QuoteMeta(tgz)+`\t1 personas\t\d+ files$`, `(?m)^plugin review\t\d+ files$`)

	layer := filepath.Join(w.dir, "layer")
	stdout, stderr, code = call(func(ios *iostreams) error {
		return runInstall(ctx, ios, installOptions{Source: tgz, Dir: layer, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("install: exit %d: %s", code, stderr)
	}
	want(t, "install's stdout", stdout, `(?m)^installed reviewer: `+regexp.QuoteMeta(filepath.Join(layer, "reviewer.json"))+`$`)
	_, stderr, code = call(func(ios *iostreams) error {
		return runInstall(ctx, ios, installOptions{Source: tgz, Dir: layer, Env: w.env})
	})
	if code != exitConflict {
		t.Errorf("install again: exit %d, want %d: %s", code, exitConflict, stderr)
	}
	want(t, "install again's stderr", stderr, `workforce: error: conflict: `+regexp.QuoteMeta(layer)+`/reviewer.json already exists`)

	stdout, stderr, code = call(func(ios *iostreams) error {
		return runOutdated(ctx, ios, outdatedOptions{Dir: layer, JSON: true, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("outdated: exit %d: %s", code, stderr)
	}
	var st []report.Outdated
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || len(st) != 1 || st[0].Source != tgz || st[0].Outdated {
		t.Errorf("outdated --json = %s (%v), want %s not outdated", stdout, err, tgz)
	}
}

func TestRunDryRun(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	stdout, stderr, code := call(func(ios *iostreams) error {
		return runRun(ctx, ios, runOptions{Ref: "worker", DryRun: true, JSON: true, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("run --dry-run --json: exit %d: %s", code, stderr)
	}
	var plan report.Plan
	if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Persona != "worker" || plan.Harness != "claude" || plan.Root != w.proj || len(plan.Argv) == 0 || plan.Argv[0] != "claude" {
		t.Errorf("plan = %+v", plan)
	}
	stdout, _, _ = call(func(ios *iostreams) error {
		return runRun(ctx, ios, runOptions{Ref: "worker", DryRun: true, Env: w.env})
	})
	want(t, "run --dry-run", stdout, `(?m)^persona: worker@best on claude$`, `(?m)^root: `+regexp.QuoteMeta(w.proj)+`$`, `(?m)^materialized: .*/CLAUDE\.md \(overwrite\)$`, `(?m)^argv: claude `)

	// --root must contain the working directory.
	_, stderr, code = call(func(ios *iostreams) error {
		return runRun(ctx, ios, runOptions{Ref: "worker", DryRun: true, Root: w.bin, Env: w.env})
	})
	if code != exitUsage {
		t.Errorf("run --root elsewhere: exit %d, want %d", code, exitUsage)
	}
	want(t, "stderr", stderr, `workforce: error: --root `+regexp.QuoteMeta(w.bin)+` does not contain the working directory `+regexp.QuoteMeta(w.proj))
}

func TestRunAndSessions(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	ctx := context.Background()

	// A run: the agent's file comes back.
	stdout, stderr, code := call(func(ios *iostreams) error { return runRun(ctx, ios, runOptions{Ref: "worker", Env: w.env}) })
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	want(t, "run's stdout", stdout, `(?m)^created: agent\.txt$`)
	if _, err := os.Stat(filepath.Join(w.proj, "agent.txt")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(w.proj, "agent.txt"))

	// The time limit: exit 124.
	slow := w.env
	slow.Environ = append(slow.Environ, "FAKE_SLEEP=20")
	limit := 200 * time.Millisecond
	_, stderr, code = call(func(ios *iostreams) error {
		return runRun(ctx, ios, runOptions{Ref: "worker", Timeout: &limit, Env: slow})
	})
	if code != exitTimeout {
		t.Errorf("run --timeout: exit %d, want %d\n%s", code, exitTimeout, stderr)
	}
	want(t, "run --timeout's stderr", stderr, `the harness was stopped after 200ms \(its time limit\)`)

	// A run held for review, with nobody at a terminal: kept.
	yes := true
	stdout, stderr, code = call(func(ios *iostreams) error {
		return runRun(ctx, ios, runOptions{Ref: "worker", Review: &yes, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("run --review: exit %d\n%s", code, stderr)
	}
	want(t, "run --review's stdout", stdout, `(?m)^held for review: worker-`, `agent\.txt`)
	id := regexp.MustCompile(`held for review: (\S+)`).FindStringSubmatch(stdout)[1]

	stdout, _, code = call(func(ios *iostreams) error { return runSessionsList(ctx, ios, sessionsListOptions{Env: w.env}) })
	if code != 0 {
		t.Fatalf("sessions list: exit %d", code)
	}
	want(t, "sessions list", stdout, `(?m)^ID +PERSONA +PHASE +AGE +CHANGED +ROOT$`, `(?m)^`+id+` +worker +review +\S+ +1 +`+regexp.QuoteMeta(w.proj)+`$`)
	stdout, _, _ = call(func(ios *iostreams) error {
		return runSessionsList(ctx, ios, sessionsListOptions{JSON: true, Env: w.env})
	})
	var list report.Sessions
	if err := json.Unmarshal([]byte(stdout), &list); err != nil || len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Warm == nil {
		t.Errorf("sessions list --json = %s (%v)", stdout, err)
	}

	stdout, _, _ = call(func(ios *iostreams) error { return runSessionsShow(ctx, ios, sessionsShowOptions{ID: id, Env: w.env}) })
	want(t, "sessions show", stdout, `(?m)^session: `+id+`$`, `(?m)^phase: review$`, `(?m)^harness exit status: 0$`, `(?m)^created: agent\.txt$`)
	stdout, _, _ = call(func(ios *iostreams) error { return runSessionsDiff(ctx, ios, sessionsDiffOptions{ID: id, Env: w.env}) })
	want(t, "sessions diff", stdout, `(?m)^\+\+\+ b/agent\.txt$`, `(?m)^\+agent was here$`)

	// apply of a path the agent did not change is refused.
	_, stderr, code = call(func(ios *iostreams) error {
		return runSessionsApply(ctx, ios, sessionsSyncOptions{ID: id, Paths: []string{"main.go"}, Env: w.env})
	})
	if code != exitFailure {
		t.Errorf("sessions apply main.go: exit %d", code)
	}
	want(t, "stderr", stderr, `no change of the agent in session `+id+` matches main\.go`, `workforce: hint: the agent's changes: agent\.txt`)
	stdout, stderr, code = call(func(ios *iostreams) error {
		return runSessionsApply(ctx, ios, sessionsSyncOptions{ID: id, Paths: []string{"agent.txt"}, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("sessions apply: exit %d\n%s", code, stderr)
	}
	want(t, "sessions apply", stdout, `(?m)^created: agent\.txt$`)

	// Another run, kept: sync brings it, then nothing is left.
	os.Remove(filepath.Join(w.proj, "agent.txt"))
	stdout, stderr, code = call(func(ios *iostreams) error {
		return runRun(ctx, ios, runOptions{Ref: "worker", Review: &yes, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("run --review: exit %d\n%s", code, stderr)
	}
	id2 := regexp.MustCompile(`held for review: (\S+)`).FindStringSubmatch(stdout)[1]
	stdout, stderr, code = call(func(ios *iostreams) error { return runSessionsSync(ctx, ios, sessionsSyncOptions{ID: id2, Env: w.env}) })
	if code != 0 {
		t.Fatalf("sessions sync: exit %d\n%s", code, stderr)
	}
	want(t, "sessions sync", stdout, `(?m)^created: agent\.txt$`)

	// A third, discarded; a fourth, removed.
	for _, drop := range []struct {
		name string
		run  func(ctx context.Context, ios *iostreams, id string) error
		want string
	}{
		{"sessions discard", func(ctx context.Context, ios *iostreams, id string) error {
			return runSessionsDiscard(ctx, ios, sessionsDiscardOptions{ID: id, Env: w.env})
		}, `(?m)^discarded: `},
		{"sessions rm", func(ctx context.Context, ios *iostreams, id string) error {
			return runSessionsRm(ctx, ios, sessionsRmOptions{IDs: []string{id}, Yes: true, Env: w.env})
		}, `(?m)^removed: `},
	} {
		os.Remove(filepath.Join(w.proj, "agent.txt"))
		stdout, _, _ = call(func(ios *iostreams) error {
			return runRun(ctx, ios, runOptions{Ref: "worker", Review: &yes, Env: w.env})
		})
		id := regexp.MustCompile(`held for review: (\S+)`).FindStringSubmatch(stdout)[1]
		stdout, stderr, code = call(func(ios *iostreams) error { return drop.run(ctx, ios, id) })
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", drop.name, code, stderr)
		}
		want(t, drop.name, stdout, drop.want+regexp.QuoteMeta(id)+`$`)
	}
	_, stderr, code = call(func(ios *iostreams) error { return runSessionsRm(ctx, ios, sessionsRmOptions{Stale: true, Env: w.env}) })
	if code != 0 {
		t.Errorf("sessions rm --stale: exit %d: %s", code, stderr)
	}
	stdout, _, _ = call(func(ios *iostreams) error { return runSessionsList(ctx, ios, sessionsListOptions{Env: w.env}) })
	if stdout != "no sessions\n" {
		t.Errorf("sessions list at the end = %q", stdout)
	}
}

// TestReviewAnswers: on a terminal, run --review asks, and apply and
// discard do what they say.
func TestReviewAnswers(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	w := newWorld(t)
	ctx := context.Background()
	yes := true
	for _, tt := range []struct {
		answer string
		stdout string
		file   bool
	}{
		{"d\n", `(?m)^discarded: worker-`, false},
		{"a\n", `(?m)^created: agent\.txt$`, true},
	} {
		os.Remove(filepath.Join(w.proj, "agent.txt"))
		ios, stdout, stderr := fakeStreams("")
		var asked bytes.Buffer
		ios.InTTY = true
		ios.TTY = func() io.ReadWriteCloser { return fakeTTY{strings.NewReader(tt.answer), &asked} }
		if code := status(runRun(ctx, ios, runOptions{Ref: "worker", Review: &yes, Env: w.env})); code != 0 {
			t.Fatalf("answer %q: exit %d\n%s", tt.answer, code, stderr)
		}
		want(t, "the question", asked.String(), `apply, discard or keep the agent's work\? \[a/d/K\]`)
		want(t, "stdout", stdout.String(), tt.stdout)
		if _, err := os.Stat(filepath.Join(w.proj, "agent.txt")); (err == nil) != tt.file {
			t.Errorf("answer %q: agent.txt there: %v, want %v", tt.answer, err == nil, tt.file)
		}
	}
}

// fakeTTY is a terminal that answers from r and shows the questions in w.
type fakeTTY struct {
	r *strings.Reader
	w *bytes.Buffer
}

func (f fakeTTY) Read(p []byte) (int, error)  { return f.r.Read(p) }
func (f fakeTTY) Write(p []byte) (int, error) { return f.w.Write(p) }
func (f fakeTTY) Close() error                { return nil }

func TestContextResolveResume(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.write(filepath.Join(w.proj, "AGENTS.md"), "Root.\n")
	w.write(filepath.Join(w.proj, "api", "AGENTS.md"), "API.\n")
	state := filepath.Join(w.dir, "state.json")
	stdout, stderr, code := call(func(ios *iostreams) error {
		return runContextResolve(ctx, ios, contextResolveOptions{Paths: []string{filepath.Join(w.proj, "api", "h.go")}, State: state, MaxFiles: 8, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("context resolve: exit %d: %s", code, stderr)
	}
	want(t, "context resolve", stdout, `(?m)^- `+regexp.QuoteMeta(filepath.Join(w.proj, "api", "AGENTS.md"))+` \(new\)$`)
	stdout, stderr, code = call(func(ios *iostreams) error {
		return runContextResume(ctx, ios, contextResumeOptions{Dir: filepath.Join(w.proj, "api"), State: state, JSON: true, Env: w.env})
	})
	if code != 0 {
		t.Fatalf("context resume: exit %d: %s", code, stderr)
	}
	var diff report.Resume
	if err := json.Unmarshal([]byte(stdout), &diff); err != nil || diff.Cwd != [2]string{w.proj, filepath.Join(w.proj, "api")} {
		t.Errorf("context resume --json = %s (%v)", stdout, err)
	}
	_, stderr, code = call(func(ios *iostreams) error {
		return runContextResume(ctx, ios, contextResumeOptions{State: filepath.Join(w.dir, "none.json"), Env: w.env})
	})
	if code != exitFailure {
		t.Errorf("context resume without a state: exit %d", code)
	}
	want(t, "stderr", stderr, `workforce: error: no resolver state at `)
}

// TestExitStatus: the outcomes of the packages below become the exit
// statuses of exitcode.go, and only there.
func TestExitStatus(t *testing.T) {
	errs := []struct {
		name string
		err  error
		code int
		hint string
	}{
		{"success", nil, exitOK, ""},
		{"a failure", errors.New("x"), exitFailure, ""},
		{"a usage error", usagef("bad"), exitUsage, ""},
		{"reported already", silentExit(exitConflict), exitConflict, ""},
		{"a missing harness", fmt.Errorf("run: %w", &harness.NotFoundError{Binary: "codex", Package: "@openai/codex"}), exitHarnessMissing, "workforce: hint: install it with: npm install -g @openai/codex\n"},
	}
	for _, tt := range errs {
		var stderr bytes.Buffer
		if got := printError(&stderr, tt.err); got != tt.code || !strings.HasSuffix(stderr.String(), tt.hint) {
			t.Errorf("%s: printError = %d, %q; want %d and %q", tt.name, got, stderr.String(), tt.code, tt.hint)
		}
	}
	conflicts := &mount.Report{Conflicts: []mount.Conflict{{Path: "a"}}}
	results := []struct {
		name string
		res  session.Result
		code int
	}{
		{"success", session.Result{}, exitOK},
		{"the harness's status", session.Result{Harness: harness.Exit{Code: 7}, Report: conflicts}, 7},
		{"the harness killed", session.Result{Harness: harness.Exit{Signal: syscall.SIGKILL}}, 128 + 9},
		{"the time limit", session.Result{TimedOut: true, Harness: harness.Exit{Signal: syscall.SIGTERM}}, exitTimeout},
		{"stopped while the sandbox was made", session.Result{Stopped: true, Signal: syscall.SIGHUP}, 128 + 1},
		{"sync-back interrupted", session.Result{Report: &mount.Report{Interrupted: true}, Signal: os.Interrupt}, exitInterrupted},
		{"sync-back interrupted by SIGTERM", session.Result{Report: &mount.Report{Interrupted: true}, Signal: syscall.SIGTERM}, 128 + 15},
		{"conflicts", session.Result{Report: conflicts}, exitConflict},
		{"held for review", session.Result{Held: true}, exitOK},
	}
	for _, tt := range results {
		if got := runStatus(&tt.res); got != tt.code {
			t.Errorf("%s: runStatus = %d, want %d", tt.name, got, tt.code)
		}
	}
}
