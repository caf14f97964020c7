package confine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// UsernsEnv is the environment variable that, set to "off", makes
// NamespacesAvailable report that this system cannot start a harness in
// its own namespaces: a hook for tests, as ABIEnv is for Landlock.
const UsernsEnv = "WORKFORCE_USERNS"

// RootUID is the user and group id a harness gets inside its user
// namespace when workforce runs as root: root outside is this id inside,
// never 0, and has no capability there. Any id but 0 would do; 1000 is
// the first of a usual system's users, which tools expect of a user.
const RootUID = 1000

// RootNamespacesWarning says what a harness confined in its namespaces
// can still do when workforce runs as root, measured
// (TestRootNamespaces): it has no capability and is RootUID there, but
// its files are root's, and root owns most of the system's.
const RootNamespacesWarning = "workforce runs as root: in its namespaces the harness is user " + "1000 with no capability," +
	" but every file root owns is its own: it can change their mode and extended attributes, and read those their mode lets their owner read (/etc/shadow)" +
	" unless read rules deny them; run workforce as a user to keep the agent from root's files (" + RootWarningEnv + "=off silences this)"

// Covered reports whether path is in a directory the harness's
// namespaces replace with one of their own, /tmp (the session's tmp) or
// /dev/shm (a tmpfs of the harness's /dev): a path there that the
// harness needs must be among the policy's paths or Namespaces.Keep to
// stay reachable at its own path.
func Covered(path string) bool {
	return strings.HasPrefix(path, "/tmp/") || strings.HasPrefix(path, "/dev/shm/")
}

// EndGrace is how long the processes a harness leaves running in its
// PID namespace have to exit after SIGTERM when it exits, before the
// launcher kills them.
const EndGrace = 2 * time.Second

// Proc is a process the launcher ended in the harness's PID namespace.
type Proc struct {
	// PID is its process id in the namespace.
	PID int `json:"pid"`
	// Comm is the command name it gave itself: the agent's to choose,
	// so quote it when printing.
	Comm string `json:"comm"`
}

// Ending is how a program started in namespaces (Policy.Net) ended, as
// the launcher, process 1 there, reported it.
type Ending struct {
	// Code is the program's exit code; 0 when a signal killed it.
	Code int `json:"code"`
	// Signal is the signal that killed it; 0 when it exited.
	Signal syscall.Signal `json:"signal,omitempty"`
	// Left are the processes still running when it exited, which the
	// launcher then ended (SIGTERM, SIGKILL EndGrace later).
	Left []Proc `json:"left,omitempty"`
}

// Launched is what Start started.
type Launched struct {
	// Listeners are the listening sockets the launcher made on 127.0.0.1
	// inside the network namespace (Namespaces.ProxyPort and
	// LoopbackPorts), by port: a program inside connects to them, and
	// the caller serves them (until it does, a connection waits). Nil
	// without Policy.Net.
	Listeners map[int]net.Listener

	// sock is workforce's end of the socket pair: the launcher reports
	// on it how the program ended, and takes its closing for the end
	// of workforce.
	sock   *os.File
	ending *Ending
	err    error
	read   bool
}

// Ending returns how the program ended, once the launcher exited (after
// exec.Cmd.Wait): nil, with no error, without Policy.Net, where the
// program is the process started; an error when the launcher exited
// without saying (it was killed).
func (l *Launched) Ending() (*Ending, error) {
	if l == nil || l.sock == nil {
		return nil, nil
	}
	if !l.read {
		l.read = true
		l.ending, l.err = readEnding(l.sock)
	}
	return l.ending, l.err
}

// readEnding reads the launcher's last report from sock.
func readEnding(sock *os.File) (*Ending, error) {
	buf := make([]byte, 1<<20)
	n, err := sock.Read(buf)
	if err != nil || n == 0 {
		return nil, errors.New("the launcher exited without reporting how the program ended (was it killed?)")
	}
	var e Ending
	dec := json.NewDecoder(bytes.NewReader(buf[:n]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("invalid report from the launcher: %w", err)
	}
	return &e, nil
}

// Close closes the listeners and workforce's end of the socket pair: the
// launcher takes it for workforce's end and stops the program. Call it
// once the program ended.
func (l *Launched) Close() error {
	if l == nil {
		return nil
	}
	for _, ln := range l.Listeners {
		_ = ln.Close()
	}
	if l.sock != nil {
		return l.sock.Close()
	}
	return nil
}

// UnavailableNamespacesError says why this system cannot start a
// harness in its own namespaces.
type UnavailableNamespacesError struct {
	// Reason is what failed.
	Reason string
}

func (e *UnavailableNamespacesError) Error() string {
	return "user namespaces are not available here: " + e.Reason
}

// namespacesCache is the file under the cache directory that keeps
// NamespacesAvailable's answer for the boot it names.
const namespacesCache = "namespaces"

// NamespacesAvailable returns nil when this system can start a harness in
// its own namespaces (Policy.Net), and an *UnavailableNamespacesError
// saying why not otherwise (a kernel setting, an LSM, a container's
// seccomp profile). It finds out by trying: a child started in the
// namespaces mounts /proc and brings loopback up. The answer is kept in
// the file "namespaces" under cacheDir for the boot
// (/proc/sys/kernel/random/boot_id); an empty cacheDir keeps nothing.
// UsernsEnv set to "off" makes it report unavailable without trying.
func NamespacesAvailable(cacheDir string) error {
	if os.Getenv(UsernsEnv) == "off" {
		return &UnavailableNamespacesError{Reason: UsernsEnv + "=off"}
	}
	if err := Available(); err != nil {
		return &UnavailableNamespacesError{Reason: err.Error()}
	}
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	bootID := strings.TrimSpace(string(boot))
	cache := ""
	if cacheDir != "" && bootID != "" {
		cache = filepath.Join(cacheDir, namespacesCache)
		if id, reason, ok := readNamespacesCache(cache); ok && id == bootID {
			if reason == "" {
				return nil
			}
			return &UnavailableNamespacesError{Reason: reason}
		}
	}
	err := probeNamespaces()
	if cache != "" {
		reason := ""
		if err != nil {
			reason = strings.ReplaceAll(err.Error(), "\n", " ")
		}
		if os.MkdirAll(cacheDir, 0o700) == nil {
			tmp := cache + fmt.Sprintf(".%d", os.Getpid())
			if os.WriteFile(tmp, []byte(bootID+"\n"+reason+"\n"), 0o600) == nil {
				_ = os.Rename(tmp, cache)
			}
		}
	}
	if err != nil {
		return &UnavailableNamespacesError{Reason: err.Error()}
	}
	return nil
}

// readNamespacesCache reads the boot id and the reason (empty: available)
// the cache file at path keeps.
func readNamespacesCache(path string) (bootID, reason string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() && len(lines) < 3 {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 2 || lines[0] == "" {
		return "", "", false
	}
	return lines[0], lines[1], true
}

// DecideNamespaces is Decide, and what m means for the namespaces
// (Policy.Net) on this system, cacheDir being NamespacesAvailable's:
// where the harness is confined, Namespaces says that it can run in its
// own; where it cannot, On carries the reason as NamespacesWarning (the
// network and the user's daemons stay reachable) and Strict returns it as
// its error.
func DecideNamespaces(m Mode, cacheDir string) (Decision, error) {
	d, err := Decide(m)
	if err != nil || !d.Confine {
		return d, err
	}
	switch err := NamespacesAvailable(cacheDir); {
	case err == nil:
		d.Namespaces = true
		if d.Root != "" {
			d.Root = RootNamespacesWarning
		}
	case m == Strict:
		return Decision{}, fmt.Errorf("sandbox mode strict: cannot keep the network and your daemons from the harness: %w", err)
	default:
		d.NamespacesWarning = fmt.Errorf("the network and your daemons stay reachable: %w", err)
	}
	return d, nil
}
