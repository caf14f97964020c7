// Package confine is the write boundary of a harness: a Landlock policy
// and the launcher that applies it in a child process before executing
// the harness. workforce itself is never confined (sync-back writes the
// real tree); the harness it starts is.
//
// # What is writable, and why
//
// A Policy names what the harness may write; everything else stays
// readable and executable as before, since Landlock handles only the
// write-related access rights here, unless Policy.Read restricts reads
// too (reads.go: a deny list, or strict read roots):
//
//   - Dirs, writable with everything below them: the sandbox tree, the
//     session's tmp directory (TMPDIR), and the per-session state area of
//     the harness (CODEX_HOME, CLAUDE_CONFIG_DIR, opencode's XDG
//     directories). Writing there means creating, writing, truncating,
//     removing, renaming and linking files and directories, and making
//     symlinks, fifos and sockets; never device nodes (mknod(2) of a
//     character or block device fails with EACCES everywhere): as root,
//     a node made in the tree would open the disk under the file system
//     with the tree's rights.
//   - Files, single existing files writable (write and truncate) in a
//     directory that is not: where a harness keeps a file next to
//     others it must not touch. A file can be written in place only:
//     replacing it by rename needs its directory.
//   - Devices, the device files the harness needs (/dev/null, /dev/tty,
//     /dev/pts, /dev/ptmx): written, and controlled through ioctl(2),
//     which a terminal needs. On other devices ioctl(2) is denied from
//     Landlock ABI 5 on (but for the few commands the kernel always
//     allows); the terminals the harness inherits stay as they are, since
//     Landlock decides what a file may do when it is opened.
//
// Policy.Check refuses what would make the boundary meaningless: a path
// that is not absolute and clean, "/", the user's home or a directory
// above it as a writable directory (also when a symlink leads there), and a
// device outside /dev. What else it must not name is the caller's to
// decide and is written here so that the caller can: see the threat model.
//
// # Threat model
//
// The harness runs as the user with the model's instructions, which come
// from text nobody checked (the repository, a web page, a tool's output):
// treat it as hostile. It may write its sandbox; the boundary must keep it
// from writing anything that an unconfined program trusts later. Two traps
// are close to the sandbox and must stay outside the writable set:
//
//   - The session directory holds what workforce, unconfined, trusts
//     later: the record (with the real project root), the manifest that
//     decides conflicts, the conflict copies and the raw output a one-shot
//     result is made from. An agent that writes them points a later sync
//     at any directory, hides a conflict or forges its result. So the
//     session directory itself is never writable: only the tree, the
//     session tmp and the harness's state inside it.
//   - The harness's configuration in the user's home is executable
//     configuration: ~/.codex/config.toml (notify, MCP servers),
//     ~/.claude/settings.json (hooks), ~/.config/opencode/ (plugins, MCP).
//     An agent that writes them runs code, unconfined, in the user's next
//     session. So those directories are never writable: a harness gets a
//     per-session copy where it can be moved, and a single file where it
//     cannot (a credential it refreshes).
//
// The terminal is the third trap. The harness shares the user's terminal
// and may control it (ioctl(2) on /dev/tty and /dev/pts is allowed, or no
// terminal program works), and ioctl TIOCSTI pushes characters into a
// terminal's input queue, where the user's shell reads them once workforce
// exits (unless the kernel has dev.tty.legacy_tiocsti=0). Landlock cannot
// tell one ioctl request from another, so the launcher installs a seccomp
// filter too: TIOCSTI and TIOCLINUX fail with EPERM (seccomp_linux.go says
// how the filter reads the request and other architectures). What remains:
// the harness writes to the terminals it may write, escape sequences
// included, and /dev/pts/* of the user's other terminals are writable
// (written to, not typed into): a known limit.
//
// The launcher is the fourth: it runs unconfined until it applies the
// policy, so nothing the agent may have chosen reaches it. A persona's
// env can come from a file an agent wrote (the project's persona layer, a
// task's repository), and in a dynamically linked workforce a loader
// variable there (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, GCONV_PATH ...)
// would run the agent's code in the launcher before Landlock. So the
// launcher starts with an empty environment, and the harness's travels in
// its message, to be the harness's at execve(2), when the policy and the
// seccomp filter are in place: code a loader variable loads runs
// confined. (package persona also refuses loader variables in a persona's
// env, for the processes that run unconfined.) Descriptors are the fifth:
// Landlock checks a file when it is opened, so a descriptor open for
// writing that workforce inherited from its caller (a shell's 7>file, a
// CI runner's) would let the harness write that file. The launcher
// marks every descriptor above 2 close-on-exec but the ones its caller
// passed on purpose (exec.Cmd.ExtraFiles).
//
// A hard link in the sandbox to a real file would make the real file
// writable: Landlock checks the path a file is opened by, and the link's
// path is inside the boundary while its inode is the real file's (the tests
// show the write landing). That is why the copy never hard-links real
// files. The agent cannot make such a link itself: linking or renaming a
// file across the boundary fails with EXDEV (the Refer right).
//
// # What Landlock cannot do here
//
//   - Metadata: chmod(2), chown(2), utime(2) and extended attributes are
//     not restricted; the agent can change the mode or times of the user's
//     files (not their content). The tests record it.
//   - Other processes: from ABI 6 (Linux 6.12) on, the launcher applies
//     the signal scope: the harness can signal itself and the processes
//     it started, not workforce (a SIGSTOP to its own workforce run
//     defeated the time limit) nor any other process (EPERM); on an older
//     kernel it can signal every process of the user. ptrace(2) of a
//     process outside the domain is denied on every ABI. The agent can
//     still talk to the user's daemons over sockets (an ssh-agent, a
//     container runtime, the session bus), any of which may write on its
//     behalf: pathname sockets are restricted from ABI 9 only, and the
//     abstract Unix socket scope (ABI 6) is left off: it would close only
//     the abstract addresses of services that listen on a pathname socket
//     too (X11, a D-Bus bus), and would break, unmeasured, a harness tool
//     that talks to the user's desktop through them. The network is left
//     alone too (TCP port rules are no boundary).
//   - Root: Landlock restricts writes by path, mount(2), ptrace(2) and
//     signals, not root's other capabilities. A harness confined while
//     workforce runs as root can still change the owner, mode and
//     extended attributes of any file, read any disk device, configure
//     the network, load BPF programs and kernel modules, set the host
//     name and reboot the machine (TestRoot measures each). Decide says
//     so once a run (Decision.Root, RootWarning) unless RootWarningEnv is
//     "off".
//   - Reads: without Policy.Read everything readable stays readable,
//     secrets included. With it (reads.go), the denied paths are
//     unreadable, unlistable and not executable, by any name that
//     reaches their inode, at the price of unlistable directories on the
//     way to them and of files made there after the launch; a hard link
//     or a bind mount elsewhere still reads them.
//   - The network and the user's daemons: reachable, but in namespaces
//     (Policy.Net), which keep the network to the listeners workforce
//     serves and hide the daemons' sockets the caller names.
//   - Older kernels: a write boundary needs ABI 3 (Linux 6.2): below it
//     truncate(2) is not restricted, and below ABI 2 links and renames
//     across directories cannot be allowed inside the tree. On such a
//     kernel, or without Landlock, nothing is confined: Decide says so, and
//     Start refuses rather than confine partly.
//
// # The launcher
//
// Landlock confines the calling process and what it executes, so
// workforce confines a child: Start turns a command into the launcher,
// workforce-launcher beside workforce when it is of the same build
// (LauncherName, Launcher), else workforce executing itself
// (/proc/self/exe), either the very file checked or running even when
// its path was replaced since, with the hidden first argument LauncherArg,
// an empty environment and two pipes. main calls Main before anything
// else; Main reads its message from the first pipe (version 2: the
// policy, the harness's environment byte for byte, the descriptors the
// harness keeps; a pipe has no size limit, where one environment string
// is capped at 128 KiB), marks the other descriptors close-on-exec,
// applies the policy with the signal scope where the kernel has it
// (which also sets no_new_privs), installs the seccomp filter on every
// thread, and executes the harness in the same process, in the
// message's environment: the harness keeps the launcher's process id, so
// the caller's signals, its parent-death signal and its accounting apply
// to the harness itself. A failure before that is written to the second
// pipe, closed on exec, so that Start returns it as an error instead of
// a harness exit status. With Policy.Net it forks the harness instead,
// and stays (see Namespaces).
//
// # Namespaces
//
// With Policy.Net, Start starts the launcher in new user, network, PID
// and mount namespaces (namespaces.go, ns_linux.go): the user's ids are
// mapped to themselves, root's to RootUID (named in the namespace's
// /etc/passwd and /etc/group where the system has no name for it),
// setgroups denied, and the
// launcher keeps CAP_SYS_ADMIN, CAP_NET_ADMIN and CAP_SETPCAP there, as
// ambient capabilities, to prepare them. As process 1 it makes every
// mount private, mounts /proc (no process outside is visible), a /dev of
// its own (the usual devices, the policy's, its own devpts: no disk, no
// other terminal), hides Namespaces.Hide (an empty read-only tmpfs over
// a directory, /dev/null over a file or socket), binds Namespaces.Tmp on
// /tmp (the paths the run needs under the real /tmp bound back at their
// own path), brings loopback up, listens on 127.0.0.1 on ProxyPort and
// each of LoopbackPorts and hands the listeners to workforce over
// SCM_RIGHTS on a socket pair (Launched.Listeners); then it clears every
// capability, makes itself not dumpable, applies Landlock and the
// seccomp filter, and forks and executes the harness, whose init it
// stays: it reaps every process, passes SIGTERM, SIGHUP, SIGUSR1,
// SIGUSR2 and SIGALRM on (not SIGINT nor SIGQUIT: a terminal sends them
// to the harness itself), sends the parent-death signal when workforce's
// end of the socket closes, and when the harness exits ends what is left
// (SIGTERM, SIGKILL EndGrace later) and reports on the socket how the
// harness ended and what it ended (Launched.Ending), exiting with the
// harness's status (128+n for signal n). So the harness is never uid 0
// and has no capability, sees only its own processes, reaches nothing on
// the network but the listeners workforce serves, and leaves nothing
// running. Root's harness still owns root's files (RootNamespacesWarning).
// NamespacesAvailable says, by trying once per boot, whether the system
// allows it (UsernsEnv=off plays one that does not), and DecideNamespaces
// what a Mode means then.
//
// # The overlay
//
// With Namespaces.Overlay, the harness sees the project through an
// overlay in its mount namespace instead of a copy (overlay.go,
// overlay_linux.go): the project as the lower layer, the session's upper
// layer taking every write, merged at the target, its layers named by
// the launcher's descriptors so that mountinfo names neither, the
// ignored files whited out. Renaming a directory of the lower layer, which overlayfs
// refuses unprivileged (EXDEV), is done by the launcher on the harness's
// behalf (rename_linux.go). OverlayAvailable says, by trying once per
// boot, whether the system allows it; RemoveOverlayDirs removes the
// layers once the namespace is gone.
//
// # Other systems
//
// Landlock is Linux's; elsewhere ABI reports 0 and Decide says that the
// harness runs unconfined. macOS would need a sandbox-exec (Seatbelt)
// profile allowing file-write* to the same set; sandbox profiles do not
// nest, and codex and Claude Code apply their own, so theirs would have to
// be off there as under Landlock.
package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// LauncherArg, as the first argument of workforce, makes it the launcher
// (Main): Start passes it, nobody else does.
const LauncherArg = "__confine"

// IsLauncher reports whether args, a process's arguments (os.Args), start
// the launcher.
func IsLauncher(args []string) bool { return len(args) > 1 && args[1] == LauncherArg }

// MinABI is the Landlock ABI a write boundary needs: 3, the first that
// restricts truncation (Linux 6.2). ABI 2 (Linux 5.19) added the Refer
// right, without which links and renames across directories are denied
// even inside the tree.
const MinABI = 3

// ABIEnv is the environment variable that makes ABI report at most the
// value it holds: a hook for tests, so that a kernel with Landlock can
// play one without (0). Empty is unset; a value that is not a number
// counts as 0.
const ABIEnv = "WORKFORCE_LANDLOCK_ABI"

// ABI returns the Landlock ABI version of the running kernel, 0 when it
// has no Landlock (or the system is not Linux), lowered to the value of
// ABIEnv when that is set.
func ABI() int {
	abi := kernelABI()
	if s := os.Getenv(ABIEnv); s != "" {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			n = 0
		}
		abi = min(abi, n)
	}
	return abi
}

// UnavailableError says why this system cannot confine a harness.
type UnavailableError struct {
	// ABI is the Landlock ABI found, 0 for none.
	ABI int
	// GOOS is the operating system.
	GOOS string
}

func (e *UnavailableError) Error() string {
	switch {
	case e.GOOS != "linux":
		return fmt.Sprintf("the write sandbox uses Linux's Landlock, which %s does not have", e.GOOS)
	case e.ABI == 0:
		return "this kernel has no Landlock (not built in, or not in the lsm= list it was booted with)"
	default:
		return fmt.Sprintf("this kernel's Landlock (ABI %d) cannot restrict truncation: the write sandbox needs ABI %d (Linux 6.2 or later)", e.ABI, MinABI)
	}
}

// Available returns nil when this system can confine a harness, and an
// *UnavailableError saying why not otherwise.
func Available() error {
	if abi := ABI(); runtime.GOOS != "linux" || abi < MinABI {
		return &UnavailableError{ABI: abi, GOOS: runtime.GOOS}
	}
	return nil
}

// Mode says whether a run confines its harness. The zero Mode is On.
type Mode uint8

const (
	// On confines where the system can, and runs unconfined with a
	// warning where it cannot.
	On Mode = iota
	// Off never confines.
	Off
	// Strict confines, or refuses to run.
	Strict
)

var modeNames = [...]string{On: "on", Off: "off", Strict: "strict"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ParseMode parses "on", "off" or "strict".
func ParseMode(s string) (Mode, error) {
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return On, fmt.Errorf("unknown sandbox mode %q: want on, off or strict", s)
}

// MarshalText encodes m as its name.
func (m Mode) MarshalText() ([]byte, error) {
	if int(m) >= len(modeNames) {
		return nil, fmt.Errorf("invalid sandbox mode %d", m)
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes a mode name (ParseMode).
func (m *Mode) UnmarshalText(text []byte) error {
	mode, err := ParseMode(string(text))
	if err != nil {
		return err
	}
	*m = mode
	return nil
}

// Decision is what a Mode means on this system.
type Decision struct {
	// Confine tells whether the harness is to be started confined
	// (Start).
	Confine bool
	// Warning, for On on a system that cannot confine, says why the
	// harness runs unconfined: the caller says it once.
	Warning error
	// Root, when the harness is confined while workforce runs as root
	// (effective user id 0), says what the boundary does not keep root
	// from (RootWarning): the caller says it once. Empty when
	// RootWarningEnv is "off".
	Root string
	// Namespaces, set by DecideNamespaces, says that the harness can
	// also run in its own namespaces (Policy.Net).
	Namespaces bool
	// NamespacesWarning, set by DecideNamespaces for On on a system
	// without user namespaces, says that the network and the user's
	// daemons stay reachable, and why: the caller says it once.
	NamespacesWarning error
}

// SignalScopeABI is the first Landlock ABI with the signal scope
// (LANDLOCK_SCOPE_SIGNAL, Linux 6.12): from it on, the harness can signal
// only the processes of its own domain (itself and what it started), not
// workforce nor any other process of the user.
const SignalScopeABI = 6

// RootWarningEnv is the environment variable that, set to "off", keeps
// Decide from warning of a confined run as root (Decision.Root): for a
// container where root is the only user, once its user has read the
// warning, and for test suites that run as root.
const RootWarningEnv = "WORKFORCE_ROOT_WARNING"

// RootWarning says what a harness confined on Landlock ABI abi can still
// do when it runs as root, measured (TestRoot): Landlock restricts the
// writes of files by path, ptrace(2), mount(2) and, from SignalScopeABI
// on, signals; root's other capabilities stay whole.
func RootWarning(abi int) string {
	var signal string
	if abi < SignalScopeABI {
		signal = " signal any process (this kernel has no Landlock signal scope),"
	}
	return "workforce runs as root: the write sandbox keeps the harness from writing files outside it, not from what root may do besides:" +
		" change the owner, mode and extended attributes of any file (a setuid bit, file capabilities), read any file and disk device," +
		signal + " configure the network, load kernel modules and BPF programs, set the host name, reboot the machine;" +
		" run workforce as a user to keep the agent in its sandbox (" + RootWarningEnv + "=off silences this)"
}

// Decide tells what mode m means here: Off never confines; On confines
// when the system can and otherwise carries the reason as a warning;
// Strict confines, or returns the reason as its error.
func Decide(m Mode) (Decision, error) {
	switch m {
	case Off:
		return Decision{}, nil
	case On, Strict:
		err := Available()
		switch {
		case err == nil:
			d := Decision{Confine: true}
			if os.Geteuid() == 0 && os.Getenv(RootWarningEnv) != "off" {
				d.Root = RootWarning(ABI())
			}
			return d, nil
		case m == Strict:
			return Decision{}, fmt.Errorf("sandbox mode strict: cannot confine the harness: %w", err)
		default:
			return Decision{Warning: fmt.Errorf("the harness runs without the write sandbox: %w", err)}, nil
		}
	}
	return Decision{}, fmt.Errorf("invalid sandbox mode %v", m)
}

// Policy is what a confined harness may write. Everything else stays
// readable and executable. The paths must exist when the harness starts.
type Policy struct {
	// Dirs are writable with everything below them.
	Dirs []string `json:"dirs,omitempty"`
	// Files are single files writable in place (written, truncated), in
	// directories that are not.
	Files []string `json:"files,omitempty"`
	// Devices are device files, or directories of them such as /dev/pts,
	// writable and controllable through ioctl(2).
	Devices []string `json:"devices,omitempty"`
	// Read restricts reads (reads.go); nil leaves everything readable.
	// What is writable is readable too.
	Read *ReadPolicy `json:"read,omitempty"`
	// Net, when set, starts the harness in its own user, network, PID
	// and mount namespaces (see Namespaces); nil starts it in workforce's.
	Net *Namespaces `json:"namespaces,omitempty"`
}

// Namespaces is what the harness sees of the system when it runs in its
// own user, network, PID and mount namespaces (Policy.Net): its own uid
// (never 0), the launcher as process 1 and no process outside, a network
// of loopback alone, where the listeners Start hands to workforce are the
// only way out, a private /tmp and the user's daemons hidden.
type Namespaces struct {
	// ProxyPort, when not 0, is a port of 127.0.0.1 inside on which the
	// launcher listens, for workforce's proxy (Launched.Listeners).
	ProxyPort int `json:"proxy_port,omitempty"`
	// LoopbackPorts are ports of the host's loopback served inside on
	// the same port: the launcher listens on each, for workforce to
	// forward (Launched.Listeners).
	LoopbackPorts []int `json:"loopback_ports,omitempty"`
	// Tmp, when set, is the directory bound on /tmp inside (the
	// session's tmp); it must also be one of the policy's Dirs (Landlock
	// grants by the path a file is reached by, and /tmp reaches Tmp
	// without its parents). Paths under the real /tmp the harness needs
	// stay at their own path: the policy's writable directories and
	// files, the working directory, the program's directory, the
	// directories on its PATH, and Keep. So do those under the real
	// /dev/shm, which the harness's /dev covers with a tmpfs of its own
	// (Tmp or not).
	Tmp string `json:"tmp,omitempty"`
	// Keep are further paths under the real /tmp or /dev/shm (Covered)
	// that stay reachable at their own path when the harness's own cover
	// them (the project's git objects the sandbox borrows, a tool
	// installed there, a configuration file of the session directory in
	// a workforce home there).
	Keep []string `json:"keep,omitempty"`
	// Hide are paths made unreachable inside: a directory gets an empty
	// read-only tmpfs over it, anything else (a file, a socket) /dev/null
	// bound over it. A path that does not exist is skipped.
	Hide []string `json:"hide,omitempty"`
	// Overlay, when set, shows the harness the project through an
	// overlay mounted at Overlay.Target (see Overlay), before Hide and
	// Tmp: a hidden path or the private /tmp does not change it.
	Overlay *Overlay `json:"overlay,omitempty"`
}

// ports returns n's listening ports: ProxyPort first, when set.
func (n *Namespaces) ports() []int {
	var ports []int
	if n.ProxyPort != 0 {
		ports = append(ports, n.ProxyPort)
	}
	return append(ports, n.LoopbackPorts...)
}

// check refuses a port out of range or named twice, and a path that is
// not absolute and clean.
func (n *Namespaces) check() error {
	seen := map[int]bool{}
	for _, port := range n.ports() {
		switch {
		case port < 1 || port > 65535:
			return fmt.Errorf("sandbox namespaces: port %d: want 1 to 65535", port)
		case seen[port]:
			return fmt.Errorf("sandbox namespaces: port %d named twice", port)
		}
		seen[port] = true
	}
	if n.Tmp != "" {
		if err := checkPath(n.Tmp); err != nil {
			return fmt.Errorf("sandbox tmp %q: %w", n.Tmp, err)
		}
	}
	if n.Overlay != nil {
		if err := n.Overlay.check(); err != nil {
			return err
		}
	}
	for _, set := range []struct {
		what  string
		paths []string
	}{{"kept path", n.Keep}, {"hidden path", n.Hide}} {
		for _, path := range set.paths {
			if err := checkPath(path); err != nil {
				return fmt.Errorf("sandbox %s %q: %w", set.what, path, err)
			}
			if path == "/" {
				return fmt.Errorf("sandbox %s %q: the root directory", set.what, path)
			}
		}
	}
	return nil
}

// TerminalDevices are the devices every harness needs: the null device
// and the terminals (a harness may open its controlling terminal, and a
// shell tool makes pseudo-terminals).
var TerminalDevices = []string{"/dev/null", "/dev/tty", "/dev/pts", "/dev/ptmx"}

// Check returns an error naming the first path of p that cannot be in a
// write boundary: one that is empty, relative or not clean, "/" or the
// user's home or a directory above it as a writable directory (also when
// a symlink resolves to one), a device outside /dev. Paths that do not
// exist pass here; applying the policy refuses them.
func (p Policy) Check() error {
	var homes []string
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		homes = resolved(filepath.Clean(h))
	}
	none := func(string) error { return nil }
	device := func(q string) error {
		if !within(q, "/dev") {
			return errors.New("not under /dev")
		}
		return nil
	}
	if p.Net != nil {
		if err := p.Net.check(); err != nil {
			return err
		}
		if p.Net.Tmp != "" && !slices.Contains(p.Dirs, p.Net.Tmp) {
			return fmt.Errorf("sandbox tmp %q: not among the writable directories", p.Net.Tmp)
		}
		if o := p.Net.Overlay; o != nil {
			if err := o.checkPolicy(p); err != nil {
				return err
			}
		}
	}
	for _, set := range []struct {
		what  string
		paths []string
		check func(resolved string) error
	}{
		{"writable directory", p.Dirs, func(q string) error { return checkDir(q, homes) }},
		{"writable file", p.Files, none},
		{"device", p.Devices, device},
	} {
		for _, path := range set.paths {
			if err := checkPath(path); err != nil {
				return fmt.Errorf("sandbox %s %q: %w", set.what, path, err)
			}
			for _, q := range resolved(path) {
				if err := set.check(q); err != nil {
					if q != path {
						err = fmt.Errorf("it resolves to %q, %w", q, err)
					}
					return fmt.Errorf("sandbox %s %q: %w", set.what, path, err)
				}
			}
		}
	}
	if p.Read != nil {
		return p.Read.check()
	}
	return nil
}

// checkPath checks that path is absolute and clean.
func checkPath(path string) error {
	switch {
	case path == "":
		return errors.New("empty path")
	case strings.ContainsRune(path, 0):
		return errors.New("the path holds a NUL byte")
	case !filepath.IsAbs(path):
		return errors.New("not an absolute path")
	case filepath.Clean(path) != path:
		return fmt.Errorf("not a clean path (%q)", filepath.Clean(path))
	}
	return nil
}

// checkDir refuses dir as a writable directory when it is "/", or one of
// homes (the home directory, and where its symlinks lead) or above it.
func checkDir(dir string, homes []string) error {
	if dir == "/" {
		return errors.New("the root directory would allow writing everything")
	}
	for _, home := range homes {
		if within(home, dir) {
			return errors.New("the home directory (or a directory above it) would allow writing the user's configuration")
		}
	}
	return nil
}

// resolved returns path, and its target with symlinks resolved when that
// is another path.
func resolved(path string) []string {
	out := []string{path}
	if r, err := pathutil.Real(path); err == nil && r != path {
		out = append(out, r)
	}
	return out
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// Shape is what Spawn must know of a policy before it is made: whether
// the launcher starts in namespaces (Policy.Net), and mounts an overlay
// there (Namespaces.Overlay), which decide how it is started.
type Shape struct {
	Namespaces, Overlay bool
}

// Shape returns the shape of p.
func (p Policy) Shape() Shape {
	return Shape{Namespaces: p.Net != nil, Overlay: p.Net != nil && p.Net.Overlay != nil}
}

// messageVersion is the version of the launcher's message: a launcher of
// another version refuses the message rather than misread it. Version 2
// carries the program's environment and the descriptors it keeps, and
// comes on a descriptor instead of an environment variable.
// Version 4 carries the program's directory.
const messageVersion = 4

// message is what Start writes to the launcher.
type message struct {
	V      int    `json:"v"`
	Policy Policy `json:"policy"`
	// ABI is the Landlock ABI Start found (ABI, lowered by ABIEnv): the
	// launcher applies no more than it. 0 means the kernel's.
	ABI int `json:"abi,omitempty"`
	// StatusFD is the descriptor on which the launcher reports a failure
	// (closed on exec); 0 for none: it reports on stderr.
	StatusFD int `json:"status_fd,omitempty"`
	// Files is how many descriptors from 3 on the program keeps (the
	// caller's ExtraFiles); every other one above 2 is closed on exec.
	Files int `json:"files,omitempty"`
	// Env is the program's environment, byte for byte (an environment
	// need not be UTF-8, which a JSON string must be).
	Env [][]byte `json:"env"`
	// ParentDeath is the parent-death signal the caller asked for
	// (SysProcAttr.Pdeathsig), 0 for none, and Parent the caller's
	// process id. The kernel keeps that signal per thread, and the
	// launcher may execute the program from a thread its runtime started
	// later, which has none: the launcher sets it again on that thread.
	ParentDeath int `json:"parent_death,omitempty"`
	Parent      int `json:"parent,omitempty"`
	// Sock, with Policy.Net, is the launcher's end of the socket pair on
	// which it hands workforce the listeners and reports how the
	// program ended (Launched).
	Sock int `json:"sock_fd,omitempty"`
	// Dir is the program's directory, "" for the launcher's own (Start:
	// the command's). A launcher Spawn started early is given it with
	// the policy: the directory may not exist before (the overlay's
	// tree, mounted by the launcher).
	Dir string `json:"dir,omitempty"`
}

// encodeMessage returns m as the launcher reads it.
func encodeMessage(m message) ([]byte, error) {
	return json.Marshal(m)
}

// decodeMessage decodes the launcher's message: one JSON object of this
// version, with no member it does not know.
func decodeMessage(b []byte) (message, error) {
	var m message
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return message{}, fmt.Errorf("invalid launcher message: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return message{}, errors.New("invalid launcher message: data after the message")
	}
	if m.V != messageVersion {
		return message{}, fmt.Errorf("invalid launcher message: version %d, this launcher reads version %d (was workforce replaced during the run?)", m.V, messageVersion)
	}
	if m.ParentDeath < 0 || m.ParentDeath > 64 || (m.ParentDeath > 0 && m.Parent <= 0) {
		return message{}, fmt.Errorf("invalid launcher message: parent-death signal %d of process %d", m.ParentDeath, m.Parent)
	}
	if m.StatusFD < 0 || m.StatusFD > 1<<20 || (m.StatusFD > 0 && m.StatusFD < 3) {
		return message{}, fmt.Errorf("invalid launcher message: status descriptor %d", m.StatusFD)
	}
	if m.Sock < 0 || m.Sock > 1<<20 || (m.Sock > 0 && m.Sock < 3) || (m.Sock > 0) != (m.Policy.Net != nil) {
		return message{}, fmt.Errorf("invalid launcher message: socket descriptor %d", m.Sock)
	}
	if m.Files < 0 || m.Files > 1<<20 || m.ABI < 0 {
		return message{}, fmt.Errorf("invalid launcher message: %d descriptors to keep, ABI %d", m.Files, m.ABI)
	}
	return m, nil
}

// LaunchError is the launcher's report that it could not confine or
// execute the harness: the harness did not run.
type LaunchError struct {
	// Path is the harness's executable.
	Path string
	// Msg is what the launcher reported.
	Msg string
}

func (e *LaunchError) Error() string {
	return fmt.Sprintf("cannot start %s confined: %s", e.Path, e.Msg)
}

// Exit statuses of the launcher when it fails, as shells and env(1) use
// them: it cannot confine or execute the program, or the program is not
// found. Start reports the failure as an error; the statuses are for a
// launcher started without a status descriptor.
const (
	ExitCannotRun = 126
	ExitNotFound  = 127
)
