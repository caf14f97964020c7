package batch

import (
	"os/exec"
	"runtime"
	"syscall"
)

// parentDeathSignal asks the kernel to send SIGTERM to cmd's process when
// the pool dies without passing a signal on (SIGKILL, a crash), so that
// the task's run stops its harness and syncs its work back as on any
// SIGTERM, instead of running on unattended.
//
// The kernel sends it when the thread that started the child exits, not
// the process (prctl(2), PR_SET_PDEATHSIG; golang/go#27505), and the Go
// runtime ends a thread when a goroutine locked to it returns. So RunTask
// locks the goroutine that starts the child to its thread until the child
// has been waited for: that thread then lives as long as the child, and
// the pool runs at most Jobs such threads.
//
// When the whole pool dies, the signal comes more than once: the kernel
// hands the orphan on to another thread of the dying pool that has not
// exited yet, and sends the signal again each time that thread exits, so a
// few times within a millisecond or so (measured: 2 to 4 SIGTERMs after
// a SIGKILL of the pool, however the threads were locked). No choice of
// the starting thread avoids it, since every thread dies with the pool:
// run counts the same signal repeated within a second as one
// (session's repeatWindow), and its sync-back goes on.
func parentDeathSignal(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}

// lockThread locks the calling goroutine to its thread (see
// parentDeathSignal); the returned function unlocks it.
func lockThread() (unlock func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
