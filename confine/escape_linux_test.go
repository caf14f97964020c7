package confine

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// The ways out of the boundary that are not writes by path: code the
// launcher runs before Landlock applies, descriptors it inherits, signals.

// preloadSource is a shared object whose constructor appends the process
// id to the files $PRELOAD_OUTSIDE and $PRELOAD_INSIDE name: it runs in
// every dynamically linked process that loads it, before main.
const preloadSource = `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void mark(void) {
	const char *names[] = {"PRELOAD_OUTSIDE", "PRELOAD_INSIDE"};
	for (int i = 0; i < 2; i++) {
		const char *path = getenv(names[i]);
		FILE *f;
		if (path == NULL || (f = fopen(path, "a")) == NULL)
			continue;
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
}
`

// buildPreload compiles preloadSource into a shared object, or skips the
// test when this machine has no C compiler.
func buildPreload(t *testing.T) string {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "cc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler to build the shared object with (%v)", err)
	}
	dir := t.TempDir()
	src, so := filepath.Join(dir, "mark.c"), filepath.Join(dir, "mark.so")
	writeFile(t, src, preloadSource)
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Fatalf("%s -shared: %v\n%s", cc, err, out)
	}
	return so
}

// interpreter returns the program interpreter (PT_INTERP) of the
// executable file path, "" for a statically linked one.
func interpreter(t *testing.T, path string) string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				t.Fatal(err)
			}
			return strings.TrimRight(string(b), "\x00")
		}
	}
	return ""
}

// TestPreload starts the probe confined with LD_PRELOAD naming a shared
// object whose constructor writes a file outside the policy and one
// inside: the launcher (this test binary, dynamically linked as workforce
// is where a C compiler built it) must not load it, so nothing is written
// outside, and the harness loads it confined, once.
func TestPreload(t *testing.T) {
	needLandlock(t)
	so := buildPreload(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if interp := interpreter(t, exe); interp == "" {
		t.Skipf("the test binary is statically linked (built without cgo): no loader reads LD_PRELOAD in the launcher")
	} else {
		t.Logf("the launcher is dynamically linked, interpreter %s", interp)
	}
	tmp := t.TempDir()
	in, out := filepath.Join(tmp, "in"), filepath.Join(tmp, "out")
	for _, d := range []string{in, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Unconfined, the shared object runs in this binary: the test means
	// something.
	control := filepath.Join(out, "control")
	cmd := probeCommand(t, []string{"pid"})
	cmd.Env = append(cmd.Env, "LD_PRELOAD="+so, "PRELOAD_OUTSIDE="+control)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("probe with LD_PRELOAD: %v\n%s", err, b)
	}
	if _, err := os.Stat(control); err != nil {
		// A temporary directory mounted noexec, say: the loader says
		// why on stderr.
		t.Skipf("the loader did not run the shared object in this binary, unconfined (%v): %s", err, b)
	}

	outside, inside := filepath.Join(out, "marker"), filepath.Join(in, "marker")
	cmd = probeCommand(t, []string{"pid"})
	cmd.Env = append(cmd.Env, "LD_PRELOAD="+so, "PRELOAD_OUTSIDE="+outside, "PRELOAD_INSIDE="+inside)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if _, err := Start(cmd, Policy{Dirs: []string{in}, Devices: TerminalDevices}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	if b, err := os.ReadFile(outside); err == nil {
		t.Errorf("the shared object wrote %s outside the policy (process %s): the launcher loaded it unconfined", outside, strings.TrimSpace(string(b)))
	}
	b, err = os.ReadFile(inside)
	if want := strconv.Itoa(cmd.Process.Pid) + "\n"; string(b) != want {
		t.Errorf("the shared object wrote %q (%v) inside, want %q: loaded once, by the harness", b, err, want)
	}
}

// TestLauncherEnvironment checks that the launcher starts with an empty
// environment, and that the program gets cmd's environment whole, byte
// for byte: variables larger together than one environment string may be
// (128 KiB), a value that is not UTF-8.
func TestLauncherEnvironment(t *testing.T) {
	needLandlock(t)
	dir := t.TempDir()
	seen := filepath.Join(dir, "launcher-env")
	big := strings.Repeat("x", 100<<10)
	ops := [][]string{{"environ"}, {"envsum", "BIG7"}, {"envsum", "NOT_UTF8"}, {"envsum", "LD_LIBRARY_PATH"}}
	cmd := probeCommand(t, ops...)
	cmd.Args[0] = launcherEnvArg0 + seen
	cmd.Env = append(cmd.Env, "NOT_UTF8=\xff\xfe", "LD_LIBRARY_PATH="+filepath.Join(dir, "lib"))
	for i := range 8 {
		cmd.Env = append(cmd.Env, fmt.Sprintf("BIG%d=%s", i, big))
	}
	env := cmd.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if _, err := Start(cmd, Policy{Dirs: []string{dir}}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	// Empty; under -race, GORACE alone (launcherEnv).
	if b, err := os.ReadFile(seen); err != nil || string(b) != strings.Join(launcherEnv(), "\n") {
		var names []string
		for _, kv := range strings.Split(string(b), "\n") {
			k, _, _ := strings.Cut(kv, "=")
			names = append(names, k)
		}
		t.Errorf("the launcher's environment holds %s (%v); want it empty", strings.Join(names, " "), err)
	}
	var got []string
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || len(got) != len(ops) {
		t.Fatalf("probe printed %q (%v)", stdout.String(), err)
	}
	sum := func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }
	want := []string{sum(strings.Join(env, "\x00")), sum(big), sum("\xff\xfe"), sum(filepath.Join(dir, "lib"))}
	for i, op := range ops {
		if got[i] != want[i] {
			t.Errorf("%q in the program: %s, want %s", op, got[i], want[i])
		}
	}
}

// TestInheritedDescriptors checks that a descriptor open for writing on a
// file outside the policy, which workforce inherited without close-on-exec,
// is not the program's; one the caller passes (ExtraFiles) is.
func TestInheritedDescriptors(t *testing.T) {
	needLandlock(t)
	tmp := t.TempDir()
	in, outside, passed := filepath.Join(tmp, "in"), filepath.Join(tmp, "outside"), filepath.Join(tmp, "passed")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	// As a caller's `workforce run 7>outside` leaves it: open, not
	// close-on-exec, at a number above the ones Start passes.
	fd, err := unix.Open(outside, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	const leaked = 100
	if err := unix.Dup2(fd, leaked); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	defer unix.Close(leaked)
	extra, err := os.Create(passed)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	cmd := probeCommand(t, []string{"writefd", strconv.Itoa(leaked)}, []string{"writefd", "3"}, []string{"pipes"})
	cmd.ExtraFiles = []*os.File{extra}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if _, err := Start(cmd, Policy{Dirs: []string{in}}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	var got []string
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil || len(got) != 3 {
		t.Fatalf("probe printed %q (%v)", stdout.String(), err)
	}
	if got[0] != "EBADF" {
		t.Errorf("writing the inherited descriptor %d: %s, want EBADF (closed)", leaked, got[0])
	}
	if got[1] != "OK" {
		t.Errorf("writing descriptor 3, passed in ExtraFiles: %s, want OK", got[1])
	}
	if got[2] != "" {
		t.Errorf("the program holds the pipes %s, want none (the launcher's message and status are its own)", got[2])
	}
	if b, _ := os.ReadFile(outside); len(b) > 0 {
		t.Errorf("%s was written through the inherited descriptor: %q", outside, b)
	}
}

// TestSignalScope checks that on a kernel with the signal scope the
// program cannot signal its parent (workforce) and can its own child, and
// that where the ABI is lower (the test hook plays one) the launcher
// still confines, without the scope.
func TestSignalScope(t *testing.T) {
	needLandlock(t)
	if kernelABI() < SignalScopeABI {
		t.Skipf("the kernel's Landlock ABI is %d, the signal scope needs %d", kernelABI(), SignalScopeABI)
	}
	dir := t.TempDir()
	p := Policy{Dirs: []string{dir}, Devices: TerminalDevices}
	for _, tc := range []struct {
		abi    string
		parent string
	}{
		{"", "EPERM"},
		{strconv.Itoa(SignalScopeABI - 1), "OK"},
	} {
		t.Run("ABI "+tc.abi, func(t *testing.T) {
			if tc.abi != "" {
				t.Setenv(ABIEnv, tc.abi)
			}
			got := probe(t, p, []string{"kill-parent"}, []string{"kill-child"}, []string{"write", filepath.Join(dir, "..", "outside")})
			if want := []string{tc.parent, "OK", "EACCES"}; strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("signal the parent, signal a child, write outside: %q, want %q", got, want)
			}
		})
	}
}

// TestMarkCloseOnExec checks the fallback of closeOnExecFrom for kernels
// without close_range(CLOSE_RANGE_CLOEXEC).
func TestMarkCloseOnExec(t *testing.T) {
	fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if flags, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); flags&unix.FD_CLOEXEC != 0 {
		t.Fatalf("descriptor %d is close-on-exec before the test", fd)
	}
	if err := markCloseOnExec(fd); err != nil {
		t.Fatal(err)
	}
	if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Errorf("descriptor %d after markCloseOnExec: flags %#x, %v; want close-on-exec", fd, flags, err)
	}
}
