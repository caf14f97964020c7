package confine

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The seccomp filter the launcher installs right before it executes the
// harness: ioctl(2) with the request TIOCSTI (push a character into a
// terminal's input queue) or TIOCLINUX (which can do the same on a
// virtual console through its paste selection) fails with EPERM;
// every other system call is allowed. Landlock cannot tell one ioctl
// request on the terminal from another, and the harness must keep its
// terminal; a harness that could push characters into it would have the
// user's shell run them once workforce exits. bubblewrap and flatpak
// filter the same two requests.
//
// The filter compares the low 32 bits of the request only: the kernel's
// ioctl takes an unsigned int, so TIOCSTI with any high word set is still
// TIOCSTI, and comparing the whole 64 bits would let that through.
//
// A filter is written for one architecture's system call numbers, so it
// checks seccomp_data.arch first:
//   - the native one (x86-64, arm64) and its 32-bit compatibility one
//     (i386, arm), whose ioctl(2) has another number, are filtered alike,
//     so a 32-bit program the harness runs works and is filtered too;
//   - a system call number with bit 30 set (the x32 ABI on x86-64, where
//     the number alone tells it apart; nothing on arm64) fails with
//     ENOSYS, as on a kernel built without x32;
//   - any other architecture kills the process: the kernel cannot run it
//     on these machines, and a filter that cannot read its numbers must
//     not guess.
//
// On other Go architectures the launcher has no filter and refuses to
// start the harness (Start returns a *LaunchError).

// seccompArch is what the filter needs of one Go architecture.
type seccompArch struct {
	native, compat           uint32 // AUDIT_ARCH_* of seccomp_data.arch
	nativeIoctl, compatIoctl uint32 // ioctl(2)'s number on each
	// renames are the native rename(2), renameat(2) and renameat2(2)
	// (rename_linux.go); an architecture without rename(2) names
	// renameat(2) twice.
	renames [3]uint32
	// modes and compatModes are the mode and attribute calls
	// (modes_linux.go) of the native and the 32-bit ABI.
	modes, compatModes modeCalls
}

// seccompArches are the architectures the filter is written for.
var seccompArches = map[string]seccompArch{
	"amd64": {native: unix.AUDIT_ARCH_X86_64, compat: unix.AUDIT_ARCH_I386, nativeIoctl: 16, compatIoctl: 54, renames: [3]uint32{82, 264, 316},
		modes: modeCalls{90, 91, 268, 452, 188, 189, 190}, compatModes: modeCalls{15, 94, 306, 452, 226, 227, 228}},
	"arm64": {native: unix.AUDIT_ARCH_AARCH64, compat: unix.AUDIT_ARCH_ARM, nativeIoctl: 29, compatIoctl: 54, renames: [3]uint32{38, 38, 276},
		modes: modeCalls{53, 52, 53, 452, 5, 6, 7}, compatModes: modeCalls{15, 94, 333, 452, 226, 227, 228}},
}

// The offsets in struct seccomp_data: nr and arch are 32-bit, args are
// 64-bit from offset 16, so args[1]'s low word is at 24 on little-endian
// machines (both architectures above).
const (
	seccompNR      = 0
	seccompArchOff = 4
	seccompArg1Low = 16 + 8
	x32SyscallBit  = 0x40000000
)

// deniedIoctls are the requests the filter refuses.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// terminalFilter returns the filter's program for a.
func terminalFilter(a seccompArch) ([]bpf.RawInstruction, error) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		deny  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill  = unix.SECCOMP_RET_KILL_PROCESS
	)
	// A skip is the number of instructions jumped over: to reach index
	// t from index i, t-i-1; the comments name the targets (true, false).
	return bpf.Assemble([]bpf.Instruction{
		/* 0 */ bpf.LoadAbsolute{Off: seccompArchOff, Size: 4},
		/* 1 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.native, SkipTrue: 1}, // 3, 2
		/* 2 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.compat, SkipTrue: 3, SkipFalse: 11}, // 6, 14
		/* 3 */ bpf.LoadAbsolute{Off: seccompNR, Size: 4},
		/* 4 */ bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: x32SyscallBit, SkipTrue: 8}, // 13, 5
		/* 5 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.nativeIoctl, SkipTrue: 2, SkipFalse: 5}, // 8, 11
		/* 6 */ bpf.LoadAbsolute{Off: seccompNR, Size: 4},
		/* 7 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: a.compatIoctl, SkipFalse: 3}, // 8, 11
		/* 8 */ bpf.LoadAbsolute{Off: seccompArg1Low, Size: 4},
		/* 9 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: deniedIoctls[0], SkipTrue: 2}, // 12, 10
		/* 10 */ bpf.JumpIf{Cond: bpf.JumpEqual, Val: deniedIoctls[1], SkipTrue: 1}, // 12, 11
		/* 11 */ bpf.RetConstant{Val: allow},
		/* 12 */ bpf.RetConstant{Val: deny},
		/* 13 */ bpf.RetConstant{Val: nosys},
		/* 14 */ bpf.RetConstant{Val: kill},
	})
}

// denyTerminalInjection installs the filter on every thread of the
// process; what the process executes keeps it (no_new_privs is set, as
// Landlock needs it too). The caller has locked its OS thread.
func denyTerminalInjection() error {
	a, ok := seccompArches[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("no seccomp filter for %s: cannot keep the harness from injecting input into the terminal", runtime.GOARCH)
	}
	raw, err := terminalFilter(a)
	if err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	filter := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filter[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	switch {
	case errno != 0:
		return fmt.Errorf("seccomp: %w", errno)
	case r != 0: // TSYNC: the thread that could not be synchronized
		return fmt.Errorf("seccomp: thread %d cannot take the filter", r)
	}
	return nil
}
