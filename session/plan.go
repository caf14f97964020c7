package session

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/skill"
)

// PlanOptions say what to run: a persona resolved for a tier, in a project.
type PlanOptions struct {
	// Home is the workforce home (sessions go to Home/sessions).
	Home string
	// Persona is the persona's id and Layers the files it was merged from.
	Persona string
	Layers  []persona.Origin
	// Resolved is the persona resolved for the tier, with the harness to
	// run set; Inputs are the input values, substituted into the
	// instruction text (the system prompt is expected substituted).
	Resolved *persona.Resolved
	Inputs   map[string]string
	// Root is the real project root and Cwd the real working directory,
	// both canonical, Cwd at or below Root.
	Root, Cwd string
	// Extra are arguments passed through to the harness; Env is the
	// caller's environment.
	Extra []string
	Env   []string
	// InRepo runs the harness in the real directory, without a sandbox.
	InRepo bool
	// Profile returns the discovery profile of a harness and its
	// installed version (the caller picks it by version and warns).
	Profile func(harness string) (discover.Profile, string, error)
	// Version returns the installed version of a harness, when known:
	// asked when no profile is (no instruction file to place), for the
	// plan and a one-shot result. Nil asks nothing.
	Version func(harness string) string
	// RefreshSkills fetches the persona's remote skills again instead of
	// taking them from the cache.
	RefreshSkills bool
	// AllowUnmapped plans the run even when the harness refuses some of
	// the persona's values (Refusal is then nil, and Warnings name each).
	AllowUnmapped bool
	// OneShot, when set, plans an unattended run of the harness's own
	// one-shot mode with its task (harness.PlanOneShot) instead of an
	// interactive one.
	OneShot *harness.OneShot
	// Session, when set, is a kept session to resume (resume.go): the
	// plan targets its directory, with its root and working directory,
	// and continues its harness conversation in a one-shot run (OneShot
	// must be set; its Resume, when empty, is the session's
	// conversation: Record.HarnessSessionID, else the one the harness's
	// session store says ran in its sandbox). Plan.Run then resumes it
	// instead of making a session.
	Session *Session
	// SharedState runs the harness on the user's own configuration
	// directories instead of a per-session state seeded from them
	// (state.go), which a run with a sandbox otherwise gets.
	SharedState bool
	// KeepCaches are directories where the user's own package caches stay
	// in use (the paths the sandbox allows): a cache there is not moved
	// into the session.
	KeepCaches []string
	// Sandbox is how the harness is confined (confine.go).
	Sandbox Sandbox
	// Network are the run's network policies, unresolved (network.go):
	// the user's and the narrowings of the caller (a batch task's).
	// NewPlan adds the persona's narrowings.
	Network NetworkSettings
	// Tree is the tree asked for on the command line (--tree), above the
	// persona's mount.tree and Sandbox.Tree (tree.go); zero when not.
	Tree TreeChoice
	// Live, Reuse and Attempt are what the run asks besides that decides
	// its tree: live sync (the copy only), a warm sandbox (left out with
	// the overlay), an evaluation's attempt (the copy only).
	Live, Reuse, Attempt bool
}

// Materialized is the instruction file written into the sandbox.
type Materialized struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Text string `json:"text"`
}

// Plan is a run before it starts: what `workforce run --dry-run` prints.
type Plan struct {
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// HarnessVersion is the installed harness's version, when known;
	// Profile the discovery profile that decides which instruction files
	// are hidden and folded.
	HarnessVersion string `json:"harnessVersion,omitempty"`
	// VersionMeasured says whether HarnessVersion is of a release family
	// workforce was measured on (harness.VersionMeasured); nil when the
	// version is not known.
	VersionMeasured *bool             `json:"harnessVersionMeasured,omitempty"`
	Profile         string            `json:"profile,omitempty"`
	Layers          []persona.Origin  `json:"layers"`
	Resolved        *persona.Resolved `json:"resolved"`
	Root            string            `json:"root"`
	Cwd             string            `json:"cwd"`
	Sandbox         string            `json:"sandbox"`
	// Tree is how the sandbox shows the project (tree.go): copy or
	// overlay; empty for a run in the repository.
	Tree         TreeMode          `json:"tree,omitempty"`
	Workdir      string            `json:"workdir"`
	Materialized *Materialized     `json:"materialized"`
	Extend       *Extend           `json:"extend,omitempty"`
	Hidden       []string          `json:"hidden"`
	Ignored      []string          `json:"ignored"`
	Readonly     []string          `json:"readonly"`
	Argv         []string          `json:"argv"`
	Env          []string          `json:"env"`
	Sealed       []mount.SealedVar `json:"sealedEnv"`
	ConfigFiles  map[string]string `json:"configFiles,omitempty"`
	Notes        []string          `json:"notes,omitempty"`
	InRepo       bool              `json:"installInRepo"`
	Skills       *skill.Plan       `json:"skills,omitempty"`
	// Mapping is what the harness gets for each persona value that
	// changes what the agent may do or how it runs, and what it refused.
	Mapping *harness.Mapping `json:"mapping"`
	// Confine is the write sandbox of the run: its mode, whether the
	// harness is confined, and what it may write (confine.go).
	Confine *Confinement `json:"confine"`
	// Network are the run's network policies, unresolved: the user's,
	// then each narrowing with where it came from (network.go). The
	// caller resolves them (the egress package) for a confined run.
	Network *NetworkSettings `json:"network,omitempty"`
	// Warnings are what the user should read before the run.
	Warnings []string `json:"-"`

	mount   mount.Options
	inv     *harness.Invocation
	refusal error
	// session is the session to resume (PlanOptions.Session);
	// harnessSession the conversation id fixed before the start.
	session        *Session
	harnessSession string
	// state is the harness's per-session state (state.go), nil when the
	// harness runs on the user's configuration.
	state *harnessState
	// home is the workforce home, env the caller's environment, and
	// reads the run's read policy (reads.go).
	home  string
	env   []string
	reads *Reads
	// net is the network of a run whose harness runs in namespaces
	// (egress.go), nil otherwise.
	net *netPlan
}

// InGitDirError is the error of a run started in the repository's git
// directory (or below it): sync-back never brings anything back from
// there, so the run is refused before anything is made.
type InGitDirError struct {
	Cwd, Root string
}

func (e *InGitDirError) Error() string {
	return fmt.Sprintf("the working directory %s is inside the repository's git directory, from which the sandbox syncs nothing back; run from the working tree of %s", e.Cwd, e.Root)
}

// NewPlan plans a run: the session directory, what the sandbox hides and
// materializes (by the harness's discovery profile, in overwrite or extend
// mode), and the harness's command line, environment (sealed: no path of
// the real project) and configuration files.
func NewPlan(o PlanOptions) (*Plan, error) {
	r := o.Resolved
	if o.Session != nil {
		if err := resumable(o, r); err != nil {
			return nil, err
		}
		rec := o.Session.Record
		o.Persona, o.Root, o.Cwd, o.InRepo = rec.Persona, rec.Root, rec.Cwd, false
	}
	p := &Plan{Persona: o.Persona, Tier: r.Tier, Harness: r.Harness, Layers: o.Layers, Resolved: r,
		Root: o.Root, Cwd: o.Cwd, InRepo: o.InRepo,
		Hidden: []string{}, Ignored: []string{}, Readonly: []string{}, Sealed: []mount.SealedVar{},
		home: o.Home, env: o.Env}
	if o.Session != nil {
		p.Sandbox, p.session = o.Session.Dir, o.Session
	} else {
		p.Sandbox = NewDir(o.Home, o.Persona)
	}
	tree := filepath.Join(p.Sandbox, mount.TreeDir)
	sc := r.Sidecar(persona.ChannelFor(r.Harness))
	var text string
	if sc.IsSet() {
		var err error
		if text, err = sc.Text(); err != nil {
			return nil, err
		}
		text = persona.Substitute(text, o.Inputs)
	}
	p.mount = mount.Options{Home: o.Home, Persona: o.Persona, Root: o.Root, Cwd: o.Cwd, Dir: p.Sandbox,
		Ignore: r.Mount.IgnoredPatterns, Readonly: r.Mount.ReadonlyPatterns}
	workRel, err := filepath.Rel(o.Root, o.Cwd)
	if err != nil {
		return nil, err
	}
	if !o.InRepo && mount.InGitDir(o.Root, workRel) {
		return nil, &InGitDirError{Cwd: o.Cwd, Root: o.Root}
	}
	if !o.InRepo {
		if err := checkRoot(o.Root); err != nil {
			return nil, err
		}
		// Asked for once the sandbox's tree is listed (mount.Create):
		// git runs beside the rest of the plan and the listing.
		p.mount.HooksDirsLater = startHooksDirs(o.Root)
	}
	p.Workdir = filepath.Join(tree, workRel)
	switch {
	case o.InRepo:
		p.Workdir = o.Cwd
		if sc.IsSet() {
			p.Warnings = append(p.Warnings, fmt.Sprintf("--install-in-repo: the persona's %s is skipped; nothing is written into the repository", sc.Channel.FileNameFor(r.Harness)))
		}
	case sc.IsSet():
		prof, version, err := o.Profile(r.Harness)
		if err != nil {
			return nil, err
		}
		p.Profile, p.HarnessVersion = prof.Name, version
		name := sc.Channel.FileNameFor(r.Harness)
		// The harness's own settings may name more instruction files
		// (gemini's context.fileName): those of the real directory.
		do := discover.FromEnv(prof, envLookup(o.Env)).ForDir(prof, o.Cwd)
		if sc.Mode == persona.ModeExtend {
			// Only what is folded is hidden; nested files stay for the
			// harness to load on demand.
			ext, err := planExtend(prof, p.mount, tree, name, text, do)
			if err != nil {
				return nil, err
			}
			p.Extend = ext
			p.mount.HidePaths = ext.Hide
			text = ext.Text
			for _, f := range ext.Extra {
				p.Warnings = append(p.Warnings, fmt.Sprintf("extend: %s loads %s from above the sandbox, which your directory would not give; set %s to a directory without instruction files above it", r.Harness, f, home.Env))
			}
		} else {
			// Overwrite: the harness sees none of the repository's
			// instruction files of its convention.
			p.mount.Hide = prof.HiddenNamesIn(do, o.Cwd)
		}
		p.Materialized = &Materialized{Path: filepath.Join(p.Workdir, name), Mode: string(sc.Mode), Text: text}
	}
	if p.HarnessVersion == "" && o.Version != nil {
		// No instruction file to place: the version still goes into the
		// plan and a one-shot result.
		p.HarnessVersion = o.Version(r.Harness)
	}
	if m, ok := harness.VersionMeasured(r.Harness, p.HarnessVersion); ok {
		p.VersionMeasured = &m
	}

	if len(r.Skills) > 0 && p.session == nil {
		// A resumed session has its skills in the sandbox already.
		if err := p.planSkills(o, tree); err != nil {
			return nil, err
		}
	}
	env := o.Env
	if !o.InRepo {
		// The session's own tmp: in the write sandbox, and removed
		// with the session.
		env = setEnv(env, "TMPDIR", filepath.Join(p.Sandbox, tmpDir))
	}
	if err := p.planSandbox(o.Sandbox); err != nil {
		return nil, err
	}
	if err := p.planState(o); err != nil {
		return nil, err
	}
	if !o.InRepo {
		nw := o.Network
		nw.Narrow = append(personaNetwork(r), nw.Narrow...)
		p.Network = &nw
		if c := p.Confine; c.Confined && c.Namespaces {
			rec := filepath.Join(ResultDir(p.home, filepath.Base(p.Sandbox)), NetworkLogFile)
			np, shown, nenv, err := planNetwork(&nw, r.Harness, r.Model, env, rec, p.state)
			if err != nil {
				return nil, err
			}
			p.net, c.Network, env = np, shown, nenv
		}
	}
	hopts := harness.Options{Extra: o.Extra, ConfigDir: filepath.Join(p.Sandbox, configDir), Env: env,
		AllowUnmapped: o.AllowUnmapped, Root: tree, Subdir: workRel, Confined: p.Confine.Confined, ProjectDir: o.Cwd}
	if o.InRepo {
		hopts.Root = o.Root
	}
	if o.Session != nil && o.Session.Record.Tree == TreeOverlay {
		// The resumed tree's files the agent wrote are in the upper
		// layer.
		hopts.AgentRoot = filepath.Join(p.Sandbox, mount.UpperDir)
	}
	if p.net != nil {
		hopts.BrokerURLs, hopts.NetworkMode, hopts.OpencodeKeys = p.net.brokerURLs, string(p.net.policy.Mode), p.net.opencodeKeys
	}
	if p.state != nil {
		hopts.State = p.state.Env
	}
	if p.Materialized != nil {
		// Codex's instruction budget must hold the whole file.
		hopts.InstructionBytes = len(p.Materialized.Text)
	}
	if !o.InRepo {
		// No path of the real project reaches the harness: not in its
		// environment, its arguments, its configuration files, nor in the
		// persona's values expanded from the environment ($PWD is the
		// harness's directory).
		sealer := mount.NewSealer(o.Root, tree, env)
		hopts.Seal = func(env []string) []string {
			env, p.Sealed = sealer.Env(env)
			return env
		}
		hopts.SealText = sealer.Text
		expand, _ := sealer.Env(env)
		hopts.ExpandEnv = append(expand, "PWD="+p.Workdir)
	}
	var inv *harness.Invocation
	if o.OneShot != nil {
		one := *o.OneShot
		switch {
		case p.session != nil && one.Resume == "":
			var warning string
			one.Resume, warning, err = resumeID(p.session, r, hopts, p.Workdir, func(inv *harness.Invocation) error {
				return p.confineLookup(o.Sandbox, inv)
			})
			if err != nil {
				return nil, err
			}
			if warning != "" {
				p.Warnings = append(p.Warnings, warning)
			}
		case p.session == nil && one.Resume == "" && one.SessionID == "" && !o.InRepo && harness.FixesSessionID(r.Harness) && !choosesConversation(r.Harness, o.Extra):
			// Fixed before the start: a run that prints no result (a
			// signal, a time limit) can still be resumed.
			one.SessionID = newUUID()
		}
		p.harnessSession = cmp.Or(one.SessionID, one.Resume)
		inv, err = harness.PlanOneShot(r, hopts, one)
	} else {
		if !o.InRepo && harness.FixesSessionID(r.Harness) && !choosesConversation(r.Harness, o.Extra) {
			hopts.SessionID = newUUID()
			p.harnessSession = hopts.SessionID
		}
		inv, err = harness.Plan(r, hopts)
	}
	var unmapped *harness.UnmappedError
	if errors.As(err, &unmapped) {
		// Kept for Refusal: a dry run still shows the plan.
		p.refusal, err = err, nil
	}
	if err != nil {
		return nil, err
	}
	if p.state != nil {
		// The per-session state is the harness's to write.
		inv.Writable = append(inv.Writable, p.state.Writable...)
	}
	if err := p.planTree(o, inv.TreeReadOnly); err != nil {
		return nil, err
	}
	if err := p.confinePolicy(o.Sandbox, inv); err != nil {
		return nil, err
	}
	p.Mapping = inv.Mapping
	if o.AllowUnmapped {
		p.Warnings = append(p.Warnings, inv.Mapping.Warnings()...)
	}
	p.inv = inv
	p.Argv, p.ConfigFiles, p.Notes = inv.Argv(), p.configFiles(inv), append(p.Notes, inv.Notes...)
	// The harness starts with PWD naming its directory (harness.Start).
	p.Env = append(append([]string{}, inv.SetEnv...), "PWD="+p.Workdir)
	if !o.InRepo && !setsEnv(inv.SetEnv, "TMPDIR") {
		p.Env = append(p.Env, "TMPDIR="+filepath.Join(p.Sandbox, tmpDir))
	}
	for _, k := range inv.DroppedEnv {
		// The sockets of the user's agents and daemons: not passed in.
		p.Sealed = append(p.Sealed, mount.SealedVar{Name: k, Dropped: true})
	}
	if p.Sealed == nil {
		p.Sealed = []mount.SealedVar{}
	}
	return p, nil
}

// planState plans the harness's per-session state: for a run with a
// sandbox unless o.SharedState, and for a resumed session only when it
// has one (it resumes on the state it ran with).
func (p *Plan) planState(o PlanOptions) error {
	if o.InRepo || o.SharedState {
		return nil
	}
	// A cache in a path the sandbox allows stays the user's.
	keep := append(slices.Clone(o.KeepCaches), o.Sandbox.Allow...)
	st, err := planState(p.Sandbox, p.Harness, o.Env, keep)
	if err != nil {
		return err
	}
	if p.session != nil {
		if _, err := os.Lstat(st.Dir); err != nil {
			return nil
		}
	}
	p.state = st
	return nil
}

func envLookup(env []string) func(string) string {
	m := map[string]string{}
	for _, kv := range env {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return func(k string) string { return m[k] }
}

// setEnv returns env with key set to value, in place of any value it had.
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// setsEnv reports whether set, variables as KEY=VALUE, sets key.
func setsEnv(set []string, key string) bool {
	for _, kv := range set {
		if k, _, _ := strings.Cut(kv, "="); k == key {
			return true
		}
	}
	return false
}

// Refusal returns the *harness.UnmappedError naming the persona values
// the harness refused, unless the plan allows them; a run must not start
// when it is not nil.
func (p *Plan) Refusal() error { return p.refusal }

// Preview fills in what the sandbox would leave out, hide and protect,
// without copying anything (for dry runs).
func (p *Plan) Preview() error {
	if p.InRepo {
		return nil
	}
	mp, err := mount.PlanFor(p.mount)
	if err != nil {
		return err
	}
	p.Hidden, p.Ignored, p.Readonly = mp.Hidden, mp.Ignored, mp.Readonly
	return nil
}

// Invocation is how the harness will be started.
func (p *Plan) Invocation() *harness.Invocation { return p.inv }

// RunOptions are the parts of a run that are not its plan.
type RunOptions struct {
	Stdin             io.Reader
	Stdout, Stderr    io.Writer
	SyncDeletes, Keep bool
	// Reuse refreshes the project's warm sandbox instead of copying, and
	// keeps the sandbox warm afterwards.
	Reuse    bool
	Progress func(event, detail string)
	Warn     func(msg string)
	// Events, when set, gets a one-shot run's progress events as they
	// come (runOneShot): the harness's, as it prints them, then
	// sync-back's.
	Events func(harness.Event)

	// SyncCommitted, SyncConfig, Review, Live, Timeout, Abort and
	// Signals are as in Options.
	SyncCommitted, SyncConfig, Review, Live bool
	Timeout                                 time.Duration
	Abort                                   func(os.Signal)
	Signals                                 Notify
	// HarnessSession, when set, returns the harness's conversation id as
	// its output says, once it exited (Options.HarnessSession).
	HarnessSession func() string
	// Ended is as in Options: called before the session is removed.
	Ended func(*Session)

	// Attempt, when set, makes the one-shot run an attempt of an
	// evaluation (Options.Attempt).
	Attempt *Attempt

	// netDenied gets each destination the proxy refuses the harness
	// (a one-shot run's network events).
	netDenied func(egress.Denial)
}

// Run runs the plan: in a session (Run), or with InRepo in the real
// directory, where nothing is written but the harness's configuration
// files, kept in the session directory and removed afterwards.
func (p *Plan) Run(o RunOptions) (*Result, error) {
	if p.inv.OneShot {
		return p.runOneShot(o)
	}
	return p.run(o)
}

func (p *Plan) run(o RunOptions) (*Result, error) {
	if p.inv.Path == "" {
		if _, err := harness.LookPath(p.inv.Binary, p.inv.Env()); err != nil {
			return nil, err
		}
	}
	if p.InRepo {
		if len(p.inv.Files) > 0 {
			if err := p.inv.WriteFiles(); err != nil {
				return nil, err
			}
			defer os.RemoveAll(p.Sandbox)
		}
		sigs := watchSignals(phaseHarness, o.Abort, o.Signals)
		ran, err := sigs.runHarness(nil, p.inv, p.Cwd, o.Timeout, o.Stdin, o.Stdout, o.Stderr, nil, nil, netHooks{})
		sigs.stop()
		if len(ran.ended) > 0 && o.Warn != nil {
			o.Warn(endedWarning(ran.ended))
		}
		if err != nil {
			return nil, err
		}
		res := &Result{Harness: ran.exit, TimedOut: ran.timedOut, Signal: sigs.lastSignal()}
		if ran.timedOut {
			if o.Warn != nil {
				o.Warn(fmt.Sprintf("the harness was stopped after %s (its time limit)", o.Timeout))
			}
		}
		return res, nil
	}
	ro := Options{
		Dir: p.Sandbox, Persona: p.Persona, Tier: p.Tier, Harness: p.Harness,
		Mount: p.mount, Invocation: p.inv, Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr,
		SyncDeletes: o.SyncDeletes, Keep: o.Keep, Reuse: o.Reuse, Progress: o.Progress, Warn: o.Warn, Live: o.Live,
		SyncCommitted: o.SyncCommitted, SyncConfig: o.SyncConfig, Review: o.Review, Timeout: o.Timeout, Abort: o.Abort, Signals: o.Signals,
		HarnessSessionID: p.harnessSession, HarnessSession: o.HarnessSession, Ended: o.Ended,
		state: p.state, net: p.net, netDenied: o.netDenied, Attempt: o.Attempt,
	}
	if !harness.FixesSessionID(p.Harness) {
		ro.FindHarnessSession = func(since time.Time) (string, error) {
			return harness.FindSession(p.inv, p.Workdir, since)
		}
	}
	if p.session != nil {
		return resume(p.session, ro)
	}
	if m := p.Materialized; m != nil {
		ro.Materialize = &File{Name: filepath.Base(m.Path), Text: m.Text}
	}
	if p.Skills != nil {
		// The run's signal handler, from the fetch on: Run takes it over.
		sigs := watchSignals(phaseCreate, o.Abort, o.Signals)
		dirs, err := p.fetchSkills(sigs, o)
		if err != nil {
			sigs.stop()
			if sig := sigs.lastSignal(); sig != nil {
				return nil, &StoppedError{Signal: sig, Err: err}
			}
			return nil, err
		}
		ro.Mount, ro.Skills, ro.sigs = p.mount, dirs, sigs
	}
	return Run(ro)
}

// claudeConversationFlags are claude's flags that choose the conversation
// themselves; claude refuses --session-id beside --continue or --resume
// (without --fork-session), measured on 2.1.330.
var claudeConversationFlags = []string{"-c", "--continue", "-r", "--resume", "--session-id", "--fork-session"}

// choosesConversation reports whether the arguments extra of harness h
// choose the conversation: workforce then fixes no id, and the record
// learns none before the run.
func choosesConversation(h string, extra []string) bool {
	flags := claudeConversationFlags
	if h != persona.HarnessClaude {
		flags = harness.ConversationFlags(h)
	}
	for _, a := range extra {
		flag, _, _ := strings.Cut(a, "=")
		if slices.Contains(flags, flag) {
			return true
		}
	}
	return false
}

// configFiles are the harness's configuration files as the plan shows
// them: the invocation's, and those it writes into the per-session state
// (gemini's settings.json), by absolute path.
func (p *Plan) configFiles(inv *harness.Invocation) map[string]string {
	if len(inv.StateFiles) == 0 || p.state == nil {
		return inv.Files
	}
	out := maps.Clone(inv.Files)
	for rel, content := range inv.StateFiles {
		out[filepath.Join(p.state.Dir, rel)] = content
	}
	return out
}
