package batch

import (
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

func TestResultOf(t *testing.T) {
	split := func(ref string) (string, string) { id, tier, _ := strings.Cut(ref, "@"); return id, tier }
	own := &report.Result{TaskID: "a", Persona: "p", Status: report.StatusSucceeded, SessionID: "s"}
	tests := []struct {
		name string
		ts   TaskState
		pt   Prepared
		want report.Result
	}{
		{"its run's result", TaskState{ID: "a", Entry: Task{Persona: "q"}, Result: own}, Prepared{Tier: "x"}, *own},
		{"none printed: from the entry", TaskState{ID: "b", Entry: Task{Persona: "p@cheap", Harness: "codex"}, Status: report.StatusTimedOut, DurationMS: 5, Error: "e"}, Prepared{},
			report.Result{TaskID: "b", Persona: "p", Tier: "cheap", Harness: "codex", Status: report.StatusTimedOut, DurationMS: 5, Message: "e"}},
		{"the checked task's tier and harness first", TaskState{ID: "c", Entry: Task{Persona: "p@cheap"}}, Prepared{Tier: "best", Harness: "claude"},
			report.Result{TaskID: "c", Persona: "p", Tier: "best", Harness: "claude", Status: report.StatusFailed}},
		{"no status: failed", TaskState{ID: "d", Entry: Task{Persona: "p"}, Error: "never started"}, Prepared{},
			report.Result{TaskID: "d", Persona: "p", Status: report.StatusFailed, Message: "never started"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ResultOf(tt.ts, tt.pt, split)
			if got.TaskID != tt.want.TaskID || got.Persona != tt.want.Persona || got.Tier != tt.want.Tier || got.Harness != tt.want.Harness ||
				got.Status != tt.want.Status || got.DurationMS != tt.want.DurationMS || got.Message != tt.want.Message || got.SessionID != tt.want.SessionID {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
