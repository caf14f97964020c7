package harness

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// One-shot (unattended) runs: each harness's own mode that takes a task,
// works without a terminal, prints machine-readable output and exits.
// Measured on claude 2.1.330 and 2.1.332, codex 0.169.0 and 0.171.0 and
// opencode 1.18.33 against
// the scripted model of make e2e (e2e/oneshot_test.go, and issue #30):
//
//   - claude -p TASK --output-format json prints one result object;
//     stream-json prints JSONL as the run goes (system init with the
//     session id first, then each assistant and user message, then that
//     same result object as the last line) and needs --verbose, which
//     adds nothing else to stdout. One-shot runs always use stream-json:
//     one code path, whether or not run --events passes the events on,
//     the raw output kept in the results directory shows the whole run,
//     and a claude stopped before its end (SIGTERM, the time limit) has
//     already printed its session id, which resume needs. The parser
//     reads both formats (the json fixtures stay). --allowedTools and --disallowedTools
//     take a list, so a task after them is read as a tool name: the task
//     goes right after -p. Without a terminal nothing asks: a tool call
//     the permission mode would ask about is denied and listed in the
//     result's permission_denials, and claude still exits 0.
//     --session-id UUID fixes a new conversation's id, --resume ID
//     continues one.
//   - codex exec --json TASK prints JSONL. exec refuses
//     -a/--ask-for-approval, --search, --no-alt-screen, --no-daemon and,
//     before 0.171.0, --remote (exit 2); 0.171.0's `codex exec --help`
//     lists `--remote <ADDR>` ("Connect to an existing app server"),
//     which workforce refuses itself (OutsideSandbox); -c
//     approval_policy="never" is taken, and nothing
//     can ask anyway. `codex exec resume [OPTIONS] THREAD_ID PROMPT` takes
//     its own options, and refuses -s, -C, -p and --add-dir besides: the
//     sandbox is given as -c sandbox_mode. A prompt "-" is read from stdin.
//   - opencode run --format json [--agent ID] [--session ID] MSG prints
//     JSONL with the sessionID on every event. A permission that would ask
//     is rejected (exit 0; the tool's state.error says so).
//
// Each takes the task as an argument or on stdin; a task that would read
// as a flag, or too long for one argument, goes on stdin (measured for
// claude and opencode; codex reads a prompt "-" from stdin, as its help
// says). codex's one-shot mode has no place for the persona's system
// prompt, which its interactive command line gives as the first message:
// a new conversation's task is the system prompt, a blank line, the task.

// OneShot is what an unattended run asks the harness.
type OneShot struct {
	// Task is the prompt.
	Task string
	// Resume is the harness's own session id of a conversation to
	// continue; empty for a new one.
	Resume string
	// SessionID fixes the id of a new conversation before the run, where
	// the harness allows it (claude: a UUID); empty lets the harness
	// choose.
	SessionID string
}

// RefusedFlags are flags a harness's one-shot mode refuses (it exits 2),
// with the version they were measured on.
type RefusedFlags struct {
	Harness string
	// Mode is the one-shot command line ("codex exec").
	Mode     string
	Measured string
	Flags    []string
}

// OneShotRefused lists, per harness, the flags of the interactive command
// line that its one-shot modes refuse. PlanOneShot maps the ones the
// persona's mapping uses and refuses them among extra arguments.
var OneShotRefused = []RefusedFlags{
	{Harness: persona.HarnessCodex, Mode: "codex exec", Measured: codexMeasured,
		Flags: []string{"-a", "--ask-for-approval", "--search", "--no-alt-screen", "--no-daemon"}},
	{Harness: persona.HarnessCodex, Mode: "codex exec resume", Measured: codexMeasured,
		Flags: []string{"-a", "--ask-for-approval", "--search", "--no-alt-screen", "--no-daemon",
			"-s", "--sandbox", "-C", "--cd", "-p", "--profile", "--add-dir"}},
}

// oneShotHeads are the arguments each one-shot mode starts with: new
// conversations and resumed ones.
var oneShotHeads = map[string]struct{ start, resume []string }{
	persona.HarnessClaude: {start: []string{"-p"}, resume: []string{"-p"}},
	// The sandbox is workforce's copy, which may not be a git repository.
	persona.HarnessCodex:    {start: []string{"exec", "--json", "--skip-git-repo-check"}, resume: []string{"exec", "resume", "--json", "--skip-git-repo-check"}},
	persona.HarnessOpencode: {start: []string{"run", "--format", "json"}, resume: []string{"run", "--format", "json"}},
	persona.HarnessGemini:   {start: []string{"-p"}, resume: []string{"-p"}},
}

// OneShotLogArgs are the arguments that send a harness's own log lines
// to its stderr in a one-shot run, at the level that holds its errors, so
// that the results directory's stderr.txt keeps them. opencode logs to a
// file of its state ($XDG_DATA_HOME/opencode/log), which held its INFO
// lines and not the error that ended the run (measured on 1.18.33: the
// file is not flushed before it exits, and the state goes with the
// session); with --print-logs --log-level WARN its WARN and ERROR lines
// go to stderr (the file then stays empty). claude, codex and gemini say
// their errors on stdout or stderr already (failure.go). Lines on stderr
// that are a harness's log are kept, not shown on the terminal
// (LogsOnStderr).
var OneShotLogArgs = map[string][]string{
	persona.HarnessOpencode: {"--print-logs", "--log-level", "WARN"},
}

// LogsOnStderr reports whether harness h's one-shot stderr carries its
// log lines (OneShotLogArgs): lines for the results directory, not for
// the terminal.
func LogsOnStderr(h string) bool { return len(OneShotLogArgs[h]) > 0 }

// OneShotMode is the one-shot command line of harness h, as its users
// know it ("codex exec"): the harness and the first argument its one-shot
// runs start with; "" for a harness workforce does not run.
func OneShotMode(h string) string {
	heads, ok := oneShotHeads[h]
	if !ok || len(heads.start) == 0 {
		return ""
	}
	return h + " " + heads.start[0]
}

// OneShotModes are the one-shot command lines of the harnesses
// (OneShotMode), in the order of persona.Harnesses.
func OneShotModes() []string {
	var out []string
	for _, h := range persona.Harnesses {
		if m := OneShotMode(h); m != "" {
			out = append(out, m)
		}
	}
	return out
}

// Cumulative says which usage figures of a harness's one-shot output are
// the conversation's running total when the run resumes one, where a new
// conversation's output is the run's own.
type Cumulative struct {
	// Tokens says the token counts are the conversation's so far.
	Tokens bool
	// Cost says the cost is the conversation's so far.
	Cost bool
}

// CumulativeOnResume is what harness h's one-shot output counts from the
// conversation's start when resumed, as measured on the real harnesses
// against the scripted model of the e2e tests (e2e TestUsage checks
// each): `codex exec resume` the tokens (its turn.completed usage is the
// thread's total), `claude -p --resume` the cost (claude restores its cost
// state, and total_cost_usd goes on from the earlier runs'; its tokens are
// the run's own). opencode run prints each step's tokens and cost, which
// the run sums: its own; so does `gemini -p --resume` (its stats count the
// process's requests; it prints no cost).
func CumulativeOnResume(h string) Cumulative {
	switch h {
	case persona.HarnessCodex:
		return Cumulative{Tokens: true}
	case persona.HarnessClaude:
		return Cumulative{Cost: true}
	}
	return Cumulative{}
}

// codexOneShotApproval is codex's approval policy in a one-shot run:
// nothing can ask, so a request for more than the sandbox allows is
// refused, as the persona's permission mode says for what would ask.
const codexOneShotApproval = "never"

// maxTaskArg is the longest task given as an argument (Linux takes
// 128 KiB per argument); a longer one goes on stdin.
const maxTaskArg = 64 << 10

// ErrNoSessionID reports a session id fixed before the run on a harness
// that cannot take one.
var ErrNoSessionID = errors.New("only claude and gemini take a session id fixed before the run (--session-id)")

// OutsideSandbox are the harnesses' flags that would run the agent
// where workforce's sandbox does not reach, which workforce refuses among
// the extra arguments of every run, with why: codex's --remote (taken by
// codex exec since 0.171.0, and by the interactive codex) hands the
// conversation to a remote app server, which runs the agent and its
// commands on its own machine, outside workforce's sandbox and network
// policy.
var OutsideSandbox = []struct {
	Harness, Flag, Why string
}{
	{persona.HarnessCodex, "--remote", "a remote app server runs the agent outside workforce's sandbox"},
}

// RefusedFlagError reports an extra argument the one-shot mode, or
// workforce, refuses.
type RefusedFlagError struct {
	Flag string
	Mode string
	// Why is set when workforce refuses it (OutsideSandbox), not the
	// harness.
	Why string
}

func (e *RefusedFlagError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("workforce refuses %s %s: %s", e.Mode, e.Flag, e.Why)
	}
	return fmt.Sprintf("%s refuses %s", e.Mode, e.Flag)
}

// refuseOutsideSandbox returns a *RefusedFlagError for the first of extra
// that OutsideSandbox lists for harness h.
func refuseOutsideSandbox(h string, extra []string) error {
	for _, a := range extra {
		flag, _, _ := strings.Cut(a, "=")
		for _, o := range OutsideSandbox {
			if o.Harness == h && flag == o.Flag {
				return &RefusedFlagError{Flag: o.Flag, Mode: h, Why: o.Why}
			}
		}
	}
	return nil
}

// PlanOneShot builds the one-shot invocation of r.Harness for r and s:
// what Plan builds for an interactive run, in the harness's one-shot mode,
// with JSON output and the task as an argument, or on stdin
// (Invocation.Stdin). o.Extra go after the harness's own flags, before
// the task. Errors are Plan's, *RefusedFlagError for an extra argument
// the mode refuses, and ErrNoSessionID.
func PlanOneShot(r *persona.Resolved, o Options, s OneShot) (*Invocation, error) {
	if s.SessionID != "" && (!FixesSessionID(r.Harness) || s.Resume != "") {
		return nil, ErrNoSessionID
	}
	extra := append([]string(nil), o.Extra...)
	o.Extra, o.SessionID, o.oneShot, o.oneShotExtra = nil, "", true, extra
	inv, err := Plan(r, o)
	if inv == nil {
		return nil, err
	}
	mode := OneShotMode(r.Harness)
	if s.Resume != "" && r.Harness == persona.HarnessCodex {
		mode = "codex exec resume"
	}
	for _, rf := range OneShotRefused {
		if rf.Mode != mode {
			continue
		}
		for _, a := range extra {
			flag, _, _ := strings.Cut(a, "=")
			for _, f := range rf.Flags {
				if flag == f {
					return nil, &RefusedFlagError{Flag: f, Mode: mode}
				}
			}
		}
	}
	seal := func(x string) string { return x }
	if o.SealText != nil {
		seal = o.SealText
	}
	for i, a := range extra {
		extra[i] = seal(a)
	}
	task := seal(s.Task)
	heads := oneShotHeads[r.Harness]
	head := heads.start
	if s.Resume != "" {
		head = heads.resume
	}
	args := append([]string(nil), head...)
	base := inv.Args
	switch r.Harness {
	case persona.HarnessClaude:
		// The task right after -p, before any list flag.
		if argTask(task) {
			args = append(args, task)
		} else {
			inv.Stdin = task
		}
		// stream-json: see the package comment above.
		args = append(args, "--output-format", "stream-json", "--verbose")
		args = append(args, base...)
		if s.SessionID != "" {
			args = append(args, "--session-id", s.SessionID)
		}
		if s.Resume != "" {
			args = append(args, "--resume", s.Resume)
		}
		args = append(args, extra...)
	case persona.HarnessCodex:
		if r.SystemPrompt != "" && len(base) > 0 {
			// Plan gives the system prompt as the first message; in a
			// one-shot run the task is the message, so a new
			// conversation gets both, the system prompt first. A resumed
			// one had it already.
			sp := base[len(base)-1]
			base = base[:len(base)-1]
			if s.Resume == "" {
				task = sp + "\n\n" + task
			}
		}
		args = append(args, codexOneShotArgs(base, s.Resume != "", inv.Mapping)...)
		args = append(args, extra...)
		if s.Resume != "" {
			args = append(args, s.Resume)
		}
		if argTask(task) {
			args = append(args, task)
		} else {
			args = append(args, "-")
			inv.Stdin = task
		}
		inv.Notes = append(inv.Notes, "codex exec cannot ask: approval_policy "+codexOneShotApproval+" (a request for more than the sandbox allows is refused)")
	case persona.HarnessGemini:
		// -p TASK, or -p "" and the task on stdin, which gemini reads to
		// its end when it is not a terminal.
		if argTask(task) {
			args = append(args, task)
		} else {
			args = append(args, "")
			inv.Stdin = task
		}
		args = append(args, "-o", "stream-json")
		args = append(args, base...)
		if s.SessionID != "" {
			args = append(args, "--session-id", s.SessionID)
		}
		if s.Resume != "" {
			args = append(args, "--resume", s.Resume)
		}
		args = append(args, extra...)
	case persona.HarnessOpencode:
		args = append(args, OneShotLogArgs[r.Harness]...)
		args = append(args, base...)
		if s.Resume != "" {
			args = append(args, "--session", s.Resume)
		}
		args = append(args, extra...)
		if argTask(task) {
			args = append(args, task)
		} else {
			inv.Stdin = task
		}
		if len(inv.opencodeAsks) > 0 {
			inv.Notes = append(inv.Notes, "opencode run cannot ask: what would ask is rejected ("+strings.Join(inv.opencodeAsks, ", ")+")")
		}
	}
	inv.Args = args
	inv.OneShot = true
	return inv, err
}

// argTask reports whether a task can be an argument: not read as a flag,
// not too long.
func argTask(task string) bool {
	return !strings.HasPrefix(task, "-") && len(task) <= maxTaskArg && !strings.ContainsRune(task, 0)
}

// codexOneShotArgs rewrites codex's interactive flags for codex exec (and
// exec resume): the approval policy becomes -c approval_policy="never"
// (nothing can ask), and for resume the sandbox becomes -c sandbox_mode.
func codexOneShotArgs(base []string, resume bool, m *Mapping) []string {
	var out []string
	bypass := false
	for i := 0; i < len(base); i++ {
		a := base[i]
		switch {
		case a == "--dangerously-bypass-approvals-and-sandbox":
			bypass = true
			out = append(out, a)
		case (a == "--ask-for-approval" || a == "-a") && i+1 < len(base):
			i++
		case a == "--no-daemon": // interactive only (Plan leaves it out of one-shot runs)
		case a == "-c" && i+1 < len(base) && strings.HasPrefix(base[i+1], "approval_policy="):
			i++
		case resume && a == "--sandbox" && i+1 < len(base):
			out = append(out, "-c", "sandbox_mode="+tomlString(base[i+1]))
			i++
		default:
			out = append(out, a)
		}
	}
	if !bypass {
		out = append(out, "-c", "approval_policy="+tomlString(codexOneShotApproval))
	}
	if m != nil {
		for i, f := range m.Fields {
			for _, p := range []string{"on-request", "never"} {
				f.Applied = strings.ReplaceAll(f.Applied, "--ask-for-approval "+p, "-c approval_policy="+tomlString(codexOneShotApproval)+" (one-shot: nothing can ask)")
			}
			m.Fields[i] = f
		}
	}
	return out
}
