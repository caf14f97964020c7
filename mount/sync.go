package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
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
	// OnBranch are files the agent committed and left as committed
	// (package session finds them): they reach the real repository on the
	// agent's branch, and sync-back leaves them out of the working tree.
	OnBranch map[string]bool
	// SyncConfig lets executable configuration (HeldConfig) cross with
	// the rest, instead of holding it (Report.Held).
	SyncConfig bool
}

// Conflict is a file changed both by the agent and in the real tree since
// the sandbox was made.
type Conflict struct {
	Path string `json:"path"`
	// Real is the real file, left as the user left it; Saved is the
	// agent's version, saved under the sandbox directory (ConflictsDir).
	// Saved is empty for a deletion conflict.
	Real  string `json:"real"`
	Saved string `json:"saved,omitempty"`
	// Reason, when set, says what happened where the usual reading of a
	// conflict (changed in the repository too; deleted by the agent but
	// changed in the repository) would not: it completes a sentence
	// that begins with the path. It names paths as they are (a printer
	// quotes it).
	Reason string `json:"reason,omitempty"`
}

// Report is what Sync did.
type Report struct {
	Created   []string   `json:"created"`
	Updated   []string   `json:"updated"`
	Deleted   []string   `json:"deleted"`
	Unapplied []string   `json:"unappliedDeletions"`
	Conflicts []Conflict `json:"conflicts"`
	// NotSynced are files the agent changed that never cross: read-only,
	// ignored or hidden files, and what is not a regular file: symlinks,
	// FIFOs, sockets and devices, made by the agent or put in the place
	// of a regular file (the real file stays as it is); and whatever the
	// agent left below a name a file system takes for .git (.GIT,
	// .git., GIT~1: dotgit.go).
	NotSynced []string `json:"notSynced"`
	// Failed are the paths sync-back could not read or write; the other
	// files were synced, and Sync returns a *SyncError (but for a dry
	// run). Left out of the JSON when empty, so that a report without
	// failures reads as before.
	Failed []Failure `json:"failed,omitempty"`
	// Blocked are files the agent wrote in the place of what it removed
	// (a file where the real tree has its directory, a directory where
	// it has its file or link: a type change) whose removal was not
	// applied: without SyncOptions.Deletes, or left out (OnBranch). The
	// real tree stays as it is there, the agent's version in the
	// sandbox. Left out of the JSON when empty.
	Blocked []string `json:"blocked,omitempty"`
	// OnBranch are the agent's committed changes (files written or
	// deleted), left to its branch instead of the working tree
	// (SyncOptions.OnBranch).
	OnBranch []string `json:"onBranch,omitempty"`
	// Refused are the policy files (PolicyFiles) the agent created,
	// changed or deleted: never synced back; the agent's versions stay
	// in the sandbox. Left out of the JSON when empty.
	Refused []string `json:"refused,omitempty"`
	// Held are the executable configuration files (HeldConfig) the
	// agent created, changed or deleted, held for review without
	// SyncOptions.SyncConfig: the real tree stays as it is there, the
	// agent's versions in the sandbox. Left out of the JSON when empty.
	Held []string `json:"held,omitempty"`
	// Interrupted is set when Sync stopped early because ctx was done.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Failure is a path sync-back could not sync, and why.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// SyncError is the error of a Sync that could not sync some paths (its
// Report's Failed): the agent's version of those is still in the sandbox
// only, so the session must be kept.
type SyncError struct {
	Failed []Failure
}

func (e *SyncError) Error() string {
	const shown = 3
	var names []string
	for i, f := range e.Failed {
		if i == shown {
			names = append(names, fmt.Sprintf("and %d more", len(e.Failed)-shown))
			break
		}
		names = append(names, f.Path)
	}
	files := "files"
	if len(e.Failed) == 1 {
		files = "file"
	}
	return fmt.Sprintf("cannot sync back %d %s: %s", len(e.Failed), files, strings.Join(names, ", "))
}

// Changes counts the files written to the real tree.
func (r *Report) Changes() int { return len(r.Created) + len(r.Updated) + len(r.Deleted) }

// Sync writes the agent's work back to the real tree. It stops after the
// current file when ctx is done. An overlay sandbox's is read from its
// upper layer (syncOverlay), to the same effect; what follows is a
// copy's.
//
// Sync never writes outside the project root nor through a symbolic link:
// it reads the sandbox and writes the real tree by directory descriptors,
// following no link below either root (syncat.go). Where the real tree
// changed type since the sandbox was made (a file that became a
// directory, a link, a FIFO, a socket; a directory on the way that became
// a link or a file), the path is a conflict: the real side stays as it
// is and the agent's version is saved under conflicts/. Deletions follow
// no link either, and remove only a regular file or a link as the
// manifest has it.
//
// A path Sync cannot read or write (an unreadable sandbox directory or
// file, a real directory it may not write) is recorded in the Report's
// Failed, and Sync carries on with the others; it then returns the
// report with a *SyncError, so that the caller keeps the session and
// reports the sync unfinished. A sync run again retries those paths. A
// dry run, which puts nothing at stake, returns its failures in the
// report only.
//
// A file is written whole or not at all: into an unnamed file of its
// directory (Linux), or a temporary file named after the session and the
// file, removed by the next sync that reaches the file when a killed
// process left it; then put in place by a rename, durably. Holes of a
// sparse file stay holes; a set-user-ID or set-group-ID bit never
// crosses; a real file that has other hard links is replaced, never
// written or chmod'ed in place, so that the other names keep their
// content and mode. A FIFO in the real tree is never opened for its
// content (it would block): only regular files are compared.
//
// What the agent made that is not a regular file (a symlink, a FIFO, a
// socket, a device), made anew or in the place of a regular file, is
// reported in NotSynced and never crosses.
//
// Removals are the files and links of the copy the agent deleted, or put
// something else in the place of (a type change: a directory or a link
// for a file, a file or a link for a directory, a file or a directory for
// a link). They apply with SyncOptions.Deletes only, those of type
// changes before the files, the others after; a directory they empty is
// then removed too when the sandbox no longer has it (renamed, removed,
// replaced), never one the user made or one empty at copy time. What the
// agent put in the place of a removal left out waits for it
// (Report.Blocked), and is written once its place is clear: a conflict
// only when the user changed the path, or something below a directory
// being replaced. A real directory left in the place of the agent's file
// once the copy's files in it are removed (by an earlier sync, or live
// sync) is removed when it is empty, as the removal part (with Deletes;
// else Blocked); one that holds what the copy never had (ignored files,
// files the user made) stays, a conflict whose Reason says so.
//
// What a sync applied is the base of the next sync of the sandbox: the
// manifest takes each file written back, found written or deleted as the
// real tree has it then, and the sandbox's file as it was (settle), so
// that what the user does to those files afterwards is the user's, and
// only what the agent changes again syncs again. SaveApplied keeps it for
// another process.
func (s *Sandbox) Sync(ctx context.Context, o SyncOptions) (*Report, error) {
	if s.Overlay != nil {
		return s.syncOverlay(ctx, o)
	}
	r := newReport()
	// What this sync applies is the base of the next one; settled at
	// once: the user may change it right after.
	defer s.settle()
	known := 0 // entries the manifest has, seen in the sandbox
	var files, links, special []string
	var mu sync.Mutex
	s.after = nil
	var seen seenState

	// A stat of every entry, on several workers: most files are as the
	// copy left them and are settled here; the others are synced below,
	// in order. When the journal kept while the harness ran can be
	// trusted, only the entries it names are stat'ed (journal_linux.go).
	skip := s.isGitDir
	visit := func(batch []statEntry) {
		var changed, lnk, spc []string
		n := 0
		for i := range batch {
			e := &batch[i]
			if dotGitAlias(e.rel) { // taken for .git: never synced, reported (dotgit.go)
				if e.st.mode&unix.S_IFMT != unix.S_IFDIR {
					spc = append(spc, e.rel)
				}
				continue
			}
			if s.inGit(e.rel) {
				continue // what the agent put in the place of a git directory
			}
			switch e.st.mode & unix.S_IFMT {
			case unix.S_IFDIR:
				continue
			case unix.S_IFREG:
			case unix.S_IFLNK:
				lnk = append(lnk, e.rel)
			default: // a FIFO, a socket, a device
				spc = append(spc, e.rel)
			}
			me, ok := s.realFiles()[e.rel]
			if ok && e.st.mode&unix.S_IFMT == unix.S_IFREG {
				n++ // anything else in its place may be a removal
			}
			if e.st.mode&unix.S_IFMT == unix.S_IFREG && !(ok && s.agentUntouched(e.rel, me, &e.st)) && !s.materialize[e.rel] {
				changed = append(changed, e.rel)
			}
		}
		mu.Lock()
		known += n
		if o.Remember {
			seen.walked.add(batch)
		}
		files = append(files, changed...)
		links = append(links, lnk...)
		special = append(special, spc...)
		mu.Unlock()
	}
	var err error
	dirty, maybeGone, narrowed := s.narrow(ctx, skip, visit)
	if narrowed {
		s.keepUnchanged(&seen, dirty)
	} else {
		files, links, special, known = nil, nil, nil, 0
		seen = seenState{}
		err = statTree(ctx, s.Tree, 2*runtime.GOMAXPROCS(0), skip, visit)
	}
	if o.Remember {
		s.after = &seen
	}
	var unread []string // sandbox directories that could not be read
	if err != nil {
		if ctx.Err() != nil {
			r.Interrupted = true
			return r, nil
		}
		// The walk went on past what it could not read: those paths
		// fail, the others sync.
		r.Failed = unreadable(s.Tree, s.isGitDir)
		if len(r.Failed) == 0 {
			return r, fmt.Errorf("cannot read the sandbox: %w", err)
		}
		for _, f := range r.Failed {
			unread = append(unread, f.Path)
		}
	}
	box, real := newFdTree(s.Tree), newFdTree(s.Root)
	defer box.close()
	defer real.close()
	fail := func(rel string, err error) { r.Failed = append(r.Failed, Failure{Path: rel, Error: err.Error()}) }
	link := make(map[string]bool, len(links))
	for _, rel := range links {
		link[rel] = true
	}
	odd := append(links, special...)
	sort.Strings(odd)
	for _, rel := range odd {
		if s.materialize[rel] {
			continue
		}
		_, known := s.realFiles()[rel]
		switch {
		case known:
			// A regular file the agent replaced by a link, a FIFO, a
			// socket: never made in the real tree. The file's removal
			// is a deletion when a link took its place (below), and
			// otherwise the real file stays.
			r.NotSynced = append(r.NotSynced, rel)
		case !link[rel]:
			if !s.skippedPath(rel) {
				r.NotSynced = append(r.NotSynced, rel)
			}
		case s.links[rel] != "":
			if t, _ := box.readlink(rel); t != s.links[rel] {
				r.NotSynced = append(r.NotSynced, rel)
			}
		case !s.skippedPath(rel):
			t, _ := box.readlink(rel)
			if target, err := real.readlink(rel); err != nil || target != t {
				r.NotSynced = append(r.NotSynced, rel)
			}
		}
	}
	// Removals: the agent's deletions, and the removal part of its type
	// changes (a file, a directory or a link of the copy it put something
	// else in the place of).
	if !narrowed && known < len(s.realFiles()) {
		maybeGone = make([]string, 0, len(s.realFiles()))
		for rel := range s.realFiles() {
			maybeGone = append(maybeGone, rel)
		}
	}
	var gone []string
	for _, rel := range maybeGone {
		if s.readonly[rel] || below(rel, unread) {
			continue
		}
		if removed, err := removedIn(box, rel, false); err != nil {
			fail(rel, err)
		} else if removed {
			gone = append(gone, rel)
		}
	}
	isLink := map[string]bool{}
	for rel := range s.copyLinks() {
		if link[rel] || s.materialize[rel] || below(rel, unread) {
			continue // still a link; or not the agent's; or unknown
		}
		if narrowed && !named(dirty, rel) {
			continue // untouched: neither it nor a directory above it changed
		}
		if removed, err := removedIn(box, rel, true); err != nil {
			fail(rel, err)
		} else if removed {
			gone = append(gone, rel)
			isLink[rel] = true
		}
	}
	return s.apply(ctx, o, r, files, gone, isLink, box, real)
}

// apply is the second half of a Sync, a copy's or an overlay's: it
// applies the agent's changed regular files (files) and removals (gone;
// the links among them in isLink), reading the agent's side in box, and
// fills r.
func (s *Sandbox) apply(ctx context.Context, o SyncOptions, r *Report, files, gone []string, isLink map[string]bool, box, real *fdTree) (*Report, error) {
	fail := func(rel string, err error) { r.Failed = append(r.Failed, Failure{Path: rel, Error: err.Error()}) }
	sort.Strings(gone)
	sort.Strings(files)
	var held, failed, deleted pathSet // removals left, failed, made
	removeEach := func(rels []string) (stopped bool) {
		for _, rel := range rels {
			if ctx.Err() != nil {
				r.Interrupted = true
				return true
			}
			if o.OnBranch[rel] {
				r.OnBranch = append(r.OnBranch, rel)
				held.add(rel)
				continue
			}
			if kept := s.keptBack(rel, o, r); kept {
				held.add(rel)
				continue
			}
			if !o.Deletes {
				r.Unapplied = append(r.Unapplied, rel)
				held.add(rel)
				continue
			}
			n := len(r.Deleted)
			var err error
			if isLink[rel] {
				err = s.deleteLink(rel, r, o, real)
			} else {
				err = s.deleteFile(rel, r, o, real)
			}
			switch {
			case err != nil:
				fail(rel, err)
				failed.add(rel)
			case len(r.Deleted) > n:
				deleted.add(rel)
				if !o.DryRun {
					s.forget(rel)
				}
			}
		}
		if !o.DryRun && len(deleted.paths) > 0 {
			s.removeEmptied(&deleted, box, real)
		}
		return false
	}
	// The removal part of type changes first, to clear the place of the
	// files that take it; the other deletions after the files, as ever.
	var writes pathSet
	for _, rel := range files {
		writes.add(rel)
	}
	var first, last []string
	for _, rel := range gone {
		if _, ok := writes.near(rel); ok {
			first = append(first, rel)
		} else {
			last = append(last, rel)
		}
	}
	if removeEach(first) {
		return r, nil
	}

	for _, rel := range files {
		if ctx.Err() != nil {
			r.Interrupted = true
			return r, nil
		}
		if o.OnBranch[rel] {
			r.OnBranch = append(r.OnBranch, rel)
			continue
		}
		// A file in the place of what the agent removed: it waits for a
		// removal left out (Blocked) or failed; in a dry run, it is
		// written if the removals would clear its place.
		if dep, ok := failed.near(rel); ok && blocked(rel, nil, box, real) {
			fail(rel, fmt.Errorf("cannot write it in the place of %s, which could not be removed", dep))
			continue
		}
		if _, ok := held.near(rel); ok && blocked(rel, nil, box, real) {
			r.Blocked = append(r.Blocked, rel)
			continue
		}
		if _, ok := deleted.near(rel); ok && o.DryRun && blocked(rel, nil, box, real) && !blocked(rel, &deleted, box, real) {
			if _, known := s.realFiles()[rel]; known {
				r.Updated = append(r.Updated, rel)
			} else {
				r.Created = append(r.Created, rel)
			}
			continue
		}
		conflicts, notSynced, kept := len(r.Conflicts), len(r.NotSynced), len(r.Refused)+len(r.Held)
		if err := s.syncFile(rel, r, o, box, real); err != nil {
			fail(rel, err)
			continue
		}
		if !o.DryRun && len(r.Conflicts) == conflicts && len(r.NotSynced) == notSynced && len(r.Refused)+len(r.Held) == kept {
			// Written, or found written: the real file is the agent's.
			s.applied = append(s.applied, rel)
		}
	}
	if removeEach(last) {
		return r, nil
	}
	sort.Slice(r.Failed, func(i, j int) bool { return r.Failed[i].Path < r.Failed[j].Path })
	r.Conflicts = sortConflicts(r.Conflicts)
	sort.Strings(r.Deleted)
	sort.Strings(r.Unapplied)
	sort.Strings(r.OnBranch)
	sort.Strings(r.Refused)
	sort.Strings(r.Held)
	if len(r.Failed) > 0 && !o.DryRun {
		return r, &SyncError{Failed: r.Failed}
	}
	return r, nil
}

// newReport returns an empty Report, its lists empty, not nil.
func newReport() *Report {
	return &Report{Created: []string{}, Updated: []string{}, Deleted: []string{}, Unapplied: []string{}, Conflicts: []Conflict{}, NotSynced: []string{}, Failed: []Failure{}}
}

// named reports whether dirty names rel or a directory above it.
func named(dirty map[string]struct{}, rel string) bool {
	for p := rel; p != ""; p, _ = splitRel(p) {
		if _, ok := dirty[p]; ok {
			return true
		}
	}
	return false
}

// sortConflicts sorts conflicts by path, one for each: where the
// removal of a link the agent replaced by a file conflicts, and so does
// the file, the file's conflict, which saved the agent's version.
func sortConflicts(cs []Conflict) []Conflict {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
	out := cs[:0]
	for _, c := range cs {
		if n := len(out); n > 0 && out[n-1].Path == c.Path {
			if out[n-1].Saved == "" {
				out[n-1] = c
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// below reports whether rel is one of dirs or below one.
func below(rel string, dirs []string) bool {
	for _, d := range dirs {
		if rel == d || strings.HasPrefix(rel, d+"/") {
			return true
		}
	}
	return false
}

// unreadable returns the directories and entries of the sandbox tree that
// cannot be read (git directories aside, for which skip is true: sync-back
// does not read them), each with its error. The walk of the sandbox stops
// at the first of them but reads the rest; this finds them all.
func unreadable(tree string, skip func(rel string) bool) []Failure {
	var out []Failure
	var walk func(fd int, rel string)
	walk = func(fd int, rel string) {
		dir := filepath.Join(tree, filepath.FromSlash(rel))
		names, err := readNames(fd, dir)
		if err != nil {
			if rel != "" { // the root unreadable: nothing syncs
				out = append(out, Failure{Path: rel, Error: err.Error()})
			}
			return
		}
		sort.Strings(names)
		for _, name := range names {
			sub := path.Join(rel, name)
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if !errors.Is(err, unix.ENOENT) {
					out = append(out, Failure{Path: sub, Error: (&fs.PathError{Op: "lstat", Path: filepath.Join(dir, name), Err: err}).Error()})
				}
				continue
			}
			if st.Mode&unix.S_IFMT != unix.S_IFDIR || skip(sub) {
				continue
			}
			cfd, err := openDirAt(fd, name)
			if err != nil {
				if !errors.Is(err, unix.ENOENT) {
					out = append(out, Failure{Path: sub, Error: (&fs.PathError{Op: "open", Path: filepath.Join(dir, name), Err: err}).Error()})
				}
				continue
			}
			walk(cfd, sub)
			unix.Close(cfd)
		}
	}
	fd, err := unix.Open(tree, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	walk(fd, "")
	return out
}

// untouched reports whether the sandbox's file rel, of stat st, is as the
// copy left it: its manifest entry e's size, time and mode.
func (s *Sandbox) untouched(rel string, e entry, st *warmStat) bool {
	if st.size != e.size || st.mtime.Nano() != e.mtime {
		return false
	}
	mode := fileMode(st.mode)
	return mode == e.mode && !s.readonly[rel] || mode == e.mode&^0o222 && s.readonly[rel] // as Create left it
}

// skippedPath reports whether rel was left out of the copy, or is below a
// directory that was.
func (s *Sandbox) skippedPath(rel string) bool { return below(rel, s.skipped) }

// unchanged reports whether the real entry rel, of stat st (nil when
// there is none), is as it was when the sandbox was made: the regular file
// of the manifest, or still nothing for a file that was not there.
func (s *Sandbox) unchanged(rel string, st *unix.Stat_t) bool {
	e, known := s.realFiles()[rel]
	if !known || st == nil {
		return !known && st == nil
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == e.size &&
		st.Mtim.Nano() == e.mtime && fileMode(uint32(st.Mode)) == e.mode
}

// syncFile syncs the sandbox's regular file rel back; an error is the
// failure of that file alone.
func (s *Sandbox) syncFile(rel string, r *Report, o SyncOptions, box, real *fdTree) error {
	e, known := s.realFiles()[rel]
	if s.readonly[rel] || s.rules.Ignored(rel, false) || s.rules.hidden(rel) || s.rules.isReadonly(rel) {
		if known || !s.skippedPath(rel) {
			r.NotSynced = append(r.NotSynced, rel)
		}
		return nil
	}
	dir, name := splitRel(rel)
	in, err := openBox(box, rel)
	if typeChanged(err) || errors.Is(err, errNotRegular) {
		// The sandbox changed since the walk: what is there now is
		// not a regular file.
		r.NotSynced = append(r.NotSynced, rel)
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(in)
	var bst unix.Stat_t
	if err := unix.Fstat(in, &bst); err != nil {
		return &fs.PathError{Op: "stat", Path: box.path(rel), Err: err}
	}
	if known && bst.Size == e.size && bst.Mtim.Nano() == e.mtime && fileMode(uint32(bst.Mode)) == e.mode {
		return nil // untouched by the agent
	}
	perm := uint32(bst.Mode) & 0o777 // never a set-user-ID or set-group-ID bit
	realPath := real.path(rel)

	// The real side, by a descriptor of its directory: nothing (rst nil),
	// a regular file, something else.
	var rst *unix.Stat_t
	dfd, err := real.openDir(dir, false)
	defer func() {
		if dfd >= 0 {
			unix.Close(dfd)
		}
	}()
	parentChanged := typeChanged(err)
	switch {
	case err == nil:
		if !o.DryRun {
			unlinkTemp(dfd, s.tempName(name)) // left by a killed sync
		}
		var st unix.Stat_t
		if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
			rst = &st
		} else if !errors.Is(err, unix.ENOENT) {
			return &fs.PathError{Op: "lstat", Path: realPath, Err: err}
		}
	case errors.Is(err, fs.ErrNotExist), parentChanged:
	default:
		return err
	}
	if (s.isPolicy(rel) || !o.SyncConfig && s.isHeld(rel)) && !sameFile(dfd, name, rst, in, &bst) {
		s.keptBack(rel, o, r)
		return nil
	}

	if rst != nil && rst.Mode&unix.S_IFMT == unix.S_IFREG && rst.Size == bst.Size {
		same, err := s.sameAsReal(rel, r, o, dfd, name, rst, in, &bst)
		if err != nil || same {
			return err
		}
	}
	if rst != nil && rst.Mode&unix.S_IFMT == unix.S_IFDIR && !parentChanged {
		// A directory in the place of the agent's file, whose files of
		// the copy are gone (their removal was applied, here or by live
		// sync): an empty one is the removal part of the type change
		// (with deletions only); one that holds what the copy never
		// had stays, a conflict that says so.
		names, err := readNamesAt(dfd, name, real.path(rel))
		switch {
		case err == nil && len(names) == 0:
			if !o.Deletes {
				r.Blocked = append(r.Blocked, rel)
				return nil
			}
			if o.DryRun {
				rst = nil
				break
			}
			if err := unix.Unlinkat(dfd, name, unix.AT_REMOVEDIR); err == nil {
				rst = nil
			}
		case err == nil:
			if reason := s.neverHad(rel, names, dfd, name); reason != "" {
				if err := s.conflict(rel, r, o, in, &bst); err != nil {
					return err
				}
				r.Conflicts[len(r.Conflicts)-1].Reason = reason
				return nil
			}
		}
	}
	if parentChanged || !s.unchanged(rel, rst) {
		return s.conflict(rel, r, o, in, &bst)
	}
	if o.Progress != nil {
		o.Progress(rel)
	}
	if !o.DryRun {
		if dfd < 0 {
			dfd, err = real.openDir(dir, true)
			if typeChanged(err) {
				return s.conflict(rel, r, o, in, &bst)
			}
			if err != nil {
				return fmt.Errorf("cannot write %s back: %w", realPath, err)
			}
		}
		err := writeFileTo(dfd, filepath.Dir(realPath), name, s.tempName(name), in, bst.Size, perm, put{rel: rel, over: rst})
		if errors.Is(err, errExists) || errors.Is(err, errChanged) {
			return s.conflict(rel, r, o, in, &bst)
		}
		if err != nil {
			return fmt.Errorf("cannot write %s back: %w", realPath, err)
		}
	}
	if known {
		r.Updated = append(r.Updated, rel)
	} else {
		r.Created = append(r.Created, rel)
	}
	return nil
}

// readNamesAt lists the directory name of dirfd (path p), following no
// link.
func readNamesAt(dirfd int, name, p string) ([]string, error) {
	fd, err := openDirAt(dirfd, name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	return readNames(fd, p)
}

// neverHad returns, for the real directory rel (name of dirfd) whose
// entries are names, the Reason of the conflict of a file the agent put
// in its place: it holds what the copy never had (files the copy left
// out, such as ignored ones, or made since), naming the first of them;
// empty when all it holds was copied.
func (s *Sandbox) neverHad(rel string, names []string, dirfd int, name string) string {
	const shown = 3
	var odd []string
	more := 0
	sort.Strings(names)
	for _, n := range names {
		sub := rel + "/" + n
		if !s.copied(sub, dirfd, name, n) {
			if len(odd) < shown {
				odd = append(odd, sub)
			} else {
				more++
			}
		}
	}
	if len(odd) == 0 {
		return ""
	}
	list := strings.Join(odd, ", ")
	if more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return "is a directory in the repository that holds files the sandbox never had (" + list + "): it stays, and the agent's file is not written"
}

// copied reports whether the real entry sub (n in the directory name of
// dirfd) is, or holds only, what the manifest has: files and links of the
// copy.
func (s *Sandbox) copied(sub string, dirfd int, name, n string) bool {
	if _, ok := s.realFiles()[sub]; ok {
		return true
	}
	if _, ok := s.copyLinks()[sub]; ok {
		return true
	}
	fd, err := openDirAt(dirfd, name)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return false
	}
	kids, err := readNamesAt(fd, n, sub)
	if err != nil {
		return false
	}
	for _, k := range kids {
		if !s.copied(sub+"/"+k, fd, n, k) {
			return false
		}
	}
	return true
}

// errNotRegular is the error of a sandbox path that is not a regular
// file.
var errNotRegular = errors.New("not a regular file")

// openBox opens the sandbox's regular file rel for reading, following no
// link.
func openBox(box *fdTree, rel string) (int, error) {
	dir, name := splitRel(rel)
	dfd, err := box.openDir(dir, false)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	fd, err := openFileAt(dfd, name)
	if errors.Is(err, unix.ELOOP) {
		return -1, errNotRegular
	}
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: box.path(rel), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return -1, errNotRegular
	}
	return fd, nil
}

// sameAsReal reports whether the real regular file name of dfd, of stat
// rst, has the content of the sandbox's file in, of stat bst. When it
// has, the real file gets the sandbox file's permissions if it is as the
// copy found it (the agent changed the mode only, or an earlier,
// interrupted sync wrote the content).
func (s *Sandbox) sameAsReal(rel string, r *Report, o SyncOptions, dfd int, name string, rst *unix.Stat_t, in int, bst *unix.Stat_t) (bool, error) {
	realPath := s.Root + string(filepath.Separator) + filepath.FromSlash(rel)
	fd, err := openFileAt(dfd, name)
	if err != nil {
		return false, nil // changed meanwhile: not the same
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Ino != rst.Ino || st.Dev != rst.Dev || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, nil
	}
	same, err := sameData(in, fd, bst.Size)
	if err != nil || !same {
		if err != nil {
			err = fmt.Errorf("cannot compare %s with the sandbox's: %w", realPath, err)
		}
		return false, err
	}
	perm := uint32(bst.Mode) & 0o777
	if uint32(st.Mode)&0o7777 == perm || !s.unchanged(rel, &st) {
		return true, nil
	}
	if !o.DryRun {
		if st.Nlink > 1 {
			// Another name shares the file: a copy with the new mode
			// replaces this name, the other keeps its mode.
			err = writeFileTo(dfd, filepath.Dir(realPath), name, s.tempName(name), in, bst.Size, perm, put{rel: rel, over: &st})
			if errors.Is(err, errChanged) {
				return false, nil // written meanwhile: sync-back decides again
			}
		} else {
			err = unix.Fchmod(fd, perm)
		}
		if err != nil {
			return true, fmt.Errorf("cannot change the mode of %s: %w", realPath, err)
		}
	}
	r.Updated = append(r.Updated, rel)
	return true, nil
}

// conflictPath is where the agent's version of rel is saved when it
// conflicts: below the sandbox directory's conflicts/.
func (s *Sandbox) conflictPath(rel string) string {
	return filepath.Join(s.Dir, ConflictsDir, filepath.FromSlash(rel))
}

// conflict saves the sandbox's file rel, open as in, of stat bst, under
// the sandbox's conflicts directory and reports the conflict.
func (s *Sandbox) conflict(rel string, r *Report, o SyncOptions, in int, bst *unix.Stat_t) error {
	saved := s.conflictPath(rel)
	if !o.DryRun {
		if err := s.save(saved, in, bst.Size, uint32(bst.Mode)&0o777); err != nil {
			return fmt.Errorf("cannot save the agent's version of %s: %w", rel, err)
		}
	}
	r.Conflicts = append(r.Conflicts, Conflict{Path: rel, Real: filepath.Join(s.Root, filepath.FromSlash(rel)), Saved: saved})
	return nil
}

// save writes the size bytes of the file in to dst, in the sandbox
// directory.
func (s *Sandbox) save(dst string, in int, size int64, perm uint32) error {
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	name := filepath.Base(dst)
	return writeFileAt(dfd, dir, name, s.tempName(name), in, size, perm, true)
}

// deleteFile applies the agent's deletion of the file rel: the real file
// is removed if it is as the copy found it, and a conflict otherwise.
func (s *Sandbox) deleteFile(rel string, r *Report, o SyncOptions, real *fdTree) error {
	return s.remove(rel, r, o, real, func(st *unix.Stat_t) bool { return s.unchanged(rel, st) })
}

// deleteLink applies the agent's removal of the symbolic link rel of the
// copy: the real link is removed, never followed, if it is as the copy
// found it (a link is never changed in place: another target is another
// link, of another time), and a conflict otherwise.
func (s *Sandbox) deleteLink(rel string, r *Report, o SyncOptions, real *fdTree) error {
	e := s.copyLinks()[rel]
	return s.remove(rel, r, o, real, func(st *unix.Stat_t) bool {
		return st.Mode&unix.S_IFMT == unix.S_IFLNK && st.Size == e.size && st.Mtim.Nano() == e.mtime
	})
}

// remove removes the real entry rel, a file or a link, if asCopied says it
// is as the copy found it, and reports a conflict otherwise.
func (s *Sandbox) remove(rel string, r *Report, o SyncOptions, real *fdTree, asCopied func(*unix.Stat_t) bool) error {
	realPath := real.path(rel)
	dir, name := splitRel(rel)
	dfd, err := real.openDir(dir, false)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Gone on both sides: deleted by an earlier, interrupted sync,
		// or by the user too.
		r.Deleted = append(r.Deleted, rel)
		return nil
	case typeChanged(err):
		r.Conflicts = append(r.Conflicts, Conflict{Path: rel, Real: realPath})
		return nil
	case err != nil:
		return fmt.Errorf("cannot delete %s: %w", realPath, err)
	}
	defer unix.Close(dfd)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); errors.Is(err, unix.ENOENT) {
		r.Deleted = append(r.Deleted, rel)
		return nil
	} else if err != nil {
		return fmt.Errorf("cannot delete %s: %w", realPath, err)
	}
	if !asCopied(&st) {
		r.Conflicts = append(r.Conflicts, Conflict{Path: rel, Real: realPath})
		return nil
	}
	if o.Progress != nil {
		o.Progress(rel)
	}
	if !o.DryRun {
		// Removed only if it is still what was checked (unlinkChecked): a
		// write after the check stays, as a conflict.
		saved, err := unlinkChecked(dfd, filepath.Dir(realPath), name, s.tempName(name), put{rel: rel, over: &st}, s.displaced(rel))
		switch {
		case errors.Is(err, errChanged):
			c := Conflict{Path: rel, Real: realPath}
			if saved != "" {
				c.Reason = displacedReason(saved)
			}
			r.Conflicts = append(r.Conflicts, c)
			return nil
		case errors.Is(err, errGone):
		case err != nil:
			return fmt.Errorf("cannot delete %s: %w", realPath, err)
		}
	}
	r.Deleted = append(r.Deleted, rel)
	return nil
}

// displacedReason is the Reason of a deletion's conflict whose real file
// was replaced while it was being removed: the version the new one
// replaced is at saved.
func displacedReason(saved string) string {
	return "was deleted by the agent, and written in the repository while it was being removed: yours is kept; the version it replaced is saved at " + saved
}

// displaced returns the function that saves, under the sandbox's
// conflicts directory at rel, a real file or link that unlinkChecked moved
// aside (tmp of dirfd) and could not put back, a new one having taken its
// name: a regular file's bytes and permissions, a link's target.
func (s *Sandbox) displaced(rel string) func(dirfd int, tmp string) (string, error) {
	return func(dirfd int, tmp string) (string, error) {
		saved := s.conflictPath(rel) + ".replaced"
		var st unix.Stat_t
		if err := unix.Fstatat(dirfd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return "", err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			target, err := readlinkAt(dirfd, tmp)
			if err != nil {
				return "", err
			}
			if err := os.MkdirAll(filepath.Dir(saved), 0o755); err != nil {
				return "", err
			}
			_ = os.Remove(saved)
			return saved, os.Symlink(target, saved)
		case unix.S_IFREG:
			fd, err := openFileAt(dirfd, tmp)
			if err != nil {
				return "", err
			}
			defer unix.Close(fd)
			if err := unix.Fstat(fd, &st); err != nil {
				return "", err
			}
			return saved, s.save(saved, fd, st.Size, uint32(st.Mode)&0o777)
		}
		return "", errNotRegular
	}
}

// removedIn reports whether the agent removed the regular file rel of the
// copy (with link, its symbolic link rel) from the sandbox box: nothing
// is there, or a directory, a link in the place of the file or a regular
// file in the place of the link, or a link is on the way (a directory the
// agent replaced by a link). A FIFO, a socket or a device in its place is
// not a removal: it is reported, and the real entry stays.
func removedIn(box *fdTree, rel string, link bool) (bool, error) {
	var st unix.Stat_t
	err := box.lstat(rel, &st)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, errLinkOnPath):
		return true, nil
	case err != nil:
		return false, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return true, nil
	case unix.S_IFLNK:
		return !link, nil
	case unix.S_IFREG:
		return link, nil
	}
	return false, nil
}

// boxHasDir reports whether the sandbox box has a directory at rel (or
// cannot tell: an unreadable directory on the way).
func boxHasDir(box *fdTree, rel string) bool {
	var st unix.Stat_t
	err := box.lstat(rel, &st)
	if err != nil {
		return !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errLinkOnPath)
	}
	return st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// pathSet is a set of paths, with the directories above them.
type pathSet struct {
	paths map[string]bool
	dirs  map[string]string // a directory above a path of the set: that path
}

func (p *pathSet) add(rel string) {
	if p.paths == nil {
		p.paths, p.dirs = map[string]bool{}, map[string]string{}
	}
	p.paths[rel] = true
	for d, _ := splitRel(rel); d != ""; d, _ = splitRel(d) {
		if _, ok := p.dirs[d]; ok {
			break // and the directories above it
		}
		p.dirs[d] = rel
	}
}

// near returns the path of the set that rel is, is below, or is a
// directory above.
func (p *pathSet) near(rel string) (string, bool) {
	if p.paths[rel] {
		return rel, true
	}
	if q, ok := p.dirs[rel]; ok {
		return q, true
	}
	for d, _ := splitRel(rel); d != ""; d, _ = splitRel(d) {
		if p.paths[d] {
			return d, true
		}
	}
	return "", false
}

// removeEmptied removes the real directories that the removals in
// deleted left empty and that the sandbox no longer has as directories
// (the agent renamed or removed them, or put a file or a link in their
// place), deepest first. Only a directory above a removal is tried, so
// never one the user made, nor one empty at copy time; the removal of a
// directory that is not empty fails and leaves it (and those above it)
// as they are; no link is followed.
func (s *Sandbox) removeEmptied(deleted *pathSet, box, real *fdTree) {
	dirs := make([]string, 0, len(deleted.dirs))
	for d := range deleted.dirs {
		dirs = append(dirs, d)
	}
	// A directory sorts after the directories above it.
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	for _, dir := range dirs {
		if boxHasDir(box, dir) {
			continue // the agent kept it
		}
		parent, name := splitRel(dir)
		pfd, err := real.openDir(parent, false)
		if err != nil {
			continue
		}
		_ = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
		unix.Close(pfd)
	}
}

// blocked reports whether the real tree has, in the place of the file
// rel, a directory or what is not a regular file, or above it what is
// not a directory, once the removals in removed (nil for none) are made
// and the directories they empty removed (removeEmptied).
func blocked(rel string, removed *pathSet, box, real *fdTree) bool {
	if removed == nil {
		removed = &pathSet{}
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		last := i == len(parts)-1
		var st unix.Stat_t
		err := real.lstat(p, &st)
		if errors.Is(err, fs.ErrNotExist) {
			return false
		}
		if err != nil {
			return true
		}
		switch t := st.Mode & unix.S_IFMT; {
		case t == unix.S_IFDIR && !last:
		case t == unix.S_IFDIR:
			_, above := removed.dirs[p]
			return !above || boxHasDir(box, p) || !wouldEmpty(p, removed, box, real)
		case t == unix.S_IFREG && last:
			return false
		default:
			return !removed.paths[p]
		}
	}
	return false
}

// wouldEmpty reports whether the real directory dir holds nothing once the
// removals in removed are made and the directories they empty removed.
func wouldEmpty(dir string, removed *pathSet, box, real *fdTree) bool {
	fd, err := real.openDir(dir, false)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	names, err := readNames(fd, real.path(dir))
	if err != nil {
		return false
	}
	for _, name := range names {
		sub := dir + "/" + name
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return false
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			if !removed.paths[sub] {
				return false
			}
			continue
		}
		if _, above := removed.dirs[sub]; !above || boxHasDir(box, sub) || !wouldEmpty(sub, removed, box, real) {
			return false
		}
	}
	return true
}

// forget drops the file or link rel, which a sync removed from the real
// tree, from the base: the agent's deletion is applied.
func (s *Sandbox) forget(rel string) {
	delete(s.realFiles(), rel)
	delete(s.copyLinks(), rel)
	delete(s.boxBase, rel)
	s.edited, s.moved = true, true
}

// settle makes the base of the files a Sync wrote back or found written
// what the real tree has now (the manifest's entry) and what the sandbox
// has (boxBase), where both still hold the same bytes: a later sync takes
// such a file as untouched by the agent unless the agent changes it
// again, and what the user does to it as the user's. A file whose real
// side changed since it was written keeps its base, and stays what it is
// (a conflict, if the user changed it).
func (s *Sandbox) settle() {
	if len(s.applied) == 0 {
		return
	}
	box, real := newFdTree(s.writeRoot()), newFdTree(s.Root)
	defer box.close()
	defer real.close()
	for _, rel := range s.applied {
		s.settleFile(rel, box, real)
	}
	s.applied = nil
}

func (s *Sandbox) settleFile(rel string, box, real *fdTree) {
	in, err := openBox(box, rel)
	if err != nil {
		return
	}
	defer unix.Close(in)
	out, err := openBox(real, rel)
	if err != nil {
		return
	}
	defer unix.Close(out)
	var bst, rst unix.Stat_t
	if unix.Fstat(in, &bst) != nil || unix.Fstat(out, &rst) != nil || bst.Size != rst.Size {
		return
	}
	if same, err := sameData(in, out, bst.Size); err != nil || !same {
		return
	}
	re := entry{size: rst.Size, mtime: rst.Mtim.Nano(), mode: fileMode(uint32(rst.Mode))}
	be := entry{size: bst.Size, mtime: bst.Mtim.Nano(), mode: fileMode(uint32(bst.Mode))}
	s.realFiles()[rel] = re
	if be == re {
		delete(s.boxBase, rel)
	} else {
		if s.boxBase == nil {
			s.boxBase = map[string]entry{}
		}
		s.boxBase[rel] = be
	}
	s.edited, s.moved = true, true
}

// SaveApplied saves the sandbox's state (Save) when a Sync applied
// changes since the sandbox was made or opened: the files it wrote back,
// found written or deleted are the base of the next sync of a sandbox
// that is kept, in this process or another. A sandbox removed after its
// sync needs none of it.
func (s *Sandbox) SaveApplied() error {
	if !s.moved {
		return nil
	}
	return s.Save()
}

// agentUntouched reports whether the sandbox's file rel, of stat st, is
// as the base has it: as the sandbox had it when a sync applied it
// (boxBase), else as the copy left it (untouched; e is its manifest
// entry).
func (s *Sandbox) agentUntouched(rel string, e entry, st *warmStat) bool {
	if b, ok := s.boxBase[rel]; ok {
		return st.size == b.size && st.mtime.Nano() == b.mtime && fileMode(st.mode) == b.mode
	}
	return s.untouched(rel, e, st)
}
