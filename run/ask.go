package run

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
)

// Question is a one-shot question to a model, asked without tools (pick's
// question): Prompt asked of the persona Resolved (its harness, model and
// permissions that leave the model no tool), with the harness arguments
// Extra, within Timeout, in Env.
type Question struct {
	Resolved *persona.Resolved
	Prompt   string
	Extra    []string
	Timeout  time.Duration
	Env      Env
}

// InterruptedError is a question that a signal stopped: Signal, nil when
// it is not known.
type InterruptedError struct{ Signal os.Signal }

func (e *InterruptedError) Error() string {
	if e.Signal == nil {
		return "interrupted"
	}
	return "interrupted by " + e.Signal.String()
}

// Ask asks q and returns the model's final message. The run is a session
// as any unattended run's: a sandbox copy of an empty directory, confined
// as the configuration says, on a per-session state; nothing of it is
// kept. An error is that no harness could answer (an *InterruptedError
// when a signal stopped it); the plan's warnings and the run's go to
// hooks.Warn.
func Ask(q Question, hooks Hooks) (string, error) {
	empty, err := os.MkdirTemp("", "workforce-pick-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(empty)
	root, err := filepath.EvalSymlinks(empty)
	if err != nil {
		return "", err
	}
	sb, err := Sandbox(q.Env, nil, nil)
	if err != nil {
		return "", err
	}
	plan, err := session.NewPlan(session.PlanOptions{
		Home: q.Env.Home, Persona: q.Resolved.ID, Resolved: q.Resolved, Root: root, Cwd: root,
		Env: q.Env.Environ, OneShot: &harness.OneShot{Task: q.Prompt}, Sandbox: sb, Extra: q.Extra,
	})
	if err != nil {
		return "", err
	}
	if err := plan.Refusal(); err != nil {
		return "", err
	}
	for _, w := range plan.Warnings {
		hooks.warn("%s", w)
	}
	res, err := plan.Run(session.RunOptions{Warn: hooks.Warn, Timeout: q.Timeout, Abort: hooks.Abort, Signals: hooks.Signals})
	if res != nil && res.OneShot != nil && res.OneShot.Dir != "" {
		// A question is no run of a persona: its output is its answer.
		os.RemoveAll(res.OneShot.Dir)
	}
	return answer(q, res, err)
}

// answer is the model's final message in the run res of q, which ended
// with err, or why there is none.
func answer(q Question, res *session.Result, err error) (string, error) {
	h := q.Resolved.Harness
	switch {
	case res == nil:
		return "", err
	case res.Stopped || res.Signal != nil:
		return "", &InterruptedError{Signal: res.Signal}
	case res.TimedOut:
		return "", fmt.Errorf("%s gave no answer within %s (\"pick\": {\"timeout\": ...} in <home>/config.json)", h, q.Timeout)
	case err != nil:
		return "", err
	}
	one := res.OneShot
	if !one.Parsed || one.Outcome.Error {
		msg := fmt.Sprintf("%s printed no answer", h)
		if t := one.Outcome.ErrorText; t != "" {
			msg = fmt.Sprintf("%s failed: %s", h, firstLine(t, 200))
		} else if e := LastLine(string(one.Stderr)); e != "" && !harness.LogsOnStderr(h) {
			msg += "; its stderr ends: " + e
		}
		if !res.Harness.Success() {
			msg += fmt.Sprintf(" (exit status %d)", harnessCode(res.Harness))
		}
		// The likely cause (no credentials: how to log in).
		f := harness.Failure{Harness: h, Model: q.Resolved.Model, ErrorText: one.Outcome.FailureText(), Stderr: one.Stderr, Env: q.Env.Environ}
		if c := harness.Diagnose(f); c != nil {
			msg += ": " + c.Message
		}
		return "", errors.New(msg)
	}
	return one.Outcome.Final, nil
}

// harnessCode is the harness's end e as a shell reports it: its code,
// or 128+n when signal n killed it.
func harnessCode(e harness.Exit) int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

// firstLine shortens s to its first line and at most n characters.
func firstLine(s string, n int) string {
	for i, c := range s {
		if c == '\n' {
			s = s[:i]
			break
		}
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
