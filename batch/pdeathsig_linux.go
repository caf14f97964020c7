package batch

import (
	"os/exec"
	"runtime"
	"syscall"
)

// parentDeathSignal asks the kernel to send ParentDeathSignal to cmd's
// process when the pool dies without passing a signal on (SIGKILL, a
// crash), so that the task's run stops its harness and syncs its work back
// as on SIGTERM, instead of running on unattended.
//
// The kernel sends it when the thread that started the child exits, not
// the process (prctl(2), PR_SET_PDEATHSIG; golang/go#27505), and the Go
// runtime ends a thread when a goroutine locked to it returns. So RunTask
// locks the goroutine that starts the child to its thread until the child
// has been waited for: that thread then lives as long as the child, and
// the pool runs at most Jobs such threads.
//
// When the whole pool dies, the signal comes more than once: the kernel
// hands the orphan on to a thread of the dying pool that has not exited
// yet, and sends the signal again as that one exits, and so on (measured:
// 2 to 4 signals within a millisecond after a SIGKILL of the pool, however
// its threads were locked). No choice of the starting thread avoids it,
// since every thread dies with the pool; hence a signal of its own, which
// run takes once.
func parentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = ParentDeathSignal
}

// lockThread locks the calling goroutine to its thread (see
// parentDeathSignal); the returned function unlocks it.
func lockThread() (unlock func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
