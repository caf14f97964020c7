package confine

import (
	"encoding/json"
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
// signals from SignalScopeABI on). What Landlock leaves alone is compared
// with the same operation unconfined: a container's root may lack the
// capability (EPERM both ways), and the claim is that Landlock changes
// nothing.
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
	tests := []rootCase{
		// Not stopped: as unconfined.
		{[]string{"chown", outside}, "", "change the owner, mode"},
		{[]string{"setxattr", outside}, "", "extended attributes of any file"},
		{[]string{"open-read", disk}, "", "read any file and disk device"},
		{[]string{"netadmin"}, "", "configure the network"},
		{[]string{"bpf"}, "", "BPF programs"},
		// Landlock has no say; ENOSYS on a kernel without modules.
		{[]string{"init-module"}, "", "load kernel modules"},
		{[]string{"sethostname"}, "", "set the host name"},
		{[]string{"reboot"}, "", "reboot the machine"}, // a bad magic: EINVAL past the CAP_SYS_BOOT check
		{[]string{"child", "chroot", in}, "", ""},
		// Stopped, whatever the capabilities.
		{[]string{"mount", in}, "EPERM", ""},
		{[]string{"ptrace-parent"}, "EPERM", ""},
		{[]string{"open-write", disk}, "EACCES", ""},
		{[]string{"mknod", "b", filepath.Join(in, "disk")}, "EACCES", ""},
		{[]string{"open-write", "/proc/sys/kernel/hostname"}, "EACCES", ""},
	}
	for _, abi := range []int{ABI(), SignalScopeABI - 1} {
		t.Run("ABI "+strconv.Itoa(abi), func(t *testing.T) {
			if abi < MinABI {
				t.Skipf("ABI %d cannot confine", abi)
			}
			t.Setenv(ABIEnv, strconv.Itoa(abi))
			warning := RootWarning(abi)
			kill := rootCase{[]string{"kill-init"}, "EPERM", ""}
			if abi < SignalScopeABI {
				kill.want, kill.words = "", "signal any process"
			}
			var ops, free [][]string
			var cases []rootCase
			for _, tc := range append(slices.Clone(tests), kill) {
				if disk == "" && slices.Contains(tc.op, "") {
					continue
				}
				ops, cases = append(ops, tc.op), append(cases, tc)
				if tc.want == "" {
					free = append(free, tc.op)
				}
			}
			got := probe(t, Policy{Dirs: []string{in}, Devices: TerminalDevices}, ops...)
			unconfined := probeUnconfined(t, free...)
			for i, tc := range cases {
				want := tc.want
				if want == "" {
					want, unconfined = unconfined[0], unconfined[1:]
				}
				if got[i] != want {
					t.Errorf("%q as root, confined: %s, want %s", tc.op, got[i], want)
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

// probeUnconfined runs ops in the probe, not confined, and returns what
// each gave.
func probeUnconfined(t *testing.T, ops ...[]string) []string {
	t.Helper()
	out, err := probeCommand(t, ops...).Output()
	var got []string
	if err != nil || json.Unmarshal(out, &got) != nil || len(got) != len(ops) {
		t.Fatalf("probe, unconfined: %v: %q", err, out)
	}
	return got
}

// rootCase is an operation of TestRoot, what it must give confined, and
// the words of RootWarning that say so ("" for what it need not say).
type rootCase struct {
	op    []string
	want  string // "" for what it gives unconfined
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
