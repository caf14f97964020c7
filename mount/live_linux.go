package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"golang.org/x/sys/unix"
)

// Live sync (run --live). While the harness runs, a file the agent writes
// reaches the real tree, and a file the user writes in the real tree
// reaches the sandbox, each once it has settled (no event on it for
// LiveOptions.Settle), by the rules of the final sync-back:
//
//   - What crosses, in either direction, is a regular file that changed on
//     its side since it last crossed (the manifest says how it was), to a
//     side where it is still as the manifest says; it lands whole, by an
//     exchange with the file there, checked after (syncat.go), or a rename
//     where there is none, with the modification time and permissions it
//     has on its side, and the manifest then records it, durably (Save),
//     so that a crash leaves a session `workforce sessions sync` finishes
//     as if nothing had crossed live. The copy is compared with its source
//     before it is put in place: a file written to while it was copied is
//     left for later.
//   - A file changed on both sides since it last crossed is a conflict,
//     reported at once (LiveOptions.OnConflict) and in Stop's result: the
//     real file stays as the user left it, the sandbox's as the agent left
//     it, and the agent's version is saved under conflicts/.
//   - Deletions cross only with LiveOptions.Deletes, and only of a file
//     still as the manifest says on the other side, checked again as it
//     is removed (unlinkChecked): a file written after the check stays.
//     A directory or a link put in the place of a file is its removal
//     (as in Sync); removals are carried out before the files that
//     settled with them, and a real directory they empty goes too when
//     the sandbox no longer has it. A file whose place on the
//     other side holds a directory or what is not a regular file, or a
//     non-directory on the way (a type change not yet cleared, or the
//     user's), does not cross: the final sync-back applies or reports
//     it by its rules, never as a conflict the user did not make.
//   - Instruction files, hidden, ignored and read-only files, materialized
//     files and directories, .git, the names a file system takes for .git
//     (.GIT, GIT~1: dotgit.go) and what is not a regular file never
//     cross, as in Sync. Neither do policy files and executable
//     configuration (held.go), in either direction: the final sync-back
//     refuses or holds the agent's changes to them (or, with
//     SyncOptions.SyncConfig, syncs the configuration).
//
// Watching is fsnotify's (inotify) on every directory of both trees that
// can hold a file that crosses, new ones as they appear. When the kernel
// drops events (its queue overflowed) or refuses a watch (the per-user
// limit), Live warns once and compares both trees with the manifest
// instead: at once after an overflow, and every LiveOptions.Poll when
// watches are missing. Nothing runs while nothing changes.
//
// A file written on the side it crosses to after that side was checked
// stays as written: the crossing is undone and the file looked at again
// once it settles, a conflict then as both sides changed. Not guarded
// against: a writer that pauses longer than Settle in the middle of a
// file, whose first part may cross before the rest (the rest follows);
// the limits of the checked replacement (syncat.go): a writer that holds
// the replaced file open, and file systems that cannot exchange two
// files.

// LiveOptions change what Live does.
type LiveOptions struct {
	// Deletes applies deletions both ways.
	Deletes bool
	// Settle is how long a file must see no event before it crosses;
	// default 100 ms.
	Settle time.Duration
	// Poll is how often both trees are compared with the manifest when
	// watches could not be set; default 2 s.
	Poll time.Duration
	// OnConflict, when set, is told of each conflict when it is found.
	OnConflict func(Conflict)
	// OnCross, when set, is told of each file that crossed.
	OnCross func(rel string, toReal bool)
	// Warn, when set, is told what the user should know at once.
	Warn func(string)
}

// LiveReport is what a live sync did.
type LiveReport struct {
	// ToReal and ToSandbox count the files that crossed each way;
	// Deleted the deletions that crossed.
	ToReal, ToSandbox, Deleted int
	Conflicts                  []Conflict
	// Failed are the files that could not cross (they stay for the
	// final sync-back).
	Failed []Failure
}

// Live syncs the sandbox and the real tree both ways until Stop.
type Live struct {
	s         *Sandbox
	o         LiveOptions
	w         *fsnotify.Watcher
	box, real *fdTree

	mu         sync.Mutex
	pending    map[liveKey]time.Time // by the time of the last event
	conflicted map[string]bool
	report     LiveReport
	changed    bool     // the manifest changed since the last Save
	written    []string // files written to the real tree, for Stop to make durable
	blind      bool     // some directory could not be watched: poll
	rescan     bool     // events were lost: compare both trees
	warned     bool

	kick chan struct{}
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

type liveKey struct {
	rel      string
	fromReal bool
}

// Live starts syncing the sandbox and the real tree both ways.
func (s *Sandbox) Live(o LiveOptions) (*Live, error) {
	if s.Overlay != nil {
		return nil, fmt.Errorf("live sync: %w", ErrOverlay)
	}
	if o.Settle <= 0 {
		o.Settle = 100 * time.Millisecond
	}
	if o.Poll <= 0 {
		o.Poll = 2 * time.Second
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cannot watch the sandbox: %w", err)
	}
	l := &Live{
		s: s, o: o, w: w, box: newFdTree(s.Tree), real: newFdTree(s.Root),
		pending: map[liveKey]time.Time{}, conflicted: map[string]bool{},
		kick: make(chan struct{}, 1), quit: make(chan struct{}),
	}
	dirs := append([]string{""}, s.dirs...)
	sort.Strings(dirs)
	for _, rel := range dirs {
		if rel != "" && !l.crossesDir(rel) {
			continue
		}
		l.watch(rel, false)
		l.watch(rel, true)
	}
	l.wg.Add(2)
	go l.events()
	go l.process()
	return l, nil
}

// crosses reports whether the file rel may cross, by its path.
func (l *Live) crosses(rel string) bool {
	s := l.s
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	return rel != "" && !s.inGit(rel) && !dotGitAlias(rel) && !s.materialize[rel] && !s.materialized(rel) &&
		!strings.HasPrefix(base, tempPrefix) && !s.readonly[rel] &&
		!s.rules.Ignored(rel, false) && !s.rules.hidden(rel) && !s.rules.isReadonly(rel) && !s.skippedPath(rel) &&
		!s.isPolicy(rel) && !s.isHeld(rel)
}

// crossesDir reports whether the directory rel can hold a file that
// crosses.
func (l *Live) crossesDir(rel string) bool {
	s := l.s
	return !s.inGit(rel) && !dotGitAlias(rel) && !s.materialized(rel) && !s.rules.Ignored(rel, true) && !s.skippedPath(rel)
}

// materialized reports whether rel is, or is below, a path the sandbox
// has that never crosses: a materialized file, or the sandbox directory
// where it lies inside the project.
func (s *Sandbox) materialized(rel string) bool {
	if s.materialize[rel] {
		return true
	}
	if sd, in := pathutil.Rel(s.Root, s.Dir); in {
		sd = filepath.ToSlash(sd)
		return rel == sd || strings.HasPrefix(rel, sd+"/")
	}
	return false
}

func (l *Live) tree(fromReal bool) *fdTree {
	if fromReal {
		return l.real
	}
	return l.box
}

// watch adds a watch on the directory rel of one side.
func (l *Live) watch(rel string, real bool) {
	err := l.w.Add(l.tree(real).path(rel))
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return
	}
	l.mu.Lock()
	l.blind = true
	l.mu.Unlock()
	l.warnOnce(fmt.Sprintf("cannot watch %s (%v): live sync compares the trees every %v instead", quote.Name(l.tree(real).path(rel)), err, l.o.Poll))
	l.nudge()
}

func (l *Live) warnOnce(msg string) {
	l.mu.Lock()
	w := !l.warned
	l.warned = true
	l.mu.Unlock()
	if w && l.o.Warn != nil {
		l.o.Warn(msg)
	}
}

func (l *Live) nudge() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// events turns fsnotify's events into pending files.
func (l *Live) events() {
	defer l.wg.Done()
	boxRoot, realRoot := l.s.Tree+string(filepath.Separator), l.s.Root+string(filepath.Separator)
	// Descriptors of its own: an fdTree is not shared between goroutines.
	trees := map[bool]*fdTree{false: newFdTree(l.s.Tree), true: newFdTree(l.s.Root)}
	defer trees[false].close()
	defer trees[true].close()
	for {
		select {
		case ev, ok := <-l.w.Events:
			if !ok {
				return
			}
			var rel string
			var fromReal bool
			switch {
			case strings.HasPrefix(ev.Name, boxRoot):
				rel = filepath.ToSlash(ev.Name[len(boxRoot):])
			case strings.HasPrefix(ev.Name, realRoot):
				rel, fromReal = filepath.ToSlash(ev.Name[len(realRoot):]), true
			default:
				continue
			}
			if ev.Has(fsnotify.Create) {
				var st unix.Stat_t
				if trees[fromReal].lstat(rel, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
					l.newDir(rel, fromReal)
					continue
				}
			}
			if l.crosses(rel) {
				l.mu.Lock()
				l.pending[liveKey{rel, fromReal}] = time.Now()
				l.mu.Unlock()
				l.nudge()
			}
		case err, ok := <-l.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				l.warnOnce("events were lost (the kernel's queue overflowed): live sync compares the trees with the manifest")
			} else {
				l.warnOnce(fmt.Sprintf("live sync: %v: it compares the trees with the manifest", err))
			}
			l.mu.Lock()
			l.rescan = true
			l.mu.Unlock()
			l.nudge()
		}
	}
}

// newDir watches a directory that appeared on one side, and everything
// below it, and makes every file in it pending.
func (l *Live) newDir(rel string, fromReal bool) {
	if !l.crossesDir(rel) {
		return
	}
	t := l.tree(fromReal)
	l.watch(rel, fromReal)
	var files []string
	_ = statTreeFrom(context.Background(), t.root, rel, 1, func(r string) bool {
		if !l.crossesDir(r) {
			return true
		}
		l.watch(r, fromReal)
		return false
	}, func(batch []statEntry) {
		for _, e := range batch {
			if e.st.mode&unix.S_IFMT != unix.S_IFDIR && l.crosses(e.rel) {
				files = append(files, e.rel)
			}
		}
	})
	l.mu.Lock()
	now := time.Now()
	for _, f := range files {
		l.pending[liveKey{f, fromReal}] = now
	}
	l.mu.Unlock()
	l.nudge()
}

// process carries out the pending files once they settled.
func (l *Live) process() {
	defer l.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		select {
		case <-l.quit:
			l.run(true)
			return
		case <-l.kick:
		case <-timer.C:
		}
		next := l.run(false)
		if next > 0 {
			timer.Reset(next)
		}
	}
}

// run handles what is due (everything when all), and returns when to
// look again (0: when told).
func (l *Live) run(all bool) time.Duration {
	l.mu.Lock()
	if l.rescan || (all && l.blind) {
		l.rescan = false
		l.mu.Unlock()
		l.scan()
		l.mu.Lock()
	}
	now := time.Now()
	var due []liveKey
	var next time.Duration
	for k, t := range l.pending {
		if wait := l.o.Settle - now.Sub(t); all || wait <= 0 {
			due = append(due, k)
			delete(l.pending, k)
		} else if next == 0 || wait < next {
			next = wait
		}
	}
	blind := l.blind
	l.mu.Unlock()
	// Removals first, as in sync-back: a file may take the place of
	// a directory whose files were removed.
	removal := make(map[liveKey]bool, len(due))
	for _, k := range due {
		removal[k] = l.removedOn(k.rel, k.fromReal)
	}
	sort.Slice(due, func(i, j int) bool {
		if removal[due[i]] != removal[due[j]] {
			return removal[due[i]]
		}
		return due[i].rel < due[j].rel
	})
	for _, k := range due {
		l.cross(k.rel, k.fromReal)
	}
	l.mu.Lock()
	if l.changed {
		l.changed = false
		if err := l.s.Save(); err != nil {
			l.report.Failed = append(l.report.Failed, Failure{Path: ManifestFile, Error: err.Error()})
		}
	}
	l.mu.Unlock()
	if blind && (next == 0 || next > l.o.Poll) {
		l.mu.Lock()
		l.rescan = true
		l.mu.Unlock()
		next = l.o.Poll
	}
	return next
}

// scan makes pending every file of either side that differs from the
// manifest, and every file of the manifest gone from a side.
func (l *Live) scan() {
	now := time.Now()
	for _, fromReal := range []bool{false, true} {
		seen := map[string]bool{}
		var mu sync.Mutex
		_ = statTree(context.Background(), l.tree(fromReal).root, 2, func(r string) bool { return !l.crossesDir(r) }, func(batch []statEntry) {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range batch {
				if e.st.mode&unix.S_IFMT == unix.S_IFDIR || !l.crosses(e.rel) {
					continue
				}
				seen[e.rel] = true
				l.mu.Lock()
				me, known := l.s.realFiles()[e.rel]
				if !known || !l.s.untouched(e.rel, me, &e.st) {
					l.pending[liveKey{e.rel, fromReal}] = now.Add(-l.o.Settle)
				}
				l.mu.Unlock()
			}
		})
		l.mu.Lock()
		for rel := range l.s.realFiles() {
			if !seen[rel] && l.crosses(rel) {
				l.pending[liveKey{rel, fromReal}] = now.Add(-l.o.Settle)
			}
		}
		l.mu.Unlock()
	}
}

// asManifest reports whether st (err from its lstat) is the file rel as
// the manifest has it: the same size, time and mode, or absent for a file
// it does not have.
func (l *Live) asManifest(rel string, st *unix.Stat_t, err error) bool {
	if _, known := l.s.realFiles()[rel]; !known {
		return errors.Is(err, fs.ErrNotExist)
	}
	return err == nil && l.s.unchanged(rel, st)
}

// cross brings the file rel over from the side it changed on, if it did.
func (l *Live) cross(rel string, fromReal bool) {
	// Only this goroutine (process) reads and writes the manifest, the
	// report and the conflicts while Live runs; l.mu guards what the
	// event goroutine shares.
	if l.conflicted[rel] {
		return // the final sync-back reports it again
	}
	src, dst := l.tree(fromReal), l.tree(!fromReal)
	var sst, dst2 unix.Stat_t
	serr := src.lstat(rel, &sst)
	derr := dst.lstat(rel, &dst2)
	if serr != nil && !errors.Is(serr, fs.ErrNotExist) {
		return // below a link, or unreadable: the final sync-back decides
	}
	if l.asManifest(rel, &sst, serr) {
		return // as it last crossed: nothing new on this side
	}
	dstAsManifest := l.asManifest(rel, &dst2, derr)
	_, known := l.s.realFiles()[rel]
	switch {
	case known && removedSt(&sst, serr):
		// Removed on this side, or put something else than a regular
		// file in the place of (a type change: the removal part).
		if !l.o.Deletes || !dstAsManifest {
			return // left to the final sync-back, which reports it
		}
		var checked *unix.Stat_t
		if derr == nil {
			checked = &dst2
		}
		saved, err := l.remove(dst, rel, checked, fromReal)
		switch {
		case errors.Is(err, errChanged) && saved != "":
			// Written to and replaced while it was removed: the new
			// file stays, the one it replaced is saved.
			l.conflicted[rel] = true
			c := Conflict{Path: rel, Real: l.real.path(rel), Reason: displacedReason(saved)}
			l.report.Conflicts = append(l.report.Conflicts, c)
			if l.o.OnConflict != nil {
				l.o.OnConflict(c)
			}
			return
		case errors.Is(err, errChanged):
			// Written to since it was checked: it stays, and is looked
			// at again once it settles, a conflict then.
			l.mu.Lock()
			l.pending[liveKey{rel, fromReal}] = time.Now()
			l.mu.Unlock()
			return
		case err != nil:
			l.fail(rel, err)
			return
		}
		delete(l.s.realFiles(), rel)
		l.s.edited = true
		l.changed = true
		l.report.Deleted++
		// The real directories the removal emptied go too, unless the
		// sandbox still has them (removeEmptied); the sandbox's stay, as
		// in sync-back (the harness may work in one).
		if !fromReal {
			removeEmptiedAbove(dst, src, rel)
		}
	case serr != nil || sst.Mode&unix.S_IFMT != unix.S_IFREG:
		return // never crosses; the final sync-back reports it
	case typeBlocked(dst, rel):
		// A directory, or what is not a regular file, in its place on
		// the other side, or not a directory on the way: a type change
		// (or the user's), which the final sync-back applies in order
		// or reports, as a conflict only where the user changed it.
		return
	case !dstAsManifest:
		if derr == nil && dst2.Mode&unix.S_IFMT == unix.S_IFREG && dst2.Size == sst.Size && sameFiles(src, dst, rel) {
			return // the same on both sides: the final sync-back settles it
		}
		l.conflict(rel)
	default:
		var over *unix.Stat_t
		if derr == nil {
			over = &dst2
		}
		st, stale, err := l.copy(src, dst, rel, &sst, over)
		if err != nil {
			l.fail(rel, err)
			return
		}
		if stale {
			// Written to meanwhile on either side: looked at again once
			// it settles, and a conflict then if both sides changed.
			l.mu.Lock()
			l.pending[liveKey{rel, fromReal}] = time.Now()
			l.mu.Unlock()
			return
		}
		if !fromReal {
			l.written = append(l.written, rel)
		}
		l.s.realFiles()[rel] = entry{size: st.Size, mtime: st.Mtim.Nano(), mode: fileMode(uint32(st.Mode))}
		l.s.edited = true
		l.changed = true
		if fromReal {
			l.report.ToSandbox++
		} else {
			l.report.ToReal++
		}
		if l.o.OnCross != nil {
			l.o.OnCross(rel, !fromReal)
		}
	}
}

// removedOn reports whether the file rel of the manifest is removed on
// the side fromReal says (removedSt): what cross carries out as a removal.
func (l *Live) removedOn(rel string, fromReal bool) bool {
	if _, known := l.s.realFiles()[rel]; !known {
		return false
	}
	var st unix.Stat_t
	err := l.tree(fromReal).lstat(rel, &st)
	return removedSt(&st, err)
}

// removedSt reports whether a regular file of the manifest whose lstat on
// one side is st (err) is removed there, as sync-back reads it
// (removedIn): nothing is there (or not a directory on the way), or a
// directory or a link is in its place. A FIFO, a socket or a device in
// its place is not.
func removedSt(st *unix.Stat_t, err error) bool {
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	t := st.Mode & unix.S_IFMT
	return t == unix.S_IFDIR || t == unix.S_IFLNK
}

// typeBlocked reports whether t has, in the place of the file rel, what
// is not a regular file, or on the way to it what is not a directory (or
// a link).
func typeBlocked(t *fdTree, rel string) bool {
	dir, name := splitRel(rel)
	fd, err := t.openDir(dir, false)
	if typeChanged(err) {
		return true
	}
	if err != nil {
		return false // missing directories are made
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFREG
}

// removeEmptiedAbove removes the directories of dst above rel, deepest
// first, that a removal of rel left empty and that src no longer has as
// directories (removeEmptied): a directory that is not empty stays, and so
// do those above it; no link is followed.
func removeEmptiedAbove(dst, src *fdTree, rel string) {
	for d := dirOf(rel); d != ""; d = dirOf(d) {
		if boxHasDir(src, d) {
			return
		}
		parent, name := splitRel(d)
		pfd, err := dst.openDir(parent, false)
		if err != nil {
			return
		}
		err = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
		unix.Close(pfd)
		if err != nil {
			return
		}
	}
}

func (l *Live) fail(rel string, err error) {
	l.report.Failed = append(l.report.Failed, Failure{Path: rel, Error: err.Error()})
}

// conflict saves the agent's version of rel and reports it once; a file
// the agent deleted (or made other than a regular file) is a conflict
// without a saved version (Saved empty). An agent's version that cannot
// be saved is a failure instead, left to the final sync-back.
func (l *Live) conflict(rel string) {
	l.conflicted[rel] = true
	c := Conflict{Path: rel, Real: l.real.path(rel)}
	in, err := openBox(l.box, rel)
	switch {
	case err == nil:
		err = l.saveConflict(in, &c)
		unix.Close(in)
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotRegular) || typeChanged(err):
		err = nil // nothing to save
	}
	if err != nil {
		l.fail(rel, fmt.Errorf("cannot save the agent's version: %w", err))
		return
	}
	l.report.Conflicts = append(l.report.Conflicts, c)
	if l.o.OnConflict != nil {
		l.o.OnConflict(c)
	}
}

// saveConflict saves the sandbox's file in as the agent's version of c.
func (l *Live) saveConflict(in int, c *Conflict) error {
	var st unix.Stat_t
	if err := unix.Fstat(in, &st); err != nil {
		return err
	}
	saved := l.s.conflictPath(c.Path)
	if err := l.s.save(saved, in, st.Size, uint32(st.Mode)&0o777); err != nil {
		return err
	}
	c.Saved = saved
	return nil
}

// copy writes src's file rel, of stat sst, to dst, whole or not at all,
// with its time and permissions, in place of the file of stat over (nil:
// where there is none); stale is set when the source changed while it was
// copied, or the destination since it was checked (nothing is written
// then).
func (l *Live) copy(src, dst *fdTree, rel string, sst, over *unix.Stat_t) (st unix.Stat_t, stale bool, err error) {
	in, err := openBox(src, rel)
	if err != nil {
		return st, false, err
	}
	defer unix.Close(in)
	if err := unix.Fstat(in, &st); err != nil {
		return st, false, err
	}
	if st.Size != sst.Size || st.Mtim != sst.Mtim {
		return st, true, nil
	}
	dir, name := splitRel(rel)
	dfd, err := dst.openDir(dir, true)
	if err != nil {
		return st, false, err
	}
	defer unix.Close(dfd)
	tmp := l.s.tempName(name)
	unlinkTemp(dfd, tmp)
	out, err := openAnon(dfd)
	named := false
	if err != nil {
		out, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return st, false, &fs.PathError{Op: "create", Path: dst.path(rel), Err: err}
		}
		named = true
	}
	defer func() {
		if out >= 0 {
			unix.Close(out)
		}
		if named {
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if err := copySparse(in, out, st.Size); err != nil {
		return st, false, &fs.PathError{Op: "write", Path: dst.path(rel), Err: err}
	}
	var after unix.Stat_t
	if err := unix.Fstat(in, &after); err != nil || after.Size != st.Size || after.Mtim != st.Mtim {
		return st, true, nil // written to while copied: later
	}
	if err := unix.Fchmod(out, uint32(st.Mode)&0o777); err != nil {
		return st, false, err
	}
	if err := futimens(out, st.Mtim); err != nil {
		return st, false, err
	}
	// Not synced to disk one by one (a flood would wait for the disk at
	// every file): Stop makes what reached the real tree durable before
	// the session can be recorded as synced.
	if !named {
		if err := linkAnon(out, dfd, tmp); err != nil {
			return st, false, &fs.PathError{Op: "link", Path: dst.path(rel), Err: err}
		}
		named = true
	}
	unix.Close(out)
	out = -1
	// In place of the file as it was checked (placeAt): a file written,
	// replaced or made on that side since is left as it is, for the next
	// look to find.
	named = false
	err = placeAt(dfd, filepath.Dir(dst.path(rel)), name, tmp, put{rel: rel, over: over})
	if errors.Is(err, errExists) || errors.Is(err, errChanged) {
		return st, true, nil
	}
	if err != nil {
		return st, false, err
	}
	st.Mode = unix.S_IFREG | st.Mode&0o777
	return st, false, nil
}

// remove deletes the entry rel of t, following no link, if it is still
// the one of stat checked (nil: there was none), as checked as a
// replacement is (unlinkChecked): a file written since the check stays,
// and errChanged is returned; saved is set when a new file took its place
// meanwhile and the one it replaced was saved (the real tree's, under
// conflicts/; the sandbox's is the agent's own superseded version, and
// dropped).
func (l *Live) remove(t *fdTree, rel string, checked *unix.Stat_t, inBox bool) (saved string, err error) {
	if checked == nil {
		return "", nil // gone on this side too
	}
	dir, name := splitRel(rel)
	dfd, err := t.openDir(dir, false)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer unix.Close(dfd)
	displaced := l.s.displaced(rel)
	if inBox {
		displaced = func(int, string) (string, error) { return "", nil }
	}
	saved, err = unlinkChecked(dfd, filepath.Dir(t.path(rel)), name, l.s.tempName(name), put{rel: rel, over: checked}, displaced)
	if errors.Is(err, errGone) {
		return "", nil
	}
	return saved, err
}

// sameFiles reports whether rel has the same bytes in both trees.
func sameFiles(a, b *fdTree, rel string) bool {
	fa, err := openBox(a, rel)
	if err != nil {
		return false
	}
	defer unix.Close(fa)
	fb, err := openBox(b, rel)
	if err != nil {
		return false
	}
	defer unix.Close(fb)
	var st unix.Stat_t
	if unix.Fstat(fa, &st) != nil {
		return false
	}
	same, err := sameData(fa, fb, st.Size)
	return err == nil && same
}

// Stop stops watching, carries out what is pending, saves the manifest
// and returns what the live sync did.
func (l *Live) Stop() *LiveReport {
	l.once.Do(func() {
		close(l.quit)
		l.w.Close()
		l.wg.Wait()
		l.durable()
		l.box.close()
		l.real.close()
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.report
	return &r
}

// durable syncs to disk the files written to the real tree, and their
// directories.
func (l *Live) durable() {
	dirs := map[string]bool{}
	for _, rel := range l.written {
		dir, name := splitRel(rel)
		dfd, err := l.real.openDir(dir, false)
		if err != nil {
			continue // gone since
		}
		if fd, err := openFileAt(dfd, name); err == nil {
			if err := unix.Fsync(fd); err != nil {
				l.fail(rel, err)
			}
			unix.Close(fd)
		}
		if !dirs[dir] {
			dirs[dir] = true
			_ = unix.Fsync(dfd)
		}
		unix.Close(dfd)
	}
}
