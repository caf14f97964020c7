package session

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/proctree"
	"github.com/seed-3bc194a6/workforce/mount"
)

// An attempt (Options.Attempt) is a one-shot run of an evaluation: the
// case's setup runs in the sandbox before the agent, the tree is
// recorded then and after the agent (snapshot.go), the protected files
// the agent changed are restored, and the case's check runs in the
// sandbox. Nothing syncs back into the real tree, no branch is made in
// the real repository (the agent's commits stay in the sandbox), and the
// session is removed at the end unless kept (Options.Keep). Its record
// says from the start that it is an attempt's (Record.Attempt): Sync and
// resume refuse it, also when a crash left it. The agent's work is its changes and its patch, against the tree as
// it was after the setup (AttemptResult).
//
// The setup and the check are `sh -c COMMAND` in the sandbox's working
// directory, run as the harness is: the same invocation (environment,
// write and read policy, namespaces, the network proxy) with sh as its
// program, through runHarness, so that the processes they leave are
// ended as they exit, as the agent's are before the check starts.

// Attempt is what an attempt's run does besides the agent's run.
type Attempt struct {
	// Setup and Check are shell commands (sh -c); empty for none.
	Setup, Check string
	// Protect are doublestar globs of paths relative to the project,
	// slash-separated: the files restored to their state after setup
	// before the check.
	Protect []string
	// SetupTimeout and CheckTimeout limit the setup and the check; zero
	// for no limit.
	SetupTimeout, CheckTimeout time.Duration
	// OutputMax is how much of a step's output is kept: the first and
	// last halves, with a line between saying how much was cut.
	OutputMax int
}

// Step is how an attempt's setup or check ended.
type Step struct {
	Command string
	// ExitCode is its status (128+n when signal n killed it); -1 when
	// it could not be started.
	ExitCode int
	TimedOut bool
	// Output is its output (stdout and stderr as written), cut to
	// Attempt.OutputMax (Truncated); OutputBytes its whole length.
	Output      string
	OutputBytes int64
	Truncated   bool
	Duration    time.Duration
}

// Passed reports whether the step exited 0 in its time.
func (s *Step) Passed() bool { return s != nil && s.ExitCode == 0 && !s.TimedOut }

// AttemptResult is what an attempt did besides the agent's run.
type AttemptResult struct {
	// Setup and Check are how they ended; nil when there was none, or
	// (Check) when the agent did not run or a signal stopped the run.
	Setup, Check *Step
	// AgentStarted says the harness was started.
	AgentStarted bool
	// Created, Updated and Deleted are the files the agent changed,
	// against the tree after setup: slash-separated paths relative to
	// the project, sorted, never nil once the agent ran.
	Created, Updated, Deleted []string
	// Restored are the protected files the agent changed, restored
	// before the check.
	Restored []string
	// Patch is the agent's work as a git patch against the tree after
	// setup; PatchBytes is its whole length, and PatchCut says it was
	// longer than PatchMax and holds only the diffs of the first files.
	Patch      string
	PatchBytes int64
	PatchCut   bool
}

// attemptRun is an attempt under way.
type attemptRun struct {
	spec   Attempt
	result *AttemptResult
	snaps  *snapshots
	base   *snapshot
}

// beforeAgent runs the attempt's setup and records the tree after it.
// A setup that fails ends the run: the Result it returns (with its error)
// is the run's, and the agent never starts. The error of a snapshot ends
// the run too.
func (s *Session) beforeAgent(sigs *signals, box *mount.Sandbox, o Options, warn func(string)) (*attemptRun, *Result, error) {
	a := &attemptRun{spec: *o.Attempt, result: &AttemptResult{}}
	if a.spec.Setup != "" {
		step := runStep(sigs, box, o, "setup", a.spec.Setup, a.spec.SetupTimeout, warn)
		a.result.Setup = step
		if !step.Passed() {
			res := &Result{Session: s, Attempt: a.result, Signal: sigs.lastSignal(), HungUp: sigs.hup.Load()}
			return nil, s.endAttempt(o, res, warn), nil
		}
	}
	ctx := context.Background()
	var err error
	if a.snaps, err = newSnapshots(ctx, filepath.Join(s.Dir, attemptDir), box.Tree); err == nil {
		a.base, err = a.snaps.take(ctx, "setup")
	}
	if err != nil {
		s.endAttempt(o, &Result{Session: s}, warn)
		return nil, nil, fmt.Errorf("cannot record the tree after the setup: %w", err)
	}
	return a, nil, nil
}

// afterAgent ends an attempt once its harness exited as e: the harness's
// state and conversation are recorded as after any run, the tree is
// compared with the one after setup, the protected files are restored,
// the check runs (unless a signal stopped the run), and the session is
// removed (or kept, o.Keep).
func (s *Session) afterAgent(sigs *signals, box *mount.Sandbox, o Options, a *attemptRun, e ended, warn func(string)) (*Result, error) {
	if o.state != nil {
		o.state.WriteBack(warn)
	}
	if e.timedOut {
		warn(fmt.Sprintf("the harness was stopped after %s (its time limit)", o.Timeout))
	}
	code := e.exit.Status()
	s.Record.ExitCode = &code
	if o.HarnessSession != nil {
		s.noteHarnessSession(o.HarnessSession(), warn)
	}
	if o.Ended != nil {
		o.Ended(s)
	}
	a.result.AgentStarted = true
	res := &Result{Session: s, Harness: e.exit, TimedOut: e.timedOut, HungUp: sigs.hup.Load(), Signal: sigs.lastSignal(), Network: e.network, Attempt: a.result}
	err := a.judge(sigs, box, o, warn)
	return s.endAttempt(o, res, warn), err
}

// judge records what the agent changed and its patch, restores the
// protected files, and runs the check. The check does not run when the
// files could not be restored, nor after a signal (the run is being
// stopped).
func (a *attemptRun) judge(sigs *signals, box *mount.Sandbox, o Options, warn func(string)) error {
	ctx := context.Background()
	r := a.result
	after, err := a.snaps.take(ctx, "agent")
	if err != nil {
		return fmt.Errorf("cannot record the tree after the agent: %w", err)
	}
	r.Created, r.Updated, r.Deleted = changesBetween(a.base, after)
	r.Patch, r.PatchBytes, r.PatchCut, err = a.snaps.patch(ctx, a.base, after, PatchMax)
	if err != nil {
		return fmt.Errorf("cannot make the agent's patch: %w", err)
	}
	if r.PatchCut {
		warn(fmt.Sprintf("the agent's patch is %d bytes, more than %d MiB: only the diffs of the first files that fit whole are kept", r.PatchBytes, PatchMax>>20))
	}
	if r.Restored, err = a.snaps.restore(ctx, a.base, after, a.spec.Protect); err != nil {
		return fmt.Errorf("the check did not run: %w", err)
	}
	if a.spec.Check == "" {
		return nil
	}
	if sigs.lastSignal() != nil {
		warn("the check did not run: the run was stopped by a signal")
		return nil
	}
	r.Check = runStep(sigs, box, o, "check", a.spec.Check, a.spec.CheckTimeout, warn)
	return nil
}

// endAttempt ends the attempt's session as res says: removed, or kept
// (o.Keep) with a record that says it is an attempt's, whose work is
// never synced back.
func (s *Session) endAttempt(o Options, res *Result, warn func(string)) *Result {
	if o.Keep {
		if s.Record.Phase == Running {
			s.Record.Phase = Synced // nothing is left to sync
		}
		if err := s.save(); err != nil {
			warn(fmt.Sprintf("cannot record the session %s: %v", s.ID(), err))
		}
		res.Kept = true
		return res
	}
	if err := s.Remove(); err != nil {
		warn(fmt.Sprintf("cannot remove the session %s: %v", s.Dir, err))
		res.Kept = true
	}
	return res
}

// runStep runs command (the attempt's setup or check, named what) as
// `sh -c COMMAND` in the sandbox's working directory, confined as the
// harness is (a copy of its invocation with sh as its program), through
// runHarness: stopped after limit when positive, its leftover processes
// ended as it exits, the network proxy serving it.
func runStep(sigs *signals, box *mount.Sandbox, o Options, what, command string, limit time.Duration, warn func(string)) *Step {
	inv := *o.Invocation
	inv.Binary, inv.Path, inv.Args, inv.Stdin = "sh", "", []string{"-c", command}, ""
	inv.Files, inv.StateFiles = nil, nil
	inv.OneShot = true // nobody is there: what it leaves is ended
	out := newStepOutput(o.Attempt.OutputMax)
	start := time.Now()
	ran, err := sigs.runHarness(nil, &inv, box.Workdir, limit, nil, out, out, nil, nil, netHooks{o.net, o.netDenied})
	step := &Step{Command: command, ExitCode: ran.exit.Status(), TimedOut: ran.timedOut}
	if err != nil {
		step.ExitCode = -1
		fmt.Fprintf(out, "workforce: cannot run the %s: %v\n", what, err)
	}
	step.Duration = time.Since(start)
	step.Output, step.OutputBytes, step.Truncated = out.result()
	if len(ran.ended) > 0 {
		warn(fmt.Sprintf("ended %d processes the %s left running: %s", len(ran.ended), what, proctree.Describe(ran.ended, 10)))
	}
	return step
}

// stepOutput keeps the first and the last halves of at most max bytes
// of a step's output, and counts it all.
type stepOutput struct {
	max   int
	head  []byte
	end   *tail
	total int64
}

// defaultStepOutput is the output kept of a step when Attempt.OutputMax
// is not set.
const defaultStepOutput = 64 << 10

func newStepOutput(max int) *stepOutput {
	if max <= 0 {
		max = defaultStepOutput
	}
	return &stepOutput{max: max, end: &tail{max: max - max/2}}
}

func (s *stepOutput) Write(p []byte) (int, error) {
	n := len(p)
	s.total += int64(n)
	if room := s.max/2 - len(s.head); room > 0 {
		k := min(room, len(p))
		s.head = append(s.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		s.end.Write(p)
	}
	return n, nil
}

// result returns the output kept, its whole length and whether it was
// cut.
func (s *stepOutput) result() (string, int64, bool) {
	end := s.end.bytes()
	if s.total <= int64(s.max) {
		return string(s.head) + string(end), s.total, false
	}
	cut := s.total - int64(len(s.head)) - int64(len(end))
	return fmt.Sprintf("%s\n[workforce: %d bytes cut here]\n%s", s.head, cut, end), s.total, true
}
