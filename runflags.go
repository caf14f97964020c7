package main

// What run and sessions resume share: the options of a run (runOptions,
// which create, pick --run and the picker fill too), the flags both take
// (one definition each, so that their help says the same), and reading
// the task and the harness arguments from a command line.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// runOptions are a run: the persona Ref names (PERSONA[@TIER]), on
// Harness when set, with the input values Inputs, the arguments Extra
// passed to the harness, and the choices of the command line.
type runOptions struct {
	Ref     string
	Extra   []string
	Harness string
	// Model is --model: the model instead of the tier's;
	// ForeignModelInherits is as in run.Options (create).
	Model                string
	ForeignModelInherits bool
	// Root is the project root to copy, as given (the nearest directory
	// with .git above the working directory when empty).
	Root    string
	Profile string
	Inputs  map[string]string

	SyncDeletes, Keep, Reuse, Live, SyncCommitted bool
	// SyncConfig lets executable configuration sync back with the rest
	// (--sync-config) instead of being held in the session.
	SyncConfig   bool
	DryRun, JSON bool
	// Events prints a one-shot run's events as JSON lines (events.go).
	Events                                      bool
	InstallInRepo, RefreshSkills, AllowUnmapped bool
	// Review holds the agent's work for review; nil leaves it to
	// "review" in <home>/config.json.
	Review *bool
	// Timeout limits the run; nil leaves it to the persona's
	// timeoutSeconds when stdin is not a terminal.
	Timeout *time.Duration
	// Task, when set, makes the run unattended: the harness's one-shot
	// mode with this task.
	Task *string
	// SandboxFlags are --sandbox, --sandbox-allow, --sandbox-deny-read
	// and the network flags, checked (sandboxFlags).
	run.SandboxFlags
	Env procEnv
	// NoProjectPersonas looks the persona up in the user's layers and the
	// built-in catalog only (--no-project-personas: a worker's run).
	NoProjectPersonas bool
	// NoHistory leaves the run out of the history.
	NoHistory bool
	// Attempt makes the one-shot run an attempt of workforce eval
	// (--attempt).
	Attempt *report.AttemptSpec
}

// harnessArgs splits a command's arguments at the first --: those before
// are the command's, those after go to the harness.
func harnessArgs(args []string) (own, extra []string) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:]
		}
	}
	return args, nil
}

// inputValues adds the values of --input NAME=VALUE to inputs.
func inputValues(c *cli.Context, inputs map[string]string) error {
	for _, kv := range c.StringSlice("input") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef("--input %q: want NAME=VALUE", kv)
		}
		inputs[k] = v
	}
	return nil
}

// readTask returns the task of a one-shot run: the argument (- reads it
// from in), or the file taskFile names.
func readTask(in io.Reader, args []string, taskFile string) (string, error) {
	var data []byte
	var err error
	switch {
	case taskFile != "":
		if data, err = os.ReadFile(taskFile); err != nil {
			return "", usageError(fmt.Errorf("--task-file: %w", err))
		}
	case args[0] == "-":
		if data, err = io.ReadAll(in); err != nil {
			return "", fmt.Errorf("cannot read the task from stdin: %w", err)
		}
	default:
		data = []byte(args[0])
	}
	task := strings.TrimRight(string(data), "\n")
	if strings.TrimSpace(task) == "" {
		return "", usagef("the task is empty")
	}
	// The task ends as an argument of the harness, which cannot carry a
	// NUL: refused here, before a sandbox is made, not at exec.
	if i := strings.IndexByte(task, 0); i >= 0 {
		from := "the task"
		if taskFile != "" {
			from = "--task-file " + quote.Name(taskFile)
		}
		return "", usagef("%s holds a NUL byte (at byte %d): a task is text, and no harness's command line can carry one", from, i)
	}
	return task, nil
}

// The write sandbox's flags, of run and sessions resume.
var (
	sandboxFlag      = &cli.StringFlag{Name: "sandbox", Usage: "confine the harness's writes to its sandbox: on (the default, where Linux has Landlock; a warning where it cannot), strict (refuse to run unconfined) or off (default: $" + session.SandboxEnv + ", else \"sandbox\" in <home>/config.json)"}
	sandboxAllowFlag = &cli.StringSliceFlag{Name: "sandbox-allow", Usage: "a file or directory the confined harness may write too, such as a package cache (repeatable; also \"sandbox\": {\"allow\": PATHS} in <home>/config.json)"}
	// sandboxDenyReadFlag is --sandbox-deny-read, of run and sessions
	// resume.
	sandboxDenyReadFlag = &cli.StringSliceFlag{Name: "sandbox-deny-read", Usage: "a file or directory the confined harness may not read, besides ~/.ssh, ~/.aws, the real project and the others it never reads (repeatable; also \"sandbox\": {\"denyRead\": PATHS} in <home>/config.json)"}
)

// treeFlag is run's --tree: how the sandbox shows the project.
var treeFlag = &cli.StringFlag{Name: "tree", Usage: "how the sandbox shows the project: copy (a copy of the project), overlay (the project through an overlay in the harness's mount namespace, made in constant time; Linux, confined in namespaces; the copy with a warning where it cannot be had) or auto (the overlay for a tree of more than " + fmt.Sprint(session.AutoThreshold) + " files where it can be had, else the copy) (default: the persona's mount.tree, else $" + session.TreeEnv + ", else \"tree\" in <home>/config.json, else auto)",
	Action: func(c *cli.Context, t string) error {
		if _, err := session.ParseTree(t); err != nil {
			return usageError(fmt.Errorf("--tree: %w", err))
		}
		return nil
	}}

// The network policy's flags, of run, sessions resume and batch: the
// user's word, which widens config.json's "network" (--network,
// --network-allow), and a batch task's, which only narrows it
// (--network-narrow, which batch gives each task's run).
var (
	networkFlag       = &cli.StringFlag{Name: "network", Usage: "the confined harness's network: allowlist (the default: its own API hosts, the preset dev and what is allowed), open (any public host) or none (its own API hosts only) (default: \"network\": {\"mode\": ...} in <home>/config.json)"}
	networkAllowFlag  = &cli.StringSliceFlag{Name: "network-allow", Usage: "a host the confined harness may reach: HOST, HOST:PORT, *.SUFFIX, an IP address, [IPv6]:PORT (repeatable; also \"network\": {\"allow\": HOSTS} in <home>/config.json)"}
	networkNarrowFlag = &cli.StringFlag{Name: "network-narrow", Usage: "a network policy as JSON ({\"mode\": ..., \"allow\": [...], \"presets\": [...]}) that narrows the run's and never widens it: what a batch task's \"network\" becomes"}
)

// networkFlags returns the network flags of c, checked: a wrong mode,
// host or policy is a usage error naming the flag.
func networkFlags(c *cli.Context) (run.NetworkFlags, error) {
	var f run.NetworkFlags
	if c.IsSet(networkFlag.Name) {
		f.Mode = c.String(networkFlag.Name)
		if err := netspec.CheckMode(f.Mode); err != nil {
			return f, usageError(fmt.Errorf("--network: %w", err))
		}
	}
	for _, a := range c.StringSlice(networkAllowFlag.Name) {
		if _, err := netspec.ParseRule(a); err != nil {
			return f, usageError(fmt.Errorf("--network-allow: %w", err))
		}
		f.Allow = append(f.Allow, a)
	}
	if c.IsSet(networkNarrowFlag.Name) {
		n, err := netspec.ParseJSON(c.String(networkNarrowFlag.Name))
		if err != nil {
			return f, usageError(fmt.Errorf("--network-narrow: %w", err))
		}
		f.Narrow = append(f.Narrow, session.NetSpec{Mode: n.Mode, Allow: n.Allow, Presets: n.Presets, Origin: session.NetworkNarrowFlag})
	}
	return f, nil
}

// withNetwork gives the run cmd (a batch task's child workforce run) the
// user's network flags f.
func withNetwork(cmd *exec.Cmd, f run.NetworkFlags) {
	if f.Mode != "" {
		cmd.Args = append(cmd.Args, "--"+networkFlag.Name, f.Mode)
	}
	for _, a := range f.Allow {
		cmd.Args = append(cmd.Args, "--"+networkAllowFlag.Name, a)
	}
}

// syncConfigFlag is --sync-config of run, sessions resume and sessions
// sync: executable configuration (mount.HeldConfig) syncs back with the
// rest instead of being held in the session for sessions apply.
var syncConfigFlag = &cli.BoolFlag{Name: "sync-config", Usage: "also sync back the executable configuration the agent changed (.claude/, .mcp.json, opencode.json, .vscode/tasks.json, .envrc, git hook managers...: docs/run.md), held in the session for workforce sessions apply otherwise"}

// sandboxMode returns the sandbox mode --sandbox asks for, nil when it is
// not given.
func sandboxMode(c *cli.Context) (*confine.Mode, error) {
	if !c.IsSet("sandbox") {
		return nil, nil
	}
	m, err := confine.ParseMode(c.String("sandbox"))
	if err != nil {
		return nil, usageError(fmt.Errorf("--sandbox: %w", err))
	}
	return &m, nil
}

// sandboxFlags reads the sandbox's and the network's flags run and
// sessions resume share, checked (a usage error names the flag).
func sandboxFlags(c *cli.Context) (run.SandboxFlags, error) {
	f := run.SandboxFlags{SandboxAllow: c.StringSlice(sandboxAllowFlag.Name), SandboxDenyRead: c.StringSlice(sandboxDenyReadFlag.Name)}
	var err error
	if f.Sandbox, err = sandboxMode(c); err != nil {
		return f, err
	}
	if c.IsSet(treeFlag.Name) {
		f.Tree = session.TreeMode(c.String(treeFlag.Name))
	}
	f.Network, err = networkFlags(c)
	return f, err
}

// The flags of a run that run and sessions resume both take, with the
// same meaning.
var (
	syncDeletesFlag   = &cli.BoolFlag{Name: "sync-deletes", Usage: "apply the agent's deletions to the repository"}
	allowUnmappedFlag = &cli.BoolFlag{Name: "allow-unmapped", Usage: "start the harness even when it cannot apply some of the persona's permissions, settings or MCP servers, without them (a warning names each)"}
	// modelFlag is --model of run, sessions resume and pick --run.
	modelFlag = &cli.StringFlag{Name: "model", Usage: "run on this model instead of the tier's (" + persona.ModelInherit + ": the harness's own default); a model of a vendor the harness cannot reach, such as a Claude model on codex, is refused (docs/run.md#model)",
		Action: func(c *cli.Context, m string) error {
			if strings.TrimSpace(m) == "" || strings.ContainsAny(m, " \t\r\n\x00") {
				return usagef("--model %q: want a model's name, such as claude-opus-4-5, gpt-5-mini or openai/gpt-5-mini", m)
			}
			return nil
		}}
)

// attemptFlag is run's --attempt: what workforce eval gives each
// attempt's run (a batch task's attempt becomes it).
var attemptFlag = &cli.StringFlag{Name: "attempt", Usage: "what workforce eval gives each attempt's run, as JSON ({\"setup\": CMD, \"check\": CMD, \"protect\": [GLOB...], \"setupTimeoutMs\": N, \"checkTimeoutMs\": N}): the setup runs in the sandbox before the agent and the check after it, both confined as the agent; the protected files are restored before the check; nothing syncs back and no branch is made; the result's attempt and patch say what happened (docs/run.md#attempts)"}

// attemptSpec returns the spec --attempt gives, nil without it, checked:
// a run with a task only; JSON that does not parse, names an unknown
// field, a protect glob that is no pattern or a negative time limit is a
// usage error naming the flag.
func attemptSpec(c *cli.Context, oneShot bool) (*report.AttemptSpec, error) {
	if !c.IsSet(attemptFlag.Name) {
		return nil, nil
	}
	if !oneShot {
		return nil, usageError(errors.New("--attempt needs a task: an attempt is a one-shot run"), "give the task as an argument, - for stdin, or --task-file F")
	}
	dec := json.NewDecoder(strings.NewReader(c.String(attemptFlag.Name)))
	dec.DisallowUnknownFields()
	var spec report.AttemptSpec
	if err := dec.Decode(&spec); err != nil {
		return nil, usageError(fmt.Errorf("--attempt: %w", err))
	}
	if dec.More() {
		return nil, usagef("--attempt: more than one JSON value: want one object")
	}
	if err := run.CheckAttempt(spec); err != nil {
		return nil, usageError(fmt.Errorf("--attempt: %w", err))
	}
	return &spec, nil
}
