package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/internal/testtmp"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// TestMain makes the test binary the launcher when confine.Start starts
// it so (as main does for workforce): a confined harness of these tests
// starts through it.
func TestMain(m *testing.M) {
	if confine.IsLauncher(os.Args) {
		os.Exit(confine.Main(os.Args[2:]))
	}
	done := testtmp.Outside()
	code := m.Run()
	done()
	if standinDir != "" {
		os.RemoveAll(standinDir)
	}
	os.Exit(code)
}

// The personas of the tests' user layer.
var testPersonas = map[string]string{
	"editor": `{"id": "editor", "intent": "test", "description": "Edits.",
 "agentsMdContent": "Persona text.\n", "claudeMdContent": "Persona text.\n",
 "tiers": {"best": {"harness": "claude", "model": "m"}}}`,
	"inrepo": `{"id": "inrepo", "intent": "test", "description": "Runs in the repository.",
 "agentsMdContent": "Persona text.\n", "claudeMdContent": "Persona text.\n", "mount": {"enabled": false},
 "tiers": {"best": {"harness": "claude", "model": "m"}}}`,
	"loader": `{"id": "loader", "intent": "test", "description": "Preloads.",
 "agentsMdContent": "Persona text.\n", "claudeMdContent": "Persona text.\n", "env": {"LD_PRELOAD": "/x.so"},
 "tiers": {"best": {"harness": "claude", "model": "m"}}}`,
}

// world is a workforce home with the test personas, a project (a
// directory with .git) and the stand-in harness linked as claude.
type world struct {
	home, proj string
	env        Env
}

func newWorld(t *testing.T) *world {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &world{home: filepath.Join(dir, "home"), proj: filepath.Join(dir, "proj")}
	for id, text := range testPersonas {
		write(t, filepath.Join(w.home, "personas", id+".json"), text)
	}
	write(t, filepath.Join(w.proj, "main.go"), "package main\n")
	must(t, os.MkdirAll(filepath.Join(w.proj, ".git"), 0o755))
	bin := filepath.Join(dir, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	must(t, os.Symlink(standin(t), filepath.Join(bin, "claude")))
	do := filepath.Join(dir, "do")
	write(t, do, "write out.txt written by the agent\n")
	fixture, err := filepath.Abs("../harness/testdata/oneshot/claude-write.json")
	must(t, err)
	w.env = Env{Dir: w.proj, Home: w.home, Environ: []string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + dir,
		"STANDIN_CONTEXT=none", "STANDIN_DO=" + do, "STANDIN_OUTPUT=" + fixture}}
	return w
}

var standinBin string

// standin compiles internal/standin, the stand-in harness, once, into a
// directory of the test's that goes with it.
func standin(t *testing.T) string {
	t.Helper()
	if standinBin != "" {
		return standinBin
	}
	dir, err := os.MkdirTemp("", "run-test-")
	must(t, err)
	standinDir = dir
	out := filepath.Join(dir, "standin")
	cmd := exec.Command("go", "build", "-o", out, "../internal/standin")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ../internal/standin: %v\n%s", err, b)
	}
	standinBin = out
	return out
}

// standinDir is where standin built it, removed once the tests end.
var standinDir string

func write(t *testing.T, path, text string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(text), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// recorder is hooks that note what they are told.
type recorder struct {
	warnings []string
	looked   []*persona.Persona
	failed   bool // the catalog hook was called after a failed lookup
}

func (r *recorder) hooks() Hooks {
	return Hooks{
		Warn: func(msg string) { r.warnings = append(r.warnings, msg) },
		Catalog: func(_ *persona.Catalog, p *persona.Persona) {
			r.looked = append(r.looked, p)
			r.failed = r.failed || p == nil
		},
	}
}

func TestPrepare(t *testing.T) {
	off := confine.Off
	tests := []struct {
		name string
		opts func(w *world) Options
		kind Kind   // the *Error's, 0 for none
		err  string // in the error
		hint string // in a hint
		warn string // in a warning
		// inRepo is the plan's; failed says the lookup failed.
		inRepo, failed bool
	}{
		{name: "a persona", opts: func(w *world) Options { return Options{Ref: "editor"} }},
		{name: "unknown persona", opts: func(w *world) Options { return Options{Ref: "nobody"} },
			kind: Refused, err: "nobody", hint: "workforce list", failed: true},
		{name: "loader variable", opts: func(w *world) Options { return Options{Ref: "loader"} },
			kind: Usage, err: "persona loader is refused", hint: "remove the variable"},
		{name: "mount.enabled false with --keep", opts: func(w *world) Options { return Options{Ref: "inrepo", Keep: true} },
			kind: Usage, err: "--keep needs a sandbox"},
		{name: "mount.enabled false, confined", opts: func(w *world) Options { return Options{Ref: "inrepo"} },
			kind: Usage, err: "while the write sandbox is on", hint: "--install-in-repo", warn: "sets mount.enabled false"},
		{name: "mount.enabled false, unconfined", opts: func(w *world) Options { return Options{Ref: "inrepo", SandboxFlags: SandboxFlags{Sandbox: &off}} },
			warn: "sets mount.enabled false", inRepo: true},
		{name: "mount.enabled false, dry run", opts: func(w *world) Options { return Options{Ref: "inrepo", DryRun: true} },
			warn: "sets mount.enabled false", inRepo: true},
		{name: "a root without the working directory", opts: func(w *world) Options { return Options{Ref: "editor", Root: w.home} },
			kind: Usage, err: "does not contain the working directory"},
		{name: "a profile of another harness", opts: func(w *world) Options { return Options{Ref: "editor", Harness: "codex", Profile: "claude"} },
			kind: Usage, err: "is not a discovery profile of codex"},
		{name: "a harness workforce does not run", opts: func(w *world) Options { return Options{Ref: "editor", Harness: "aider"} },
			kind: Refused, err: "editor@best", hint: "--harness"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			opts := tt.opts(w)
			opts.Env = w.env
			var rec recorder
			r, err := Prepare(context.Background(), opts, rec.hooks())
			var re *Error
			switch {
			case tt.kind == 0 && err != nil:
				t.Fatalf("Prepare: %v", err)
			case tt.kind != 0 && !errors.As(err, &re):
				t.Fatalf("Prepare: %v, want an *Error of kind %d", err, tt.kind)
			case tt.kind != 0:
				if re.Kind != tt.kind || !strings.Contains(re.Error(), tt.err) || !strings.Contains(strings.Join(re.Hints, "\n"), tt.hint) {
					t.Errorf("Prepare: kind %d, %q, hints %q; want kind %d, %q, a hint with %q", re.Kind, re, re.Hints, tt.kind, tt.err, tt.hint)
				}
			default:
				if r.Plan.InRepo != tt.inRepo || r.Persona.ID != strings.SplitN(opts.Ref, "@", 2)[0] {
					t.Errorf("plan of %s, in the repository %v; want %s, %v", r.Persona.ID, r.Plan.InRepo, opts.Ref, tt.inRepo)
				}
			}
			if tt.warn != "" && !strings.Contains(strings.Join(rec.warnings, "\n"), tt.warn) {
				t.Errorf("warnings %q, want one with %q", rec.warnings, tt.warn)
			}
			if rec.failed != tt.failed {
				t.Errorf("the catalog hook told of a failed lookup: %v, want %v", rec.failed, tt.failed)
			}
		})
	}
}

// TestStartOneShot runs the stand-in unattended: the outcome carries its
// result, kept as the hook writes JSON, and Finish records it with the
// exit status the caller gives.
func TestStartOneShot(t *testing.T) {
	for _, noHistory := range []bool{false, true} {
		w := newWorld(t)
		task := "write the file"
		var rec recorder
		var kept bytes.Buffer
		hooks := rec.hooks()
		hooks.WriteJSON = func(wr io.Writer, v any) error {
			b, err := json.Marshal(v)
			kept.Write(b)
			wr.Write(b)
			return err
		}
		r, err := Prepare(context.Background(), Options{Ref: "editor", Task: &task, NoHistory: noHistory, Env: w.env}, hooks)
		must(t, err)
		out, err := r.Start(Streams{Err: new(bytes.Buffer)})
		must(t, err)
		if out == nil || out.Result == nil || out.Session == nil {
			t.Fatalf("Start: outcome %+v, want a session and a result", out)
		}
		if res := out.Result; res.Status != report.StatusSucceeded || res.Message != "finished" || res.Files == nil || len(res.Files.Created) != 1 {
			t.Errorf("result %+v, want succeeded, finished, out.txt created", res)
		}
		if b, err := os.ReadFile(filepath.Join(w.proj, "out.txt")); err != nil || string(b) != "written by the agent\n" {
			t.Errorf("out.txt: %q, %v; want the agent's", b, err)
		}
		file, err := os.ReadFile(filepath.Join(out.Session.OneShot.Dir, session.ResultFile))
		if err != nil || !out.Kept || string(file) != kept.String() {
			t.Errorf("kept %v: %s (%v), want what WriteJSON wrote: %s", out.Kept, file, err, kept.String())
		}
		r.Finish(out, 7, nil)
		recs, _, err := history.ReadAll(w.home)
		switch {
		case noHistory && len(recs) != 0:
			t.Errorf("NoHistory: %d records, want none", len(recs))
		case noHistory:
		case err != nil || len(recs) != 1:
			t.Errorf("history: %d records (%v), want 1", len(recs), err)
		case recs[0].ExitStatus != 7 || recs[0].Status != string(report.StatusSucceeded) || recs[0].Mode != history.ModeOneShot || recs[0].HarnessSessionID != out.Result.HarnessSessionID:
			t.Errorf("record %+v, want exit status 7 (the caller's), succeeded, one-shot, the result's harness session", recs[0])
		}
	}
}

// TestStartInteractive runs the stand-in interactively: the outcome
// carries the session's result and no one-shot result, and Finish
// records the status decided from the outcome and the failure given.
func TestStartInteractive(t *testing.T) {
	tests := []struct {
		name   string
		failed error
		want   report.Status
	}{
		{name: "success", want: report.StatusSucceeded},
		{name: "an apply that failed", failed: errors.New("apply failed"), want: report.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			// A project persona, left out: a warning of the plan's.
			write(t, filepath.Join(w.proj, ".agentworkforce", "workforce", "personas", "mine.json"), testPersonas["editor"])
			var rec recorder
			r, err := Prepare(context.Background(), Options{Ref: "editor", NoProjectPersonas: true, Env: w.env}, rec.hooks())
			must(t, err)
			out, err := r.Start(Streams{In: strings.NewReader(""), Out: new(bytes.Buffer), Err: new(bytes.Buffer)})
			must(t, err)
			if out == nil || out.Session == nil || out.Result != nil {
				t.Fatalf("Start: outcome %+v, want a session and no one-shot result", out)
			}
			if got := strings.Join(out.Warnings, "\n"); !strings.Contains(got, "the project's personas in") {
				t.Errorf("outcome's warnings %q, want the plan's of the project's personas left out", out.Warnings)
			}
			if _, err := os.Stat(filepath.Join(w.proj, "out.txt")); err != nil {
				t.Errorf("the agent's out.txt did not come back: %v", err)
			}
			r.Finish(out, 5, tt.failed)
			recs, _, err := history.ReadAll(w.home)
			if err != nil || len(recs) != 1 {
				t.Fatalf("history: %d records (%v), want 1", len(recs), err)
			}
			if got := recs[0]; got.ExitStatus != 5 || got.Status != string(tt.want) || got.Mode != history.ModeInteractive || got.PersonaHash == "" {
				t.Errorf("record %+v, want exit status 5, %s, interactive, a persona hash", got, tt.want)
			}
		})
	}
}
