package session

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/seed-3bc194a6/workforce/mount"
)

// The agent's repository in an overlay sandbox. Outside the harness's
// namespaces the overlay's tree is an empty directory: the repository the
// agent committed in is the real .git (the lower layer) under what git
// wrote in the upper layer (new objects, refs, logs, HEAD, the index).
// Workforce reads it without mounting the overlay again, so that a
// session whose namespace is gone (a crash, sessions sync) is read as a
// live one: gitView makes, in the session directory, a small repository
// of the merged state: HEAD, config, packed-refs, refs and logs/HEAD
// copied from the real .git, then from the upper layer's over them (a
// whiteout drops the real one), and its object store empty with
// alternates naming the upper layer's objects and the real ones. It costs
// the copy of the refs and a few small files, never of objects. The
// agent's own objects are those of the upper layer (agentObjects), its
// files are read through mount.Sandbox.MergedPath. A
// repository whose .git is a file (a linked worktree, a submodule) is not
// viewed: its commits stay in the session.

// gitViewDir is the directory of the view in the session directory, made
// again each time it is needed.
const gitViewDir = "gitview"

// gitView returns box itself for a copy; for an overlay, a sandbox like
// box whose tree is the view of the agent's repository (see above), and
// a function that removes the view. The view's tree holds .git alone:
// files of the work tree are read through MergedPath.
func gitView(box *mount.Sandbox) (*mount.Sandbox, func(), error) {
	ov := box.Overlay
	realGit := filepath.Join(box.Root, ".git")
	if ov == nil {
		return box, func() {}, nil
	}
	view := filepath.Join(box.Dir, gitViewDir)
	done := func() { os.RemoveAll(view) }
	done()
	if fi, err := os.Lstat(realGit); err != nil || !fi.IsDir() {
		return box, func() {}, nil
	}
	upperGit := filepath.Join(ov.Upper, ".git")
	dst := filepath.Join(view, ".git")
	if err := os.MkdirAll(filepath.Join(dst, "objects", "info"), 0o700); err != nil {
		return nil, done, err
	}
	for _, name := range []string{"HEAD", "config", "packed-refs", "refs", filepath.Join("logs", "HEAD")} {
		for _, from := range []string{realGit, upperGit} {
			if !noLinks(from, filepath.Dir(name)) {
				// The agent made .git (or .git/logs) a link: what it
				// leads to is not the agent's repository, and is not read.
				continue
			}
			if err := copyMerged(filepath.Join(from, name), filepath.Join(dst, name)); err != nil {
				done()
				return nil, done, err
			}
		}
	}
	alt := filepath.Join(realGit, "objects") + "\n"
	if fi, err := os.Lstat(agentObjects(box)); err == nil && fi.IsDir() {
		alt = agentObjects(box) + "\n" + alt
	}
	if err := os.WriteFile(filepath.Join(dst, "objects", "info", "alternates"), []byte(alt), 0o600); err != nil {
		done()
		return nil, done, err
	}
	v := *box
	v.Tree = view
	return &v, done, nil
}

// agentObjects is the object store the agent's git wrote in box: the
// sandbox's own (mount.Sandbox.GitObjects) for a copy, the upper layer's
// .git/objects for an overlay.
func agentObjects(box *mount.Sandbox) string {
	if box.Overlay == nil {
		return box.GitObjects()
	}
	if !noLinks(box.Overlay.Upper, ".git/objects") {
		return "" // none, or a link the agent made: not its objects
	}
	return filepath.Join(box.Overlay.Upper, ".git", "objects")
}

// copyMerged copies src (a regular file, or a directory of them) over
// dst: a file replaces dst's, a directory's entries are copied into dst
// one by one, and a whiteout (a character device 0:0, what overlayfs
// writes for a deletion) removes dst. A missing src changes nothing. A
// FIFO is made a FIFO, never read (it would block): the view's reader
// refuses it as it refuses one in a copy's .git. What else is neither a
// file nor a directory is left out.
func copyMerged(src, dst string) error {
	fi, err := os.Lstat(src)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil
	case err != nil:
		return err
	case isWhiteout(fi):
		return os.RemoveAll(dst)
	case fi.IsDir():
		if d, err := os.Lstat(dst); err == nil && !d.IsDir() {
			os.Remove(dst)
		}
		if err := os.MkdirAll(dst, 0o700); err != nil {
			return err
		}
		ents, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := copyMerged(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
		return nil
	case fi.Mode()&fs.ModeNamedPipe != 0:
		os.RemoveAll(dst)
		return syscall.Mkfifo(dst, 0o600)
	case fi.Mode().IsRegular():
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		os.RemoveAll(dst)
		return os.WriteFile(dst, data, 0o600)
	}
	return nil
}

// noLinks reports whether base, and each directory of the relative
// path rel below it, is a directory and not a link to one: the upper
// layer is the agent's to write, links included.
func noLinks(base, rel string) bool {
	p := base
	for _, part := range append([]string{""}, strings.Split(filepath.ToSlash(rel), "/")...) {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		if fi, err := os.Lstat(p); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// isWhiteout reports whether fi is an overlay's whiteout: a character
// device 0:0.
func isWhiteout(fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeCharDevice == 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Rdev == 0
}
