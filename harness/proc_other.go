//go:build !linux

package harness

import "syscall"

// sysProcAttr: elsewhere than on Linux, a harness outlives a killed
// workforce; its work stays in the sandbox for `workforce sessions sync`.
func sysProcAttr() *syscall.SysProcAttr { return nil }
