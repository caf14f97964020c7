package confine

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// TestTerminalInjection pushes input into a terminal with ioctl(TIOCSTI)
// from the probe: unconfined it lands in the terminal's input queue (so
// the check can fail), confined it fails with EPERM, also with the
// request's high word set and from a grandchild, while the terminal's
// other ioctls keep working.
func TestTerminalInjection(t *testing.T) {
	needLandlock(t)
	ops := [][]string{{"tiocsti"}, {"tiocsti-high"}, {"winsize"}, {"pty"}, {"child", "tiocsti"}}
	cmd := probeCommand(t, ops...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	var unconfined []string
	if err != nil || json.Unmarshal(b, &unconfined) != nil {
		t.Fatalf("unconfined probe: %v: %q %s", err, b, stderr.String())
	}
	if want := []string{"OK", "OK", "OK", "OK", "OK"}; !equal(unconfined, want) {
		if unconfined[0] != "OK" {
			t.Skipf("this kernel refuses TIOCSTI to an unconfined process too (%s): nothing to block", unconfined[0])
		}
		t.Fatalf("unconfined: %q gave %q, want %q", ops, unconfined, want)
	}
	confined := probe(t, Policy{Dirs: []string{t.TempDir()}, Devices: TerminalDevices}, ops...)
	if want := []string{"EPERM", "EPERM", "OK", "OK", "EPERM"}; !equal(confined, want) {
		t.Errorf("confined: %q gave %q, want %q", ops, confined, want)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// seccompData is struct seccomp_data as the filter reads it: nr, arch
// and the arguments' 32-bit words where a little-endian kernel keeps
// them. bpf.VM loads big-endian words, so each word is written
// big-endian at its native offset and reads back as the kernel reads it.
func seccompData(arch, nr uint32, args ...uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[seccompNR:], nr)
	binary.BigEndian.PutUint32(b[seccompArchOff:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[16+8*i+4:], uint32(a>>32))
	}
	return b
}

// TestTerminalFilterProgram runs the filter of each architecture on
// system calls, in x/net/bpf's virtual machine.
func TestTerminalFilterProgram(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	if len(seccompArches) == 0 {
		t.Fatal("no architectures")
	}
	for goarch, a := range seccompArches {
		raw, err := terminalFilter(a)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		prog, ok := bpf.Disassemble(raw)
		if !ok {
			t.Fatalf("%s: the program does not disassemble: %v", goarch, prog)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		const fd = 3
		tests := []struct {
			name string
			data []byte
			want uint32
		}{
			{"ioctl TIOCSTI", seccompData(a.native, a.nativeIoctl, fd, unix.TIOCSTI, 0), eperm},
			{"ioctl TIOCLINUX", seccompData(a.native, a.nativeIoctl, fd, unix.TIOCLINUX, 0), eperm},
			{"ioctl TIOCSTI, high word set", seccompData(a.native, a.nativeIoctl, fd, 0xffffffff<<32|unix.TIOCSTI), eperm},
			{"ioctl TIOCSTI, high word 1", seccompData(a.native, a.nativeIoctl, fd, 1<<32|unix.TIOCSTI), eperm},
			{"ioctl TIOCGWINSZ", seccompData(a.native, a.nativeIoctl, fd, unix.TIOCGWINSZ), allow},
			{"ioctl TCGETS", seccompData(a.native, a.nativeIoctl, fd, unix.TCGETS), allow},
			{"ioctl TIOCSTI in the high word only", seccompData(a.native, a.nativeIoctl, fd, unix.TIOCSTI<<32), allow},
			{"TIOCSTI as the first argument", seccompData(a.native, a.nativeIoctl, unix.TIOCSTI, 0), allow},
			{"another call with TIOCSTI", seccompData(a.native, a.nativeIoctl+1, fd, unix.TIOCSTI), allow},
			{"another call", seccompData(a.native, 0), allow},
			{"32-bit ioctl TIOCSTI", seccompData(a.compat, a.compatIoctl, fd, unix.TIOCSTI), eperm},
			{"32-bit ioctl TIOCLINUX", seccompData(a.compat, a.compatIoctl, fd, unix.TIOCLINUX), eperm},
			{"32-bit ioctl TIOCGWINSZ", seccompData(a.compat, a.compatIoctl, fd, unix.TIOCGWINSZ), allow},
			{"32-bit call numbered as the native ioctl", seccompData(a.compat, a.nativeIoctl, fd, unix.TIOCSTI), allow},
			{"x32 ioctl TIOCSTI", seccompData(a.native, x32SyscallBit|514, fd, unix.TIOCSTI), nosys},
			{"x32 write", seccompData(a.native, x32SyscallBit|1, fd), nosys},
			{"another architecture", seccompData(unix.AUDIT_ARCH_PPC64LE, a.nativeIoctl, fd, unix.TIOCSTI), kill},
			{"another architecture, another call", seccompData(unix.AUDIT_ARCH_RISCV64, 0), kill},
		}
		for _, tc := range tests {
			got, err := vm.Run(tc.data)
			if err != nil || uint32(got) != tc.want {
				t.Errorf("%s: %s: the filter returned %#x (%v), want %#x", goarch, tc.name, got, err, tc.want)
			}
		}
	}
}

// TestRenameFilterProgram runs the supervisor's filter of each
// architecture on system calls, in x/net/bpf's virtual machine: the
// native rename calls go to the launcher, but renameat2(2) from
// launcherRenameFD, and so do the mode and attribute calls of both ABIs.
func TestRenameFilterProgram(t *testing.T) {
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		notify = unix.SECCOMP_RET_USER_NOTIF
	)
	for goarch, a := range seccompArches {
		raw, err := superviseFilter(a)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		prog, ok := bpf.Disassemble(raw)
		if !ok {
			t.Fatalf("%s: the program does not disassemble: %v", goarch, prog)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatalf("%s: %v", goarch, err)
		}
		atCWD := uint64(0xffffffffffffff9c)
		tests := []struct {
			name string
			data []byte
			want uint32
		}{
			{"rename", seccompData(a.native, a.renames[0], 1, 2), notify},
			{"renameat", seccompData(a.native, a.renames[1], atCWD, 1, atCWD, 2), notify},
			{"renameat2", seccompData(a.native, a.renames[2], atCWD, 1, atCWD, 2, 0), notify},
			{"renameat2 from a descriptor", seccompData(a.native, a.renames[2], 5, 1, atCWD, 2, 0), notify},
			{"renameat2 from the launcher's descriptor", seccompData(a.native, a.renames[2], launcherRenameFD, 1, atCWD, 2, 0), allow},
			{"renameat2 from the launcher's descriptor, high word set", seccompData(a.native, a.renames[2], 1<<32|launcherRenameFD, 1, atCWD, 2, 0), allow},
			{"renameat from the launcher's descriptor", seccompData(a.native, a.renames[1], launcherRenameFD, 1, atCWD, 2), notify},
			{"ioctl", seccompData(a.native, a.nativeIoctl, 1, unix.TIOCSTI), allow},
			{"another call", seccompData(a.native, 0), allow},
			{"32-bit call numbered as renameat2", seccompData(a.compat, a.renames[2], atCWD, 1, atCWD, 2, 0), allow},
			{"chmod", seccompData(a.native, a.modes[callChmod], 1, 0o644), notify},
			{"fchmod", seccompData(a.native, a.modes[callFchmod], 3, 0o644), notify},
			{"fchmodat", seccompData(a.native, a.modes[callFchmodat], atCWD, 1, 0o644), notify},
			{"fchmodat from the launcher's descriptor", seccompData(a.native, a.modes[callFchmodat], launcherRenameFD, 1, 0o644), notify},
			{"fchmodat2", seccompData(a.native, a.modes[callFchmodat2], atCWD, 1, 0o644, 0), notify},
			{"setxattr", seccompData(a.native, a.modes[callSetxattr], 1, 2, 3, 4, 0), notify},
			{"lsetxattr", seccompData(a.native, a.modes[callLsetxattr], 1, 2, 3, 4, 0), notify},
			{"fsetxattr", seccompData(a.native, a.modes[callFsetxattr], 3, 2, 3, 4, 0), notify},
			{"32-bit chmod", seccompData(a.compat, a.compatModes[callChmod], 1, 0o644), notify},
			{"32-bit fchmod", seccompData(a.compat, a.compatModes[callFchmod], 3, 0o644), notify},
			{"32-bit fchmodat", seccompData(a.compat, a.compatModes[callFchmodat], atCWD, 1, 0o644), notify},
			{"32-bit fchmodat2", seccompData(a.compat, a.compatModes[callFchmodat2], atCWD, 1, 0o644, 0), notify},
			{"32-bit setxattr", seccompData(a.compat, a.compatModes[callSetxattr], 1, 2, 3, 4, 0), notify},
			{"32-bit lsetxattr", seccompData(a.compat, a.compatModes[callLsetxattr], 1, 2, 3, 4, 0), notify},
			{"32-bit fsetxattr", seccompData(a.compat, a.compatModes[callFsetxattr], 3, 2, 3, 4, 0), notify},
			{"32-bit ioctl", seccompData(a.compat, a.compatIoctl, 1, unix.TIOCSTI), allow},
			{"getxattr", seccompData(a.native, a.modes[callSetxattr]+3, 1, 2, 3, 4), allow},
		}
		for _, tc := range tests {
			got, err := vm.Run(tc.data)
			if err != nil || uint32(got) != tc.want {
				t.Errorf("%s: %s: the filter returned %#x (%v), want %#x", goarch, tc.name, got, err, tc.want)
			}
		}
	}
}
