package confine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestMain makes the test binary the launcher (as main does for
// workforce) and the probe, the program the tests confine.
//
// A launcher whose program's argv[0] starts with launcherEnvArg0 first
// writes the environment it was started with to the file that follows:
// what the launcher itself sees, before it executes the program.
func TestMain(m *testing.M) {
	if IsLauncher(os.Args) {
		if len(os.Args) > 4 && strings.HasPrefix(os.Args[4], launcherEnvArg0) {
			data := strings.Join(os.Environ(), "\n")
			if err := os.WriteFile(strings.TrimPrefix(os.Args[4], launcherEnvArg0), []byte(data), 0o644); err != nil {
				os.Exit(3)
			}
		}
		if len(os.Args) > 4 && os.Args[4] == launcherThreadArg0 {
			// Main on a thread other than the one the process started
			// on, as the Go runtime may run it.
			runtime.LockOSThread()
			code := make(chan int)
			go func() {
				runtime.LockOSThread()
				code <- Main(os.Args[2:])
			}()
			os.Exit(<-code)
		}
		os.Exit(Main(os.Args[2:]))
	}
	if os.Getenv(probeEnv) != "" {
		os.Exit(probeMain(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// launcherThreadArg0, as a program's argv[0], makes the test launcher run
// Main on another thread than the one it started on (TestMain).
const launcherThreadArg0 = "launcher-thread"

// launcherEnvArg0, the prefix of a program's argv[0], makes the test
// launcher record its own environment (TestMain).
const launcherEnvArg0 = "launcher-env="

// needLandlock skips a test of the real boundary on a kernel that cannot
// enforce it.
func needLandlock(t testing.TB) {
	t.Helper()
	if abi := kernelABI(); abi < MinABI {
		t.Skipf("the kernel's Landlock ABI is %d, the boundary needs %d", abi, MinABI)
	}
}

// probeCommand returns the command that runs the probe with ops.
func probeCommand(t testing.TB, ops ...[]string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	arg, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, string(arg))
	// GORACE: under -race, no second of sleep at the probe's exit.
	cmd.Env = append(os.Environ(), probeEnv+"=1", "GORACE=atexit_sleep_ms=0")
	return cmd
}

// probe runs ops in the probe confined by p and returns what each gave.
func probe(t *testing.T, p Policy, ops ...[]string) []string {
	t.Helper()
	cmd := probeCommand(t, ops...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if _, err := Start(cmd, p); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	var out []string
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != len(ops) {
		t.Fatalf("probe printed %q (%v), stderr %s", stdout.String(), err, stderr.String())
	}
	return out
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

type boundaryCase struct {
	name string
	op   []string
	want string
	abi  int // the ABI the case needs, when above MinABI
}

// TestBoundary confines the probe to a directory and tries every kind of
// write inside and outside it, and what must keep working.
func TestBoundary(t *testing.T) {
	needLandlock(t)
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in"), filepath.Join(tmp, "out")
	for _, d := range []string{in, out, filepath.Join(in, "sub"), filepath.Join(out, "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"kept", "append", "trunc", "unlink", "renamed", "renamed-out", "linked"} {
		writeFile(t, filepath.Join(in, f), "inside\n")
	}
	for _, f := range []string{"existing", "unlink", "steal", "hardlinked", "symlinked"} {
		writeFile(t, filepath.Join(out, f), "outside\n")
	}
	// Made before the confinement: a symlink and a hard link in the tree
	// to files outside.
	if err := os.Symlink(filepath.Join(out, "symlinked"), filepath.Join(in, "symlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(out, "hardlinked"), filepath.Join(in, "hardlink")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Dirs: []string{in}, Devices: TerminalDevices}
	I := func(name string) string { return filepath.Join(in, name) }
	O := func(name string) string { return filepath.Join(out, name) }

	tests := []boundaryCase{
		// Inside: every kind of write.
		{"create inside", []string{"write", I("new")}, "OK", 0},
		{"append inside", []string{"append", I("append")}, "OK", 0},
		{"truncate inside", []string{"truncate", I("trunc")}, "OK", 0},
		{"mkdir inside", []string{"mkdir", I("dir")}, "OK", 0},
		{"symlink inside", []string{"symlink", "anywhere", I("sym")}, "OK", 0},
		{"mkfifo inside", []string{"mkfifo", I("fifo")}, "OK", 0},
		{"bind a Unix socket inside", []string{"socket", I("sock")}, "OK", 0},
		// No device node, even inside (as root, one would open the
		// disk under the file system): Landlock's EACCES, before the
		// capability check's EPERM.
		{"mknod a char device inside", []string{"mknod", "c", I("null")}, "EACCES", 0},
		{"mknod a block device inside", []string{"mknod", "b", I("loop0")}, "EACCES", 0},
		{"unlink inside", []string{"unlink", I("unlink")}, "OK", 0},
		{"rename across directories inside", []string{"rename", I("renamed"), I("sub/renamed")}, "OK", 0},
		{"link across directories inside", []string{"link", I("linked"), I("sub/linked")}, "OK", 0},
		{"grandchild shell writes inside", []string{"sh", "echo x > " + I("grandchild")}, "OK", 0},
		// Outside: every kind of write fails.
		{"create outside", []string{"write", O("new")}, "EACCES", 0},
		{"overwrite outside", []string{"write", O("existing")}, "EACCES", 0},
		{"append outside", []string{"append", O("existing")}, "EACCES", 0},
		{"truncate outside", []string{"truncate", O("existing")}, "EACCES", 0},
		{"mkdir outside", []string{"mkdir", O("newdir")}, "EACCES", 0},
		{"rmdir outside", []string{"rmdir", O("dir")}, "EACCES", 0},
		{"symlink outside", []string{"symlink", "anywhere", O("sym")}, "EACCES", 0},
		{"mkfifo outside", []string{"mkfifo", O("fifo")}, "EACCES", 0},
		{"unlink outside", []string{"unlink", O("unlink")}, "EACCES", 0},
		{"rename outside within outside", []string{"rename", O("existing"), O("dir/existing")}, "EACCES", 0},
		// Across the boundary: EACCES when the side outside would lose
		// or gain a name (removing or making a file there), EXDEV when
		// only the Refer right is missing (a link from outside into the
		// tree), so that a program falls back to copying, which then
		// reads the file and writes the copy inside.
		{"rename from outside into the tree", []string{"rename", O("steal"), I("stolen")}, "EACCES", 0},
		{"rename from the tree to outside", []string{"rename", I("renamed-out"), O("escaped")}, "EACCES", 0},
		{"hard link from outside into the tree", []string{"link", O("existing"), I("hard-new")}, "EXDEV", 0},
		{"hard link from the tree to outside", []string{"link", I("kept"), O("hard-new")}, "EACCES", 0},
		// Through links in the tree.
		{"write through a symlink in the tree", []string{"append", I("symlink")}, "EACCES", 0},
		{"truncate through a symlink in the tree", []string{"truncate", I("symlink")}, "EACCES", 0},
		// Landlock checks the path, and this path is inside: a hard link
		// made before the confinement writes the real file. Hence the
		// copy never hard-links.
		{"write through a hard link made before", []string{"append", I("hardlink")}, "OK", 0},
		{"grandchild writes outside", []string{"child", "write", O("grandchild")}, "EACCES", 0},
		{"grandchild shell writes outside", []string{"sh", "echo x > " + O("grandchild-sh")}, "failed", 0},
		// What keeps working.
		{"write /dev/null", []string{"write", "/dev/null"}, "OK", 0},
		{"read outside", []string{"read", O("existing")}, "OK", 0},
		{"read the tree's symlink to outside", []string{"read", I("symlink")}, "OK", 0},
		{"execute a binary", []string{"exec", "/bin/sh", "-c", "exit 0"}, "OK", 0},
		{"make and use a pseudo-terminal", []string{"pty"}, "OK", 0},
		// ioctl(2) on another device is denied (ABI 5).
		{"ioctl on another device", []string{"ioctl", "/dev/urandom"}, "EACCES", 5},
		// Landlock does not restrict metadata.
		{"chmod outside (not restricted)", []string{"chmod", O("existing")}, "OK", 0},
		// Signals: its own children, not the processes outside its
		// domain (ABI 6), the test process here, workforce in a run.
		{"signal its own child", []string{"kill-child"}, "OK", 0},
		{"signal the parent", []string{"kill-parent"}, "EPERM", SignalScopeABI},
		// The launcher's message and status descriptors stay its own,
		// and so do the pipes this process holds: the probe inherits
		// no descriptor above 2 (the caller passes none).
		{"status descriptor", []string{"pipes"}, "", 0},
	}
	tests = slices.DeleteFunc(tests, func(tc boundaryCase) bool { return tc.abi > ABI() })
	ops := make([][]string, len(tests))
	for i, tc := range tests {
		ops[i] = tc.op
	}
	got := probe(t, p, ops...)
	for i, tc := range tests {
		if got[i] != tc.want {
			t.Errorf("%s: %q gave %s, want %s", tc.name, tc.op, got[i], tc.want)
		}
	}
	// The files outside are as they were, but for the hard link's.
	for _, f := range []string{"existing", "unlink", "steal", "symlinked"} {
		if b, err := os.ReadFile(O(f)); err != nil || string(b) != "outside\n" {
			t.Errorf("%s after the run: %q, %v; want it unchanged", O(f), b, err)
		}
	}
	if b, _ := os.ReadFile(O("hardlinked")); string(b) != "outside\nappended\n" {
		t.Errorf("the hard link's target: %q, want the write through the link", b)
	}
	for _, f := range []string{"new", "newdir", "sym", "fifo", "escaped", "grandchild", "grandchild-sh", "hard-new"} {
		if _, err := os.Lstat(O(f)); err == nil {
			t.Errorf("%s exists after the run", O(f))
		}
	}
	if b, err := os.ReadFile(I("grandchild")); err != nil || string(b) != "x\n" {
		t.Errorf("the grandchild's file inside: %q, %v", b, err)
	}
}

// TestSameProcess checks that the harness is the process Start started
// (the launcher executes it in place), so that the caller's signals reach
// it, and that descriptors the caller passes stay where they were.
func TestSameProcess(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	extra, err := os.Create(filepath.Join(dir, "extra"))
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	cmd := exec.Command("/bin/sh", "-c", `echo $$ > pid; readlink /proc/$$/fd/3 > fd3; exec sleep 60`)
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{extra}
	if _, err := Start(cmd, Policy{Dirs: []string{dir}}); err != nil {
		t.Fatal(err)
	}
	var pid []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if pid, _ = os.ReadFile(filepath.Join(dir, "fd3")); len(pid) > 0 {
			break
		}
	}
	pid, _ = os.ReadFile(filepath.Join(dir, "pid"))
	if got := strings.TrimSpace(string(pid)); got != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("the harness's pid is %q, Start started %d", got, cmd.Process.Pid)
	}
	if fd3, _ := os.ReadFile(filepath.Join(dir, "fd3")); strings.TrimSpace(string(fd3)) != extra.Name() {
		t.Errorf("descriptor 3 of the harness is %q, want %s", fd3, extra.Name())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Wait = %v, want the harness killed by SIGTERM", err)
	}
}

// TestStartRefuses checks that Start fails, and the program never runs,
// when the policy cannot be applied or the system cannot confine.
func TestStartRefuses(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "file"), "")
	shm, err := os.CreateTemp("/dev/shm", "confine-test-")
	if err != nil {
		t.Fatal(err)
	}
	shm.Close()
	defer os.Remove(shm.Name())
	out := shm.Name() + "-link"
	if err := os.Symlink(dir, out); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(out)
	tests := []struct {
		name string
		p    Policy
		abi  string // ABIEnv, when set
		want string
		typ  any
	}{
		{"missing directory", Policy{Dirs: []string{filepath.Join(dir, "missing")}}, "", "missing", &LaunchError{}},
		{"file as directory", Policy{Dirs: []string{filepath.Join(dir, "file")}}, "", "not a directory", &LaunchError{}},
		{"directory as file", Policy{Files: []string{dir}}, "", "a directory, not a file", &LaunchError{}},
		{"not a device", Policy{Devices: []string{shm.Name()}}, "", "not a device", &LaunchError{}},
		{"a device outside /dev", Policy{Devices: []string{out}}, "", "resolves to " + strconv.Quote(dir) + ", not under /dev", nil},
		{"the root", Policy{Dirs: []string{"/"}}, "", "the root directory", nil},
		{"no Landlock", Policy{Dirs: []string{dir}}, "0", "no Landlock", &UnavailableError{}},
		{"ABI 2", Policy{Dirs: []string{dir}}, "2", "ABI 2", &UnavailableError{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.abi != "" {
				t.Setenv(ABIEnv, tc.abi)
			}
			marker := filepath.Join(dir, "ran")
			cmd := exec.Command("/bin/sh", "-c", "echo ran > "+marker)
			_, err := Start(cmd, tc.p)
			if err == nil {
				cmd.Wait()
				t.Fatalf("Start(%+v) = nil, want an error", tc.p)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start(%+v) = %v, want it to say %q", tc.p, err, tc.want)
			}
			switch tc.typ.(type) {
			case *LaunchError:
				var le *LaunchError
				if !errors.As(err, &le) || le.Path != "/bin/sh" {
					t.Errorf("Start(%+v) = %#v, want a *LaunchError for /bin/sh", tc.p, err)
				}
			case *UnavailableError:
				var ue *UnavailableError
				if !errors.As(err, &ue) {
					t.Errorf("Start(%+v) = %#v, want an *UnavailableError", tc.p, err)
				}
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the program ran")
			}
		})
	}
}

// TestLauncher runs the launcher as main does, without Start: its
// message on descriptor 3, from a file. It refuses to run without its
// message or below MinABI, with a clear error.
func TestLauncher(t *testing.T) {
	needLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	msg := func(m message) string {
		b, err := encodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	p := Policy{Dirs: []string{dir}}
	good := msg(message{V: messageVersion, Policy: p, Env: [][]byte{[]byte("PATH=/usr/bin:/bin")}})
	sh := []string{"/bin/sh", "sh", "-c", "echo ran > " + marker}
	tests := []struct {
		name   string
		msg    string // on descriptor 3; none when empty
		env    []string
		args   []string
		status int
		stderr string
	}{
		{"confined", good, nil, append([]string{"3"}, sh...), 0, ""},
		{"looked up on the program's PATH", good, nil, []string{"3", "sh", "sh", "-c", "echo ran > " + marker}, 0, ""},
		{"not on the program's PATH", msg(message{V: messageVersion, Policy: p}), []string{"PATH=/usr/bin:/bin"}, []string{"3", "sh", "sh", "-c", "echo ran > " + marker}, ExitNotFound, "executable file not found"},
		{"no message", good, nil, append([]string{"9"}, sh...), ExitCannotRun, "message descriptor 9: bad file descriptor"},
		{"not a descriptor", good, nil, append([]string{"three"}, sh...), ExitCannotRun, `message descriptor "three"`},
		{"a standard stream", good, nil, append([]string{"0"}, sh...), ExitCannotRun, `message descriptor "0"`},
		{"not JSON", "{", nil, append([]string{"3"}, sh...), ExitCannotRun, "invalid launcher message"},
		{"another version", `{"v":1,"policy":{}}`, nil, append([]string{"3"}, sh...), ExitCannotRun, "version 1"},
		{"unknown member", `{"v":4,"policy":{"net":[]}}`, nil, append([]string{"3"}, sh...), ExitCannotRun, `unknown field "net"`},
		{"a parent-death signal without its parent", `{"v":4,"policy":{},"parent_death":15}`, nil, append([]string{"3"}, sh...), ExitCannotRun, "parent-death signal 15 of process 0"},
		{"its parent already gone", msg(message{V: messageVersion, Policy: p, ParentDeath: 15, Parent: 1 << 22}), nil, append([]string{"3"}, sh...), ExitCannotRun, "exited before the harness started"},
		{"keeps its own descriptor", msg(message{V: messageVersion, Policy: p, Files: 1}), nil, append([]string{"3"}, sh...), ExitCannotRun, "1 descriptors to keep from 3"},
		{"ABI below the minimum", good, []string{ABIEnv + "=2"}, append([]string{"3"}, sh...), ExitCannotRun, "ABI 2"},
		{"the message's ABI below the minimum", msg(message{V: messageVersion, Policy: p, ABI: 2}), nil, append([]string{"3"}, sh...), ExitCannotRun, "ABI 2"},
		{"in the message's directory", msg(message{V: messageVersion, Policy: p, Env: [][]byte{[]byte("PATH=/usr/bin:/bin")}, Dir: dir}), nil, []string{"3", "/bin/sh", "sh", "-c", "echo ran > ran"}, 0, ""},
		{"the message's directory missing", msg(message{V: messageVersion, Policy: p, Dir: filepath.Join(dir, "missing")}), nil, append([]string{"3"}, sh...), ExitCannotRun, "cannot change to the directory"},
		{"no program", good, nil, []string{"3"}, ExitCannotRun, "usage"},
		{"program missing", good, nil, []string{"3", filepath.Join(dir, "missing"), "missing"}, ExitNotFound, "cannot execute"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			cmd := exec.Command(exe, append([]string{LauncherArg}, tc.args...)...)
			cmd.Env = tc.env
			if cmd.Env == nil {
				cmd.Env = []string{}
			}
			if tc.msg != "" {
				f := filepath.Join(t.TempDir(), "message")
				writeFile(t, f, tc.msg)
				m, err := os.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				cmd.ExtraFiles = []*os.File{m}
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			status := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tc.status || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("launcher exited %d with %q, want %d and %q", status, stderr.String(), tc.status, tc.stderr)
			}
			_, err = os.Stat(marker)
			if ran := err == nil; ran != (tc.status == 0) {
				t.Errorf("the program ran: %v, want %v", ran, tc.status == 0)
			}
		})
	}
}

// TestLauncherAborted: a launcher whose message is empty (Spawn's,
// called off by Pending.Abort, or whose workforce died) exits with
// ExitCannotRun and says nothing, and runs nothing.
func TestLauncherAborted(t *testing.T) {
	needLandlock(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	defer r.Close()
	cmd := exec.Command(exe, LauncherArg, "3", "/bin/sh", "sh", "-c", "echo ran > "+marker)
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{r}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitCannotRun || stderr.Len() > 0 {
		t.Errorf("launcher with an empty message: %v, stderr %q; want exit %d and nothing said", err, stderr.String(), ExitCannotRun)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the program ran")
	}
}

// TestDecide checks the modes on this kernel and on one that plays
// having no Landlock, or an old one (ABIEnv).
func TestDecide(t *testing.T) {
	needLandlock(t)
	tests := []struct {
		abi     string
		mode    Mode
		confine bool
		warn    string
		err     string
	}{
		{"", On, true, "", ""},
		{"", Strict, true, "", ""},
		{"", Off, false, "", ""},
		{"0", On, false, "no Landlock", ""},
		{"0", Strict, false, "", "no Landlock"},
		{"0", Off, false, "", ""},
		{"2", On, false, "ABI 2", ""},
		{"2", Strict, false, "", "ABI 2"},
		{"3", Strict, true, "", ""},
		{"junk", Strict, false, "", "no Landlock"},
		{"99", Strict, true, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.abi+"/"+tc.mode.String(), func(t *testing.T) {
			if tc.abi != "" {
				t.Setenv(ABIEnv, tc.abi)
			}
			d, err := Decide(tc.mode)
			if d.Confine != tc.confine {
				t.Errorf("Decide(%v).Confine = %v, want %v", tc.mode, d.Confine, tc.confine)
			}
			if got := errText(d.Warning); !(tc.warn == "" && got == "" || tc.warn != "" && strings.Contains(got, tc.warn)) {
				t.Errorf("Decide(%v).Warning = %q, want %q", tc.mode, got, tc.warn)
			}
			if got := errText(err); !(tc.err == "" && got == "" || tc.err != "" && strings.Contains(got, tc.err)) {
				t.Errorf("Decide(%v) error = %q, want %q", tc.mode, got, tc.err)
			}
		})
	}
	if t.Setenv(ABIEnv, "99"); ABI() != kernelABI() {
		t.Errorf("ABI() = %d with %s=99, want the kernel's %d: the hook only lowers it", ABI(), ABIEnv, kernelABI())
	}
}

// TestHandledRights checks that from MinABI on, every write right the
// kernel knows is handled, and no read right ever is.
func TestHandledRights(t *testing.T) {
	reads := landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir)
	for abi := 0; abi <= 12; abi++ {
		h := handledRights(abi)
		if h&reads != 0 {
			t.Errorf("ABI %d handles read rights %v", abi, h&reads)
		}
		want := writeRights
		if abi > 0 {
			want &= presets[min(abi, len(presets))-1].HandledAccessFS
		} else {
			want = 0
		}
		if h != want {
			t.Errorf("handledRights(%d) = %v, want %v", abi, h, want)
		}
		if abi >= MinABI && h&landlock.AccessFSSet(ll.AccessFSTruncate|ll.AccessFSRefer|ll.AccessFSWriteFile|ll.AccessFSMakeReg) !=
			landlock.AccessFSSet(ll.AccessFSTruncate|ll.AccessFSRefer|ll.AccessFSWriteFile|ll.AccessFSMakeReg) {
			t.Errorf("handledRights(%d) = %v: a write boundary needs truncate, refer, write_file and make_reg", abi, h)
		}
	}
	if h := handledRights(5); h&landlock.AccessFSSet(ll.AccessFSIoctlDev) == 0 {
		t.Errorf("handledRights(5) = %v, want ioctl_dev handled", h)
	}
}

// TestParentDeathSignal: the program keeps the parent-death signal its
// caller asked for, also when the launcher executes it from another
// thread than the one the fork gave the signal to (the kernel keeps it
// per thread; a harness whose workforce was killed never heard of it).
func TestParentDeathSignal(t *testing.T) {
	needLandlock(t)
	for _, argv0 := range []string{"probe", launcherThreadArg0} {
		t.Run(argv0, func(t *testing.T) {
			cmd := probeCommand(t, []string{"pdeathsig"})
			cmd.Args[0] = argv0
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if _, err := Start(cmd, Policy{Dirs: []string{t.TempDir()}}); err != nil {
				t.Fatalf("Start: %v", err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("probe: %v\n%s", err, stderr.String())
			}
			if got, want := strings.TrimSpace(stdout.String()), fmt.Sprintf(`["%d"]`, syscall.SIGTERM); got != want {
				t.Errorf("the program's parent-death signal: %s, want %s", got, want)
			}
		})
	}
}
