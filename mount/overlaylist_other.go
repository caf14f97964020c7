//go:build !linux

package mount

// listingFS reports whether the listing cache may be used for the
// project root: only on Linux, whose file systems' types it knows.
func listingFS(root string) bool { return false }
