package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/report"
)

// evalDoc is what the test reads of eval --json: the fields the issue
// names, decoded apart from the package's type, so that a renamed field
// fails here.
type evalDoc struct {
	ID       string `json:"id"`
	Personas []struct {
		Persona  string  `json:"persona"`
		Tier     string  `json:"tier"`
		Harness  string  `json:"harness"`
		Hash     string  `json:"hash"`
		Attempts int     `json:"attempts"`
		Passed   int     `json:"passed"`
		PassRate float64 `json:"passRate"`
		// HashMismatch: the workers ran another version of it.
		HashMismatch bool `json:"hashMismatch"`
	} `json:"personas"`
	Attempts []struct {
		Case    string `json:"case"`
		Persona string `json:"persona"`
		Attempt int    `json:"attempt"`
		Outcome string `json:"outcome"`
		Check   *struct {
			ExitCode int `json:"exitCode"`
		} `json:"check"`
		Failed    []string       `json:"failed"`
		SessionID string         `json:"sessionId"`
		Result    *report.Result `json:"result"`
	} `json:"attempts"`
}

// TestEvalQueueWorkers runs an evaluation of 3 cases x 2 personas x 2
// attempts on two workers through an embedded JetStream: one worker is
// killed (SIGKILL) while it runs an attempt of the slow case, which the
// other runs again. Every attempt is reported once, with the outcome its
// check scripted; each check ran on a worker (its output names the
// worker's own home); no branch is pushed to the remote; a persona the
// workers have in another version than the submitter's is flagged.
func TestEvalQueueWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (workers and a NATS server): runs without -short")
	}
	f := newQueueFixture(t)
	// editor2: the submitter's differs from the workers' (its text).
	const editor2 = `{"id": "editor2", "intent": "test", "description": "Edits too.",
 "agentsMdContent": "Persona text %s.\n", "claudeMdContent": "Persona text %s.\n",
 "tiers": {"best": {"harness": "claude", "model": "m"}}}`
	for _, who := range []string{"w1", "w2", "submitter"} {
		version := "of the workers"
		if who == "submitter" {
			version = "of the submitter"
		}
		dir := filepath.Join(f.root, "home-"+who, ".agentworkforce", "workforce", "personas")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "editor2.json"), []byte(fmt.Sprintf(editor2, version, version)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := filepath.Join(f.root, "cases.yaml")
	if err := os.WriteFile(cases, []byte(strings.ReplaceAll(`personas: [editor, editor2]
attempts: 2
cases:
  - id: edits
    task: edit the readme
    repo: REMOTE
    ref: main
    check: grep -q "edited by the agent" README.md && pwd
  - id: never
    task: edit the readme
    repo: REMOTE
    ref: main
    check: pwd; test -f nosuch.txt
  - id: slow
    task: edit slowly
    repo: REMOTE
    ref: slow
    check: test -f slow.txt && pwd
`, "REMOTE", f.remote)), 0o644); err != nil {
		t.Fatal(err)
	}
	workers := []*workerProc{f.startWorker(t, "w1", "2"), f.startWorker(t, "w2", "2")}
	sub := f.startSubmitter(t, "eval", cases, "--queue", f.url, "--id", "e1", "--json")
	_, other := f.killSlow(t, workers, "e1/slow.")
	sub.wait(t, 4*time.Minute)
	stdout, stderr := &sub.stdout, &sub.stderr
	if code := sub.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("eval exit %d, want 0 (every attempt ran)", code)
	}
	var doc evalDoc
	if err := json.Unmarshal([]byte(stdout.String()), &doc); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, stdout.String())
	}
	if len(doc.Attempts) != 12 {
		t.Fatalf("%d attempts reported, want 12 (3 cases x 2 personas x 2)", len(doc.Attempts))
	}
	seen := map[string]bool{}
	for _, a := range doc.Attempts {
		key := fmt.Sprintf("%s/%s/%d", a.Case, a.Persona, a.Attempt)
		if seen[key] {
			t.Errorf("attempt %s reported twice", key)
		}
		seen[key] = true
		want := "pass"
		if a.Case == "never" {
			want = "fail"
		}
		if a.Outcome != want || a.Check == nil {
			t.Errorf("attempt %s: outcome %s, check %+v; want %s", key, a.Outcome, a.Check, want)
			continue
		}
		r := a.Result
		if r == nil || r.Attempt == nil || r.Attempt.Check == nil || r.Worker == "" {
			t.Errorf("attempt %s: result %+v: want the worker's, with its check", key, r)
			continue
		}
		// The check ran on the worker that reported the attempt: its
		// working directory is under that worker's home.
		if out := r.Attempt.Check.Output; !strings.Contains(out, "home-"+r.Worker+string(filepath.Separator)) {
			t.Errorf("attempt %s reported by %s: the check's output %q is not of that worker", key, r.Worker, out)
		}
	}
	// The other worker ran again what the killed one had started.
	if !regexp.MustCompile(`task e1/slow\.\S+: started \(delivery 2\)`).MatchString(other.log.String()) {
		t.Errorf("worker %s did not take the killed worker's slow attempt over:\n%s", other.name, other.log.String())
	}
	// No branch was pushed: an attempt's work is its patch.
	if refs := strings.TrimSpace(runGit(t, f.remote, "for-each-ref", "--format=%(refname)", "refs/heads/workforce/")); refs != "" {
		t.Errorf("branches pushed for an evaluation: %s", refs)
	}
	// Each persona: 4 of its 6 attempts passed. editor, the same file
	// on the workers and here (in other homes), has the same hash;
	// editor2, another text on the workers, is flagged.
	for _, p := range doc.Personas {
		if p.Attempts != 6 || p.Passed != 4 {
			t.Errorf("persona %s: %d attempts, %d passed; want 6 and 4", p.Persona, p.Attempts, p.Passed)
		}
		if want := p.Persona == "editor2"; p.HashMismatch != want {
			t.Errorf("persona %s: hashMismatch %v, want %v", p.Persona, p.HashMismatch, want)
		}
	}
	if !strings.Contains(stderr.String(), "persona editor2@best/claude: the runs reported another version") || strings.Contains(stderr.String(), "persona editor@") {
		t.Errorf("want a warning of editor2's other version, and none of editor's:\n%s", stderr.String())
	}
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
