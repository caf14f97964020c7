// Package npm runs npm for workforce: finding npm and npx on the PATH a
// command runs with, and fetching a package with `npm pack`, which packs
// (install) and npm skills (skill) both use. It knows nothing of what the
// package holds.
package npm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotInstalled is returned when npm is not found on the PATH.
var ErrNotInstalled = errors.New("npm is not installed")

// Package is a package npm pack fetched.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// File is the tarball's path.
	File string `json:"-"`
}

// Pack fetches spec with `npm pack SPEC --json --ignore-scripts` into dir
// with the npm found on the PATH of env, run in cwd with env (empty and
// nil: the process's; a file: spec is read against cwd), and returns the
// package's name, version and tarball. A spec starting with "-" is
// refused: npm would read it as an option. Without npm the error is
// ErrNotInstalled.
func Pack(ctx context.Context, spec, dir, cwd string, env []string) (*Package, error) {
	if strings.HasPrefix(spec, "-") {
		return nil, fmt.Errorf("npm spec %q starts with -", spec)
	}
	npm, err := exec.LookPath("npm")
	if env != nil {
		npm, err = LookPath("npm", env)
	}
	if err != nil {
		return nil, ErrNotInstalled
	}
	cmd := exec.CommandContext(ctx, npm, "pack", spec, "--json", "--ignore-scripts", "--pack-destination", dir)
	cmd.Dir, cmd.Env = cwd, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(msg, "npm error"); i >= 0 {
			msg = msg[i:]
		}
		return nil, fmt.Errorf("npm pack %s failed: %v: %s", spec, err, msg)
	}
	var out []struct {
		Package
		Filename string `json:"filename"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil || len(out) != 1 || out[0].Filename == "" {
		return nil, fmt.Errorf("npm pack %s: unexpected output: %s", spec, strings.TrimSpace(stdout.String()))
	}
	name := filepath.Base(out[0].Filename)
	// npm names scoped packages' files without the @ and with - for /.
	name = strings.ReplaceAll(strings.TrimPrefix(name, "@"), "/", "-")
	pkg := out[0].Package
	pkg.File = filepath.Join(dir, name)
	return &pkg, nil
}

// LookPath finds an executable on the PATH of env (exec.ErrNotFound when
// there is none), as a command run with env would find it.
func LookPath(name string, env []string) (string, error) {
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
