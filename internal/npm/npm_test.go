package npm

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "npx")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=/x", "PATH=/nonexistent" + string(filepath.ListSeparator) + dir}
	if got, err := LookPath("npx", env); err != nil || got != bin {
		t.Errorf("LookPath(npx) = %q, %v, want %q", got, err, bin)
	}
	if _, err := LookPath("plain", env); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("LookPath(plain) = %v, want exec.ErrNotFound: not executable", err)
	}
}

// TestPack runs Pack with a stand-in npm that answers as npm pack --json
// does for a scoped package.
func TestPack(t *testing.T) {
	bin := t.TempDir()
	script := `#!/bin/sh
[ "$1" = pack ] || exit 2
echo '[{"name": "@acme/review", "version": "1.2.0", "filename": "acme-review-1.2.0.tgz"}]'
`
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env := []string{"PATH=" + bin}
	pkg, err := Pack(context.Background(), "@acme/review@1.2.0", dir, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	if pkg.Name != "@acme/review" || pkg.Version != "1.2.0" || pkg.File != filepath.Join(dir, "acme-review-1.2.0.tgz") {
		t.Errorf("Pack() = %+v", pkg)
	}
	if _, err := Pack(context.Background(), "--foo", dir, dir, env); err == nil || !strings.Contains(err.Error(), "starts with -") {
		t.Errorf("Pack(--foo) = %v, want a refusal", err)
	}
	if _, err := Pack(context.Background(), "x", dir, dir, []string{"PATH=" + dir}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Pack() without npm = %v, want ErrNotInstalled", err)
	}
}
