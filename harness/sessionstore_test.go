package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/persona"
)

// rollout writes a codex rollout file for conversation id, run in cwd,
// in the day directory of day below home, last written at mtime.
func rollout(t *testing.T, home string, day time.Time, id, cwd string, mtime time.Time) {
	t.Helper()
	dir := filepath.Join(home, "sessions", day.Format("2006/01/02"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rollout-"+day.Format("2006-01-02T15-04-05")+"-"+id+".jsonl")
	meta := fmt.Sprintf(`{"timestamp":"2026-11-24T23:45:09.451Z","ordinal":0,"type":"session_meta","payload":{"session_id":%q,"id":%q,"cwd":%q,"source":"exec","base_instructions":{"text":%q}}}`+"\n"+`{"type":"event_msg"}`+"\n",
		id, id, cwd, strings.Repeat("You are Codex. ", 2000))
	if err := os.WriteFile(path, []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestFindCodexSession(t *testing.T) {
	now := time.Date(2026, 11, 24, 23, 50, 0, 0, time.UTC)
	since := now.Add(-10 * time.Minute)
	box := t.TempDir()
	tests := []struct {
		name  string
		setup func(t *testing.T, home string)
		want  string
	}{
		{name: "the conversation of the sandbox", want: "a", setup: func(t *testing.T, home string) {
			rollout(t, home, now, "a", box, now)
			rollout(t, home, now, "other", "/elsewhere", now.Add(time.Minute))
		}},
		{name: "the last written of two", want: "b", setup: func(t *testing.T, home string) {
			rollout(t, home, now, "a", box, now.Add(-time.Minute))
			rollout(t, home, now, "b", box, now)
		}},
		{name: "in the next day's directory (local time ahead)", want: "c", setup: func(t *testing.T, home string) {
			rollout(t, home, now.AddDate(0, 0, 1), "c", box, now)
		}},
		{name: "one older than the run", setup: func(t *testing.T, home string) {
			rollout(t, home, now, "old", box, since.Add(-time.Hour))
		}},
		{name: "another directory only", setup: func(t *testing.T, home string) {
			rollout(t, home, now, "other", box+"/sub", now)
		}},
		{name: "a first line that is no session_meta", setup: func(t *testing.T, home string) {
			dir := filepath.Join(home, "sessions", now.Format("2006/01/02"))
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "rollout-x.jsonl"), []byte(`{"type":"event_msg","payload":{"id":"x","cwd":"`+box+`"}}`+"\n"), 0o644)
		}},
		{name: "no store at all", setup: func(t *testing.T, home string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			tt.setup(t, home)
			got, err := findCodexSession(home, box, since, now)
			var ns *NoSessionError
			switch {
			case tt.want != "" && (err != nil || got != tt.want):
				t.Errorf("findCodexSession() = %q, %v; want %q", got, err, tt.want)
			case tt.want == "" && !errors.As(err, &ns):
				t.Errorf("findCodexSession() = %q, %v; want a NoSessionError", got, err)
			}
		})
	}
}

// TestFindSessionEnv: FindSession reads codex's store at $CODEX_HOME,
// else ~/.codex, and refuses claude, whose id is fixed before the run.
func TestFindSessionEnv(t *testing.T) {
	box, home := t.TempDir(), t.TempDir()
	rollout(t, filepath.Join(home, ".codex"), time.Now(), "in-home", box, time.Now())
	codexHome := t.TempDir()
	rollout(t, codexHome, time.Now(), "in-codex-home", box, time.Now())
	since := time.Now().Add(-time.Minute)
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=" + home}, "in-home"},
		{[]string{"HOME=" + home, "CODEX_HOME=" + codexHome}, "in-codex-home"},
	} {
		got, err := FindSession(&Invocation{Harness: persona.HarnessCodex, env: tt.env}, box, since)
		if err != nil || got != tt.want {
			t.Errorf("FindSession(%q) = %q, %v; want %q", tt.env, got, err, tt.want)
		}
	}
	if _, err := FindSession(&Invocation{Harness: persona.HarnessClaude}, box, since); !errors.Is(err, ErrNoSessionID) {
		t.Errorf("FindSession(claude) = %v, want ErrNoSessionID", err)
	}
}

// TestFindOpencodeSession runs a stand-in opencode that prints the
// session list opencode 1.18.33 printed (with its own directory as one
// session's) in the directory asked, with the harness's environment.
func TestFindOpencodeSession(t *testing.T) {
	box := t.TempDir()
	bin := t.TempDir()
	list := `[{"id":"ses_new_other","title":"x","updated":300,"created":1,"projectId":"global","directory":"/elsewhere"},` +
		`{"id":"ses_mine","title":"ok","updated":200,"created":1,"projectId":"global","directory":"` + box + `"}]`
	script := "#!/bin/sh\npwd > " + filepath.Join(bin, "dir") + "\n[ \"$*\" = 'session list --format json' ] || exit 3\n[ \"$MARK\" = set ] || exit 4\necho '" + list + "'\n"
	if err := os.WriteFile(filepath.Join(bin, "opencode"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	inv := &Invocation{Harness: persona.HarnessOpencode, Binary: "opencode", env: []string{"PATH=" + bin + ":/usr/bin:/bin", "MARK=set"}}
	got, err := FindSession(inv, box, time.Now())
	if err != nil || got != "ses_mine" {
		t.Errorf("FindSession(opencode) = %q, %v; want ses_mine", got, err)
	}
	if dir, _ := os.ReadFile(filepath.Join(bin, "dir")); strings.TrimSpace(string(dir)) != box {
		t.Errorf("opencode session list ran in %q, want %q", dir, box)
	}
	_, err = FindSession(inv, t.TempDir(), time.Now())
	var ns *NoSessionError
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "opencode's session store") {
		t.Errorf("FindSession(opencode) in another directory = %v, want a NoSessionError", err)
	}
}

func TestParseOpencodeSessions(t *testing.T) {
	tests := []struct {
		name, out, want, err string
	}{
		{name: "empty", out: "", want: ""},
		{name: "none", out: "[]", want: ""},
		{name: "most recent of the directory", want: "b",
			out: `[{"id":"a","updated":1,"directory":"/box"},{"id":"b","updated":2,"directory":"/box/"},{"id":"c","updated":3,"directory":"/other"}]`},
		{name: "a relative directory", out: `[{"id":"a","updated":1,"directory":"box"}]`, want: ""},
		{name: "not a list", out: "Error: no database", err: "not a session list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseOpencodeSessions([]byte(tt.out), "/box")
			if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Errorf("parseOpencodeSessions(%q) = %q, %v; want %q, %q", tt.out, got, err, tt.want, tt.err)
			}
		})
	}
}

// TestClaudeSessionID: an interactive claude run takes the id fixed
// before the start; a one-shot plan takes its own (OneShot.SessionID),
// never the interactive one, and none with --resume.
func TestClaudeSessionID(t *testing.T) {
	r := &persona.Resolved{ID: "p", Harness: persona.HarnessClaude, Model: "m"}
	const id = "5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"
	inv, err := Plan(r, Options{SessionID: id})
	if err != nil || !slices.Equal(inv.Args[len(inv.Args)-2:], []string{"--session-id", id}) {
		t.Errorf("Plan(SessionID) args %q, %v; want --session-id %s", inv.Args, err, id)
	}
	inv, err = PlanOneShot(r, Options{SessionID: id}, OneShot{Task: "go on", Resume: "other"})
	if err != nil || slices.Contains(inv.Args, "--session-id") || !slices.Contains(inv.Args, "--resume") {
		t.Errorf("PlanOneShot(Resume) args %q, %v; want --resume and no --session-id", inv.Args, err)
	}
	for h, model := range map[string]string{persona.HarnessCodex: "gpt-5", persona.HarnessOpencode: "mock/m"} {
		inv, err := Plan(&persona.Resolved{ID: "p", Harness: h, Model: model}, Options{SessionID: id, ConfigDir: t.TempDir()})
		if err != nil {
			t.Fatalf("Plan(%s): %v", h, err)
		}
		if strings.Contains(strings.Join(inv.Args, " "), id) {
			t.Errorf("Plan(%s, SessionID) args %q, %v; want no session id", h, inv.Args, err)
		}
	}
}

// FuzzParseCodexMeta: the reader of a rollout's first line never panics
// and reads an id only from a session_meta line.
func FuzzParseCodexMeta(f *testing.F) {
	f.Add([]byte(`{"type":"session_meta","payload":{"id":"01a20ffc-5e48-75f3-9aa2-1b494029c980","cwd":"/box","source":"vscode","originator":"codex-tui"}}`))
	f.Add([]byte(`{"type":"event_msg","payload":{"id":"x","cwd":"/box"}}`))
	f.Add([]byte(`{"type":"session_meta","payload":{"id":5}}`))
	f.Add([]byte(`{"type":"session_meta"`))
	f.Fuzz(func(t *testing.T, line []byte) {
		id, cwd, err := parseCodexMeta(line)
		if err != nil && (id != "" || cwd != "") {
			t.Fatalf("parseCodexMeta(%q) = %q, %q with the error %v", line, id, cwd, err)
		}
		if err == nil && !strings.Contains(string(line), "session_meta") {
			t.Fatalf("parseCodexMeta(%q) read a line that is no session_meta", line)
		}
	})
}

// FuzzParseOpencodeSessions: the reader of opencode's session list never
// panics and returns only an id of a session of the directory asked.
func FuzzParseOpencodeSessions(f *testing.F) {
	f.Add([]byte(`[{"id":"ses_df00b4f54ffeFoDCTT1r4k2KO9","title":"ok","updated":1795564028059,"created":1795564023979,"projectId":"global","directory":"/box"}]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"id":"a","directory":"/other"},{"id":"b","directory":"/box/."}]`))
	f.Add([]byte(`{"id":"a"}`))
	f.Fuzz(func(t *testing.T, out []byte) {
		id, err := parseOpencodeSessions(out, "/box")
		if err != nil && id != "" {
			t.Fatalf("parseOpencodeSessions(%q) = %q with the error %v", out, id, err)
		}
		if id == "" {
			return
		}
		var list []struct{ ID, Directory string }
		if err := json.Unmarshal(out, &list); err != nil {
			t.Fatalf("parseOpencodeSessions(%q) = %q from no list: %v", out, id, err)
		}
		if !slices.ContainsFunc(list, func(s struct{ ID, Directory string }) bool {
			return s.ID == id && filepath.Clean(s.Directory) == "/box"
		}) {
			t.Fatalf("parseOpencodeSessions(%q) = %q, no session of /box", out, id)
		}
	})
}
