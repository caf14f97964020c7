//go:build !linux

package discover

import "path/filepath"

// realPath returns path with every symlink resolved.
func realPath(path string) (string, error) { return filepath.EvalSymlinks(path) }
