package eval

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// BenchmarkFinish measures what eval adds to an attempt's run once it
// ended, per attempt of an evaluation of 10 cases × 3 personas × 4
// attempts: report, judging it and the report's sums; kept, that and
// keeping its files (result, setup and check output, patch) and the
// report in the evaluation's directory.
func BenchmarkFinish(b *testing.B) {
	dir, home := b.TempDir(), b.TempDir()
	var yaml string
	for i := range 10 {
		yaml += fmt.Sprintf("  - {id: c%d, task: t, check: c, setup: s, protect: [t/**], expect: {changed: [src/**], unchanged: [docs/**], message: done, maxTurns: 9}}\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "cases.yaml"), []byte("personas: [p, q, p@fast]\nattempts: 4\ncases:\n"+yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	e, err := Load(Options{File: "cases.yaml", WorkDir: dir, Lookup: lookup, ID: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	if err := e.Open(func() (string, error) { return home, nil }); err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	states := map[string]batch.TaskState{}
	turns := 5
	for i, c := range e.Cells {
		ts := run(report.StatusSucceeded, i%2, "src/a.go", "src/b.go")
		ts.Result.Message, ts.Result.Patch, ts.Result.Usage = "done", "diff --git a/src/a.go b/src/a.go\n", &report.Usage{Turns: &turns}
		ts.Result.Attempt.Setup = &report.Step{Output: "setup output\n"}
		ts.Result.Attempt.Check.Output = "check output\n"
		states[c.Task.ID] = *ts
	}
	b.Run("report", func(b *testing.B) {
		for range b.N {
			e.Report(states)
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(e.Cells)), "µs/attempt")
	})
	b.Run("kept", func(b *testing.B) {
		for range b.N {
			// Each attempt ends anew: its files are written again.
			now := time.Now().Add(time.Second)
			for id, ts := range states {
				ts.Finished = &now
				states[id] = ts
			}
			if _, err := e.Finish(states); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(e.Cells)), "µs/attempt")
	})
}
