package confine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needNamespaces skips a test of the namespaces on a system that cannot
// start a program in them.
func needNamespaces(t testing.TB) {
	t.Helper()
	needLandlock(t)
	if err := NamespacesAvailable(""); err != nil {
		t.Skipf("no namespaces here: %v", err)
	}
}

// startNS starts the probe with ops confined by p, env added to its
// environment, its standard output in stdout.
func startNS(t *testing.T, p Policy, env []string, stdout *bytes.Buffer, ops ...[]string) (*exec.Cmd, *Launched, *bytes.Buffer) {
	t.Helper()
	cmd := probeCommand(t, ops...)
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	l, err := Start(cmd, p)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return cmd, l, &stderr
}

// results decodes what the probe printed for n operations.
func results(t *testing.T, stdout, stderr *bytes.Buffer, n int) []string {
	t.Helper()
	var out []string
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != n {
		t.Fatalf("probe printed %q (%v), stderr %s", stdout.String(), err, stderr.String())
	}
	return out
}

// unixListener listens on a Unix socket at path for the test's time.
func unixListener(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

// serveLine accepts one connection on ln and sends the line read on it.
func serveLine(ln net.Listener) <-chan string {
	c := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			c <- "accept: " + err.Error()
			return
		}
		defer conn.Close()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = "read: " + err.Error()
		}
		c <- strings.TrimSpace(line)
	}()
	return c
}

// markedProcesses returns the processes of the system whose arguments
// hold marker.
func markedProcesses(marker string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) && !bytes.Contains(b, []byte("-test.")) {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// TestNamespaces starts the probe in its namespaces and checks what it
// sees: its own uid, not 0, and no capability; process 1 the launcher
// and no process outside; no way out but the listeners handed over;
// /tmp the session's; the hidden daemons and those of the real /tmp out
// of reach; and nothing it left running outlives it. The same
// connections without the namespaces succeed: the test can fail.
func TestNamespaces(t *testing.T) {
	needNamespaces(t)
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	xdg := filepath.Join(dir, "xdg")
	for _, d := range []string{tmp, xdg} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	kept := filepath.Join(dir, "kept.txt")
	writeFile(t, kept, "kept\n")
	// A session bus in the fake runtime directory, a daemon's socket
	// as a file, an agent's in the real /tmp.
	bus, docker := filepath.Join(xdg, "bus"), filepath.Join(dir, "docker.sock")
	realTmp, err := os.MkdirTemp("/tmp", "wf-ns-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(realTmp) })
	agent := filepath.Join(realTmp, "agent.sock")
	// A directory of the program's PATH in the real /tmp stays; another
	// does not.
	pathDir, other := filepath.Join(realTmp, "bin"), filepath.Join(realTmp, "other")
	for _, d := range []string{pathDir, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(d, "tool"), "tool\n")
	}
	abstract := fmt.Sprintf("@wf-ns-%d", time.Now().UnixNano())
	for _, s := range []string{bus, docker, agent, abstract} {
		unixListener(t, s)
	}
	outside, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer outside.Close()
	outsideAddr := outside.Addr().String()
	connections := [][]string{
		{"connect", outsideAddr},
		{"unix", bus},
		{"unix", docker},
		{"unix", agent},
		{"unix", abstract},
	}

	// Without the namespaces, each connection works, and a daemon
	// outlives the probe.
	marker := fmt.Sprintf("wf-ns-marker-%d", time.Now().UnixNano())
	p := Policy{Dirs: []string{dir, tmp}, Devices: TerminalDevices}
	if got := probe(t, p, append(connections, []string{"daemon", marker + "-control"})...); strings.Join(got, " ") != "OK OK OK OK OK OK" {
		t.Fatalf("without namespaces, %q gave %q, want each OK", connections, got)
	}
	time.Sleep(50 * time.Millisecond)
	if left := markedProcesses(marker + "-control"); len(left) == 0 {
		t.Errorf("without namespaces, the daemon did not outlive the probe: the test cannot fail")
	} else {
		for _, l := range left {
			pid, _ := strconv.Atoi(strings.Fields(l)[0])
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	}

	const proxyPort, localPort = 3128, 11434
	p.Net = &Namespaces{ProxyPort: proxyPort, LoopbackPorts: []int{localPort}, Tmp: tmp, Hide: []string{xdg, docker, filepath.Join(dir, "missing")}}
	uid, _ := idsInside(os.Geteuid(), os.Getegid())
	zero := "0000000000000000"
	cases := []struct {
		op   []string
		want string
	}{
		{[]string{"fds"}, ""}, // neither the socket pair nor the status pipe
		{[]string{"uid"}, strconv.Itoa(uid)},
		{[]string{"capeff"}, zero},
		{[]string{"capprm"}, zero},
		{[]string{"capbnd"}, zero},
		{[]string{"procs"}, ""}, // process 1 and the probe
		{[]string{"connect", outsideAddr}, "ECONNREFUSED"},
		{[]string{"connect", "192.0.2.1:80"}, "ENETUNREACH"},
		{[]string{"send", fmt.Sprintf("127.0.0.1:%d", proxyPort), "to the proxy"}, "OK"},
		{[]string{"send", fmt.Sprintf("127.0.0.1:%d", localPort), "to the local server"}, "OK"},
		{[]string{"write", "/tmp/inside.txt"}, "OK"},
		{[]string{"read", kept}, "OK"},
		{[]string{"write", filepath.Join(dir, "written.txt")}, "OK"},
		{[]string{"unix", bus}, "ENOENT"},
		{[]string{"unix", docker}, "ECONNREFUSED"},
		{[]string{"unix", agent}, "ENOENT"},
		{[]string{"read", filepath.Join(pathDir, "tool")}, "OK"},
		{[]string{"read", filepath.Join(other, "tool")}, "ENOENT"},
		{[]string{"unix", abstract}, "ECONNREFUSED"}, // the network namespace's own abstract names
		{[]string{"sh", "test -n \"$(getent passwd \"$(id -u)\")\" && test ! -e /dev/.workforce-passwd"}, "OK"},
		{[]string{"daemon", marker}, "OK"},
		{[]string{"open-read", "/dev/urandom"}, "OK"},
		{[]string{"open-write", "/dev/null"}, "OK"},
		{[]string{"pty"}, "OK"},
		{[]string{"sh", "test -d /dev/shm && test -L /dev/fd && test -e /dev/stdout"}, "OK"},
	}
	// Of the devices, the harness's /dev has the usual ones: no disk.
	for _, dev := range []string{"/dev/loop0", "/dev/sda", "/dev/vda", "/dev/nvme0n1", "/dev/mem", "/dev/kmsg"} {
		if _, err := os.Stat(dev); err == nil {
			cases = append(cases, struct {
				op   []string
				want string
			}{[]string{"open-read", dev}, "ENOENT"})
		}
	}
	var ops [][]string
	for _, c := range cases {
		ops = append(ops, c.op)
	}
	var stdout bytes.Buffer
	cmd, l, stderr := startNS(t, p, []string{"PATH=" + pathDir + ":" + os.Getenv("PATH")}, &stdout, ops...)
	if len(l.Listeners) != 2 || l.Listeners[proxyPort] == nil || l.Listeners[localPort] == nil {
		t.Fatalf("Launched.Listeners = %v, want ports %d and %d", l.Listeners, proxyPort, localPort)
	}
	lines := map[int]<-chan string{proxyPort: serveLine(l.Listeners[proxyPort]), localPort: serveLine(l.Listeners[localPort])}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	got := results(t, &stdout, stderr, len(cases))
	// The probe's process id follows the launcher's threads'.
	if procs := strings.Fields(got[5]); len(procs) != 2 || procs[0] != "1" || procs[1] == "1" {
		t.Errorf("/proc in namespaces lists %q, want process 1 and the probe", got[5])
	}
	cases[5].want = got[5]
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%q in namespaces: %s, want %s", c.op, got[i], c.want)
		}
	}
	for port, want := range map[int]string{proxyPort: "to the proxy", localPort: "to the local server"} {
		select {
		case line := <-lines[port]:
			if line != want {
				t.Errorf("the listener of port %d read %q, want %q", port, line, want)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("the listener of port %d got no connection", port)
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "inside.txt")); err != nil {
		t.Errorf("/tmp/inside.txt written inside is not in the session's tmp: %v", err)
	}
	if _, err := os.Stat("/tmp/inside.txt"); err == nil {
		t.Errorf("/tmp/inside.txt written inside is in the real /tmp")
	}
	e, err := l.Ending()
	if err != nil || e == nil {
		t.Fatalf("Ending() = %v, %v, want the launcher's report", e, err)
	}
	if e.Code != 0 || e.Signal != 0 || len(e.Left) == 0 {
		t.Errorf("Ending() = %+v, want exit 0 and the daemon left", e)
	}
	if left := markedProcesses(marker); len(left) > 0 {
		t.Errorf("processes the probe left outlived it: %q", left)
	}
}

// TestNamespacesSignal: a SIGTERM sent to the process Start started (the
// launcher) reaches the program once; a SIGINT sent to it does not (a
// terminal sends the program its own), nor does it end the launcher.
func TestNamespacesSignal(t *testing.T) {
	needNamespaces(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	var stdout bytes.Buffer
	cmd, _, stderr := startNS(t, Policy{Dirs: []string{dir}, Net: &Namespaces{}}, nil, &stdout, []string{"waitterm", ready})
	waitFile(t, ready)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr)
	}
	if got := results(t, &stdout, stderr, 1); got[0] != "1" {
		t.Errorf("the program got %s SIGTERM, want 1", got[0])
	}
}

// TestNamespacesTerminal: the harness's terminal, on its standard input,
// stays its own in namespaces, though its devpts is not there.
func TestNamespacesTerminal(t *testing.T) {
	needNamespaces(t)
	master, slave, err := openPty()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	cmd := probeCommand(t, []string{"winsize0"}, []string{"pty"})
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, &stdout, &stderr
	l, err := Start(cmd, Policy{Dirs: []string{t.TempDir()}, Devices: TerminalDevices, Net: &Namespaces{}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer l.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	if got := results(t, &stdout, &stderr, 2); got[0] != "OK" || got[1] != "OK" {
		t.Errorf("the window size of its terminal, a terminal of its own: %q, want OK OK", got)
	}
}

// TestNamespacesParentDeath: when workforce's end of the launcher's
// socket closes (workforce died), the program gets its parent-death
// signal.
func TestNamespacesParentDeath(t *testing.T) {
	needNamespaces(t)
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	cmd := probeCommand(t, []string{"waitterm", ready})
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	l, err := Start(cmd, Policy{Dirs: []string{dir}, Net: &Namespaces{}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	waitFile(t, ready)
	l.sock.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	if got := results(t, &stdout, &stderr, 1); got[0] != "1" {
		t.Errorf("the program got %s SIGTERM once workforce's end closed, want 1", got[0])
	}
}

// TestNamespacesKilled: a program killed by a signal is reported so,
// though the launcher, process 1, exits.
func TestNamespacesKilled(t *testing.T) {
	needNamespaces(t)
	var stdout bytes.Buffer
	cmd, l, _ := startNS(t, Policy{Dirs: []string{t.TempDir()}, Net: &Namespaces{}}, nil, &stdout, []string{"killself"})
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGKILL) {
		t.Errorf("the launcher's exit: %v, want status %d", err, 128+int(syscall.SIGKILL))
	}
	e, err := l.Ending()
	if err != nil || e == nil || e.Signal != syscall.SIGKILL || e.Code != 0 || len(e.Left) != 0 {
		t.Errorf("Ending() = %+v, %v, want killed by SIGKILL, nothing left", e, err)
	}
}

// waitFile waits for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

// TestNamespacesAsUser runs the namespace tests again as a plain user
// (nobody) when the tests run as root: the user's id is then mapped to
// itself, where root's is mapped to RootUID.
func TestNamespacesAsUser(t *testing.T) {
	needNamespaces(t)
	if os.Geteuid() != 0 {
		t.Skip("the tests run as a plain user already")
	}
	out := runAsNobody(t, `^TestNamespaces(|Signal|ParentDeath|Killed)$`)
	for _, name := range []string{"TestNamespaces", "TestNamespacesSignal", "TestNamespacesParentDeath", "TestNamespacesKilled"} {
		if !bytes.Contains(out, []byte("--- PASS: "+name+" ")) {
			t.Errorf("%s did not pass as uid %d:\n%s", name, nobody, out)
		}
	}
}

// nobody is the plain user the tests run as when they run as root.
const nobody = 65534

// runAsNobody runs the tests that match pattern as nobody, from a copy
// of the test binary in a directory of their own (their home and
// temporary directory), and returns their verbose output.
func runAsNobody(t *testing.T, pattern string) []byte {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "wf-ns-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "confine.test")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.v", "-test.run", pattern)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests %s as uid %d: %v\n%s", pattern, nobody, err, out)
	}
	return out
}

// TestNamespacesAvailable: the answer is found by trying once per boot
// and kept under the cache directory for that boot; UsernsEnv=off makes
// it unavailable.
func TestNamespacesAvailable(t *testing.T) {
	needNamespaces(t)
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skipf("no boot id: %v", err)
	}
	bootID := strings.TrimSpace(string(boot))
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache", namespacesCache)
	if err := NamespacesAvailable(filepath.Join(dir, "cache")); err != nil {
		t.Fatalf("NamespacesAvailable() = %v, want nil", err)
	}
	if got, err := os.ReadFile(cache); err != nil || string(got) != bootID+"\n\n" {
		t.Errorf("the cache holds %q (%v), want the boot id and no reason", got, err)
	}
	// The answer kept for this boot is the answer, without trying.
	writeFile(t, cache, bootID+"\nkept reason\n")
	var ue *UnavailableNamespacesError
	if err := NamespacesAvailable(filepath.Join(dir, "cache")); !errors.As(err, &ue) || !strings.Contains(err.Error(), "kept reason") {
		t.Errorf("NamespacesAvailable() with a cached failure = %v, want the kept reason", err)
	}
	// One kept for another boot is not.
	writeFile(t, cache, "another-boot\nkept reason\n")
	if err := NamespacesAvailable(filepath.Join(dir, "cache")); err != nil {
		t.Errorf("NamespacesAvailable() with another boot's failure kept = %v, want nil", err)
	}
	if got, _ := os.ReadFile(cache); string(got) != bootID+"\n\n" {
		t.Errorf("the cache holds %q after trying again, want this boot's answer", got)
	}
	t.Setenv(UsernsEnv, "off")
	if err := NamespacesAvailable(""); !errors.As(err, &ue) {
		t.Errorf("NamespacesAvailable() with %s=off = %v, want an *UnavailableNamespacesError", UsernsEnv, err)
	}
}

// TestDecideNamespaces: where namespaces are unavailable, on warns that
// the network and the user's daemons stay reachable and strict refuses.
func TestDecideNamespaces(t *testing.T) {
	needNamespaces(t)
	tests := []struct {
		mode              Mode
		off               bool
		confine, ns       bool
		warning, errorMsg string
	}{
		{On, false, true, true, "", ""},
		{Strict, false, true, true, "", ""},
		{On, true, true, false, "the network and your daemons stay reachable: user namespaces are not available here: " + UsernsEnv + "=off", ""},
		{Strict, true, false, false, "", "sandbox mode strict: cannot keep the network and your daemons from the harness"},
		{Off, true, false, false, "", ""},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%v/off=%v", tc.mode, tc.off), func(t *testing.T) {
			if tc.off {
				t.Setenv(UsernsEnv, "off")
			}
			d, err := DecideNamespaces(tc.mode, "")
			if got := errText(err); tc.errorMsg == "" && err != nil || !strings.Contains(got, tc.errorMsg) {
				t.Fatalf("DecideNamespaces(%v) error %v, want %q", tc.mode, err, tc.errorMsg)
			}
			if d.Confine != tc.confine || d.Namespaces != tc.ns || errText(d.NamespacesWarning) != tc.warning {
				t.Errorf("DecideNamespaces(%v) = %+v, want confine %v, namespaces %v, warning %q", tc.mode, d, tc.confine, tc.ns, tc.warning)
			}
		})
	}
}

// TestRootNamespaces measures what a harness confined in namespaces can
// still do when workforce runs as root, and that RootNamespacesWarning
// says so: root's capabilities are gone (the network, BPF, the host
// name, rebooting, the disks), root's files stay the harness's own.
func TestRootNamespaces(t *testing.T) {
	needNamespaces(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: what is measured here is root's")
	}
	tmp := t.TempDir()
	in, outside := filepath.Join(tmp, "in"), filepath.Join(tmp, "outside")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, outside, "outside\n")
	if err := os.Chmod(outside, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []rootCase{
		// Still possible: the files are the harness's.
		{[]string{"chmod", outside}, "OK", "change their mode"},
		{[]string{"setxattr", outside}, "OK", "extended attributes"},
		{[]string{"read", outside}, "OK", "read those their mode lets their owner read"},
		// Stopped: no capability, no disk.
		{[]string{"netadmin"}, "EPERM", ""},
		{[]string{"bpf"}, "EPERM", ""},
		{[]string{"sethostname"}, "EPERM", ""},
		{[]string{"reboot"}, "EPERM", ""},
		{[]string{"uid"}, strconv.Itoa(RootUID), "user 1000 with no capability"},
	}
	var ops [][]string
	for _, tc := range tests {
		ops = append(ops, tc.op)
	}
	got := probe(t, Policy{Dirs: []string{in}, Devices: TerminalDevices, Net: &Namespaces{}}, ops...)
	for i, tc := range tests {
		if got[i] != tc.want {
			t.Errorf("%q as root, in namespaces: %s, want %s", tc.op, got[i], tc.want)
		}
		if tc.words != "" && !strings.Contains(RootNamespacesWarning, tc.words) {
			t.Errorf("RootNamespacesWarning does not say %q", tc.words)
		}
	}
	t.Setenv(RootWarningEnv, "")
	if d, err := DecideNamespaces(On, ""); err != nil || d.Root != RootNamespacesWarning {
		t.Errorf("DecideNamespaces(on) as root = %+v, %v, want Root %q", d, err, RootNamespacesWarning)
	}
}

// TestOutermost: the paths bound back into the private /tmp.
func TestOutermost(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"none", nil, nil},
		{"outside /tmp", []string{"/home/u/tree", "/tmpfoo/x", "/", "relative"}, nil},
		{"nested", []string{"/tmp/a/b", "/tmp/a", "/tmp/a/b/c"}, []string{"a"}},
		{"siblings with a prefix", []string{"/tmp/ab", "/tmp/a", "/tmp/a-b/c", "/tmp/a/b"}, []string{"a", "a-b/c", "ab"}},
		{"a name sorting before /tmp itself", []string{"/tmp/ ", "/tmp"}, []string{"."}},
		{"twice", []string{"/tmp/x", "/tmp/x"}, []string{"x"}},
		{"/tmp itself", []string{"/tmp/x", "/tmp"}, []string{"."}},
		{"not clean", []string{"/tmp/a/../b"}, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := outermost("/tmp", tc.paths); !slices.Equal(got, tc.want) {
				t.Errorf("outermost(/tmp, %q) = %q, want %q", tc.paths, got, tc.want)
			}
		})
	}
}

// FuzzOutermost: every path below the root is brought by exactly the
// outermost ones, none of which is below another.
func FuzzOutermost(f *testing.F) {
	for _, s := range []string{"/tmp/a\x00/tmp/a/b", "/tmp\x00/x", "/tmp/a-b\x00/tmp/a\x00/tmp/ab", "/tmpx/y\x00../tmp", "/tmp/./a//b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		paths := strings.Split(s, "\x00")
		got := outermost("/tmp", paths)
		for i, rel := range got {
			if rel != "." && (rel != filepath.Clean(rel) || filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../")) {
				t.Fatalf("outermost(%q) gave %q: not a clean path below /tmp", paths, rel)
			}
			for j, other := range got {
				if i != j && (other == "." || rel == other || strings.HasPrefix(rel, other+"/")) {
					t.Fatalf("outermost(%q) gave %q below %q", paths, rel, other)
				}
			}
		}
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				continue
			}
			p = filepath.Clean(p)
			if !within(p, "/tmp") {
				continue
			}
			covered := false
			for _, rel := range got {
				if within(p, filepath.Join("/tmp", rel)) {
					covered = true
				}
			}
			if !covered {
				t.Fatalf("outermost(%q) = %q: %q is not brought back", paths, got, p)
			}
		}
	})
}

// TestWithEntry: root's harness gets a name in /etc/passwd and /etc/group
// where the system has none for its id.
func TestWithEntry(t *testing.T) {
	const line = "workforce:x:1000:1000:workforce:/:/bin/sh"
	tests := []struct {
		name, db string
		want     string
		added    bool
	}{
		{"root only", "root:x:0:0:root:/root:/bin/bash\n", "root:x:0:0:root:/root:/bin/bash\n" + line + "\n", true},
		{"no final newline", "root:x:0:0::/:/bin/sh", "root:x:0:0::/:/bin/sh\n" + line + "\n", true},
		{"empty", "", line + "\n", true},
		{"the id taken", "root:x:0:0::/:/bin/sh\nu:x:1000:1000::/home/u:/bin/sh\n", "root:x:0:0::/:/bin/sh\nu:x:1000:1000::/home/u:/bin/sh\n", false},
		{"the id as a group only", "root:x:0:0::/:/bin/sh\nu:x:1001:1000::/home/u:/bin/sh\n", "root:x:0:0::/:/bin/sh\nu:x:1001:1000::/home/u:/bin/sh\n" + line + "\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, added := withEntry([]byte(tc.db), 1000, line)
			if string(got) != tc.want || added != tc.added {
				t.Errorf("withEntry(%q) = %q, %v; want %q, %v", tc.db, got, added, tc.want, tc.added)
			}
		})
	}
}

// TestNamespacesRootName: root's harness has a user and group name where
// the system has none for its id.
func TestNamespacesRootName(t *testing.T) {
	needNamespaces(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: a user's id is its own, named by the system")
	}
	const id = 1999
	for _, db := range []string{"/etc/passwd", "/etc/group"} {
		b, err := os.ReadFile(db)
		if err != nil {
			t.Skip(err)
		}
		if _, added := withEntry(b, id, ""); !added {
			t.Skipf("%s has an entry for %d", db, id)
		}
	}
	defer func(old int) { rootUID = old }(rootUID)
	rootUID = id
	got := probe(t, Policy{Dirs: []string{t.TempDir()}, Devices: TerminalDevices, Net: &Namespaces{}},
		[]string{"read", "/etc/passwd"},
		[]string{"sh", `test "$(getent passwd 1999)" = "workforce:x:1999:1999:workforce:/:/bin/sh" && test "$(getent group 1999)" = "workforce:x:1999:" && test "$(id -un)" = workforce`})
	if got[0] != "OK" || got[1] != "OK" {
		t.Errorf("the names of root's harness as %d: %q, want OK OK", id, got)
	}
}
