//go:build !linux

package session

// adoptOrphans does nothing where processes cannot be adopted.
func adoptOrphans() {}

// childless is not known here: the process table is read.
func childless() bool { return false }
