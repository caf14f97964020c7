//go:build !linux

package session

import "golang.org/x/sys/unix"

// exchangeAt cannot swap two names in one step here: unix.ENOSYS, and
// the credential's write-back checks, then renames.
func exchangeAt(int, string, string) error { return unix.ENOSYS }
