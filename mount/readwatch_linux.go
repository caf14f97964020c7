package mount

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// The read watch (issue 44): the overlay's lower layer is the live
// project, so a file the agent read can change under it, and the upper
// layer keeps no trace of what it only read. An inotify watch on each
// directory of the real project the overlay shows tells both: the
// overlay's reads of a lower file are reported on its real directory
// (IN_ACCESS, IN_CLOSE_NOWRITE; a copy-up opens and closes it unwritten),
// and so are the user's changes (IN_MODIFY, IN_CLOSE_WRITE, IN_ATTRIB,
// IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO); the agent's writes
// go to the upper layer and change nothing there
// (TestReadWatchKernel). A file read, then changed, is reported
// (ReadReport.Changed), unless the agent changed it too: it has an entry
// in the upper layer, and sync-back judges it (a conflict).
//
// What it cannot know: who read. inotify names no process, so a read by
// any process of the user (an editor opening the file before saving it)
// counts as the agent's, and so do another run's on the same project (a
// batch's other tasks: their overlays share the lower layer). A read is
// an IN_ACCESS or an IN_CLOSE_NOWRITE, not an IN_OPEN: the user's own
// write opens the file too. A read before the watch of its directory was
// in place is missed: WatchReads is called before the harness starts and
// watches the top of the tree and the way to the working directory
// before it returns, the rest on its goroutine once the harness has run
// for watchLater (syncWatches, firstWatched). A directory made
// during the run is not watched; a watch the system's limit
// (fs.inotify.max_user_watches) refuses, or events lost to a full queue
// (IN_Q_OVERFLOW), leave the report incomplete (ReadReport.Incomplete),
// never the run failed. workforce itself reads no file of the project
// between WatchReads and ReadWatch.Stop (the harness runs then), and the
// events of directories (its own listing for a resumed session's watch)
// are ignored.

// readMask is what each watch reports: the reads and the changes of the
// directory's entries.
const readMask = unix.IN_ACCESS | unix.IN_CLOSE_NOWRITE | changeMask |
	unix.IN_ONLYDIR | unix.IN_DONT_FOLLOW | unix.IN_EXCL_UNLINK

// changeMask is what changes an entry of the real tree.
const changeMask = unix.IN_MODIFY | unix.IN_CLOSE_WRITE | unix.IN_ATTRIB | unix.IN_CREATE |
	unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO

// addWatch is inotify_add_watch(2); the tests make it fail as the
// system's limit does.
var addWatch = unix.InotifyAddWatch

// ReadWatch watches the real project of an overlay sandbox while its
// harness runs: which files were read and then changed there.
type ReadWatch struct {
	fd, stop int
	running  bool
	// stopping is set, and stopped closed, by Stop: the goroutine's
	// watches end there, and its wait for watchLater.
	stopping atomic.Bool
	stopped  chan struct{}
	root     string
	upper    string
	// dirs is each watch's directory, relative to root.
	dirs map[int32]string
	// set is closed once every directory is watched (or the watches
	// ended), done once the goroutine ended.
	set, done chan struct{}
	// begin is closed by Begin (or Stop): the goroutine's watches wait
	// for it.
	begin     chan struct{}
	beginOnce sync.Once

	// rules and gd are the sandbox's: what they hide is reported when it
	// appears in the real tree (appeared).
	rules *Rules
	gd    gitDirs

	// read are the files read so far, changed those read and changed
	// after, appeared the entries the rules hide that the real tree
	// gained; lost says events were lost.
	read, changed, appeared map[string]bool
	lost                    bool
	incomplete              string
}

// ReadReport is what a ReadWatch saw.
type ReadReport struct {
	// Changed are the files (relative to the tree, with slashes) that
	// were read during the run and changed in the real tree afterwards,
	// which the agent did not change itself, sorted.
	Changed []string
	// Appeared are the entries of the real tree that the sandbox's
	// rules hide (an ignore pattern, a hidden instruction file) made or
	// moved there during the run, sorted: the overlay shows them, its
	// whiteouts made at the start, where the copy, made before, never
	// has them.
	Appeared []Appeared
	// Incomplete, when set, says why some reads or changes may have gone
	// unseen: a sentence.
	Incomplete string
}

// Appeared is an entry the rules hide that the real tree gained during
// the run (ReadReport.Appeared).
type Appeared struct {
	// Path is relative to the tree, with slashes; Dir says it is a
	// directory.
	Path string
	Dir  bool
	// Read says a read of it was seen (a file's).
	Read bool
}

// syncWatches is how many directories WatchReads watches at most before
// it returns: the top of the tree (firstWatched), about a millisecond.
// The rest are watched on the watch's goroutine, watchLater after the
// harness started (BenchmarkReadWatch: 10,000 directories take about
// 100 ms, which a run's start would not wait for).
const syncWatches = 128

// watchLater is how long after the harness's start the watch's goroutine
// waits before it watches the directories left. No harness reads the
// project below its top level that soon: each starts its runtime and
// reads its configuration and the instruction files from the root to
// its working directory (watched before it starts), and reads the rest
// of the project only for a tool call, once its model has answered, a
// network round trip later. Watched at once, those directories took the
// processors from the harness's start: on the 20,000-file benchmark, a
// run with a harness of a few milliseconds took 1.09 times as long
// (BENCHMARKS.md, issue 44). A harness that exits sooner leaves the watch
// incomplete, and the report says so. A variable for the tests.
var watchLater = 50 * time.Millisecond

// firstWatched returns dirs (sorted, the root "" first) with those
// WatchReads watches before the harness starts first, and how many they
// are: the root, the directories at its top level and those on the way
// to cwd (the working directory, relative to the root: the harnesses
// read the instruction files from the root down to it as they start),
// at most max; the others follow in their order.
func firstWatched(dirs []string, cwd string, max int) ([]string, int) {
	first := make([]string, 0, min(len(dirs), max))
	var rest []string
	for _, d := range dirs {
		if len(first) < max && (!strings.Contains(d, "/") || cwd == d || strings.HasPrefix(cwd, d+"/")) {
			first = append(first, d)
		} else {
			rest = append(rest, d)
		}
	}
	return append(first, rest...), len(first)
}

// WatchReads starts watching the real project of the overlay sandbox s,
// every directory it shows (those findWhiteouts listed as it was made):
// call it before the harness starts, and Stop once it exited, before
// sync-back writes the real tree. It returns once the top of the tree is
// watched (firstWatched); the rest are watched on a goroutine watchLater
// after the caller says the harness started (Begin), and a read in one
// of them before its watch is set goes unseen. For a sandbox
// opened again from its state (a resumed session), whose directories are
// not known, the root alone is watched before it returns, and the
// goroutine lists the others as Create did, with the listing cache of
// the home SetHome named (directories only: their events are ignored).
// It returns nil for a copy. It never fails: what it cannot watch makes
// the report incomplete.
func (s *Sandbox) WatchReads() *ReadWatch {
	if s.Overlay == nil {
		return nil
	}
	w := &ReadWatch{root: s.Root, upper: s.Overlay.Upper, dirs: map[int32]string{}, rules: s.rules, gd: s.gitDirs,
		read: map[string]bool{}, changed: map[string]bool{}, appeared: map[string]bool{},
		set: make(chan struct{}), done: make(chan struct{}), begin: make(chan struct{}), stopped: make(chan struct{})}
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		w.incomplete = fmt.Sprintf("cannot watch the project for the agent's reads: %v", err)
		close(w.set)
		close(w.done)
		return w
	}
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		w.incomplete = fmt.Sprintf("cannot watch the project for the agent's reads: %v", err)
		close(w.set)
		close(w.done)
		return w
	}
	w.fd, w.stop, w.running = fd, stop, true
	dirs := s.Overlay.dirs
	if dirs == nil {
		dirs = []string{""}
	}
	cwd, _ := pathutil.Rel(s.Tree, s.Workdir)
	dirs, n := firstWatched(dirs, filepath.ToSlash(cwd), syncWatches)
	more := w.add(dirs, 0, n)
	go func() {
		defer close(w.done)
		<-w.begin
		select {
		case <-time.After(watchLater):
		case <-w.stopped:
		}
		if more && s.Overlay.dirs == nil {
			dirs, more = w.list(s)
			// The root, watched already, is first.
			dirs, _ = firstWatched(dirs, filepath.ToSlash(cwd), syncWatches)
		}
		if more {
			w.add(dirs, n, len(dirs))
		}
		close(w.set)
		w.loop()
	}()
	return w
}

// Begin lets the watch's goroutine watch the directories left, and list
// them for a sandbox opened from its state, watchLater from now: the
// caller calls it once the harness started. Made before, beside the
// launcher's start, those watches slowed it: the kernel flags each entry
// of a watched directory, and on 200,000 files the harness started 10
// to 20 ms later (BENCHMARKS.md). Stop calls it too. It does nothing on a
// nil watch.
func (w *ReadWatch) Begin() {
	if w == nil || w.begin == nil {
		return
	}
	w.beginOnce.Do(func() { close(w.begin) })
}

// list lists the directories of s's project as Create did, for a sandbox
// opened from its state, with the listing cache of its home (SetHome),
// and reports whether to watch them.
func (w *ReadWatch) list(s *Sandbox) ([]string, bool) {
	cache := openListingCache(s.home, s.Root, s.rules, s.gitDirs)
	found, err := findWhiteouts(context.Background(), s.Root, s.rules, s.gitDirs, cache)
	if err == nil {
		cache.save()
	}
	if err != nil {
		w.incomplete = fmt.Sprintf("the watch of the agent's reads covers the project's top directory alone: %v", err)
		return nil, false
	}
	return found.dirs, true
}

// add sets a watch on each directory of dirs[from:to], those that are
// gone or cannot be read aside, and reports whether to go on: the
// system's limit of watches, or Stop, ends it, the report incomplete.
func (w *ReadWatch) add(dirs []string, from, to int) bool {
	for i := from; i < to; i++ {
		if w.stopping.Load() {
			w.incomplete = fmt.Sprintf("the watch of the agent's reads covered %d of the project's %d directories when the harness exited", i, len(dirs))
			return false
		}
		wd, err := addWatch(w.fd, filepath.Join(w.root, filepath.FromSlash(dirs[i])), readMask)
		switch {
		case err == nil:
			w.dirs[int32(wd)] = dirs[i]
		case errors.Is(err, unix.ENOSPC):
			w.incomplete = fmt.Sprintf("the watch of the agent's reads covers %d of the project's %d directories: the system's limit of inotify watches (fs.inotify.max_user_watches) is reached", i, len(dirs))
			return false
		case errors.Is(err, unix.ENOMEM):
			w.incomplete = fmt.Sprintf("the watch of the agent's reads covers %d of the project's %d directories: %v", i, len(dirs), err)
			return false
		}
	}
	return true
}

// loop reads the events until Stop, then those left in the queue.
func (w *ReadWatch) loop() {
	buf := make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(w.stop), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			w.incomplete = fmt.Sprintf("the watch of the agent's reads stopped: %v", err)
			return
		}
		stopping := fds[1].Revents != 0
		// Read what is queued: on Stop, the harness has exited and every
		// event of its reads is in the queue.
		for {
			n, err := unix.Read(w.fd, buf)
			if n <= 0 || err != nil {
				break
			}
			w.events(buf[:n])
		}
		if stopping {
			return
		}
	}
}

// events takes the events of buf: reads mark a file read, changes of a
// file read mark it changed.
func (w *ReadWatch) events(buf []byte) {
	for len(buf) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(buf) {
			return
		}
		name := string(bytes.TrimRight(buf[unix.SizeofInotifyEvent:end], "\x00"))
		buf = buf[end:]
		if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			w.lost = true
			continue
		}
		dir, ok := w.dirs[ev.Wd]
		if !ok || name == "" {
			continue // the directory itself
		}
		rel := path.Join(dir, name)
		isDir := ev.Mask&unix.IN_ISDIR != 0
		if ev.Mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
			w.arrived(rel, isDir)
		}
		if isDir {
			continue // a directory's reads and changes are not a file's
		}
		switch {
		case ev.Mask&(unix.IN_ACCESS|unix.IN_CLOSE_NOWRITE) != 0:
			w.read[rel] = true
		case ev.Mask&changeMask != 0 && w.read[rel]:
			w.changed[rel] = true
		}
	}
}

// arrived takes an entry the real tree gained during the run (made or
// moved there): one the rules hide is reported (appeared), for the
// overlay, whose whiteouts were made at the start, shows it; a directory
// of the rest is watched in turn, and what it already holds taken as
// arrived too, so that a hidden file in a directory made during the run
// is reported as well. Nothing of git's own is looked into.
func (w *ReadWatch) arrived(rel string, isDir bool) {
	if w.rules == nil {
		return
	}
	if dotGitAlias(rel) || w.rules.ignoredLeaf(rel, isDir) || !isDir && w.rules.hidden(rel) {
		w.appeared[rel] = true
		return
	}
	if !isDir || path.Base(rel) == ".git" || w.gd.isGitDir(rel) || w.gd.inGit(rel) || w.stopping.Load() {
		return
	}
	real := filepath.Join(w.root, filepath.FromSlash(rel))
	wd, err := addWatch(w.fd, real, readMask)
	if err != nil {
		if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.ENOMEM) {
			w.incomplete = fmt.Sprintf("the watch of the agent's reads does not cover %s, made during the run: %v", rel, err)
		}
		return
	}
	w.dirs[int32(wd)] = rel
	ents, err := os.ReadDir(real)
	if err != nil {
		return
	}
	for _, e := range ents {
		w.arrived(path.Join(rel, e.Name()), e.IsDir())
	}
}

// Stop stops the watch, once the harness has exited, and reports the
// files read and then changed, less those the agent changed itself (an
// entry in the upper layer: a file it wrote, or a whiteout). Nil-safe.
func (w *ReadWatch) Stop() ReadReport {
	if w == nil {
		return ReadReport{}
	}
	if w.running {
		w.stopping.Store(true)
		close(w.stopped)
		w.Begin()
		one := [8]byte{1} // the eventfd's counter, made nonzero
		_, _ = unix.Write(w.stop, one[:])
		<-w.done
		// Closing an inotify instance waits for the kernel's grace
		// period of its marks, 10-20 ms (BenchmarkReadWatch's
		// stop-ms), and so does the exit of a process still closing
		// one: the last reference goes to a process of its own, which
		// nobody waits for.
		confine.CloseAside(w.fd, w.stop)
		w.running = false
	}
	var r ReadReport
	for rel := range w.changed {
		if _, err := os.Lstat(filepath.Join(w.upper, filepath.FromSlash(rel))); err == nil {
			continue // the agent's own change: sync-back judges it
		}
		r.Changed = append(r.Changed, rel)
	}
	sort.Strings(r.Changed)
	for rel := range w.appeared {
		if _, err := os.Lstat(filepath.Join(w.upper, filepath.FromSlash(rel))); err == nil {
			continue // hidden all along (a whiteout), or the agent's own
		}
		fi, err := os.Lstat(filepath.Join(w.root, filepath.FromSlash(rel)))
		r.Appeared = append(r.Appeared, Appeared{Path: rel, Dir: err == nil && fi.IsDir(), Read: w.read[rel]})
	}
	sort.Slice(r.Appeared, func(i, j int) bool { return r.Appeared[i].Path < r.Appeared[j].Path })
	r.Incomplete = w.incomplete
	if w.lost && r.Incomplete == "" {
		r.Incomplete = "the watch of the agent's reads lost events (the inotify queue overflowed)"
	}
	return r
}
