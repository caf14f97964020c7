package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/seed-3bc194a6/workforce/internal/gittest"
	"github.com/seed-3bc194a6/workforce/internal/syncbuf"
	"github.com/seed-3bc194a6/workforce/queue"
	"github.com/seed-3bc194a6/workforce/report"
)

// startNATS starts an embedded nats-server with JetStream, its store in
// dir, on a free port of the loopback, and returns it; each of with
// changes its options first (users, for one).
func startNATS(dir string, with ...func(*server.Options)) (*server.Server, error) {
	opts := &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true}
	for _, w := range with {
		w(opts)
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, err
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, os.ErrDeadlineExceeded
	}
	return ns, nil
}

// natsCmd implements the script command
//
//	nats
//
// which starts an embedded nats-server with JetStream for the script
// (its store under $WORK/nats) and sets $NATS to its URL.
func natsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: nats")
	}
	ns, err := startNATS(ts.MkAbs("nats"))
	ts.Check(err)
	ts.Defer(ns.Shutdown)
	ts.Setenv("NATS", ns.ClientURL())
}

// queueFixture is a queue and what its workers need: an embedded server,
// a bare repository as the shared remote (branch main, whose do file the
// stand-in runs, branch slow, whose do file waits for a file, and branch
// env, whose do file writes the harness's environment to env.txt), the
// stand-in harness and a persona.
type queueFixture struct {
	url    string
	root   string
	remote string
	bin    string
	marks  string
}

const editorPersona = `{"id": "editor", "intent": "test", "description": "Edits.",
 "agentsMdContent": "Persona text.\n", "claudeMdContent": "Persona text.\n",
 "tiers": {"best": {"harness": "claude", "model": "m"}}}`

func newQueueFixture(t testing.TB, with ...func(*server.Options)) *queueFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	ns, err := startNATS(filepath.Join(root, "nats"), with...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	f := &queueFixture{url: ns.ClientURL(), root: root, remote: filepath.Join(root, "remote.git"), bin: filepath.Join(root, "bin"),
		marks: filepath.Join(root, "marks")}
	for _, d := range []string{f.bin, f.marks} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(buildStandin(t), filepath.Join(f.bin, "claude")); err != nil {
		t.Fatal(err)
	}
	gittest.Run(t, root, "init", "-q", "--bare", "-b", "main", f.remote)
	work := filepath.Join(root, "seed")
	gittest.Run(t, root, "init", "-q", "-b", "main", work)
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", "a project\n")
	write("old.txt", "to be deleted\n")
	// Each task writes where it ran (its sandbox's path: a file of its
	// own), edits README.md and deletes old.txt.
	write("do", "shell where.txt pwd\nappend README.md edited by the agent\nrm old.txt\n")
	gittest.Run(t, work, "add", "-A")
	gittest.Run(t, work, "commit", "-q", "-m", "base")
	gittest.Run(t, work, "checkout", "-q", "-b", "slow")
	write("do", "write $MARKS/slow-started ready\nwaitfor $MARKS/release\nwrite slow.txt done slowly\n")
	gittest.Run(t, work, "commit", "-q", "-am", "slow")
	// A task of the benchmark sleeps, then writes a file of its own.
	gittest.Run(t, work, "checkout", "-q", "-b", "bench", "main")
	write("do", "sleep $BENCH_SECONDS\nshell /dev/null echo x > \"t$(date +%s%N).txt\"\n")
	gittest.Run(t, work, "commit", "-q", "-am", "bench")
	gittest.Run(t, work, "checkout", "-q", "-b", "env", "main")
	write("do", "run env.txt env\n")
	gittest.Run(t, work, "commit", "-q", "-am", "env")
	gittest.Run(t, work, "push", "-q", f.remote, "main", "slow", "bench", "env")
	return f
}

// env is the environment of a workforce process of the fixture with its
// own home.
func (f *queueFixture) env(t testing.TB, home string) []string {
	t.Helper()
	personas := filepath.Join(home, ".agentworkforce", "workforce", "personas")
	if err := os.MkdirAll(personas, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(personas, "editor.json"), []byte(editorPersona), 0o644); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "PATH" && !strings.HasPrefix(k, "AGENT_WORKFORCE") && !strings.HasPrefix(k, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+home, "AGENT_WORKFORCE_HOME="+filepath.Join(home, ".agentworkforce", "workforce"),
		"PATH="+f.bin+string(filepath.ListSeparator)+os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0",
		"WORKFORCE_SANDBOX=off", "STANDIN_CONTEXT=none", "STANDIN_DO=do", "MARKS="+f.marks,
		"STANDIN_OUTPUT="+filepath.Join(mustAbs(t, "harness/testdata/oneshot"), "claude-write.json"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
}

func mustAbs(t testing.TB, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// workforceBin is the workforce command the tests start: the test binary,
// which runs main when started under that name (TestMain).
func workforceBin(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("workforce")
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// syncBuffer is a buffer several goroutines write.
type syncBuffer = syncbuf.Buffer

// worker is a workforce worker process.
type workerProc struct {
	name string
	cmd  *exec.Cmd
	log  *syncBuffer
	done chan struct{}
}

// startWorker starts `workforce worker` NAME with a home of its own, and
// the variables env.
func (f *queueFixture) startWorker(t testing.TB, name string, jobs string, env ...string) *workerProc {
	t.Helper()
	return f.startWorkerArgs(t, name, []string{"--queue", f.url, "--jobs", jobs}, env...)
}

// startWorkerArgs starts `workforce worker` NAME with the arguments args
// (and --ack-wait 2s), a home of its own and the variables env.
func (f *queueFixture) startWorkerArgs(t testing.TB, name string, args []string, env ...string) *workerProc {
	t.Helper()
	home := filepath.Join(f.root, "home-"+name)
	cmd := exec.Command(workforceBin(t), append(append([]string{"worker"}, args...), "--ack-wait", "2s", "--name", name)...)
	cmd.Dir = f.root
	cmd.Env = append(f.env(t, home), env...)
	w := &workerProc{name: name, cmd: cmd, log: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = w.log, w.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-w.done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
		}
		if tt, ok := t.(*testing.T); ok {
			tt.Logf("worker %s:\n%s", name, w.log.String())
		}
	})
	return w
}

// submitter is a workforce process that submits to the fixture's queue
// (batch or eval --queue) and follows it.
type submitter struct {
	cmd            *exec.Cmd
	stdout, stderr syncBuffer
	done           chan error
}

// startSubmitter starts workforce with args in the fixture's root, with
// the home home-submitter.
func (f *queueFixture) startSubmitter(t *testing.T, args ...string) *submitter {
	t.Helper()
	s := &submitter{cmd: exec.Command(workforceBin(t), args...), done: make(chan error, 1)}
	s.cmd.Dir = f.root
	s.cmd.Env = f.env(t, filepath.Join(f.root, "home-submitter"))
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	return s
}

// wait waits (at most within) for the submitter to end and returns how
// it ended; past within, the test fails.
func (s *submitter) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case err := <-s.done:
		t.Logf("submitter stderr:\n%s", s.stderr.String())
		return err
	case <-time.After(within):
		s.cmd.Process.Kill()
		t.Fatalf("the submitter did not end\nstdout:\n%s\nstderr:\n%s", s.stdout.String(), s.stderr.String())
		return nil
	}
}

// killSlow waits for a task on the branch slow to start (its mark), kills
// (SIGKILL) the worker whose log says started (a line matching started),
// then lets the slow tasks go on (the release mark). It returns the
// killed worker and the other.
func (f *queueFixture) killSlow(t *testing.T, workers []*workerProc, started string) (killed, other *workerProc) {
	t.Helper()
	waitFor(t, "the slow task to start", 90*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(f.marks, "slow-started"))
		return err == nil
	})
	waitFor(t, "a worker to say it runs the slow task", 10*time.Second, func() bool {
		for i, w := range workers {
			if strings.Contains(w.log.String(), started) {
				killed, other = w, workers[1-i]
				return true
			}
		}
		return false
	})
	if err := killed.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-killed.done
	if err := os.WriteFile(filepath.Join(f.marks, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return killed, other
}

// timed runs workforce with args in the fixture's root with env and
// returns its wall time; a failure fails tb.
func (f *queueFixture) timed(tb testing.TB, env []string, args ...string) time.Duration {
	tb.Helper()
	cmd := exec.Command(workforceBin(tb), args...)
	cmd.Dir, cmd.Env = f.root, env
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("workforce %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return time.Since(start)
}

// waitFor waits (at most within) until cond holds.
func waitFor(t testing.TB, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestQueueWorkers runs a batch on two workers through an embedded
// JetStream: one of them is killed (SIGKILL) while it runs a task, which
// the other finishes. Every task is reported once, its branch is in the
// remote at the commit the result names, and its patch applies to the
// commit it started from and gives that commit's tree.
func TestQueueWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("slow (a worker and a NATS server): runs without -short")
	}
	f := newQueueFixture(t)
	tasks := filepath.Join(f.root, "tasks.jsonl")
	var lines []string
	ids := []string{"t1", "t2", "t3", "t4", "slow"}
	for _, id := range ids[:4] {
		lines = append(lines, `{"id": "`+id+`", "persona": "editor", "task": "edit", "repo": "`+f.remote+`", "ref": "main"}`)
	}
	lines = append(lines, `{"id": "slow", "persona": "editor", "task": "edit slowly", "repo": "`+f.remote+`", "ref": "slow"}`)
	if err := os.WriteFile(tasks, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workers := []*workerProc{f.startWorker(t, "w1", "2"), f.startWorker(t, "w2", "2")}

	sub := f.startSubmitter(t, "batch", tasks, "--queue", f.url, "--id", "q1", "--json")
	_, other := f.killSlow(t, workers, "task q1/slow: started (delivery 1)")
	if err := sub.wait(t, 3*time.Minute); err != nil {
		t.Fatalf("batch --queue: %v", err)
	}
	stdout := &sub.stdout

	// The submitter printed one result a task, each succeeded.
	results := map[string]report.Result{}
	sc := bufio.NewScanner(strings.NewReader(stdout.String()))
	for sc.Scan() {
		var r report.Result
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if _, ok := results[r.TaskID]; ok {
			t.Errorf("task %s printed twice", r.TaskID)
		}
		results[r.TaskID] = r
	}
	if len(results) != len(ids) {
		t.Fatalf("%d results, want %d:\n%s", len(results), len(ids), stdout.String())
	}
	// The queue holds one result a task, no more.
	conn, err := queue.Connect(context.Background(), queue.Options{URL: f.url})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	onQueue, err := conn.Results(context.Background(), "q1")
	if err != nil {
		t.Fatal(err)
	}
	if len(onQueue) != len(ids) {
		t.Errorf("%d results on the queue, want %d", len(onQueue), len(ids))
	}
	for _, id := range ids {
		r, ok := results[id]
		if !ok {
			t.Errorf("no result for %s", id)
			continue
		}
		if r.Status != report.StatusSucceeded {
			t.Errorf("%s: %s: %s %v", id, r.Status, r.Message, r.Warnings)
			continue
		}
		if id == "slow" && r.Worker != other.name {
			t.Errorf("slow was reported by %q, want %s (the one not killed)", r.Worker, other.name)
		}
		p := r.Published
		if p == nil || p.Branch != "workforce/"+r.SessionID || p.Commit == "" || r.Patch == "" || p.Repo != f.remote {
			t.Errorf("%s: published %+v, patch %d bytes; want the branch of its session, pushed to the remote", id, p, len(r.Patch))
			continue
		}
		// The branch is in the remote, at the commit.
		if got := strings.TrimSpace(gittest.Run(t, f.remote, "rev-parse", "refs/heads/"+p.Branch)); got != p.Commit {
			t.Errorf("%s: the remote's %s is %s, want %s", id, p.Branch, got, p.Commit)
		}
		// The patch applies to the base and gives the commit's tree.
		check := filepath.Join(f.root, "check-"+id)
		gittest.Run(t, f.root, "clone", "-q", f.remote, check)
		gittest.Run(t, check, "checkout", "-q", p.Base)
		patch := filepath.Join(f.root, id+".patch")
		if err := os.WriteFile(patch, []byte(r.Patch), 0o644); err != nil {
			t.Fatal(err)
		}
		gittest.Run(t, check, "apply", "--index", patch)
		tree := strings.TrimSpace(gittest.Run(t, check, "write-tree"))
		if want := strings.TrimSpace(gittest.Run(t, check, "rev-parse", p.Commit+"^{tree}")); tree != want {
			t.Errorf("%s: the patch gives the tree %s, the branch has %s", id, tree, want)
		}
		if id == "slow" {
			if got := gittest.Run(t, check, "show", p.Commit+":slow.txt"); got != "done slowly\n" {
				t.Errorf("slow: slow.txt on the branch: %q", got)
			}
			continue
		}
		readme := gittest.Run(t, check, "show", p.Commit+":README.md")
		if !strings.Contains(readme, "edited by the agent") {
			t.Errorf("%s: README.md on the branch:\n%s", id, readme)
		}
		if out := gittest.Run(t, check, "ls-tree", "--name-only", p.Commit); strings.Contains(out, "old.txt") || !strings.Contains(out, "where.txt") {
			t.Errorf("%s: the branch holds %s; want where.txt, and old.txt deleted", id, out)
		}
	}
	// Both workers ran tasks: the killed one at least the slow task's
	// first delivery, the other its second (on a loaded machine the
	// first to pull may take every other task before the second's first
	// pull is answered).
	for _, w := range workers {
		if !strings.Contains(w.log.String(), ": started (delivery ") {
			t.Errorf("worker %s ran nothing:\n%s", w.name, w.log.String())
		}
	}
	if !strings.Contains(other.log.String(), "task q1/slow: started (delivery 2)") {
		t.Errorf("worker %s did not take the slow task over:\n%s", other.name, other.log.String())
	}
}

// BenchmarkQueue measures what the queue adds to a task: N stand-in tasks
// of S seconds each ($BENCH_TASKS, default 20; $BENCH_SECONDS, default
// 1), each writing a file of its own, run through the embedded server by
// two workers with --jobs 2 each, against the same tasks on the local
// pool with --jobs 4 (the same slots). Each iteration runs both batches.
// The overhead per task is the difference of the wall times, times the
// slots, over the tasks: the time a slot spends on a task beyond the
// local pool's (resolving, publishing, pulling, the checkout, the push,
// the result and its way back).
//
//	go test -run '^$' -bench BenchmarkQueue -benchtime 1x .
func BenchmarkQueue(b *testing.B) {
	n, secs := 20, "1"
	if v := os.Getenv("BENCH_TASKS"); v != "" {
		fmt.Sscan(v, &n)
	}
	if v := os.Getenv("BENCH_SECONDS"); v != "" {
		secs = v
	}
	f := newQueueFixture(b)
	f.startWorker(b, "w1", "2", "BENCH_SECONDS="+secs)
	f.startWorker(b, "w2", "2", "BENCH_SECONDS="+secs)
	local := filepath.Join(f.root, "local")
	gittest.Run(b, f.root, "clone", "-q", "-b", "bench", f.remote, local)
	write := func(name string, line func(i int) string) string {
		var lines []string
		for i := range n {
			lines = append(lines, line(i))
		}
		path := filepath.Join(f.root, name)
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		return path
	}
	queued := write("queue.jsonl", func(i int) string {
		return fmt.Sprintf(`{"id": "t%d", "persona": "editor", "task": "wait", "repo": %q, "ref": "bench"}`, i, f.remote)
	})
	onPool := write("local.jsonl", func(i int) string {
		return fmt.Sprintf(`{"id": "t%d", "persona": "editor", "task": "wait", "dir": "local"}`, i)
	})
	env := append(f.env(b, filepath.Join(f.root, "home-submitter")), "BENCH_SECONDS="+secs)
	var q, l time.Duration
	for i := range b.N {
		id := fmt.Sprint(i)
		q += f.timed(b, env, "batch", queued, "--queue", f.url, "--id", "q"+id)
		l += f.timed(b, env, "batch", onPool, "--jobs", "4", "--id", "l"+id)
	}
	q, l = q/time.Duration(b.N), l/time.Duration(b.N)
	b.ReportMetric(q.Seconds(), "queue-wall-s")
	b.ReportMetric(l.Seconds(), "local-wall-s")
	b.ReportMetric((q-l).Seconds()*4/float64(n), "overhead-s/task")
}
