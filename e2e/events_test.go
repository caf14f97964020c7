//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestWorkforceEvents runs `workforce run PERSONA TASK --events` with each
// real harness writing a file: every line on stdout is an event valid
// under the published schema, started first with the harness's session
// id, the write as a completed tool_use, the final message, usage, the
// file synced back, and finished last with the result.
func TestWorkforceEvents(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	for url, data := range map[string][]byte{report.ResultSchemaURL: report.ResultSchema, report.EventSchemaURL: report.EventSchema} {
		if err := c.AddResource(url, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	sch, err := c.Compile(report.EventSchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"claude", "codex", "opencode"} {
		t.Run(h, func(t *testing.T) {
			dir, model, e := oneShotProject(t, h, "editor", writerPermissions[h], writeStep(h), step{Text: "finished"})
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, workforce, "run", "editor", "write the file", "--events")
			cmd.Dir, cmd.Env = dir, e.vars
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("workforce run --events: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
			}
			t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			var events []report.Event
			for i, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
				var doc any
				if err := json.Unmarshal([]byte(line), &doc); err != nil {
					t.Fatalf("line %d is not JSON: %v", i+1, err)
				}
				if err := sch.Validate(doc); err != nil {
					t.Fatalf("line %d is not a valid event: %v", i+1, err)
				}
				var ev report.Event
				json.Unmarshal([]byte(line), &ev)
				events = append(events, ev)
			}
			first, last := events[0], events[len(events)-1]
			if last.Type != report.EventFinished || last.Result == nil || last.Result.Status != report.StatusSucceeded {
				t.Fatalf("last event %+v, want finished, succeeded", last)
			}
			if first.Type != report.EventStarted || first.HarnessSessionID == "" || first.HarnessSessionID != last.Result.HarnessSessionID {
				t.Errorf("first event %+v, want started with the result's harness session id %q", first, last.Result.HarnessSessionID)
			}
			var wrote, said, used, synced bool
			for _, ev := range events {
				wrote = wrote || (ev.Type == report.EventToolUse && ev.Status == "completed" && strings.HasSuffix(ev.Detail, "out.txt"))
				said = said || (ev.Type == report.EventMessage && ev.Text == "finished")
				used = used || (ev.Type == report.EventUsage && *ev.Usage.InputTokens > 0)
				synced = synced || (ev.Type == report.EventSync && ev.Path == "out.txt" && ev.Action == "created")
			}
			if !wrote || !said || !used || !synced {
				// The model's requests say which answer went where (a
				// main request more than the two steps gets "done").
				t.Errorf("events: the write %v, the message %v, usage %v, out.txt synced %v; want all (the model's requests %q, the main ones %v)",
					wrote, said, used, synced, model.endpoints(), model.mainRequests())
			}
		})
	}
}
