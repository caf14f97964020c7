package run

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/session"
)

// TestPrepareResume resumes a kept one-shot session: the harness is
// asked to resume its conversation, the result says which, the resumed
// usage hook sees the run, and Finish records the resumed run; a persona
// gone from the catalog resumes with a warning in the result.
func TestPrepareResume(t *testing.T) {
	for _, gone := range []bool{false, true} {
		w := newWorld(t)
		log := filepath.Join(filepath.Dir(w.home), "log")
		must(t, os.MkdirAll(log, 0o755))
		// The stand-in records its arguments there: the sandbox allows it.
		w.env.Environ = append(w.env.Environ, "LOG="+log)
		task := "write the file"
		var rec recorder
		r, err := Prepare(context.Background(), Options{Ref: "editor", Task: &task, Keep: true, NoHistory: true, SandboxFlags: SandboxFlags{SandboxAllow: []string{log}}, Env: w.env}, rec.hooks())
		must(t, err)
		out, err := r.Start(Streams{Err: new(bytes.Buffer)})
		must(t, err)
		first := out.Result
		if gone {
			must(t, os.Remove(filepath.Join(w.home, "personas", "editor.json")))
		}
		hooks := rec.hooks()
		asked := 0
		hooks.ResumedUsage = func(h string, one *session.OneShotResult) string { asked++; return "" }
		r, err = PrepareResume(context.Background(), ResumeOptions{ID: first.SessionID, Task: "go on", SandboxFlags: SandboxFlags{SandboxAllow: []string{log}}, Env: w.env}, hooks)
		must(t, err)
		out, err = r.Start(Streams{Err: new(bytes.Buffer)})
		must(t, err)
		if out.Result == nil || out.Result.SessionID != first.SessionID || out.Result.HarnessSessionID != first.HarnessSessionID || asked != 1 {
			t.Fatalf("resumed result %+v (usage hook called %d times), want session %s, harness session %s, the hook once", out.Result, asked, first.SessionID, first.HarnessSessionID)
		}
		argv, err := os.ReadFile(filepath.Join(log, "argv"))
		if err != nil || !strings.Contains(string(argv), "--resume "+first.HarnessSessionID) {
			t.Errorf("the harness's arguments %q (%v), want --resume %s", argv, err, first.HarnessSessionID)
		}
		warned := strings.Contains(strings.Join(out.Result.Warnings, "\n"), "is not in the catalog any more")
		if warned != gone {
			t.Errorf("persona gone %v: warnings %q", gone, out.Result.Warnings)
		}
		r.Finish(out, 0, nil)
		recs, _, err := history.ReadAll(w.home)
		if err != nil || len(recs) != 1 || recs[0].SessionID != first.SessionID || recs[0].Mode != history.ModeOneShot {
			t.Errorf("history %+v (%v), want the resumed run's one-shot record", recs, err)
		}
	}
}
