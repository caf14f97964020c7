package pack

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
)

// WriteFile writes the pack's tarball (Write) to the file out, its
// directories made as needed: whole or not at all, a file already there
// replaced only once the new one is complete.
func (p *Pack) WriteFile(out string) error {
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := renameio.NewPendingFile(out, renameio.WithPermissions(0o644), renameio.WithTempDir(filepath.Dir(out)))
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", out, err)
	}
	defer f.Cleanup()
	if err := p.Write(f); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}
