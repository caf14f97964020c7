package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

func TestPlanOneShot(t *testing.T) {
	long := strings.Repeat("x", maxTaskArg+1)
	tests := []struct {
		name      string
		r         persona.Resolved
		s         OneShot
		extra     []string
		wantArgs  string
		wantStdin string
		wantErr   string
	}{
		{
			name:     "claude: the task right after -p, before the tool lists",
			r:        persona.Resolved{ID: "ed", Harness: "claude", Model: "sonnet", SystemPrompt: "Edit.", Permissions: persona.Permissions{Mode: "acceptEdits", Allow: []string{"Read", "Write"}, Deny: []string{"WebFetch"}}},
			s:        OneShot{Task: "write the file", SessionID: "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"},
			wantArgs: "-p|write the file|--output-format|stream-json|--verbose|--model|sonnet|--append-system-prompt|Edit.|--permission-mode|acceptEdits|--allowedTools|Read,Write|--disallowedTools|WebFetch|--session-id|5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11",
		},
		{
			name:      "claude resume, a task that reads as a flag on stdin",
			r:         persona.Resolved{ID: "ed", Harness: "claude", Model: "sonnet"},
			s:         OneShot{Task: "--help me", Resume: "abc"},
			extra:     []string{"--max-turns", "3"},
			wantArgs:  "-p|--output-format|stream-json|--verbose|--model|sonnet|--resume|abc|--max-turns|3",
			wantStdin: "--help me",
		},
		{
			name:    "claude resume takes no fixed session id",
			r:       persona.Resolved{ID: "ed", Harness: "claude", Model: "sonnet"},
			s:       OneShot{Task: "t", Resume: "abc", SessionID: "x"},
			wantErr: "only claude and gemini take a session id",
		},
		{
			name:    "codex takes no fixed session id",
			r:       persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5"},
			s:       OneShot{Task: "t", SessionID: "x"},
			wantErr: "only claude and gemini take a session id",
		},
		{
			name:     "codex exec: approval never, the system prompt before the task",
			r:        persona.Resolved{ID: "ed", Harness: "codex", Model: "openai/gpt-5", SystemPrompt: "Edit.", Permissions: persona.Permissions{Mode: "acceptEdits"}},
			s:        OneShot{Task: "write the file"},
			extra:    []string{"--ephemeral"},
			wantArgs: `exec|--json|--skip-git-repo-check|-m|gpt-5|--sandbox|workspace-write|-c|approval_policy="never"|--ephemeral|Edit.` + "\n\n" + `write the file`,
		},
		{
			name:     "codex exec: on-failure is never too",
			r:        persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5", HarnessSettings: persona.HarnessSettings{ApprovalPolicy: "on-failure"}},
			s:        OneShot{Task: "go"},
			wantArgs: `exec|--json|--skip-git-repo-check|-m|gpt-5|-c|approval_policy="never"|go`,
		},
		{
			name:     "codex exec resume: the sandbox as -c, the thread then the task",
			r:        persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5", SystemPrompt: "Edit.", Permissions: persona.Permissions{Mode: "default"}},
			s:        OneShot{Task: "again", Resume: "0199-thread"},
			wantArgs: `exec|resume|--json|--skip-git-repo-check|-m|gpt-5|-c|sandbox_mode="read-only"|-c|approval_policy="never"|0199-thread|again`,
		},
		{
			name:     "codex bypass keeps its flag and asks nothing",
			r:        persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5", Permissions: persona.Permissions{Mode: "bypassPermissions"}},
			s:        OneShot{Task: "go"},
			wantArgs: `exec|--json|--skip-git-repo-check|-m|gpt-5|--dangerously-bypass-approvals-and-sandbox|go`,
		},
		{
			name:      "codex: a long task on stdin",
			r:         persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5"},
			s:         OneShot{Task: long},
			wantArgs:  `exec|--json|--skip-git-repo-check|-m|gpt-5|-c|approval_policy="never"|-`,
			wantStdin: long,
		},
		{
			name:    "codex exec refuses --search",
			r:       persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5"},
			s:       OneShot{Task: "go"},
			extra:   []string{"--search"},
			wantErr: "codex exec refuses --search",
		},
		{
			name:    "codex exec resume refuses --add-dir",
			r:       persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5"},
			s:       OneShot{Task: "go", Resume: "t"},
			extra:   []string{"--add-dir=/x"},
			wantErr: "codex exec resume refuses --add-dir",
		},
		{
			name:     "opencode run",
			r:        persona.Resolved{ID: "ed", Harness: "opencode", Model: "mock/m"},
			s:        OneShot{Task: "write the file", Resume: "ses_1"},
			extra:    []string{"--title", "t"},
			wantArgs: "run|--format|json|--print-logs|--log-level|WARN|--agent|ed|--session|ses_1|--title|t|write the file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := PlanOneShot(&tt.r, Options{ConfigDir: t.TempDir(), Env: []string{"PATH=/nonexistent"}, Extra: tt.extra}, tt.s)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("PlanOneShot err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlanOneShot: %v", err)
			}
			if got := strings.Join(inv.Args, "|"); got != tt.wantArgs {
				t.Errorf("args:\n got %s\nwant %s", got, tt.wantArgs)
			}
			if inv.Stdin != tt.wantStdin {
				t.Errorf("Stdin = %.40q, want %.40q", inv.Stdin, tt.wantStdin)
			}
			if !inv.OneShot {
				t.Error("OneShot not set")
			}
		})
	}
}

func TestPlanOneShotRefusedFlagError(t *testing.T) {
	r := persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5"}
	_, err := PlanOneShot(&r, Options{Extra: []string{"-a", "never"}}, OneShot{Task: "go"})
	var rf *RefusedFlagError
	if !errors.As(err, &rf) || rf.Flag != "-a" {
		t.Errorf("err = %v, want a *RefusedFlagError for -a", err)
	}
}

func TestPlanOneShotSealsTheTask(t *testing.T) {
	r := persona.Resolved{ID: "ed", Harness: "opencode", Model: "mock/m"}
	seal := func(s string) string { return strings.ReplaceAll(s, "/real", "/box") }
	inv, err := PlanOneShot(&r, Options{ConfigDir: t.TempDir(), SealText: seal}, OneShot{Task: "edit /real/a.go"})
	if err != nil {
		t.Fatal(err)
	}
	if got := inv.Args[len(inv.Args)-1]; got != "edit /box/a.go" {
		t.Errorf("task = %q, want the sealed path", got)
	}
}

// TestPlanOneShotOpencodeAsks: opencode run rejects what would ask, and
// says so only where something would: the persona's rules, or the
// permission of the user's own configuration.
func TestPlanOneShotOpencodeAsks(t *testing.T) {
	tests := []struct {
		name     string
		perms    persona.Permissions
		userConf string
		want     string
	}{
		{"no permissions", persona.Permissions{}, "", ""},
		{"acceptEdits asks for commands and the web", persona.Permissions{Mode: "acceptEdits"}, "",
			"opencode run cannot ask: what would ask is rejected (bash, webfetch, websearch)"},
		{"bypassPermissions asks for nothing", persona.Permissions{Mode: "bypassPermissions"}, "", ""},
		{"allow and deny rules ask for nothing", persona.Permissions{Allow: []string{"Read"}, Deny: []string{"WebFetch"}}, "", ""},
		{"the user's configuration asks", persona.Permissions{}, `{
			// JSONC, as opencode reads it
			"permission": {"bash": {"git push *": "ask", "*": "allow"}, "edit": "allow"}}`,
			"opencode run cannot ask: what would ask is rejected (bash)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.userConf != "" {
				dir := filepath.Join(home, ".config", "opencode")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "opencode.json"), []byte(tt.userConf), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			r := persona.Resolved{ID: "ed", Harness: "opencode", Model: "mock/m", Permissions: tt.perms}
			inv, err := PlanOneShot(&r, Options{ConfigDir: t.TempDir(), Env: []string{"HOME=" + home}}, OneShot{Task: "go"})
			if err != nil {
				t.Fatal(err)
			}
			var got string
			for _, n := range inv.Notes {
				if strings.Contains(n, "cannot ask") {
					got = n
				}
			}
			if got != tt.want {
				t.Errorf("note %q, want %q", got, tt.want)
			}
		})
	}
}

// TestRefusedOutsideSandbox: codex --remote hands the agent to a remote
// app server, outside the sandbox: refused for that reason in both modes,
// however it is written.
func TestRefusedOutsideSandbox(t *testing.T) {
	r := persona.Resolved{ID: "ed", Harness: "codex", Model: "gpt-5"}
	for _, extra := range [][]string{{"--remote", "ws://host:4500"}, {"--remote=ws://host:4500"}} {
		_, err := PlanOneShot(&r, Options{ConfigDir: t.TempDir(), Extra: extra}, OneShot{Task: "go"})
		var rf *RefusedFlagError
		if !errors.As(err, &rf) || rf.Flag != "--remote" || !strings.Contains(err.Error(), "outside workforce's sandbox") {
			t.Errorf("one-shot %q: err = %v, want --remote refused for running outside the sandbox", extra, err)
		}
		_, err = Plan(&r, Options{ConfigDir: t.TempDir(), Extra: extra})
		if !errors.As(err, &rf) || rf.Why == "" {
			t.Errorf("interactive %q: err = %v, want --remote refused", extra, err)
		}
	}
	if _, err := Plan(&persona.Resolved{ID: "ed", Harness: "claude", Model: "m"}, Options{ConfigDir: t.TempDir(), Extra: []string{"--remote"}}); err != nil {
		t.Errorf("claude --remote: %v, want it passed on (it is not codex's)", err)
	}
}
