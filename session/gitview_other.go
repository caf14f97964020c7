//go:build !linux

package session

// opaque reports whether dir is an opaque directory of an overlay's upper
// layer: never, where there is no overlay.
func opaque(string) bool { return false }
