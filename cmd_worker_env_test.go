package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"
	"github.com/seed-3bc194a6/workforce/internal/gittest"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/urfave/cli/v2"
)

// TestTaskEnv: a task's environment holds none of the queue's settings
// (workforce's, the NATS tools'), and everything else.
func TestTaskEnv(t *testing.T) {
	for _, tt := range []struct {
		kv   string
		kept bool
	}{
		{"WORKFORCE_QUEUE=nats://worker:secret@queue.internal", false},
		{"WORKFORCE_QUEUE_CREDS=/etc/workforce/worker.creds", false},
		{"NATS_URL=nats://worker:secret@queue.internal", false},
		{"NATS_CREDS=/etc/nats/worker.creds", false},
		{"NATS_NKEY=/etc/nats/worker.nk", false},
		{"NATS_PASSWORD=secret", false},
		{"PATH=/usr/bin", true},
		{"HOME=/home/agent", true},
		{"WORKFORCE_SANDBOX=on", true},
		{"AGENT_WORKFORCE_HOME=/home/agent/.agentworkforce/workforce", true},
		{"ANTHROPIC_API_KEY=sk-x", true},
		{"MY_NATS_NOTE=x", true},
		{"=odd", true},
	} {
		got := taskEnv([]string{tt.kv})
		if kept := slices.Contains(got, tt.kv); kept != tt.kept {
			t.Errorf("taskEnv([%q]) = %q; kept %v, want %v", tt.kv, got, kept, tt.kept)
		}
	}
	if got := taskEnv(nil); got == nil {
		t.Error("taskEnv(nil) = nil: a command with a nil Env would inherit the worker's whole environment")
	}
}

// TestQueueFlagsEnvStripped walks every command's flags: each variable
// that a queue flag (--queue*) or a flag of the worker reads is one that
// taskEnv strips, so that a queue flag added with a variable cannot leave
// it in the tasks' environment.
func TestQueueFlagsEnvStripped(t *testing.T) {
	seen := 0
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			name := strings.TrimSpace(path + " " + c.Name)
			for _, f := range c.Flags {
				df, ok := f.(cli.DocGenerationFlag)
				if !ok {
					continue
				}
				if !strings.HasPrefix(f.Names()[0], "queue") && name != "worker" {
					continue
				}
				for _, ev := range df.GetEnvVars() {
					seen++
					if len(taskEnv([]string{ev + "=x"})) != 0 {
						t.Errorf("%s --%s reads $%s, which a task's run would get", name, f.Names()[0], ev)
					}
				}
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", commands())
	if seen == 0 {
		t.Fatal("no queue flag reads a variable: worker --queue reads $WORKFORCE_QUEUE")
	}
}

// TestWorkerTaskEnv: a worker logged in to its queue with a password in
// $WORKFORCE_QUEUE and an NKey seed file (--queue-nkey) runs a task
// whose agent writes its environment to a file of the repository: the
// branch holds no queue setting, no password, no credential path, and
// the rest of the worker's environment.
func TestWorkerTaskEnv(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a worker and a NATS server): runs without -short")
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	f := newQueueFixture(t, func(o *server.Options) {
		o.Users = []*server.User{{Username: "submitter", Password: "submitter-pw"}, {Username: "worker", Password: "worker-pw-0451"}}
		o.Nkeys = []*server.NkeyUser{{Nkey: pub}}
	})
	seedFile := filepath.Join(f.root, "worker-seed.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(f.url, "nats://")
	workerURL := "nats://worker:worker-pw-0451@" + host
	f.startWorkerArgs(t, "wenv", []string{"--jobs", "1", "--queue-nkey", seedFile},
		"WORKFORCE_QUEUE="+workerURL, "NATS_URL="+workerURL, "NATS_NKEY="+seedFile, "WORKFORCE_QUEUE_CREDS="+seedFile,
		"KEEP_ME=kept")

	tasks := filepath.Join(f.root, "env.jsonl")
	line := `{"id": "env", "persona": "editor", "task": "write the environment", "repo": "` + f.remote + `", "ref": "env"}` + "\n"
	if err := os.WriteFile(tasks, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	r := f.submit(t, tasks, "nats://submitter:submitter-pw@"+host, "envq")
	if r.Status != report.StatusSucceeded || r.Published == nil || r.Published.Branch == "" {
		t.Fatalf("the task: %s, published %+v: %s %v", r.Status, r.Published, r.Message, r.Warnings)
	}
	env := gittest.Run(t, f.remote, "show", r.Published.Commit+":env.txt")
	if !strings.Contains(env, "\nKEEP_ME=kept\n") {
		t.Fatalf("env.txt does not hold the worker's KEEP_ME: not the run's environment?\n%s", env)
	}
	for _, l := range strings.Split(env, "\n") {
		name, _, _ := strings.Cut(l, "=")
		switch {
		case strings.HasPrefix(name, "WORKFORCE_QUEUE"), strings.HasPrefix(name, "NATS_"):
			t.Errorf("the task's environment holds %s", l)
		case strings.Contains(l, "worker-pw-0451"):
			t.Errorf("the task's environment holds the worker's password: %s", l)
		case strings.Contains(l, seedFile), strings.Contains(l, string(seed)):
			t.Errorf("the task's environment holds the worker's NKey seed or its path: %s", l)
		}
	}
}

// TestWorkerIgnoresProjectPersonas: a task's repository holds a project
// persona of the task's persona id, with another model and other
// instructions; the worker runs its own persona (its model, its
// CLAUDE.md), and the result says the project's personas were ignored.
func TestWorkerIgnoresProjectPersonas(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a worker and a NATS server): runs without -short")
	}
	f := newQueueFixture(t)
	work := filepath.Join(f.root, "seed")
	gittest.Run(t, work, "checkout", "-q", "-b", "project", "main")
	layer := filepath.Join(work, ".agentworkforce", "workforce", "personas")
	if err := os.MkdirAll(layer, 0o755); err != nil {
		t.Fatal(err)
	}
	project := `{"id": "editor", "intent": "test", "description": "The repository's.",
 "agentsMdContent": "PROJECT PERSONA\n", "claudeMdContent": "PROJECT PERSONA\n",
 "tiers": {"best": {"harness": "claude", "model": "project-model"}}}`
	for name, text := range map[string]string{
		filepath.Join(layer, "editor.json"): project,
		filepath.Join(work, "do"):           "run persona.txt cat CLAUDE.md\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gittest.Run(t, work, "add", "-A")
	gittest.Run(t, work, "commit", "-q", "-m", "a project persona")
	gittest.Run(t, work, "push", "-q", f.remote, "project")
	f.startWorker(t, "wp", "1")

	tasks := filepath.Join(f.root, "project.jsonl")
	line := `{"id": "p", "persona": "editor", "task": "show the persona", "repo": "` + f.remote + `", "ref": "project"}` + "\n"
	if err := os.WriteFile(tasks, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	r := f.submit(t, tasks, f.url, "projq")
	if r.Status != report.StatusSucceeded || r.Published == nil || r.Published.Commit == "" {
		t.Fatalf("the task: %s, published %+v: %s %v", r.Status, r.Published, r.Message, r.Warnings)
	}
	if r.Model != "m" {
		t.Errorf("the run's model is %q, want the worker's persona's m (project-model is the repository's)", r.Model)
	}
	claudeMd := gittest.Run(t, f.remote, "show", r.Published.Commit+":persona.txt")
	if strings.Contains(claudeMd, "PROJECT PERSONA") || !strings.Contains(claudeMd, "Persona text.") {
		t.Errorf("the agent's CLAUDE.md is not the worker's persona's:\n%s", claudeMd)
	}
	want := "the project's personas in .agentworkforce/workforce/personas (editor.json) are ignored"
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, want) }) {
		t.Errorf("warnings %q; want one saying %q", r.Warnings, want)
	}
}

// submit runs `workforce batch FILE --queue URL --id ID --json` with a
// home of its own to its end, and returns the result of the file's one
// task.
func (f *queueFixture) submit(t *testing.T, file, url, id string) report.Result {
	t.Helper()
	sub := f.startSubmitter(t, "batch", file, "--queue", url, "--id", id, "--json")
	if err := sub.wait(t, 2*time.Minute); err != nil {
		t.Logf("batch --queue: %v", err)
	}
	stdout, stderr := &sub.stdout, &sub.stderr
	var r report.Result
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &r); err != nil {
		t.Fatalf("%v: %s\n%s", err, stdout.String(), stderr.String())
	}
	return r
}
