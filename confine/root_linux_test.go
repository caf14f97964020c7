package confine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRoot checks, as root, what RootWarning says: what a confined
// process running as root can still do besides writing files, and what
// Landlock stops (mount, ptrace, writes to devices and /proc/sys, and
// signals from SignalScopeABI on).
func TestRoot(t *testing.T) {
	needLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: the capabilities measured here are root's")
	}
	tmp := t.TempDir()
	in, outside := filepath.Join(tmp, "in"), filepath.Join(tmp, "outside")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, outside, "outside\n")
	disk := "/dev/loop0"
	if _, err := os.Stat(disk); err != nil {
		disk = ""
	}
	not := func(errno string) func(string) bool { return func(got string) bool { return got != errno } }
	is := func(want string) func(string) bool { return func(got string) bool { return got == want } }
	tests := []rootCase{
		// Not stopped.
		{[]string{"chown", outside}, is("OK"), "change the owner, mode"},
		{[]string{"setxattr", outside}, is("OK"), "extended attributes of any file"},
		{[]string{"open-read", disk}, is("OK"), "read any file and disk device"},
		{[]string{"netadmin"}, is("OK"), "configure the network"},
		{[]string{"bpf"}, is("OK"), "BPF programs"},
		// ENOSYS on a kernel without modules; the capability check
		// comes first, Landlock has no say.
		{[]string{"init-module"}, not("EPERM"), "load kernel modules"},
		{[]string{"sethostname"}, is("OK"), "set the host name"},
		{[]string{"reboot"}, is("EINVAL"), "reboot the machine"}, // a bad magic, past the CAP_SYS_BOOT check
		{[]string{"child", "chroot", in}, is("OK"), ""},
		// Stopped.
		{[]string{"mount", in}, is("EPERM"), ""},
		{[]string{"ptrace-parent"}, is("EPERM"), ""},
		{[]string{"open-write", disk}, is("EACCES"), ""},
		{[]string{"mknod", "b", filepath.Join(in, "disk")}, is("EACCES"), ""},
		{[]string{"open-write", "/proc/sys/kernel/hostname"}, is("EACCES"), ""},
	}
	for _, abi := range []int{ABI(), SignalScopeABI - 1} {
		t.Run("ABI "+strconv.Itoa(abi), func(t *testing.T) {
			if abi < MinABI {
				t.Skipf("ABI %d cannot confine", abi)
			}
			t.Setenv(ABIEnv, strconv.Itoa(abi))
			warning := RootWarning(abi)
			signal := "EPERM"
			if abi < SignalScopeABI {
				signal = "OK"
			}
			kill := rootCase{[]string{"kill-init"}, is(signal), ""}
			if abi < SignalScopeABI {
				kill.words = "signal any process"
			}
			all := append(slices.Clone(tests), kill)
			var ops [][]string
			var cases []int
			for i, tc := range all {
				if disk == "" && slices.Contains(tc.op, "") {
					continue
				}
				ops, cases = append(ops, tc.op), append(cases, i)
			}
			got := probe(t, Policy{Dirs: []string{in}, Devices: TerminalDevices}, ops...)
			for j, i := range cases {
				tc := all[i]
				if !tc.want(got[j]) {
					t.Errorf("%q as root, confined: %s", tc.op, got[j])
				}
				if tc.words != "" && !strings.Contains(warning, tc.words) {
					t.Errorf("RootWarning(%d) = %q: it does not say %q", abi, warning, tc.words)
				}
			}
			if abi >= SignalScopeABI && strings.Contains(warning, "signal") {
				t.Errorf("RootWarning(%d) = %q: it speaks of signals, which the scope stops", abi, warning)
			}
		})
	}
}

// rootCase is an operation of TestRoot, what it must give, and the
// words of RootWarning that say so ("" for what it need not say).
type rootCase struct {
	op    []string
	want  func(string) bool
	words string
}

// TestDecideRoot checks that Decide warns of a confined run as root, once
// in its Decision, and not with RootWarningEnv off or unconfined.
func TestDecideRoot(t *testing.T) {
	needLandlock(t)
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		mode Mode
		env  string
		want bool
	}{
		{On, "", root},
		{Strict, "", root},
		{On, "off", false},
		{Off, "", false},
	} {
		t.Setenv(RootWarningEnv, tc.env)
		d, err := Decide(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Root != ""; got != tc.want {
			t.Errorf("Decide(%v) with %s=%q as uid %d: Root = %q, want a warning: %v", tc.mode, RootWarningEnv, tc.env, os.Geteuid(), d.Root, tc.want)
		}
		if d.Root != "" && d.Root != RootWarning(ABI()) {
			t.Errorf("Decide(%v).Root = %q, want RootWarning(%d)", tc.mode, d.Root, ABI())
		}
	}
}
