package install

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/pack"
)

// Open reads a pack from source: a directory, a .tgz file, or an npm spec
// (anything else), fetched with `npm pack SPEC --json --ignore-scripts`
// run in the working directory. Archives are unpacked into a temporary
// directory that cleanup removes.
func Open(ctx context.Context, source string) (p *pack.Pack, cleanup func(), err error) {
	cleanup = func() {}
	if fi, err := os.Stat(source); err == nil && fi.IsDir() {
		p, err := pack.Collect(source)
		return p, cleanup, err
	}
	tmp, err := os.MkdirTemp("", "workforce-pack-")
	if err != nil {
		return nil, cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	tgz := source
	if fi, err := os.Stat(source); err != nil || !fi.Mode().IsRegular() {
		if tgz, err = npmPack(ctx, source, tmp); err != nil {
			return nil, cleanup, err
		}
	}
	f, err := os.Open(tgz)
	if err != nil {
		return nil, cleanup, err
	}
	defer f.Close()
	out := filepath.Join(tmp, "unpacked")
	if err := os.Mkdir(out, 0o700); err != nil {
		return nil, cleanup, err
	}
	root, err := pack.ReadArchive(f, out)
	if err != nil {
		return nil, cleanup, fmt.Errorf("%s: %w", source, err)
	}
	p, err = pack.Collect(root)
	return p, cleanup, err
}

// npmPack fetches spec with npm into dir and returns the tarball's path.
func npmPack(ctx context.Context, spec, dir string) (string, error) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("%q is not a directory or a .tgz file, so it is taken as an npm spec: %w", spec, ErrNoNpm)
	}
	cmd := exec.CommandContext(ctx, npm, "pack", spec, "--json", "--ignore-scripts", "--pack-destination", dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "npm error"); i >= 0 {
			msg = msg[i:]
		}
		return "", fmt.Errorf("npm pack %s failed: %v: %s", spec, err, msg)
	}
	var out []struct {
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != 1 || out[0].Filename == "" {
		return "", fmt.Errorf("npm pack %s: unexpected output: %s", spec, strings.TrimSpace(stdout.String()))
	}
	name := filepath.Base(out[0].Filename)
	// npm names scoped packages' files without the @ and with - for /.
	name = strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-")
	return filepath.Join(dir, name), nil
}
