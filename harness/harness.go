// Package harness builds the command line, environment and configuration
// files that start a persona's harness (claude, opencode, codex, gemini),
// starts it, and reports how it ended (Exit).
//
// Each harness is configured through its own mechanisms, so that the user's
// own configuration keeps working and nothing is written into the sandbox:
//
//   - claude: flags (--model, --append-system-prompt, --permission-mode,
//     --allowedTools, --disallowedTools, --effort, and MCP servers as
//     --mcp-config JSON with --strict-mcp-config);
//   - codex: -m with the provider prefix removed, --sandbox,
//     --ask-for-approval or --dangerously-bypass-approvals-and-sandbox, and
//     -c overrides for reasoning effort, network access, web search, MCP
//     servers and the instruction budget; the system prompt is the last
//     positional argument;
//   - opencode: an agent named after the persona (model, prompt, mode
//     primary, permission, reasoningEffort) and MCP servers in a session
//     config file outside the sandbox, named by OPENCODE_CONFIG, which
//     opencode merges with the user's global configuration; when the user
//     already set OPENCODE_CONFIG, that file's JSON is the base the session
//     file adds to. Then `opencode --agent ID`;
//   - gemini: -m, --approval-mode, a --policy TOML file of rules in the
//     session's config directory, and the settings.json and GEMINI.md of
//     its per-session home (Invocation.StateFiles), which gemini reads
//     from its home only (gemini.go).
//
// A persona means the same on every harness: every value of the fields
// that change what the agent may do or how it runs (permissions in Claude
// Code's rule syntax, permissions.mode, harnessSettings.reasoning,
// mcpServers, model, and codex's own harnessSettings) is applied through
// the harness's own mechanism or refused, and Plan fails with an
// *UnmappedError naming the refused values unless Options.AllowUnmapped.
// The mapping of each harness lives in its own file (claude.go,
// opencode.go, codex.go, gemini.go) as data measured on the harness version it names,
// Mapping records it field by field, and MappingDoc renders the table of
// docs/harnesses.md from the same code.
//
// Which models each harness reaches is a table of its own (models.go):
// CheckModel refuses a model of a vendor the harness cannot reach (a
// Claude model on codex) before a run plans anything, unless the user
// pointed the harness at a provider of their own (OwnProvider). Which
// harnesses are installed (installed.go): FirstInstalled, in the order
// claude, opencode, codex, gemini, for the commands that fall back to an
// installed harness (pick, context).
//
// One-shot output (output.go) is read as it comes, in bounded memory: an
// OutputWriter scans each byte once, holds a line up to MaxLine (a longer
// one is cut, not read, and the outcome's warnings name it), passes the
// events on without keeping them, and keeps what the outcome needs within
// bounds (MaxDenials, the tool calls waiting for their result); the raw
// output is the caller's to keep.
//
// A failed one-shot run (failure.go): FailurePatterns are the lines each
// harness prints when it has no credentials, when its key is refused, when
// it does not know the model and when workforce's proxy refuses its
// connection, as measured; Diagnose turns them, the key variables of the
// harness's environment and the proxy's denials into a likely Cause. A
// harness that logs its errors only to a file is asked to print its log on
// stderr in one-shot runs (OneShotLogArgs: opencode), where the caller
// keeps it.
//
// Persona env values may reference the caller's environment as $VAR or
// ${VAR}. Extra arguments go after the harness's own flags (for codex,
// before the prompt).
package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Packages are the npm packages that provide each harness.
var Packages = map[string]string{
	persona.HarnessClaude:   "@anthropic-ai/claude-code",
	persona.HarnessOpencode: "opencode-ai",
	persona.HarnessCodex:    "@openai/codex",
	persona.HarnessGemini:   "@google/gemini-cli",
}

// Options are the inputs of Plan besides the resolved persona.
type Options struct {
	// Extra are arguments passed through to the harness.
	Extra []string
	// ConfigDir is a directory outside the sandbox for configuration files.
	ConfigDir string
	// Env is the caller's environment, as os.Environ returns it.
	Env []string
	// Seal, when set, rewrites the harness's final environment (the caller's
	// with the persona's variables applied); a sandbox uses it so that no
	// variable names a path of the real project.
	Seal func(env []string) []string
	// SealText, when set, rewrites every argument, configuration file and
	// persona variable the same way.
	SealText func(string) string
	// ExpandEnv, when set, is the environment persona values ($VAR in env,
	// MCP servers) are expanded with, instead of Env: in a sandbox, the
	// sealed one, with PWD the harness's directory.
	ExpandEnv []string
	// AllowUnmapped plans the invocation even when the harness refuses
	// some persona values, without them.
	AllowUnmapped bool
	// InstructionBytes is the size of the instruction file workforce
	// materializes for the harness (codex's budget must hold it).
	InstructionBytes int
	// Root is the project root as the harness sees it, and Subdir the
	// harness's working directory relative to it: path rules relative to
	// the working directory are made relative to the root.
	Root, Subdir string
	// AgentRoot, when set, is where the files the agent wrote in an
	// existing tree are read instead of Root: an overlay sandbox's upper
	// layer (Root is then empty outside the harness's namespaces).
	AgentRoot string
	// SessionID fixes the id of the conversation an interactive run
	// starts, where the harness takes one (claude: --session-id, a
	// UUID), so that it can be resumed; the others choose their own,
	// which FindSession reads from their session store afterwards.
	// PlanOneShot ignores it (OneShot.SessionID is its own).
	SessionID string
	// State are the variables of the run's per-session state (State,
	// package session): set last, over the persona's env.
	State []string
	// ProjectDir is the user's real working directory, for what a
	// harness keys by path in the user's own configuration (gemini's
	// trusted folders); empty when unknown.
	ProjectDir string
	// Confined says the harness will run inside workforce's write
	// sandbox (package confine): its own sandbox is turned off, since
	// it cannot start inside Landlock, and the persona's meaning is kept
	// by ours (Invocation.TreeReadOnly); Mapping records each choice
	// under FieldWriteSandbox.
	Confined bool
	// BrokerURLs are the base URLs at workforce's proxy the harness
	// takes for the providers whose API key the run brokers, by
	// APIKey.Provider ("openai": http://127.0.0.1:3128/_broker/openai/v1):
	// codex gets -c openai_base_url, opencode provider.ID.options.baseURL
	// in the configuration workforce writes. claude and gemini take theirs
	// from the environment, which the caller sets.
	BrokerURLs map[string]string
	// NetworkMode is the run's network mode when the harness runs in
	// namespaces ("allowlist", "open", "none"), "" otherwise: codex's
	// live web search, which the broker passes only under "open", is
	// turned off otherwise.
	NetworkMode string
	// OpencodeKeys are, by opencode provider id, the placeholders of the
	// keys the user's configuration writes itself
	// (provider.ID.options.apiKey): the configuration workforce writes for
	// opencode holds the placeholder instead ("" removes the key: a
	// provider without a broker).
	OpencodeKeys map[string]string

	// oneShot is set by PlanOneShot: interactive-only flags are left out.
	oneShot bool
	// oneShotExtra are the Extra of a one-shot run, which PlanOneShot
	// places itself: what they choose, the plan of a harness may leave
	// to them (gemini's approval mode).
	oneShotExtra []string
}

// Invocation is how to start a harness.
type Invocation struct {
	Harness string   `json:"harness"`
	Binary  string   `json:"binary"`
	Args    []string `json:"args"`
	// SetEnv are the variables set on top of the caller's environment.
	SetEnv []string `json:"env"`
	// Files are configuration files to write before starting, by path.
	Files map[string]string `json:"files,omitempty"`
	// StateFiles are files of the per-session state to write after it
	// is seeded (Options.State), by path relative to the state
	// directory: gemini's settings.json and GEMINI.md, which it reads from
	// its home only.
	StateFiles map[string]string `json:"stateFiles,omitempty"`
	// Notes tell what was not applied and why.
	Notes []string `json:"notes,omitempty"`
	// Mapping is what the harness gets for each persona value, field by
	// field, and what it refused.
	Mapping *Mapping `json:"mapping"`
	// Timeout is the persona's limit on the harness's run
	// (harnessSettings.timeoutSeconds), zero for none. Run does not apply
	// it: the caller decides (workforce applies it to unattended runs) and
	// passes it as the context's deadline (Start).
	Timeout time.Duration `json:"-"`
	// opencodeAsks are the opencode permissions that would ask
	// (opencodeAsks): a one-shot run names them, since opencode run
	// rejects them.
	opencodeAsks []string
	// Path is the binary found on the caller's PATH when planned; the
	// harness is started from there even when the sealed PATH has no copy
	// of it (a harness installed in the project's node_modules).
	Path string `json:"-"`
	// OneShot is set for an unattended run (PlanOneShot): the harness's
	// output is ParseOutput's to read.
	OneShot bool `json:"oneShot,omitempty"`
	// Stdin is what to write on the harness's standard input, then close
	// it: the task of a one-shot run that cannot be an argument. Empty
	// means nothing: a one-shot harness must not get a terminal.
	Stdin string `json:"-"`
	// TreeReadOnly says that, confined (Options.Confined), the harness
	// may not write its working tree: the persona's read-only sandbox
	// (codex's read-only), kept by workforce's write sandbox instead of
	// the harness's own.
	TreeReadOnly bool `json:"treeReadOnly,omitempty"`
	// Writable are directories the harness must write besides its tree
	// and the session's tmp: filled by the per-session harness state.
	Writable []string `json:"writable,omitempty"`
	// DroppedEnv are the variables of the caller's environment a
	// confined harness does not get: those naming the sockets of the
	// user's agents and daemons (AgentSocketVars).
	DroppedEnv []string `json:"droppedEnv,omitempty"`
	// Confine, when set, is the write boundary Start starts the harness
	// in (confine.Start); nil starts it unconfined.
	Confine *confine.Policy `json:"confine,omitempty"`

	env []string
}

// Argv returns the binary and its arguments.
func (inv *Invocation) Argv() []string { return append([]string{inv.Binary}, inv.Args...) }

// Env returns the full environment of the harness process.
func (inv *Invocation) Env() []string { return inv.env }

// Plan builds the invocation of r.Harness for r, whose SystemPrompt is
// final (inputs substituted). When the harness refuses persona values and
// o.AllowUnmapped is not set, it returns the invocation, without them, and
// an *UnmappedError naming them.
func Plan(r *persona.Resolved, o Options) (*Invocation, error) {
	if err := refuseOutsideSandbox(r.Harness, append(append([]string(nil), o.Extra...), o.oneShotExtra...)); err != nil {
		return nil, err
	}
	inv := &Invocation{Harness: r.Harness, Binary: r.Harness, Files: map[string]string{}, StateFiles: map[string]string{}}
	if p, err := LookPath(r.Harness, o.Env); err == nil {
		inv.Path = p
	}
	lookup := envLookup(o.Env)
	if o.ExpandEnv != nil {
		lookup = envLookup(o.ExpandEnv)
	}
	var keys []string
	for k := range r.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		inv.SetEnv = append(inv.SetEnv, k+"="+os.Expand(r.Env[k], lookup))
	}
	var err error
	inv.Mapping = &Mapping{Harness: r.Harness, Measured: Measured[r.Harness], Fields: []FieldMapping{}}
	switch r.Harness {
	case persona.HarnessClaude:
		err = planClaude(inv, r, o, inv.Mapping, lookup)
	case persona.HarnessCodex:
		err = planCodex(inv, r, o, inv.Mapping, lookup)
	case persona.HarnessOpencode:
		err = planOpencode(inv, r, o, inv.Mapping, lookup)
	case persona.HarnessGemini:
		err = planGemini(inv, r, o, inv.Mapping, lookup)
	default:
		return nil, fmt.Errorf("unknown harness %q; want one of %s", r.Harness, strings.Join(persona.Harnesses, ", "))
	}
	if err != nil {
		return nil, err
	}
	planCommon(inv, r, o, inv.Mapping)
	applyState(inv, r, o.State)
	if r.Harness == persona.HarnessCodex {
		// The prompt stays last.
		n := len(inv.Args)
		if n > 0 && r.SystemPrompt != "" {
			inv.Args = append(append(inv.Args[:n-1:n-1], o.Extra...), inv.Args[n-1])
		} else {
			inv.Args = append(inv.Args, o.Extra...)
		}
	} else {
		inv.Args = append(inv.Args, o.Extra...)
	}
	if o.SealText != nil {
		for i, a := range inv.Args {
			inv.Args[i] = o.SealText(a)
		}
		for path, content := range inv.Files {
			inv.Files[path] = o.SealText(content)
		}
		for path, content := range inv.StateFiles {
			inv.StateFiles[path] = o.SealText(content)
		}
		for i, kv := range inv.SetEnv {
			inv.SetEnv[i] = o.SealText(kv)
		}
	}
	inv.env = mergeEnv(o.Env, inv.SetEnv)
	if o.Seal != nil {
		inv.env = o.Seal(inv.env)
	}
	if o.Confined {
		// The sockets of the user's agents and daemons stay out of reach
		// (network.go).
		inv.env, inv.DroppedEnv = dropAgentSockets(inv.env)
	}
	inv.Mapping.sortFields()
	if err := inv.Mapping.Err(); err != nil && !o.AllowUnmapped {
		return inv, err
	}
	return inv, nil
}

func envLookup(env []string) func(string) string {
	m := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return func(k string) string { return m[k] }
}

// mergeEnv returns base with set applied (later entries win).
func mergeEnv(base, set []string) []string {
	idx := map[string]int{}
	out := make([]string, 0, len(base)+len(set))
	for _, kv := range append(append([]string(nil), base...), set...) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			out[i] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

func expandMCP(servers map[string]persona.MCPServer, lookup func(string) string) map[string]persona.MCPServer {
	out := map[string]persona.MCPServer{}
	for name, s := range servers {
		s.URL = os.Expand(s.URL, lookup)
		s.Command = os.Expand(s.Command, lookup)
		args := make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = os.Expand(a, lookup)
		}
		s.Args = args
		s.Headers = expandMap(s.Headers, lookup)
		s.Env = expandMap(s.Env, lookup)
		out[name] = s
	}
	return out
}

func expandMap(m map[string]string, lookup func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = os.Expand(v, lookup)
	}
	return out
}

// NotFoundError reports a harness binary missing from PATH.
type NotFoundError struct {
	Binary  string
	Package string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s is not installed (not found on PATH)", e.Binary)
}

// Hint tells how to install the harness.
func (e *NotFoundError) Hint() string {
	return fmt.Sprintf("install it with: npm install -g %s", e.Package)
}

// LookPath finds binary on the PATH of env.
func LookPath(binary string, env []string) (string, error) {
	path := envLookup(env)("PATH")
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, binary)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", &NotFoundError{Binary: binary, Package: Packages[binary]}
}

// WriteFiles writes the invocation's configuration files.
func (inv *Invocation) WriteFiles() error {
	for path, content := range inv.Files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// ProcessEnv returns env for a process started in dir: PWD names dir and
// OLDPWD is dropped. Go's exec passes an explicit environment as it is, so
// without this the harness would inherit the caller's PWD, and opencode,
// which takes its directory from $PWD rather than from getcwd, would work in
// the caller's directory instead of dir. A relative dir is made absolute.
func ProcessEnv(env []string, dir string) []string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "PWD" || k == "OLDPWD" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PWD="+dir)
}

// StopGrace is how long a harness stopped by the end of its context
// (SIGTERM) has to exit before it is killed.
const StopGrace = 5 * time.Second

// Exit is how a harness process ended: the code it exited with, or the
// signal that killed it. What exit status workforce itself ends with is
// the command line's business, not this package's.
type Exit struct {
	// Code is the exit code; 0 when a signal killed the process.
	Code int
	// Signal is the signal that killed the process; 0 when it exited.
	Signal syscall.Signal
}

// Success reports whether the harness exited 0.
func (e Exit) Success() bool { return e.Code == 0 && e.Signal == 0 }

// Status is the harness's status as a shell reports it ($?): its exit
// code, or 128+n when signal n killed it. A session's record keeps it in
// that form.
func (e Exit) Status() int {
	if e.Signal != 0 {
		return 128 + int(e.Signal)
	}
	return e.Code
}

// Process is a started harness.
type Process struct {
	cmd *exec.Cmd
	ctx context.Context
	// launched is what confine.Start launched; nil unconfined.
	launched *confine.Launched
	// left are the processes the launcher ended as the harness exited
	// in its namespaces (Wait).
	left []confine.Proc
}

// Start starts the harness in dir with the given standard streams. Its
// environment is inv.Env() with PWD set to dir and OLDPWD dropped
// (ProcessEnv). A harness not on PATH is a *NotFoundError. When ctx ends
// (a timeout), the harness gets SIGTERM, and SIGKILL StopGrace later.
// With inv.Confine it starts confined (confine.Start: the harness keeps
// the launcher's process id), or not at all.
//
// Start installs no signal handler: the caller decides which signals the
// harness gets (Process.Signal). Package session passes on SIGTERM and
// SIGHUP and leaves SIGINT to the terminal, which sends it to the whole
// process group.
func Start(ctx context.Context, inv *Invocation, dir string, stdin io.Reader, stdout, stderr io.Writer) (*Process, error) {
	bin, err := binary(inv)
	if err != nil {
		return nil, err
	}
	cmd := command(ctx, inv, bin, dir, stdin, stdout, stderr)
	p := &Process{cmd: cmd, ctx: ctx}
	start := cmd.Start
	if inv.Confine != nil {
		start = func() (err error) {
			p.launched, err = confine.Start(cmd, *inv.Confine)
			return err
		}
	}
	if err := start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", bin, err)
	}
	return p, nil
}

// binary is the executable of inv: its Path, or its Binary looked up on
// the PATH of its environment.
func binary(inv *Invocation) (string, error) {
	if inv.Path != "" {
		return inv.Path, nil
	}
	return LookPath(inv.Binary, inv.env)
}

// command is the command that starts inv's executable bin in dir.
func command(ctx context.Context, inv *Invocation, bin, dir string, stdin io.Reader, stdout, stderr io.Writer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, inv.Args...)
	cmd.Dir = dir
	cmd.Env = ProcessEnv(inv.env, dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	// ctx's end (a timeout) stops the harness as a SIGTERM sent to
	// workforce does, and kills it StopGrace later.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = StopGrace
	cmd.SysProcAttr = sysProcAttr()
	return cmd
}

// Spawned is a confined harness whose launcher Spawn started before its
// sandbox was made: Start launches it there.
type Spawned struct {
	inv     *Invocation
	bin     string
	cmd     *exec.Cmd
	pending *confine.Pending
	// cancel ends the command's context: Start ties it to the run's.
	cancel context.CancelFunc
	// started says Start was called.
	started bool
}

// Spawn starts the launcher of the confined inv (inv.Confine, whose
// policy Start will send is of shape s) with the given standard streams,
// before the sandbox it runs in is made: the launcher's start (a
// process, the Go runtime, a few milliseconds) runs beside the making of
// the sandbox. Start or Abort follows. A harness not on PATH is a
// *NotFoundError, and nothing is started.
func Spawn(inv *Invocation, s confine.Shape, stdin io.Reader, stdout, stderr io.Writer) (*Spawned, error) {
	if inv.Confine == nil {
		return nil, errors.New("harness: Spawn of an unconfined harness")
	}
	bin, err := binary(inv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	// The launcher starts in /: the harness's directory is named when it
	// is launched, and may not exist before (the overlay's tree).
	cmd := command(ctx, inv, bin, "/", stdin, stdout, stderr)
	pending, err := confine.Spawn(cmd, s)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("cannot start %s: %w", bin, err)
	}
	return &Spawned{inv: inv, bin: bin, cmd: cmd, pending: pending, cancel: cancel}, nil
}

// Start launches the harness Spawn started, in dir, confined by the
// invocation's policy as it is now, as Start does: its environment is
// the invocation's with PWD set to dir, and when ctx ends (a timeout) it
// gets SIGTERM, and SIGKILL StopGrace later.
func (sp *Spawned) Start(ctx context.Context, dir string) (*Process, error) {
	if sp.started {
		return nil, errors.New("harness: Spawned.Start called twice")
	}
	sp.started = true
	stop := context.AfterFunc(ctx, sp.cancel)
	launched, err := sp.pending.Launch(*sp.inv.Confine, dir, ProcessEnv(sp.inv.env, dir))
	if err != nil {
		stop()
		sp.cancel()
		return nil, fmt.Errorf("cannot start %s: %w", sp.bin, err)
	}
	return &Process{cmd: sp.cmd, ctx: ctx, launched: launched}, nil
}

// Abort ends a launcher Spawn started that was never launched; after
// Start, or on a nil Spawned, it does nothing.
func (sp *Spawned) Abort() {
	if sp == nil || sp.started {
		return
	}
	sp.started = true
	sp.pending.Abort()
	sp.cancel()
}

// Pid is the harness's process id: in namespaces (confine.Policy.Net),
// the launcher's, which passes signals on to the harness.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the harness (in namespaces, through the launcher).
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Listeners are the listening sockets the launcher made in the
// harness's network namespace (confine.Launched.Listeners), by port, for
// the caller to serve; nil without namespaces. Wait closes them.
func (p *Process) Listeners() map[int]net.Listener {
	if p.launched == nil {
		return nil
	}
	return p.launched.Listeners
}

// Left returns, once Wait returned, the processes the harness left
// running in its namespaces, which the launcher ended as it exited
// (process ids are the namespace's); nil without namespaces.
func (p *Process) Left() []confine.Proc { return p.left }

// Wait waits for the harness to exit and says how it ended.
func (p *Process) Wait() (Exit, error) {
	exit, err := p.wait()
	if p.launched != nil {
		// In namespaces, the launcher's report is the harness's own
		// status: the launcher, process 1 there, cannot die of the
		// signal that killed the harness.
		if e, rerr := p.launched.Ending(); e != nil {
			exit, err = Exit{Code: e.Code, Signal: e.Signal}, nil
			p.left = e.Left
		} else if rerr != nil && err == nil && exit.Success() {
			err = rerr
		}
		_ = p.launched.Close()
	}
	return exit, err
}

func (p *Process) wait() (Exit, error) {
	err := p.cmd.Wait()
	if errors.Is(err, exec.ErrWaitDelay) && p.cmd.ProcessState != nil {
		// The harness exited, but a process it left (a server, a job in
		// the background) holds its output open: the output was cut
		// StopGrace later, and the harness's own status stands.
		err = nil
		if !p.cmd.ProcessState.Success() {
			err = &exec.ExitError{ProcessState: p.cmd.ProcessState}
		}
	}
	if err != nil && p.ctx.Err() != nil && p.cmd.ProcessState != nil {
		// Stopped by ctx: Wait reports that even when the harness then
		// exited 0; its status is what it exited with.
		err = nil
		if !p.cmd.ProcessState.Success() {
			err = &exec.ExitError{ProcessState: p.cmd.ProcessState}
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return Exit{Signal: ws.Signal()}, nil
		}
		return Exit{Code: ee.ExitCode()}, nil
	}
	return Exit{}, err
}

// Run starts the harness (Start) and waits for it (Process.Wait),
// passing it no signal.
func Run(ctx context.Context, inv *Invocation, dir string, stdin io.Reader, stdout, stderr io.Writer) (Exit, error) {
	p, err := Start(ctx, inv, dir, stdin, stdout, stderr)
	if err != nil {
		return Exit{}, err
	}
	return p.Wait()
}
