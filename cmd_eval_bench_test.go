package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/gittest"
)

// BenchmarkEvalAttempt measures what eval adds to a one-shot run, per
// attempt, setup and check excluded: N stand-in tasks ($BENCH_TASKS,
// default 20) that edit a small repository, one at a time, as a batch
// (each a `workforce run`, synced back) and as an evaluation of one case
// with N attempts (each a `workforce run --attempt`: the tree recorded
// after setup and after the agent, the patch, nothing synced back; then
// the judgement, the report and the attempt's files kept). Each iteration
// runs both. The overhead per attempt is the difference of the wall times
// over N.
//
//	go test -run '^$' -bench BenchmarkEvalAttempt -benchtime 3x .
func BenchmarkEvalAttempt(b *testing.B) {
	n := 20
	if v := os.Getenv("BENCH_TASKS"); v != "" {
		fmt.Sscan(v, &n)
	}
	f := newQueueFixture(b)
	local := filepath.Join(f.root, "local")
	gittest.Run(b, f.root, "clone", "-q", "-b", "main", f.remote, local)
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf(`{"id": "t%d", "persona": "editor", "task": "edit", "dir": "local"}`, i))
	}
	tasks := filepath.Join(f.root, "tasks.jsonl")
	cases := filepath.Join(f.root, "cases.yaml")
	if err := os.WriteFile(tasks, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(cases, []byte(fmt.Sprintf("personas: [editor]\nattempts: %d\ncases:\n  - id: edit\n    task: edit\n    dir: local\n", n)), 0o644); err != nil {
		b.Fatal(err)
	}
	env := f.env(b, filepath.Join(f.root, "home"))
	var batchWall, evalWall time.Duration
	for i := range b.N {
		id := fmt.Sprint(i)
		batchWall += f.timed(b, env, "batch", tasks, "--jobs", "1", "--id", "b"+id, "--no-history")
		evalWall += f.timed(b, env, "eval", cases, "--jobs", "1", "--id", "e"+id, "--no-history")
	}
	batchWall, evalWall = batchWall/time.Duration(b.N), evalWall/time.Duration(b.N)
	b.ReportMetric(batchWall.Seconds()/float64(n)*1000, "run-ms/task")
	b.ReportMetric(evalWall.Seconds()/float64(n)*1000, "attempt-ms/attempt")
	b.ReportMetric((evalWall-batchWall).Seconds()/float64(n)*1000, "overhead-ms/attempt")
}
