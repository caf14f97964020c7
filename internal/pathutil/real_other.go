//go:build !linux

package pathutil

import "path/filepath"

// Real returns path with every symlink resolved.
func Real(path string) (string, error) { return filepath.EvalSymlinks(path) }
