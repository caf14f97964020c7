package mount

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The journal. Sync-back must find what the agent changed among every file
// of the sandbox; a stat of each costs as much as the refresh of a warm
// sandbox. So while the harness runs, an inotify watch on every directory
// the copy made records the names of the entries that change (created,
// written, closed after writing, attributes changed, deleted, moved), and
// sync-back stats those, walking whole the directories that appeared.
// The journal only narrows what sync-back looks at: each name it gives is
// handled exactly as the walk would handle it, and whenever it cannot be
// sure to have seen every change, sync-back walks the sandbox as without
// it:
//   - the kernel's event queue overflowed, or a watch could not be added
//     (the per-user limit), or reading the events failed;
//   - the root of the sandbox was moved or deleted;
//   - a file it names has more than one hard link (a write through another
//     name of it would go unreported), or a name made during the run is
//     gone (it may have been such a link: made, written through, removed);
//   - the tree has more directories than maxJournalDirs (watches pin kernel
//     memory).
//
// Not seen by inotify, and so not by the journal: a write through a shared
// memory mapping after the file was closed, and a write through a hard
// link made from outside the sandbox (no name in the tree changes).
// `workforce sessions sync` (after a crash) always walks.

// maxJournalDirs is the most directories a journal watches.
const maxJournalDirs = 16384

// journalMask is what a journal watches in each directory.
const journalMask = unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_CLOSE_WRITE | unix.IN_CREATE | unix.IN_DELETE |
	unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW

// journal records the entries of a sandbox that change.
type journal struct {
	f   *os.File
	wds map[int32]string // watch -> directory, relative to the tree, slashes; "" the root

	mu     sync.Mutex
	dirty  map[string]struct{} // entries named by an event
	broken string              // why the journal cannot be trusted; "" while it can
	done   chan struct{}

	// trusted is set by the Sync that narrowed its walk by the journal.
	trusted bool
}

// startJournal watches the directories dirs (relative to tree, slashes;
// "" the root) of tree. It returns nil when there is nothing to gain or
// inotify cannot be used.
func startJournal(tree string, dirs []string) *journal {
	if len(dirs) > maxJournalDirs {
		return nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil
	}
	j := &journal{wds: make(map[int32]string, len(dirs)), dirty: map[string]struct{}{}, done: make(chan struct{})}
	for _, rel := range dirs {
		p := tree
		if rel != "" {
			p = tree + "/" + rel
		}
		wd, err := unix.InotifyAddWatch(fd, p, journalMask)
		if err != nil {
			unix.Close(fd)
			return nil
		}
		j.wds[int32(wd)] = rel
	}
	// The runtime's poller reads a non-blocking inotify descriptor, so that
	// a read deadline ends the reader once the queue is drained.
	j.f = os.NewFile(uintptr(fd), "inotify")
	go j.read()
	return j
}

// read records events until finish sets a deadline and the queue is empty.
func (j *journal) read() {
	defer close(j.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := j.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				j.fail("reading the events: " + err.Error())
			}
			return
		}
		j.record(buf[:n])
	}
}

// record notes the events of buf.
func (j *journal) record(buf []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			j.broken = "a truncated event"
			return
		}
		name := buf[unix.SizeofInotifyEvent:end]
		for len(name) > 0 && name[len(name)-1] == 0 {
			name = name[:len(name)-1]
		}
		buf = buf[end:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			j.broken = "the event queue overflowed"
			continue
		}
		dir, ok := j.wds[ev.Wd]
		if !ok {
			continue // a watch already removed
		}
		if len(name) == 0 {
			// The directory itself: deleted or moved (its parent, if
			// watched, reports the name), or its watch gone.
			if dir == "" && ev.Mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED) != 0 {
				j.broken = "the sandbox's root was moved or deleted"
			}
			if ev.Mask&unix.IN_IGNORED != 0 {
				delete(j.wds, ev.Wd)
			}
			if dir != "" {
				j.dirty[dir] = struct{}{}
			}
			continue
		}
		rel := string(name)
		if dir != "" {
			rel = dir + "/" + rel
		}
		j.dirty[rel] = struct{}{}
	}
}

func (j *journal) fail(why string) {
	j.mu.Lock()
	if j.broken == "" {
		j.broken = why
	}
	j.mu.Unlock()
}

// finish stops the journal once the events so far are read, and returns
// the entries they name; ok is false when the journal cannot be trusted.
func (j *journal) finish() (dirty map[string]struct{}, ok bool) {
	if j.f == nil {
		return j.dirty, j.broken == "" // finished already, or never started
	}
	_ = j.f.SetReadDeadline(time.Now())
	<-j.done
	// A read past the deadline returns at once, queued events or not:
	// what is left in the queue is read here.
	rc, err := j.f.SyscallConn()
	if err == nil {
		err = rc.Control(func(fd uintptr) {
			buf := make([]byte, 64<<10)
			for {
				n, err := unix.Read(int(fd), buf)
				if errors.Is(err, unix.EINTR) {
					continue
				}
				if err != nil || n <= 0 {
					if err != nil && !errors.Is(err, unix.EAGAIN) {
						j.fail("reading the events: " + err.Error())
					}
					return
				}
				j.record(buf[:n])
			}
		})
	}
	if err != nil {
		j.fail("reading the events: " + err.Error())
	}
	j.f.Close()
	j.f = nil
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.dirty, j.broken == ""
}

// close stops the journal without reading it.
func (j *journal) close() {
	if j != nil {
		j.finish()
	}
}

// statJournal hands visit, as statTree would hand them over, the entries
// of the sandbox the journal names (dirty) and every entry below those of
// them that are directories now, each once; skip is statTree's. It
// returns the manifest's files that may be gone: those named, and those
// below a named directory of the copy. ok is false when the journal
// cannot be trusted (a named file has more than one link).
func (s *Sandbox) statJournal(ctx context.Context, dirty map[string]struct{}, skip func(rel string) bool, visit func([]statEntry)) (gone []string, ok bool, err error) {
	rootfd, err := unix.Open(s.Tree, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, &fs.PathError{Op: "open", Path: s.Tree, Err: err}
	}
	defer unix.Close(rootfd)
	byDir := map[string][]string{}
	for rel := range dirty {
		if s.inGit(rel) {
			continue
		}
		byDir[dirOf(rel)] = append(byDir[dirOf(rel)], path.Base(rel))
	}
	var named []statEntry
	walk := map[string]bool{} // named entries that are directories now
	// A name made during the run and gone by now may have been a hard
	// link to a file of the tree, written through (made, written, removed:
	// no event names the file): the journal cannot tell, the walk can.
	madeAndGone := func(dir, name string) bool {
		_, known := s.realFiles()[joinRel(dir, name)]
		return !known
	}
	for dir, names := range byDir {
		dfd, err := openBeneath(rootfd, dir)
		if err != nil {
			// Gone, or a link now: nothing of it is in the tree.
			for _, name := range names {
				if madeAndGone(dir, name) {
					return nil, false, nil
				}
			}
			continue
		}
		for _, name := range names {
			var st unix.Stat_t
			if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					if madeAndGone(dir, name) {
						unix.Close(dfd)
						return nil, false, nil
					}
					continue
				}
				unix.Close(dfd)
				return nil, false, &fs.PathError{Op: "lstat", Path: filepath.Join(s.Tree, dir, name), Err: err}
			}
			rel := joinRel(dir, name)
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFDIR:
				if skip(rel) {
					continue
				}
				walk[rel] = true
			case unix.S_IFREG:
				if st.Nlink > 1 {
					unix.Close(dfd)
					return nil, false, nil
				}
			}
			named = append(named, statEntry{rel: rel, st: toWarm(&st)})
		}
		unix.Close(dfd)
	}
	// A directory's walk hands over everything below it, named or not.
	under := underAny
	batch := named[:0]
	for _, e := range named {
		if !under(e.rel, walk) {
			batch = append(batch, e)
		}
	}
	if len(batch) > 0 {
		visit(batch)
	}
	var linked atomic.Bool
	for rel := range walk {
		if under(rel, walk) {
			continue
		}
		err := statTreeFrom(ctx, s.Tree, rel, 2*runtime.GOMAXPROCS(0), skip, func(b []statEntry) {
			for i := range b {
				if b[i].st.mode&unix.S_IFMT == unix.S_IFREG && b[i].st.nlink > 1 {
					linked.Store(true)
				}
			}
			visit(b)
		})
		if err != nil {
			return nil, false, err
		}
	}
	if linked.Load() {
		return nil, false, nil
	}
	// What may be gone: the named files of the manifest, and its files
	// below a named directory of the copy.
	dirs := map[string]bool{}
	if len(dirty) > 0 {
		for _, d := range s.dirs {
			if _, ok := dirty[d]; ok {
				dirs[d] = true
			}
		}
	}
	for rel := range dirty {
		if _, ok := s.realFiles()[rel]; ok {
			gone = append(gone, rel)
		}
	}
	if len(dirs) > 0 {
		for rel := range s.realFiles() {
			if _, named := dirty[rel]; !named && under(rel, dirs) {
				gone = append(gone, rel)
			}
		}
	}
	return gone, true, nil
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// narrow takes the sandbox's journal and, when it can be trusted, hands
// visit the entries it names (statJournal); ok is false when the caller
// must walk the sandbox instead (and forget what visit was given).
func (s *Sandbox) narrow(ctx context.Context, skip func(string) bool, visit func([]statEntry)) (dirty map[string]struct{}, maybeGone []string, ok bool) {
	j := s.journal
	if j == nil {
		return nil, nil, false
	}
	s.journal = nil // a second sync walks
	dirty, ok = j.finish()
	if !ok {
		return nil, nil, false
	}
	maybeGone, ok, err := s.statJournal(ctx, dirty, skip, visit)
	if err != nil || !ok {
		return nil, nil, false
	}
	j.trusted = true
	sort.Strings(maybeGone)
	return dirty, maybeGone, true
}

// keepUnchanged adds to a the entries of the copy that nothing in dirty
// names, neither them nor a directory above them: what a walk of the
// sandbox would see of them is what the copy made.
func (s *Sandbox) keepUnchanged(a *seenState, dirty map[string]struct{}) {
	dirs := map[string]bool{}
	for _, d := range s.dirs {
		if _, ok := dirty[d]; ok {
			dirs[d] = true
		}
	}
	a.base, a.dirty, a.dirs = &s.base, dirty, dirs
}
