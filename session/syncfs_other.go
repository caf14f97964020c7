//go:build !linux

package session

import "os"

// syncfs flushes what can be flushed of f's file system: f itself.
func syncfs(f *os.File) error { return f.Sync() }
