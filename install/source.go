package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/npm"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/pack"
)

// Open reads a pack from source: a directory, a .tgz file, or an npm spec
// (anything else), fetched with `npm pack SPEC --json --ignore-scripts`
// run in the working directory. A directory or archive without a
// package.json that is a Claude Code plugin is read as one (collect).
// Archives are unpacked into a temporary directory that cleanup removes.
func Open(ctx context.Context, source string, o OpenOptions) (p *pack.Pack, cleanup func(), err error) {
	cleanup = func() {}
	if url, ref, ok := ParseGitSource(source); ok {
		tmp, err := os.MkdirTemp("", "workforce-git-")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		dir := filepath.Join(tmp, "clone")
		commit, err := gitCheckout(ctx, url, ref, dir)
		if err != nil {
			return nil, cleanup, fmt.Errorf("%s: %w", source, err)
		}
		os.RemoveAll(filepath.Join(dir, ".git"))
		if p, err = collect(dir, o); err != nil {
			return nil, cleanup, inSource(err, dir, source)
		}
		p.Resolved = commit
		p.TempDir, p.SourceName = dir, source
		return p, cleanup, nil
	}
	if fi, err := os.Stat(source); err == nil && fi.IsDir() {
		p, err := collect(source, o)
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
	tgz, resolved := source, ""
	if fi, err := os.Stat(source); err != nil || !fi.Mode().IsRegular() {
		pkg, err := npm.Pack(ctx, source, tmp, "", nil)
		if errors.Is(err, npm.ErrNotInstalled) {
			err = ErrNoNpm
		}
		if err != nil {
			return nil, cleanup, fmt.Errorf("%q is not a directory or a .tgz file, so it is taken as an npm spec: %w", source, err)
		}
		tgz, resolved = pkg.File, pkg.Name+"@"+pkg.Version
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
	root, err := pack.ReadAnyArchive(f, out)
	if err != nil {
		return nil, cleanup, fmt.Errorf("%s: %w", source, err)
	}
	if p, err = collect(root, o); err != nil {
		return nil, cleanup, inSource(err, out, source)
	}
	p.Resolved = resolved
	p.TempDir, p.SourceName = out, source
	return p, cleanup, nil
}

// SourceError is an error about the files of a source that Open copied
// into a temporary directory (an unpacked archive, a clone). Its message
// names them as the source has them, the source and the path in it
// ("x.tgz: package/personas/a.json:3:5: ..."), never by the copy's path,
// which the user never saw and which is gone when the command ends.
type SourceError struct {
	Err    error
	Source string
	// dirs are the copy's directory as written and without symlinks.
	dirs []string
}

func (e *SourceError) Error() string {
	msg := e.Err.Error()
	for _, d := range e.dirs {
		msg = strings.ReplaceAll(msg, d+string(filepath.Separator), e.Source+": ")
		msg = strings.ReplaceAll(msg, d, e.Source)
	}
	return msg
}

func (e *SourceError) Unwrap() error { return e.Err }

// inSource returns err as a *SourceError about the copy of source in dir;
// nil stays nil, and without a copy (dir empty) err is returned as it is.
func inSource(err error, dir, source string) error {
	if err == nil || dir == "" {
		return err
	}
	e := &SourceError{Err: err, Source: source, dirs: []string{filepath.Clean(dir)}}
	if real, rerr := filepath.EvalSymlinks(dir); rerr == nil && real != e.dirs[0] {
		// The longer first, so that neither leaves a part of the other.
		e.dirs = append(e.dirs, real)
		if len(real) > len(e.dirs[0]) {
			e.dirs[0], e.dirs[1] = e.dirs[1], e.dirs[0]
		}
	}
	return e
}

// OpenOptions are how Open reads a source.
type OpenOptions struct {
	// ReadPlugin reads a Claude Code plugin directory (one with
	// .claude-plugin/plugin.json and no package.json) as a pack, its
	// agents made personas. The package that knows the agent formats
	// provides it (native.ReadPlugin): install knows no harness. Nil,
	// such a directory is refused as a pack without package.json.
	ReadPlugin func(dir string) (*pack.Pack, error)
}

// collect reads the pack in dir, or, when dir has no package.json but is
// a Claude Code plugin, the plugin (o.ReadPlugin), after checking that no
// link leads out of it.
func collect(dir string, o OpenOptions) (*pack.Pack, error) {
	_, errPJ := os.Stat(filepath.Join(dir, "package.json"))
	_, errPlugin := os.Stat(filepath.Join(dir, ".claude-plugin", "plugin.json"))
	if errPJ == nil || errPlugin != nil || o.ReadPlugin == nil {
		return pack.Collect(dir)
	}
	if err := linksStayIn(dir); err != nil {
		return nil, err
	}
	return o.ReadPlugin(dir)
}

// linksStayIn refuses a plugin directory holding a symbolic link that
// leads out of it: a plugin from a repository or an archive must not bring
// in the installer's own files (~/.claude, an MCP configuration with
// tokens), as a pack's sidecars and skills may not.
func linksStayIn(root string) error {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	return filepath.WalkDir(real, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		to, err := filepath.EvalSymlinks(p)
		if err != nil || !pathutil.Within(real, to) {
			return fmt.Errorf("%s: a symbolic link leading out of the plugin; a plugin holds its own files only", p)
		}
		return nil
	})
}

// LockSource is how a lock file names source, given in the working
// directory dir: a local directory or tarball by its absolute path, so
// that outdated finds it from anywhere; anything else (an npm spec, a git
// source) as given.
func LockSource(dir, source string) string {
	if abs := pathutil.AbsIn(dir, source); abs != "" {
		if _, err := os.Stat(abs); err == nil {
			return abs
		}
	}
	return source
}
