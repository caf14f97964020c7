//go:build !linux

package batch

import "os/exec"

// parentDeathSignal does nothing here: only Linux has a parent-death
// signal, so a task of a pool killed outright runs on to its end.
func parentDeathSignal(*exec.Cmd) {}

// lockThread does nothing here (see parentDeathSignal).
func lockThread() (unlock func()) { return func() {} }
