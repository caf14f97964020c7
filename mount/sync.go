package mount

import (
	"bytes"
	"runtime"
	"sync"

	"context"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SyncOptions change what Sync does.
type SyncOptions struct {
	// Deletes applies deletions; without it they are only reported.
	Deletes bool
	// Progress, when set, is called before each file is written back.
	Progress func(rel string)
	// DryRun reports what a sync would do without writing anything.
	DryRun bool
	// Remember keeps what the sync saw of the sandbox, for Park.
	Remember bool
}

// Conflict is a file changed both by the agent and in the real tree since
// the sandbox was made.
type Conflict struct {
	Path string `json:"path"`
	// Real is the real file, left as the user left it; Saved is the
	// agent's version, saved under the session directory. Saved is empty
	// for a deletion conflict.
	Real  string `json:"real"`
	Saved string `json:"saved,omitempty"`
}

// Report is what Sync did.
type Report struct {
	Created   []string   `json:"created"`
	Updated   []string   `json:"updated"`
	Deleted   []string   `json:"deleted"`
	Unapplied []string   `json:"unappliedDeletions"`
	Conflicts []Conflict `json:"conflicts"`
	// NotSynced are files the agent changed that never cross: read-only,
	// ignored or hidden files, and symlinks.
	NotSynced []string `json:"notSynced"`
	// Interrupted is set when Sync stopped early because ctx was done.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Changes counts the files written to the real tree.
func (r *Report) Changes() int { return len(r.Created) + len(r.Updated) + len(r.Deleted) }

// Sync writes the agent's work back to the real tree. It stops after the
// current file when ctx is done.
func (s *Session) Sync(ctx context.Context, o SyncOptions) (*Report, error) {
	r := &Report{Created: []string{}, Updated: []string{}, Deleted: []string{}, Unapplied: []string{}, Conflicts: []Conflict{}, NotSynced: []string{}}
	known := 0 // entries the manifest has, seen in the sandbox
	var files, links []string
	var mu sync.Mutex
	if o.Remember {
		s.after = make([]statEntry, 0, len(s.manifest))
	}
	// A stat of every entry, on several workers: most files are as the
	// copy left them and are settled here; the others are synced below,
	// in order.
	err := statTree(ctx, s.Tree, 2*runtime.GOMAXPROCS(0), func(rel string) bool { return isDotGit(rel) },
		func(batch []statEntry) {
			var changed, lnk []string
			n := 0
			for i := range batch {
				e := &batch[i]
				switch e.st.mode & unix.S_IFMT {
				case unix.S_IFDIR:
					continue
				case unix.S_IFLNK:
					lnk = append(lnk, e.rel)
				}
				me, ok := s.manifest[e.rel]
				if ok {
					n++
				}
				if e.st.mode&unix.S_IFMT == unix.S_IFREG && !(ok && s.untouched(e.rel, me, &e.st)) && !s.materialize[e.rel] {
					changed = append(changed, e.rel)
				}
			}
			mu.Lock()
			known += n
			if o.Remember {
				s.after = append(s.after, batch...)
			}
			files = append(files, changed...)
			links = append(links, lnk...)
			mu.Unlock()
		})
	if err != nil {
		if ctx.Err() != nil {
			r.Interrupted = true
			return r, nil
		}
		return r, fmt.Errorf("cannot read the sandbox: %w", err)
	}
	sort.Strings(links)
	for _, rel := range links {
		if s.materialize[rel] {
			continue
		}
		path := filepath.Join(s.Tree, filepath.FromSlash(rel))
		if target, ok := s.links[rel]; ok {
			if readlink(path) != target {
				r.NotSynced = append(r.NotSynced, rel)
			}
			continue
		}
		if _, known := s.manifest[rel]; !known && !s.skippedPath(rel) {
			if target, err := os.Readlink(filepath.Join(s.Root, filepath.FromSlash(rel))); err != nil || target != readlink(path) {
				r.NotSynced = append(r.NotSynced, rel)
			}
		}
	}
	sort.Strings(files)
	for _, rel := range files {
		if ctx.Err() != nil {
			r.Interrupted = true
			return r, nil
		}
		if err := s.syncFile(rel, r, o); err != nil {
			return r, err
		}
	}
	// Deletions: only when the sandbox has fewer of the manifest's files
	// than the manifest, which are they.
	var gone []string
	if known < len(s.manifest) {
		for rel := range s.manifest {
			var st unix.Stat_t
			err := unix.Lstat(filepath.Join(s.Tree, filepath.FromSlash(rel)), &st)
			if (err != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR) && !s.readonly[rel] {
				gone = append(gone, rel)
			}
		}
	}
	sort.Strings(gone)
	for _, rel := range gone {
		if ctx.Err() != nil {
			r.Interrupted = true
			return r, nil
		}
		if !o.Deletes {
			r.Unapplied = append(r.Unapplied, rel)
			continue
		}
		real := filepath.Join(s.Root, filepath.FromSlash(rel))
		if _, err := os.Lstat(real); errors.Is(err, fs.ErrNotExist) {
			// Gone on both sides: deleted by an earlier, interrupted
			// sync, or by the user too.
			r.Deleted = append(r.Deleted, rel)
			continue
		}
		if !s.unchanged(rel, real) {
			r.Conflicts = append(r.Conflicts, Conflict{Path: rel, Real: real})
			continue
		}
		if o.Progress != nil {
			o.Progress(rel)
		}
		if !o.DryRun {
			if err := os.Remove(real); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return r, fmt.Errorf("cannot delete %s: %w", real, err)
			}
		}
		r.Deleted = append(r.Deleted, rel)
	}
	return r, nil
}

func readlink(path string) string {
	t, _ := os.Readlink(path)
	return t
}

// untouched reports whether the sandbox's file rel, of stat st, is as the
// copy left it: its manifest entry e's size, time and mode.
func (s *Session) untouched(rel string, e entry, st *warmStat) bool {
	if st.size != e.size || st.mtime.Nano() != e.mtime.UnixNano() {
		return false
	}
	mode := fileMode(st.mode)
	return mode == e.mode && !s.readonly[rel] || mode == e.mode&^0o222 && s.readonly[rel] // as Create left it
}

// skippedPath reports whether rel was left out of the copy, or is below a
// directory that was.
func (s *Session) skippedPath(rel string) bool {
	for _, sk := range s.skipped {
		if rel == sk || strings.HasPrefix(rel, sk+"/") {
			return true
		}
	}
	return false
}

// unchanged reports whether the real file is as it was when the sandbox
// was made (or still absent, for a file that was not there).
func (s *Session) unchanged(rel, real string) bool {
	fi, err := os.Lstat(real)
	e, known := s.manifest[rel]
	if !known {
		return errors.Is(err, fs.ErrNotExist)
	}
	return err == nil && fi.Mode().IsRegular() && fi.Size() == e.size && fi.ModTime().Equal(e.mtime) && fi.Mode() == e.mode
}

func (s *Session) syncFile(rel string, r *Report, o SyncOptions) error {
	box := filepath.Join(s.Tree, filepath.FromSlash(rel))
	real := filepath.Join(s.Root, filepath.FromSlash(rel))
	bi, err := os.Stat(box)
	if err != nil {
		return err
	}
	e, known := s.manifest[rel]
	wantMode := e.mode
	if s.readonly[rel] {
		wantMode &^= 0o222 // as Create left it
	}
	if known && bi.Size() == e.size && bi.ModTime().Equal(e.mtime) && bi.Mode() == wantMode {
		return nil // untouched by the agent
	}
	if s.readonly[rel] || s.rules.ignored(rel, false) || s.rules.hidden(rel) || s.rules.isReadonly(rel) {
		if known || !s.skippedPath(rel) {
			r.NotSynced = append(r.NotSynced, rel)
		}
		return nil
	}
	same, err := sameContent(box, real)
	if err != nil {
		return err
	}
	if same {
		// Already there: the agent wrote the same bytes, or an earlier,
		// interrupted sync wrote this file.
		if ri, err := os.Stat(real); err == nil && ri.Mode() != bi.Mode() && s.unchanged(rel, real) {
			if !o.DryRun {
				if err := os.Chmod(real, bi.Mode().Perm()); err != nil {
					return err
				}
			}
			r.Updated = append(r.Updated, rel)
		}
		return nil
	}
	if !s.unchanged(rel, real) {
		saved := filepath.Join(s.Dir, ConflictsDir, filepath.FromSlash(rel))
		if !o.DryRun {
			if err := copyFile(box, saved, bi.Mode().Perm()); err != nil {
				return fmt.Errorf("cannot save the agent's version of %s: %w", rel, err)
			}
		}
		r.Conflicts = append(r.Conflicts, Conflict{Path: rel, Real: real, Saved: saved})
		return nil
	}
	if o.Progress != nil {
		o.Progress(rel)
	}
	if !o.DryRun {
		if err := copyFile(box, real, bi.Mode().Perm()); err != nil {
			return fmt.Errorf("cannot write %s back: %w", real, err)
		}
	}
	if known {
		r.Updated = append(r.Updated, rel)
	} else {
		r.Created = append(r.Created, rel)
	}
	return nil
}

// sameContent reports whether two files have the same bytes; a missing b is
// not the same.
func sameContent(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ia, _ := fa.Stat()
	ib, _ := fb.Stat()
	if !ib.Mode().IsRegular() || ia.Size() != ib.Size() {
		return false, nil
	}
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(fa, bufA)
		nb, errB := io.ReadFull(fb, bufB)
		if na != nb || !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == io.EOF || errB == io.ErrUnexpectedEOF, nil
		}
		if errA != nil {
			return false, errA
		}
		if errB != nil {
			return false, errB
		}
	}
}

// copyFile writes src to dst atomically and durably: a temporary file in
// dst's directory, synced, renamed into place, and the directory synced.
func copyFile(src, dst string, perm fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".workforce-sync-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	// Durable before it is in place, and in place durably: the session's
	// record says synced only after every file is on disk.
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dst))
}
