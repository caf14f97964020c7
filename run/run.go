// Package run runs a persona for any caller: it resolves the persona from
// the catalog (the project's, the user's and the built-in layers), applies
// the run policy (a persona's mount.enabled false, a model the harness
// cannot reach, refused by CheckModel, the write sandbox,
// --root, the warnings of a project persona, the refusal of an env that
// sets a loader variable), plans the run, starts it (interactively or
// one-shot), builds and keeps a one-shot run's result, and writes the
// history record.
//
// It returns values (a Run, an Outcome carrying the session's result and a
// one-shot run's report.Result) and takes hooks for its warnings, progress
// and events; it prints nothing and decides no exit status: the caller
// maps an Outcome or an *Error to one, and gives the status back for the
// history record (Run.Finish).
//
// An attempt's run (Options.Attempt, attempt.go) is the one-shot run
// workforce eval makes of each attempt: its result carries the attempt
// and the agent's patch.
//
// PrepareResume plans what sessions resume runs: a kept session's
// conversation continued with a new task. Ask asks a model a one-shot
// question without tools (pick's question): the persona that denies the
// tools and the harness arguments that refuse them are the caller's.
package run

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// Env is where a run starts: the working directory, the workforce home
// and the environment. DirErr and HomeErr say why there is no working
// directory or home, when there is none.
type Env struct {
	Dir     string
	DirErr  error
	Home    string
	HomeErr error
	Environ []string
}

// Getenv is os.Getenv of the environment (the first of a name wins, as
// there).
func (e Env) Getenv(name string) string {
	for _, kv := range e.Environ {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

// LoadOptions are the persona load options of env: its working
// directory, the workforce home and the built-in catalog.
func LoadOptions(env Env) (persona.Options, error) {
	if env.HomeErr != nil {
		return persona.Options{}, env.HomeErr
	}
	if env.DirErr != nil {
		return persona.Options{}, env.DirErr
	}
	return persona.Options{Dir: env.Dir, Home: env.Home, Builtin: personas.Files}, nil
}

// Options are a run: the persona Ref names (PERSONA[@TIER]), on Harness
// when set, with the input values Inputs, the arguments Extra passed to
// the harness, and the choices of the command line.
type Options struct {
	Ref     string
	Extra   []string
	Harness string
	// Model runs the persona on this model instead of its tier's
	// (persona.ModelInherit: the harness's own default); one the harness
	// cannot reach is refused (CheckModel).
	Model string
	// ForeignModelInherits runs the tier's model that Harness (another
	// than the tier's) cannot reach as persona.ModelInherit, with a
	// warning, instead of refusing it: create's run of the built-in
	// persona author, whose models the user did not choose.
	ForeignModelInherits bool
	// Root is the project root to copy, as given (the nearest directory
	// with .git above the working directory when empty).
	Root    string
	Profile string
	Inputs  map[string]string

	SyncDeletes, Keep, Reuse, Live, SyncCommitted bool
	// SyncConfig lets executable configuration sync back with the rest
	// instead of being held in the session.
	SyncConfig                                  bool
	InstallInRepo, RefreshSkills, AllowUnmapped bool
	// DryRun plans the run only: a persona that turns the sandbox off is
	// planned whatever the write sandbox.
	DryRun bool
	// Review holds the agent's work for review; nil leaves it to
	// "review" in <home>/config.json.
	Review *bool
	// Timeout limits the run; nil leaves it to the persona's
	// timeoutSeconds when stdin is not a terminal.
	Timeout *time.Duration
	// Task, when set, makes the run unattended: the harness's one-shot
	// mode with this task.
	Task *string
	SandboxFlags
	// NoProjectPersonas looks the persona up in the user's layers and the
	// built-in catalog only (a worker's run).
	NoProjectPersonas bool
	// NoHistory leaves the run out of the history.
	NoHistory bool
	// Attempt, when set, makes the one-shot run an attempt of workforce
	// eval (attempt.go): its setup before the agent, its check after,
	// nothing synced back.
	Attempt *report.AttemptSpec
	Env     Env
}

// SandboxFlags are what a run (and a resumed one) asks of its sandbox:
// the flags run and sessions resume share.
type SandboxFlags struct {
	// Sandbox is the sandbox mode asked for (nil: the default), and
	// SandboxAllow the paths the confined harness may write too, as
	// given (relative to the working directory).
	Sandbox      *confine.Mode
	SandboxAllow []string
	// SandboxDenyRead are the paths the confined harness may not read
	// besides the defaults, as given (--sandbox-deny-read).
	SandboxDenyRead []string
	// Tree is the tree asked for (--tree), empty when not: above the
	// persona's mount.tree, $WORKFORCE_TREE and config.json's "tree".
	Tree session.TreeMode
	// Network are the network policy's flags: --network and
	// --network-allow (the user's word, widening config.json's), and
	// --network-narrow (a batch task's, narrowing it).
	Network NetworkFlags
}

// settings are the sandbox and the network settings f asks for in env.
func (f SandboxFlags) settings(env Env) (session.Sandbox, session.NetworkSettings, error) {
	sb, err := Sandbox(env, f.Sandbox, f.SandboxAllow)
	if err == nil {
		err = DenyRead(&sb, env, f.SandboxDenyRead)
	}
	if err != nil {
		return session.Sandbox{}, session.NetworkSettings{}, err
	}
	nw, err := Network(env, f.Network)
	return sb, nw, err
}

// NetworkFlags are the network policy's flags of a run: Mode
// (--network, "" when not given) and Allow (--network-allow) widen
// config.json's policy, each of Narrow (--network-narrow, a batch
// task's network) narrows it. The caller has checked their words.
type NetworkFlags struct {
	Mode   string
	Allow  []string
	Narrow []session.NetSpec
}

// Network returns the network settings of a run in env with the flags f:
// config.json's policy widened by f's mode and hosts, narrowed by f's
// narrowings.
func Network(env Env, f NetworkFlags) (session.NetworkSettings, error) {
	nw, err := session.NetworkFor(env.Home, f.Mode, f.Allow)
	if err != nil {
		return session.NetworkSettings{}, err
	}
	nw.Narrow = append(nw.Narrow, f.Narrow...)
	return nw, nil
}

// Hooks are how a run tells its caller what happens. Every hook may be
// nil.
type Hooks struct {
	// Warn gets each warning, as it comes.
	Warn func(msg string)
	// Catalog gets the catalog the persona was looked up in and the
	// persona found (nil when the lookup failed), for its diagnostics.
	Catalog func(cat *persona.Catalog, p *persona.Persona)
	// Progress gets the steps of the sandbox's making and of sync-back
	// (session.RunOptions.Progress).
	Progress func(event, detail string)
	// Events gets a one-shot run's events as they come.
	Events func(harness.Event)
	// Abort ends the process at once for a signal that asks it to (a
	// second Ctrl-C during sync-back).
	Abort func(os.Signal)
	// Signals is the program's signal source, through which the run
	// catches the signals it handles (session.Notify); nil catches none.
	Signals session.Notify
	// Version is the installed version of harness h ("" when unknown).
	Version func(h string) string
	// Profile is the discovery profile of harness h and its installed
	// version, the one named profile when not "".
	Profile func(profile, h string) (discover.Profile, string, error)
	// WriteJSON writes a document as the caller prints JSON: a one-shot
	// run's kept result is what --json prints.
	WriteJSON func(w io.Writer, v any) error
	// ResumedUsage makes the usage a resumed run of harness h printed
	// (one) its own, where the harness prints the conversation's running
	// total, and returns a warning when it cannot ("" for none).
	ResumedUsage func(h string, one *session.OneShotResult) string
}

func (h Hooks) warn(format string, args ...any) {
	if h.Warn != nil {
		h.Warn(fmt.Sprintf(format, args...))
	}
}

// Kind is what kind of refusal an *Error is.
type Kind int

const (
	// Usage: the command line asks for what cannot be (a flag that needs
	// a sandbox, a --root that does not hold the working directory...).
	Usage Kind = iota + 1
	// Refused: the run cannot start as asked (an unknown persona, a
	// harness workforce does not run, settings the harness cannot apply).
	Refused
)

// Error is a run refused before it started, with the hints of what to
// do instead.
type Error struct {
	Kind  Kind
	Err   error
	Hints []string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func usage(err error, hints ...string) error { return &Error{Kind: Usage, Err: err, Hints: hints} }
func refused(err error, hints ...string) error {
	return &Error{Kind: Refused, Err: err, Hints: hints}
}

// lookupError adds to an error of persona lookup the hint of what to do.
func lookupError(err error) error {
	var ue *persona.UnknownError
	if errors.As(err, &ue) {
		return refused(err, ue.Hints()...)
	}
	return err
}

// Run is a planned run of a persona: Prepare makes it, Start runs it,
// Finish records it.
type Run struct {
	// Plan is the run's plan; Persona the persona it runs, Home the
	// workforce home.
	Plan    *session.Plan
	Persona *persona.Persona
	Home    string
	// Hooks are the hooks Prepare was given; a caller may set Events
	// once it knows the plan.
	Hooks Hooks

	opts  Options
	start time.Time
	usage *usageReader
	// resumed is the session a resumed run continues, and warned what
	// resolving its persona again warned of.
	resumed *session.Session
	warned  []string
	// hash is the persona's hash (PersonaHash), once computed.
	hash string
}

// personaHash is the hash of the run's persona (PersonaHash), computed
// once for its result and its history record.
func (r *Run) personaHash() string {
	if r.hash == "" {
		r.hash = PersonaHash(r.Plan.Resolved)
	}
	return r.hash
}
