package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
)

// fakeHarness installs a shell script named h in a new bin directory and
// returns the environment that runs it: it appends its arguments to the
// file $ARGV, runs $ACTION in its directory, and prints $ANSWER.
func fakeHarness(t *testing.T, h string, vars ...string) []string {
	t.Helper()
	bin := t.TempDir()
	script := "#!/bin/sh\necho \"$*\" >> \"$ARGV\"\n[ -n \"$ACTION\" ] && sh -c \"$ACTION\"\n[ -n \"$ANSWER\" ] && printf '%s\\n' \"$ANSWER\"\nexit 0\n"
	must(t, os.WriteFile(filepath.Join(bin, h), []byte(script), 0o755))
	return append([]string{"PATH=" + bin + ":/usr/bin:/bin", "HOME=" + t.TempDir(), "ARGV=" + filepath.Join(bin, "argv")}, vars...)
}

// argvLines is what the fake harness of env recorded, a line a run.
func argvLines(t *testing.T, env []string) []string {
	t.Helper()
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "ARGV="); ok {
			data, _ := os.ReadFile(path)
			return strings.Split(strings.TrimSpace(string(data)), "\n")
		}
	}
	t.Fatal("no ARGV")
	return nil
}

// planFor plans a run of persona p on harness h in root, interactive or
// with task, resuming s when set.
func planFor(t *testing.T, home, root, h string, env []string, task string, s *Session) *Plan {
	t.Helper()
	o := PlanOptions{Home: home, Persona: "p", Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: h, Model: "m"},
		Root: root, Cwd: root, Env: env, Session: s, Sandbox: Sandbox{Mode: confine.Off}}
	if task != "" {
		o.OneShot = &harness.OneShot{Task: task}
	}
	p, err := NewPlan(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestResume runs a one-shot run that is kept, lets the user edit what it
// brought back, and resumes it: the harness continues the conversation
// the first output named, in the same sandbox; the resumed run syncs
// back what the agent changed since, and only that (what the first sync
// applied is the user's), then removes the session as a run does.
func TestResume(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	const id = "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"
	answer := fmt.Sprintf(`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":%q,"usage":{"input_tokens":1,"output_tokens":1}}`, id)
	env := fakeHarness(t, "claude", "ACTION=echo first > a.txt", "ANSWER="+answer)

	p := planFor(t, home, root, "claude", env, "first task", nil)
	if !slices.Contains(p.Argv, "--session-id") {
		t.Errorf("argv %q: want the conversation id fixed before the start", p.Argv)
	}
	res, err := p.Run(RunOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Kept || res.Session.Record.HarnessSessionID != id || res.Session.Record.Phase != Synced {
		t.Fatalf("first run: kept %v, record %+v; want kept, synced, conversation %s (the output's)", res.Kept, res.Session.Record, id)
	}
	must(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("the user's\n"), 0o644))

	s, err := Open(home, res.Session.ID())
	must(t, err)
	env2 := append(slices.Clone(env), "ACTION=cat a.txt > seen.txt; echo second > b.txt")
	p2 := planFor(t, home, root, "claude", env2, "second task", s)
	if p2.Sandbox != s.Dir {
		t.Fatalf("the resumed plan's sandbox is %s, want the session's %s", p2.Sandbox, s.Dir)
	}
	res2, err := p2.Run(RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	argv := argvLines(t, env)
	if len(argv) != 2 || !strings.HasSuffix(argv[1], "--resume "+id) || strings.Contains(argv[1], "--session-id") {
		t.Errorf("argv of the two runs %q: want the second to end --resume %s", argv, id)
	}
	rep := res2.Report
	if rep == nil || !slices.Equal(rep.Created, []string{"b.txt", "seen.txt"}) || len(rep.Updated) > 0 || len(rep.Conflicts) > 0 {
		t.Fatalf("resumed sync %+v; want b.txt and seen.txt created, nothing else", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "seen.txt")); string(b) != "first\n" {
		t.Errorf("the resumed harness saw a.txt = %q, want the first run's", b)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(b) != "the user's\n" {
		t.Errorf("a.txt = %q, want the user's edit kept", b)
	}
	if res2.Kept {
		t.Errorf("the resumed session is kept without Keep")
	}
	if _, err := os.Stat(s.Dir); err == nil {
		t.Errorf("the resumed session %s is still there", s.Dir)
	}
}

// TestInteractiveCodexSession: an interactive codex run that is kept
// records the conversation its session store says ran in the sandbox
// (the fake codex writes a rollout as codex does, in its CODEX_HOME: the
// session's state, not the user's), and a resume plan continues it with
// codex exec resume.
func TestInteractiveCodexSession(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	codexHome := t.TempDir()
	const id = "01a20ffc-5e48-75f3-9aa2-1b494029c980"
	day := filepath.Join("$CODEX_HOME", "sessions", time.Now().Format("2006/01/02"))
	meta := fmt.Sprintf(`{"type":"session_meta","payload":{"id":%q,"cwd":"'"$PWD"'","source":"vscode"}}`, id)
	env := fakeHarness(t, "codex", "CODEX_HOME="+codexHome,
		"ACTION=mkdir -p "+day+" && echo '"+meta+"' > "+filepath.Join(day, "rollout-2026-11-24T23-55-27-"+id+".jsonl"))

	p := planFor(t, home, root, "codex", env, "", nil)
	res, err := p.Run(RunOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Session.Record.HarnessSessionID; got != id {
		t.Fatalf("record's conversation %q, want %q from codex's store", got, id)
	}
	if _, err := os.Stat(filepath.Join(codexHome, "sessions")); err == nil {
		t.Errorf("codex wrote its conversation into your CODEX_HOME, want the session's state")
	}
	s, err := Open(home, res.Session.ID())
	must(t, err)
	if s.Record.HarnessSessionID != id {
		t.Fatalf("saved record's conversation %q, want %q", s.Record.HarnessSessionID, id)
	}
	p2 := planFor(t, home, root, "codex", env, "go on", s)
	if got := strings.Join(p2.Argv, " "); !strings.HasPrefix(got, "codex exec resume ") || !strings.HasSuffix(got, id+" go on") {
		t.Errorf("argv %q: want codex exec resume ... %s go on", got, id)
	}
}

// TestResumeRefuses: a session that cannot be resumed is refused with an
// error that says why.
func TestResumeRefuses(t *testing.T) {
	tests := []struct {
		name   string
		h      string
		change func(t *testing.T, s *Session)
		want   string
		is     error
	}{
		{name: "creating", h: "claude", change: func(t *testing.T, s *Session) { s.Record.Phase = Creating }, want: "never made whole"},
		{name: "failed", h: "claude", change: func(t *testing.T, s *Session) { s.Record.Phase, s.Record.Error = Failed, "no space" }, want: "its run failed: no space"},
		{name: "the tree gone", h: "claude", change: func(t *testing.T, s *Session) { must(t, os.RemoveAll(filepath.Join(s.Dir, mount.TreeDir))) }, want: "its sandbox tree is gone"},
		{name: "running", h: "claude", change: func(t *testing.T, s *Session) {
			s.Record.Phase, s.Record.PID = Running, os.Getpid()
			holder := &Session{Dir: s.Dir}
			if ok, err := holder.TryLock(); !ok || err != nil {
				t.Fatalf("TryLock() = %v, %v", ok, err)
			}
			t.Cleanup(holder.Close)
		}, is: ErrLive},
		{name: "no claude conversation", h: "claude", change: func(t *testing.T, s *Session) { s.Record.HarnessSessionID, s.Record.Format = "", 2 }, want: "keeps no claude session id"},
		{name: "no codex conversation", h: "codex", change: func(t *testing.T, s *Session) { s.Record.HarnessSessionID = "" }, want: "keeps no codex session id, and codex's session store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home, root := t.TempDir(), t.TempDir()
			s := leaveSession(t, home, root, func(string) {})
			s.Record.Phase, s.Record.Harness, s.Record.HarnessSessionID = Synced, tt.h, "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"
			tt.change(t, s)
			must(t, s.save())
			env := fakeHarness(t, tt.h)
			_, err := NewPlan(PlanOptions{Home: home, Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: tt.h, Model: "m"},
				Env: env, Session: s, OneShot: &harness.OneShot{Task: "go on"}})
			var nr *NotResumableError
			switch {
			case tt.is != nil && !errors.Is(err, tt.is):
				t.Errorf("NewPlan() = %v, want %v", err, tt.is)
			case tt.want != "" && (!errors.As(err, &nr) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("NewPlan() = %v, want a NotResumableError saying %q", err, tt.want)
			}
		})
	}
}

// TestResumeRechecksUnderLock: a session planned while resumable but
// removed before the run is refused by the run, which reads the record
// again under the session's lock.
func TestResumeRechecksUnderLock(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	s := leaveSession(t, home, root, func(string) {})
	s.Record.Phase, s.Record.Harness, s.Record.HarnessSessionID = Synced, "claude", "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"
	must(t, s.save())
	env := fakeHarness(t, "claude")
	p := planFor(t, home, root, "claude", env, "go on", s)
	s.Record.Phase = Failed
	must(t, s.save())
	_, err := p.Run(RunOptions{})
	var nr *NotResumableError
	if !errors.As(err, &nr) {
		t.Fatalf("Run() = %v, want a NotResumableError", err)
	}
	if lines := argvLines(t, env); len(lines) != 1 || lines[0] != "" {
		t.Errorf("the harness ran: %q", lines)
	}
}
