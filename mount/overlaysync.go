package mount

// Sync-back of an overlay sandbox: the upper layer is what the agent
// changed, so it alone is read (and the real tree only at the paths it
// names), in the time of what changed, whatever the size of the tree.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// upperScan is what syncOverlay finds in the upper layer.
type upperScan struct {
	s         *Sandbox
	ctx       context.Context
	real      *fdTree
	files     []string        // regular files: written or changed by the agent
	gone      []string        // real files and links the agent removed
	isLink    map[string]bool // the links among gone
	notSynced []string
	failed    []Failure
}

// syncOverlay is Sync of an overlay sandbox. The upper layer holds, at
// their paths, what the agent wrote: a regular file is created where the
// real tree has none and updated where it differs (a mode change is an
// update); a whiteout (a character device 0:0, or an empty file with the
// extended attribute user.overlay.whiteout) is a deletion of the real
// entry (all the real files below it for a directory), but for the
// sandbox's own whiteouts (OverlayLayers.Whiteouts); an opaque directory
// (user.overlay.opaque "y") replaced the real one, whose entries it lacks
// are deletions. A symbolic link, a FIFO, a socket or a device the agent
// made is reported, not synced, as a copy's. What a copy's Sync keeps
// back stays back the same way (git directories, names taken for .git,
// ignored, hidden and read-only files, policy files and held
// configuration, materialized files), and the same primitives write the
// real tree. A conflict is a path the agent changed whose real entry
// changed later than OverlayLayers.Started (its change time; read only
// for the paths the agent changed), or is gone though the overlay copied
// the agent's file up from it: the user's version stays, the
// agent's is saved under conflicts/. A file a sync applied is judged
// after by the base it left, as in a copy (settle).
func (s *Sandbox) syncOverlay(ctx context.Context, o SyncOptions) (*Report, error) {
	r := newReport()
	box, real := newFdTree(s.Overlay.Upper), newFdTree(s.Root)
	defer box.close()
	defer real.close()
	u := &upperScan{s: s, ctx: ctx, real: real, isLink: map[string]bool{}}
	root, err := unix.Open(s.Overlay.Upper, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return r, fmt.Errorf("cannot read the sandbox's upper layer: %w", err)
	}
	u.dir(root, "", false)
	unix.Close(root)
	if ctx.Err() != nil {
		r.Interrupted = true
		return r, nil
	}
	r.NotSynced = append(r.NotSynced, u.notSynced...)
	r.Failed = append(r.Failed, u.failed...)
	sort.Strings(u.files)
	sort.Strings(u.gone)
	u.gone = uniqueSorted(u.gone)
	// The base of each path the agent changed: the real entry as it is,
	// or, when it changed since the sandbox was made, an entry no stat
	// matches (a conflict). Entries a sync applied before are kept.
	synth := map[string]bool{}
	for _, rels := range [][]string{u.files, u.gone} {
		for _, rel := range rels {
			s.stamp(rel, real, synth)
		}
	}
	// A file as its base has it (copied up, not changed; or as a sync
	// applied it) is not the agent's change.
	changed := u.files[:0]
	for _, rel := range u.files {
		var st unix.Stat_t
		if e, ok := s.realFiles()[rel]; ok && box.lstat(rel, &st) == nil {
			if w := toWarm(&st); s.agentUntouched(rel, e, &w) {
				continue
			}
		}
		changed = append(changed, rel)
	}
	rep, err := s.apply(ctx, o, r, changed, u.gone, u.isLink, box, real)
	for _, rel := range s.applied {
		delete(synth, rel)
	}
	s.settle()
	for rel := range synth {
		delete(s.realFiles(), rel)
		delete(s.copyLinks(), rel)
	}
	return rep, err
}

// uniqueSorted drops the repeats of a sorted list.
func uniqueSorted(l []string) []string {
	out := l[:0]
	for i, v := range l {
		if i == 0 || v != l[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// stamp gives the real regular file or link rel its base entry for this
// sync, unless it has one (a sync applied it): as it is, or, when it is
// gone but was there when the agent changed it, or when its
// change time is later than the sandbox's start, one that no stat
// matches. Both times are the file system's clock, which moves in ticks
// of a few milliseconds: a change in the tick the sandbox was made in is
// taken as made before it (the agent, started later, saw it). It records what it added in synth.
func (s *Sandbox) stamp(rel string, real *fdTree, synth map[string]bool) {
	files, links := s.realFiles(), s.copyLinks()
	if _, ok := files[rel]; ok {
		return
	}
	if _, ok := links[rel]; ok {
		return
	}
	var st unix.Stat_t
	if err := real.lstat(rel, &st); err != nil {
		// A file the overlay copied up (it records where from) had a
		// real file since the start: gone now, the user deleted it,
		// and the agent's change of it is a conflict.
		if errors.Is(err, fs.ErrNotExist) && hasXattrPath(s.AgentPath(rel), originXattr) {
			files[rel] = entry{size: -1, mtime: -1, mode: 0}
			synth[rel] = true
		}
		return
	}
	e := entry{size: st.Size, mtime: st.Mtim.Nano(), mode: fileMode(uint32(st.Mode))}
	if time0(st.Ctim).After(s.Overlay.Started) {
		e.size, e.mtime = -1, -1 // changed since: a conflict
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		files[rel] = e
	case unix.S_IFLNK:
		links[rel] = e
	default:
		return
	}
	synth[rel] = true
}

// dir reads the upper layer's directory rel, open as fd; opaque says it,
// or a directory above it, replaced the real one.
func (u *upperScan) dir(fd int, rel string, opaque bool) {
	s := u.s
	names, err := readNames(fd, s.AgentPath(rel))
	if err != nil {
		u.failed = append(u.failed, Failure{Path: rel, Error: err.Error()})
		return
	}
	sort.Strings(names)
	if opaque {
		u.missing(rel, names)
	}
	for _, name := range names {
		if u.ctx.Err() != nil {
			return
		}
		sub := path.Join(rel, name)
		if s.inGit(sub) || s.materialize[sub] {
			continue // git's own; workforce's own
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if !errors.Is(err, unix.ENOENT) {
				u.failed = append(u.failed, Failure{Path: sub, Error: (&fs.PathError{Op: "lstat", Path: s.AgentPath(sub), Err: err}).Error()})
			}
			continue
		}
		if dotGitAlias(sub) {
			u.aliased(fd, name, sub, &st)
			continue
		}
		u.entry(fd, name, sub, &st, opaque)
	}
}

// aliased records what the agent left at sub (name in fd, of stat st),
// a name a file system takes for .git (dotgit.go): never synced, each
// file, link or special file below it reported in notSynced, as a copy's
// Sync reports them. A whiteout is the sandbox's own (the real entry
// hidden) or the agent's removal of what it made: nothing to report.
func (u *upperScan) aliased(fd int, name, sub string, st *unix.Stat_t) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
	case unix.S_IFCHR:
		if st.Rdev != 0 {
			u.notSynced = append(u.notSynced, sub)
		}
		return
	default:
		if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size != 0 || !hasXattr(fd, name, whiteoutXattr) {
			u.notSynced = append(u.notSynced, sub)
		}
		return
	}
	cfd, err := openDirAt(fd, name)
	if err != nil {
		u.failed = append(u.failed, Failure{Path: sub, Error: (&fs.PathError{Op: "open", Path: u.s.AgentPath(sub), Err: err}).Error()})
		return
	}
	defer unix.Close(cfd)
	names, err := readNames(cfd, u.s.AgentPath(sub))
	if err != nil {
		u.failed = append(u.failed, Failure{Path: sub, Error: err.Error()})
		return
	}
	sort.Strings(names)
	for _, n := range names {
		var cst unix.Stat_t
		if unix.Fstatat(cfd, n, &cst, unix.AT_SYMLINK_NOFOLLOW) == nil {
			u.aliased(cfd, n, path.Join(sub, n), &cst)
		}
	}
}

// entry reads the upper layer's entry sub (name in fd), of stat st.
func (u *upperScan) entry(fd int, name, sub string, st *unix.Stat_t, opaque bool) {
	s := u.s
	var rst unix.Stat_t
	realErr := u.real.lstat(sub, &rst)
	realType := uint32(0)
	if realErr == nil {
		realType = uint32(rst.Mode) & unix.S_IFMT
	}
	isWhiteout := st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0 ||
		st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size == 0 && hasXattr(fd, name, whiteoutXattr)
	if isWhiteout {
		if !s.skippedPath(sub) {
			u.removed(sub, realType)
		}
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if realType != 0 && realType != unix.S_IFDIR {
			u.removed(sub, realType) // a directory in the place of a file or a link
		}
		cfd, err := openDirAt(fd, name)
		if err != nil {
			u.failed = append(u.failed, Failure{Path: sub, Error: (&fs.PathError{Op: "open", Path: s.AgentPath(sub), Err: err}).Error()})
			return
		}
		u.dir(cfd, sub, opaque || realType == unix.S_IFDIR && hasXattr(cfd, "", opaqueXattr))
		unix.Close(cfd)
		return
	case unix.S_IFREG:
		if realType == unix.S_IFDIR || realType == unix.S_IFLNK {
			u.removed(sub, realType)
		}
		u.files = append(u.files, sub)
		return
	case unix.S_IFLNK:
		t, _ := readlinkAt(fd, name)
		switch realType {
		case unix.S_IFLNK:
			if sealed := s.links[sub]; sealed != "" && t == sealed {
				return // made again by workforce (sealOverlayLinks)
			}
			if rt, err := u.real.readlink(sub); err == nil && rt == t && s.links[sub] == "" {
				return // copied up as it was
			}
		case unix.S_IFREG, unix.S_IFDIR:
			u.removed(sub, realType)
		}
	default: // a FIFO, a socket, a device
		if realType == unix.S_IFDIR {
			u.removed(sub, realType)
		}
	}
	if !s.skippedPath(sub) {
		u.notSynced = append(u.notSynced, sub)
	}
}

// removed records the agent's removal of the real entry sub, of type
// typ (0: there is none): a regular file or a link; a directory's files
// and links, all the way down.
func (u *upperScan) removed(sub string, typ uint32) {
	s := u.s
	if s.inGit(sub) || dotGitAlias(sub) || s.skippedPath(sub) || s.materialize[sub] ||
		s.rules.Ignored(sub, typ == unix.S_IFDIR) || typ != unix.S_IFDIR && (s.rules.hidden(sub) || s.rules.isReadonly(sub)) {
		return // never the agent's to remove
	}
	if (typ == unix.S_IFREG || typ == unix.S_IFLNK) && u.bornLater(sub) {
		return // the user's, made after the start: the copy never had it
	}
	switch typ {
	case unix.S_IFREG:
		u.gone = append(u.gone, sub)
	case unix.S_IFLNK:
		u.gone = append(u.gone, sub)
		u.isLink[sub] = true
	case unix.S_IFDIR:
		fd, err := u.real.openDir(sub, false)
		if err != nil {
			u.failed = append(u.failed, Failure{Path: sub, Error: err.Error()})
			return
		}
		names, err := readNames(fd, u.real.path(sub))
		if err != nil {
			unix.Close(fd)
			u.failed = append(u.failed, Failure{Path: sub, Error: err.Error()})
			return
		}
		types := make([]uint32, len(names))
		for i, n := range names {
			var st unix.Stat_t
			if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
				types[i] = uint32(st.Mode) & unix.S_IFMT
			}
		}
		unix.Close(fd)
		for i, n := range names {
			u.removed(path.Join(sub, n), types[i])
		}
	}
}

// bornLater reports whether the real entry rel was created after the
// sandbox was made (its birth time, where the file system keeps one):
// the user's, made during the run (the lower layer is live). A
// directory the agent removed or replaced takes away the real files of
// the start only, as the copy's sync does, which never had the later
// ones; taken for the agent's deletions, they were conflicts.
func (u *upperScan) bornLater(rel string) bool {
	dir, name := splitRel(rel)
	fd, err := u.real.openDir(dir, false)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	born, ok := birthTime(fd, name)
	return ok && born.After(u.s.Overlay.Started)
}

// missing records, for the opaque directory rel of the upper layer whose
// entries are names (sorted), the removal of the real entries it lacks.
func (u *upperScan) missing(rel string, names []string) {
	fd, err := u.real.openDir(rel, false)
	if err != nil {
		return // no real directory there (or not one): nothing removed
	}
	defer unix.Close(fd)
	realNames, err := readNames(fd, u.real.path(rel))
	if err != nil {
		u.failed = append(u.failed, Failure{Path: rel, Error: err.Error()})
		return
	}
	for _, n := range realNames {
		if i := sort.SearchStrings(names, n); i < len(names) && names[i] == n {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			u.removed(path.Join(rel, n), uint32(st.Mode)&unix.S_IFMT)
		}
	}
}

// hasXattr reports whether the entry name of dirfd ("" for dirfd itself)
// has the extended attribute attr, "y" for the opaque mark.
func hasXattr(dirfd int, name, attr string) bool {
	buf := make([]byte, 8)
	var n int
	var err error
	if name == "" {
		n, err = unix.Fgetxattr(dirfd, attr, buf)
	} else {
		n, err = unix.Lgetxattr(fmt.Sprintf("/proc/self/fd/%d/%s", dirfd, name), attr, buf)
	}
	if err != nil {
		return false
	}
	return attr != opaqueXattr || string(buf[:n]) == "y"
}

// time0 is the time of a file system timestamp.
func time0(ts unix.Timespec) time.Time { return time.Unix(ts.Unix()) }
