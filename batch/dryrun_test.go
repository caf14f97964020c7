package batch

import (
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

// TestDecisions: what batch --dry-run says a run would do with each task,
// from the batch's state: every task new without a state (or a home),
// every one rerun with --rerun, and Plan's decision, with its reason,
// otherwise.
func TestDecisions(t *testing.T) {
	a := Prepared{Task: Task{ID: "a", Persona: "p", Task: "t"}}
	b := Prepared{Task: Task{ID: "b", Persona: "p", Task: "u"}}
	tasks := []Prepared{a, b}
	home := t.TempDir()
	st, err := Open(home, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteInfo(Info{ID: "b1", File: "/x/b.jsonl", Tasks: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.WriteTask(TaskState{ID: "a", Digest: a.Digest(), Entry: a.Task, Phase: PhaseDone, Status: report.StatusFailed}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, home, id string
		rerun          bool
		retry          Retry
		want           string
	}{
		{"no home", "", "b1", false, RetryNone, "yes (new)|yes (new)"},
		{"no state", home, "b2", false, RetryNone, "yes (new)|yes (new)"},
		{"state", home, "b1", false, RetryNone, "no (done)|yes (new)"},
		{"state, retry failed", home, "b1", false, RetryFailed, "yes (retry)|yes (new)"},
		{"rerun", home, "b1", true, RetryNone, "yes (rerun)|yes (rerun)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(Decisions(tt.home, tt.id, tasks, tt.rerun, tt.retry), "|"); got != tt.want {
				t.Errorf("Decisions = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDryRunText: the batch's line and a table of its tasks, each by its
// directory, or by its repository and ref on a queue; names quoted.
func TestDryRunText(t *testing.T) {
	tasks := []Prepared{
		{Task: Task{ID: "t1", Persona: "rev@best", Repo: "git@h:r.git", Ref: "main"}, Dir: "/p/one", Tier: "best", Harness: "claude"},
		{Task: Task{ID: "t2", Persona: "a\tb", Repo: "https://h/r"}, Dir: "/p/t\two", Tier: "fast", Harness: "codex"},
	}
	tests := []struct {
		name   string
		remote bool
		want   string
	}{
		{"local", false, "batch b-1: \"/x/b\\tc.jsonl\": 2 tasks, 3 at a time; nothing run (--dry-run)\n" +
			"TASK  PERSONA   TIER  HARNESS  DIR         RUN\n" +
			"t1    rev@best  best  claude   /p/one      yes (new)\n" +
			"t2    \"a\\tb\"    fast  codex    \"/p/t\\two\"  no (done)\n"},
		{"remote", true, "batch b-1: \"/x/b\\tc.jsonl\": 2 tasks, 3 at a time; nothing run (--dry-run)\n" +
			"TASK  PERSONA   TIER  HARNESS  DIR               RUN\n" +
			"t1    rev@best  best  claude   git@h:r.git@main  yes (new)\n" +
			"t2    \"a\\tb\"    fast  codex    https://h/r       no (done)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			d := DryRun{ID: "b-1", File: "/x/b\tc.jsonl", Jobs: 3, Tasks: tasks, Remote: tt.remote, Runs: []string{"yes (new)", "no (done)"}}
			if err := d.WriteText(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tt.want)
			}
		})
	}
}

// TestJobs: the number given wins; 0 is the default of the tasks'
// harnesses, the heaviest of them deciding.
func TestJobs(t *testing.T) {
	claude, opencode := Prepared{Harness: "claude"}, Prepared{Harness: "opencode"}
	tests := []struct {
		name  string
		jobs  int
		tasks []Prepared
		want  int
	}{
		{"given", 3, []Prepared{opencode}, 3},
		{"claude", 0, []Prepared{claude}, DefaultJobs([]string{"claude"})},
		{"with opencode", 0, []Prepared{claude, opencode}, DefaultJobs([]string{"opencode"})},
		{"no tasks", 0, nil, DefaultJobs(nil)},
	}
	for _, tt := range tests {
		if got := Jobs(tt.jobs, tt.tasks); got != tt.want {
			t.Errorf("%s: Jobs = %d, want %d", tt.name, got, tt.want)
		}
	}
}
