package harness

import "syscall"

// sysProcAttr: if workforce dies (kill -9), the harness is told to stop
// rather than go on as an orphan; its work stays in the sandbox for
// `workforce sessions sync`.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
