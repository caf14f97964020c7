//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/seed-3bc194a6/workforce/report"
)

// gitOut runs git in dir, as a user with no configuration of their own,
// and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestQueue runs a small batch of one-shot tasks with each real harness
// (the scripted model writing out.txt) through an embedded NATS JetStream
// and one workforce worker: each task's result comes back once, succeeded,
// with the branch the worker pushed to the bare repository the tasks name
// and a patch that gives that branch's tree.
func TestQueue(t *testing.T) {
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("the embedded nats-server did not start")
	}
	defer ns.Shutdown()
	url := ns.ClientURL()

	for _, h := range []string{"claude", "codex", "opencode", "gemini"} {
		t.Run(h, func(t *testing.T) {
			// Two tasks, one after the other (--jobs 1): the scripted
			// model answers each with a write, then a final text.
			s := newScripted(writeStep(h), step{Text: "finished"}, writeStep(h), step{Text: "finished"})
			s.followCwd = true // each task has a sandbox of its own
			e := newScriptedEnv(t, s)
			writeOneShotPersona(t, e.home, "editor", h, writerPermissions[h])
			root, _ := filepath.EvalSymlinks(t.TempDir())
			remote := filepath.Join(root, "remote.git")
			gitOut(t, root, "init", "-q", "--bare", "-b", "main", remote)
			seed := filepath.Join(root, "seed")
			gitOut(t, root, "init", "-q", "-b", "main", seed)
			os.WriteFile(filepath.Join(seed, "README.md"), []byte("e2e\n"), 0o644)
			gitOut(t, seed, "add", "-A")
			gitOut(t, seed, "commit", "-q", "-m", "base")
			gitOut(t, seed, "push", "-q", remote, "main")
			tasks := filepath.Join(root, "tasks.jsonl")
			line := func(id string) string {
				b, _ := json.Marshal(map[string]string{"id": id, "persona": "editor", "task": "write the file", "repo": remote, "ref": "main"})
				return string(b)
			}
			os.WriteFile(tasks, []byte(line("one")+"\n"+line("two")+"\n"), 0o644)
			vars := append(workforceEnv(e, root, root), "GIT_CONFIG_NOSYSTEM=1")

			worker := exec.Command(workforce, "worker", "--queue", url, "--jobs", "1", "--name", "e2e-"+h)
			worker.Dir, worker.Env = root, vars
			var wlog strings.Builder
			worker.Stdout, worker.Stderr = &wlog, &wlog
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				worker.Process.Signal(syscall.SIGTERM)
				worker.Wait()
				t.Logf("worker:\n%s", wlog.String())
			}()

			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
			defer cancel()
			submit := exec.CommandContext(ctx, workforce, "batch", tasks, "--queue", url, "--id", "e2e-"+h, "--json")
			submit.Dir, submit.Env = root, vars
			var stdout, stderr strings.Builder
			submit.Stdout, submit.Stderr = &stdout, &stderr
			err := submit.Run()
			t.Logf("batch --queue: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			if ctx.Err() != nil {
				t.Fatal("the batch timed out")
			}
			if err != nil {
				t.Errorf("batch --queue: %v", err)
			}
			seen := map[string]bool{}
			var results []report.Result
			sc := bufio.NewScanner(strings.NewReader(stdout.String()))
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				var r report.Result
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatalf("%v: %s", err, sc.Text())
				}
				if seen[r.TaskID] {
					t.Errorf("task %s reported twice", r.TaskID)
				}
				seen[r.TaskID] = true
				results = append(results, r)
				if r.Status != report.StatusSucceeded || r.Harness != h || r.Worker != "e2e-"+h {
					t.Errorf("%s: status %s, harness %s, worker %q; want succeeded, %s, e2e-%s", r.TaskID, r.Status, r.Harness, r.Worker, h, h)
					continue
				}
				p := r.Published
				if p == nil || p.Branch != "workforce/"+r.SessionID || r.Patch == "" {
					t.Errorf("%s: published %+v, patch %q", r.TaskID, p, r.Patch)
					continue
				}
				if got := strings.TrimSpace(gitOut(t, remote, "rev-parse", "refs/heads/"+p.Branch)); got != p.Commit {
					t.Errorf("%s: the remote's %s is %s, want %s", r.TaskID, p.Branch, got, p.Commit)
				}
				if got := gitOut(t, remote, "show", p.Commit+":out.txt"); got != written {
					t.Errorf("%s: out.txt on the branch is %q, want %q", r.TaskID, got, written)
				}
				check := filepath.Join(root, "check-"+r.TaskID)
				gitOut(t, root, "clone", "-q", remote, check)
				gitOut(t, check, "checkout", "-q", p.Base)
				patch := filepath.Join(root, r.TaskID+".patch")
				os.WriteFile(patch, []byte(r.Patch), 0o644)
				gitOut(t, check, "apply", "--index", patch)
				if tree, want := strings.TrimSpace(gitOut(t, check, "write-tree")), strings.TrimSpace(gitOut(t, check, "rev-parse", p.Commit+"^{tree}")); tree != want {
					t.Errorf("%s: the patch gives the tree %s, the branch has %s", r.TaskID, tree, want)
				}
			}
			if !seen["one"] || !seen["two"] || len(seen) != 2 {
				t.Errorf("results for %v, want one and two", seen)
			}
			checkResultUsage(t, "the two tasks", results, reportedTokens(s, h))
		})
	}
}
