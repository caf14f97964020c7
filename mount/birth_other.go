//go:build !linux

package mount

import "time"

// birthTime returns false: only Linux has overlay sandboxes, whose
// sync-back asks.
func birthTime(fd int, name string) (time.Time, bool) { return time.Time{}, false }
