package session

import "golang.org/x/sys/unix"

// exchangeAt swaps the entries a and b of dirfd in one step.
func exchangeAt(dirfd int, a, b string) error {
	return unix.Renameat2(dirfd, a, dirfd, b, unix.RENAME_EXCHANGE)
}
