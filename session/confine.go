package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/mount"
)

// The write sandbox. A run confines its harness (package confine) so
// that it can write only:
//
//   - the sandbox tree, unless the persona keeps it read-only (codex's
//     read-only sandbox: harness.Invocation.TreeReadOnly);
//   - the session's tmp directory, <session>/tmp (tmpDir), which TMPDIR
//     names for every run in a sandbox;
//   - the directories the harness's per-session state needs
//     (harness.Invocation.Writable);
//   - the paths the user allows (--sandbox-allow, "sandbox": {"allow"}
//     in config.json): a directory with everything below it, a file in
//     place;
//   - the terminal devices (confine.TerminalDevices) this system has.
//
// It reads everything but what its read policy denies (reads.go).
//
// Nothing else: not the session directory itself (the record, the
// manifest, the conflicts, the harness's configuration files), not the
// results directory, not the user's home. The policy is made when the run
// is planned (planSandbox), listed by run --dry-run, and carried by the
// invocation (harness.Invocation.Confine) to harness.Start.
//
// The mode (Sandbox.Mode) decides whether the harness is confined:
// off never; on where the system can (Linux with Landlock ABI
// confine.MinABI or later), else with a warning; strict, or the run is
// refused. A run without a sandbox (--install-in-repo, mount.enabled
// false) is never confined: a note says so, and strict refuses it. A run
// confined as root warns that Landlock leaves root's capabilities whole
// (confine.RootWarning).

// SandboxEnv is the environment variable that sets the sandbox mode of
// runs that do not ask for one (--sandbox), above "sandbox" in
// config.json: on, off or strict.
const SandboxEnv = "WORKFORCE_SANDBOX"

// Sandbox is how a run confines its harness (PlanOptions.Sandbox).
type Sandbox struct {
	// Mode is the sandbox mode; the zero Mode is on.
	Mode confine.Mode
	// Allow are paths the harness may write besides: existing, absolute
	// and clean (CheckAllow).
	Allow []string
	// DenyRead are paths the harness may not read besides the default
	// ones, AllowRead paths it may read below them (reads.go); absolute
	// and clean, each with its origin.
	DenyRead, AllowRead []ReadEntry
	// Tree is the tree $WORKFORCE_TREE or config.json's "tree" asks for
	// (tree.go), zero when neither does.
	Tree TreeChoice
}

// Confinement is the write sandbox of a planned run, as run --dry-run
// shows it.
type Confinement struct {
	// Mode is the sandbox mode of the run.
	Mode confine.Mode `json:"mode"`
	// Confined says the harness starts confined, to Policy.
	Confined bool           `json:"confined"`
	Policy   confine.Policy `json:"policy"`
	// Reads is the read policy with where each entry came from
	// (reads.go); Policy.Read is what the launcher gets of it.
	Reads *Reads `json:"reads,omitempty"`
	// Why says why a run of mode on is not confined.
	Why string `json:"why,omitempty"`
	// Namespaces says the harness runs in namespaces of its own
	// (confine.Policy.Net): its network is workforce's proxy alone;
	// NamespacesWhy, when it is confined without them, says why.
	Namespaces    bool   `json:"namespaces"`
	NamespacesWhy string `json:"namespacesWhy,omitempty"`
	// Network is the resolved network of a run in namespaces
	// (egress.go).
	Network *NetworkPlan `json:"network,omitempty"`
	// Launcher is the executable that confines the harness:
	// workforce-launcher beside workforce, of the same build, or
	// workforce itself (confine.Launcher).
	Launcher string `json:"launcher,omitempty"`
}

// SandboxFor returns the write sandbox of a run in the workforce home
// dir: the mode asked for (--sandbox), else the one $WORKFORCE_SANDBOX
// names, else "sandbox" in config.json, else on; the paths config.json's
// "sandbox" allows, each checked (CheckAllow) unless the mode is off; and
// its denyRead and allowRead paths. A bad config.json or variable is an
// error naming it, and so is an allowed path of config.json that cannot be
// allowed. The caller adds --sandbox-allow's.
func SandboxFor(dir string, asked *confine.Mode, getenv func(string) string) (Sandbox, error) {
	cfg, err := home.ReadConfig(dir)
	if err != nil {
		return Sandbox{}, err
	}
	var sb Sandbox
	switch env := getenv(SandboxEnv); {
	case asked != nil:
		sb.Mode = *asked
	case env != "":
		if sb.Mode, err = confine.ParseMode(env); err != nil {
			return Sandbox{}, fmt.Errorf("$%s: %w", SandboxEnv, err)
		}
	case cfg.Sandbox.Mode != nil:
		sb.Mode = *cfg.Sandbox.Mode
	}
	if sb.Tree, err = treeFromEnv(cfg.Tree, getenv); err != nil {
		return Sandbox{}, err
	}
	for i, p := range cfg.Sandbox.Allow {
		if sb.Mode == confine.Off {
			break
		}
		if err := CheckAllowIn(dir, p); err != nil {
			return Sandbox{}, &diag.Diagnostic{File: home.ConfigPath(dir), Field: fmt.Sprintf("sandbox.allow[%d]", i), Message: err.Error()}
		}
		sb.Allow = append(sb.Allow, p)
	}
	for _, p := range cfg.Sandbox.DenyRead {
		sb.DenyRead = append(sb.DenyRead, ReadEntry{Path: p, Origin: originConfigDeny})
	}
	for _, p := range cfg.Sandbox.AllowRead {
		sb.AllowRead = append(sb.AllowRead, ReadEntry{Path: p, Origin: originConfigRead})
	}
	return sb, nil
}

// CheckAllow returns why path cannot be a path the harness may write
// besides its sandbox, nil when it can: it must exist, and be absolute
// and clean, neither "/" nor the user's home nor a directory above it
// (confine.Policy.Check).
func CheckAllow(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s does not exist (a path the harness may write must exist before the run)", path)
	}
	if err != nil {
		return err
	}
	p := confine.Policy{Files: []string{path}}
	if fi.IsDir() {
		p = confine.Policy{Dirs: []string{path}}
	}
	return p.Check()
}

// harnessConfigs are the directories and files, under the user's home,
// of the harnesses' own configuration, which holds what runs code
// (hooks, notify, MCP servers, plugins) and logins: never writable by a
// confined harness, which gets a per-session copy (state.go).
var harnessConfigs = []string{".codex", ".claude", ".claude.json", ".config/opencode", ".local/share/opencode", ".local/state/opencode", ".gemini"}

// CheckAllowIn is CheckAllow for a run of the workforce home dir: the
// path must also be neither in nor above the workforce home (sessions,
// results, caches: what workforce trusts), nor in nor above a harness's
// or git's configuration in the user's home (codeConfigs). Symlinks are
// resolved first.
func CheckAllowIn(dir, path string) error {
	if err := CheckAllow(path); err != nil {
		return err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	overlaps := func(a, b string) bool {
		return a == b || strings.HasPrefix(a, b+string(filepath.Separator)) || strings.HasPrefix(b, a+string(filepath.Separator))
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil && overlaps(real, d) {
		return fmt.Errorf("%s is in or above the workforce home %s, whose sessions and results workforce trusts", path, dir)
	}
	if h, err := os.UserHomeDir(); err == nil {
		if h, err := filepath.EvalSymlinks(h); err == nil {
			for _, c := range codeConfigs(h) {
				if overlaps(real, c.path) {
					return fmt.Errorf("%s is in or above %s, %s, which runs code in your later sessions", path, c.path, c.what)
				}
			}
		}
	}
	return nil
}

// planSandbox decides whether the run of p is confined, before its
// harness is planned (a confined harness turns its own sandbox off). It
// returns an error for a run that strict refuses.
func (p *Plan) planSandbox(sb Sandbox) error {
	c := &Confinement{Mode: sb.Mode}
	p.Confine = c
	if p.InRepo {
		switch sb.Mode {
		case confine.Strict:
			return errors.New("sandbox mode strict: a run without a sandbox (--install-in-repo, or a persona's mount.enabled false) cannot be confined")
		case confine.On:
			c.Why = "no sandbox to confine the harness to: it runs unconfined in the repository"
			p.Notes = append(p.Notes, "the harness runs without the write sandbox: there is no sandbox (--install-in-repo, or the persona's mount.enabled false)")
		}
		return nil
	}
	d, err := confine.DecideNamespaces(sb.Mode, home.CacheDir(p.home))
	if err != nil {
		return err
	}
	c.Confined, c.Namespaces = d.Confine, d.Namespaces
	if c.Confined {
		c.Launcher, _ = confine.Launcher()
	}
	if d.Confine && !d.Namespaces && d.NamespacesWarning != nil {
		// Once a run: the network and the user's daemons stay open.
		c.NamespacesWhy = d.NamespacesWarning.Error()
		p.Warnings = append(p.Warnings, c.NamespacesWhy)
	}
	if d.Root != "" {
		// Once a run: what Landlock leaves to a harness running as
		// root.
		p.Warnings = append(p.Warnings, d.Root)
	}
	if d.Warning != nil {
		c.Why = d.Warning.Error()
		if runtime.GOOS == "linux" {
			p.Warnings = append(p.Warnings, c.Why)
		} else {
			p.Notes = append(p.Notes, c.Why)
		}
	}
	return nil
}

// confinePolicy makes the write policy of the planned run p, whose
// harness is planned as inv, and hands it to inv when the run is
// confined (planSandbox).
func (p *Plan) confinePolicy(sb Sandbox, inv *harness.Invocation) error {
	c := p.Confine
	if p.InRepo || c == nil {
		return nil
	}
	pol, err := p.policy(sb, inv)
	if err != nil {
		return err
	}
	c.Policy = pol
	c.Reads = p.reads
	if c.Confined {
		inv.Confine = &pol
	}
	return nil
}

// confineLookup hands inv, an invocation of the harness of the planned
// run p made for another of its processes than the run's own (the
// session lookup of a resumed run: resumeID), the policy the run's
// harness gets, with the per-session state's directories, when the run
// is confined: a harness process workforce starts for a session never
// has more than the agent had. It must be called after planSandbox and
// planState.
func (p *Plan) confineLookup(sb Sandbox, inv *harness.Invocation) error {
	c := p.Confine
	if p.InRepo || c == nil || !c.Confined {
		return nil
	}
	if p.state != nil {
		inv.Writable = append(inv.Writable, p.state.Writable...)
	}
	pol, err := p.policy(sb, inv)
	if err != nil {
		return err
	}
	inv.Confine = &pol
	return nil
}

// policy is the write policy of the planned run p for its harness
// planned as inv.
func (p *Plan) policy(sb Sandbox, inv *harness.Invocation) (confine.Policy, error) {
	var pol confine.Policy
	if !inv.TreeReadOnly {
		pol.Dirs = append(pol.Dirs, filepath.Join(p.Sandbox, mount.TreeDir))
	}
	pol.Dirs = append(pol.Dirs, filepath.Join(p.Sandbox, tmpDir))
	pol.Dirs = append(pol.Dirs, inv.Writable...)
	for _, path := range sb.Allow {
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			pol.Files = append(pol.Files, path)
		} else {
			pol.Dirs = append(pol.Dirs, path)
		}
	}
	for _, d := range confine.TerminalDevices {
		// A device this system lacks cannot be written anyway, and the
		// policy must name existing paths only.
		if _, err := os.Stat(d); err == nil {
			pol.Devices = append(pol.Devices, d)
		}
	}
	if sb.Mode != confine.Off {
		if p.reads == nil {
			// Once a plan: the session lookup's policy is the run's,
			// and the notes are said once.
			p.reads = p.readPolicy(sb, inv)
		}
		pol.Read = p.reads.Policy()
	}
	if p.net != nil {
		pol.Net = &confine.Namespaces{ProxyPort: p.net.proxyPort, LoopbackPorts: p.net.loopback,
			Tmp: filepath.Join(p.Sandbox, tmpDir), Hide: hiddenPaths(p.env), Keep: p.keptCovered(inv)}
	}
	if err := pol.Check(); err != nil {
		return confine.Policy{}, err
	}
	return pol, nil
}

// hiddenPaths are the paths a harness in namespaces does not reach: the
// user's runtime directory ($XDG_RUNTIME_DIR of env: the session bus,
// the keyring, systemd, a podman socket) and the container runtimes'
// sockets. Those that do not exist are left out (the launcher would skip
// them).
func hiddenPaths(env []string) []string {
	get := envGetter(env)
	var out []string
	for _, p := range append([]string{get("XDG_RUNTIME_DIR")}, daemonSockets...) {
		if p == "" || !filepath.IsAbs(p) || filepath.Clean(p) != p {
			continue
		}
		if _, err := os.Lstat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// daemonSockets are the sockets of daemons that run code for whoever
// connects (container runtimes), hidden from a harness in namespaces.
var daemonSockets = []string{"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock", "/var/run/podman/podman.sock", "/run/containerd/containerd.sock"}

// keptCovered are the paths of the run that stay reachable at their own
// path when the harness's /tmp is its session's tmp and its /dev/shm its
// own (confine.Namespaces Keep), wherever they are: the session directory (the harness's
// configuration files and state, its tree), what the read policy lets the
// harness read besides (the git objects the sandbox borrows, the
// harness's install), and the existing files and directories the
// harness's environment, its arguments and the commands of its MCP
// servers name (a configuration file a variable points at, pick's policy
// file, a server's program; a socket stays hidden). Only those under /tmp or /dev/shm need it (a home or a
// project there: confine.Covered); the launcher binds them back, and the
// read rules still apply.
func (p *Plan) keptCovered(inv *harness.Invocation) []string {
	var out []string
	add := func(path string) {
		if confine.Covered(path) && !slices.Contains(out, path) {
			out = append(out, path)
		}
	}
	add(p.Sandbox)
	if p.reads != nil {
		for _, e := range p.reads.Allow {
			add(e.Path)
		}
	}
	named := slices.Clone(inv.Args)
	for _, kv := range inv.Env() {
		_, v, _ := strings.Cut(kv, "=")
		named = append(named, v)
	}
	if p.Resolved != nil {
		for _, m := range p.Resolved.MCPServers {
			named = append(named, m.Command)
			named = append(named, m.Args...)
		}
	}
	for _, v := range named {
		if filepath.IsAbs(v) && filepath.Clean(v) == v {
			// A file or a directory, never a socket (a daemon's, which
			// the namespaces hide) nor a fifo or a device.
			if fi, err := os.Lstat(v); err == nil && (fi.Mode().IsRegular() || fi.IsDir()) {
				add(v)
			}
		}
	}
	return out
}
