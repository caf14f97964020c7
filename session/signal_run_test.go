package session

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/persona"
)

// countingNotify is a Notify that counts the handlers installed and
// removed, and keeps the channel of the last one installed.
type countingNotify struct {
	installs, stops atomic.Int32
	mu              sync.Mutex
	ch              chan<- os.Signal
}

func (n *countingNotify) notify(c chan<- os.Signal, _ ...os.Signal) func() {
	n.installs.Add(1)
	n.mu.Lock()
	n.ch = c
	n.mu.Unlock()
	return func() { n.stops.Add(1) }
}

// TestRunSkillsSignalHandler: a run whose persona has skills installs its
// signal handler once, for the fetch and the run, and removes it once,
// whether the fetch succeeds (the run goes on with the handler) or fails
// (the run ends there).
func TestRunSkillsSignalHandler(t *testing.T) {
	for _, tt := range []struct {
		name  string
		skill persona.Skill
		fails bool
	}{
		{"the fetch succeeds", persona.Skill{ID: "s", Source: "./skills/s", Files: map[string]string{"SKILL.md": "---\nname: s\ndescription: A skill.\n---\n"}}, false},
		// npm is not on the fake harness's PATH: the fetch fails.
		{"the fetch fails", persona.Skill{ID: "s", Source: "npm:@acme/s@1.0.0"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home, root := t.TempDir(), t.TempDir()
			must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
			env := fakeHarness(t, "claude")
			p, err := NewPlan(PlanOptions{Home: home, Persona: "p", Root: root, Cwd: root, Env: env, Sandbox: Sandbox{Mode: confine.Off},
				Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m", Skills: []persona.Skill{tt.skill}}})
			if err != nil {
				t.Fatal(err)
			}
			var n countingNotify
			_, err = p.Run(RunOptions{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, Signals: n.notify})
			if (err != nil) != tt.fails {
				t.Fatalf("Run: %v, want an error %v", err, tt.fails)
			}
			if i, s := n.installs.Load(), n.stops.Load(); i != 1 || s != 1 {
				t.Errorf("signal handlers installed %d, removed %d; want 1 and 1", i, s)
			}
		})
	}
}

// TestRunStoppedWhileMaking: a signal that comes once the sandbox is made
// but before the harness's phase begins (after the making last looked at
// its context) stops the run: the harness never starts, the session is
// removed, and the result says it was stopped, by what.
func TestRunStoppedWhileMaking(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	env := fakeHarness(t, "claude", "ACTION=echo ran > ran.txt")
	p := planFor(t, home, root, "claude", env, "", nil)
	var n countingNotify
	orig := beforeHarness
	defer func() { beforeHarness = orig }()
	beforeHarness = func(s *signals) {
		n.mu.Lock()
		ch := n.ch
		n.mu.Unlock()
		ch <- syscall.SIGTERM
		// Handled (the handler's goroutine), still in phaseCreate.
		for deadline := time.Now().Add(10 * time.Second); s.lastSignal() == nil && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	res, err := p.Run(RunOptions{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, Signals: n.notify})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Stopped || res.Signal != syscall.SIGTERM {
		t.Errorf("result stopped %v by %v, want stopped by SIGTERM", res.Stopped, res.Signal)
	}
	if lines := argvFile(env); fileExists(lines) {
		t.Errorf("the harness ran (%s exists)", lines)
	}
	if _, err := os.Stat(p.Sandbox); !os.IsNotExist(err) {
		t.Errorf("the session %s is left: %v", p.Sandbox, err)
	}
}

// argvFile is the file the fake harness of env records its arguments in.
func argvFile(env []string) string {
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "ARGV="); ok {
			return path
		}
	}
	return ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
