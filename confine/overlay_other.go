//go:build !linux

package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// removeWritable removes path and what is below it, making each
// directory listable and writable by its owner first. (No overlay is
// made here: overlay_linux.go's goes by descriptors.)
func removeWritable(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		if fi.Mode().Perm()&0o700 != 0o700 {
			if err := os.Chmod(path, fi.Mode().Perm()|0o700); err != nil {
				return err
			}
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := removeWritable(filepath.Join(path, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return os.Remove(path)
}
