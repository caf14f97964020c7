package mount

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The sandbox copy. otiai10/copy, which the specification names for tree
// copies, was measured at 1.6 times `cp -a` on a 20,000-file tree (each
// file costs it a MkdirAll, a chmod and a Chtimes by path, and the Go
// runtime's poller registration of every file it opens); the sandbox must
// cost no more than `cp -a` + `rm -rf`. So the copy is done here, with the
// system calls cp itself makes, relative to open directory descriptors,
// and on several workers: each file is opened, created with its mode,
// copied with copy_file_range (which clones on file systems that can:
// btrfs, XFS; the kernel falls back to copying elsewhere, and so does this
// code when the call is refused), and given its modification time. otiai10/copy still
// copies the small parts of a git directory (git.go).

// visit decides, for each entry of the project, what the copy does. It is
// called concurrently.
type visitor interface {
	// entry is called for every entry but the root, with its path relative
	// to the root (slashes), the real directory holding it and its name,
	// and what lstat said; it returns whether to leave the entry out. (The
	// stat is passed by value: a pointer through an interface would cost
	// a heap allocation per entry.)
	entry(rel, dir, name string, st warmStat) (skip bool)
	// done is called, once per directory, with the entries the copy made
	// (or kept, in a refresh) of it: regular files, directories and links,
	// with what lstat said of the real ones.
	done(batch []statEntry)
	// link returns the target to give the sandbox's copy of the symlink
	// src (rel), or ok false to leave it out.
	link(rel, src, target string) (newTarget string, ok bool)
}

// copyTree copies the directory src to dst, which must not exist, on
// workers goroutines.
func copyTree(ctx context.Context, src, dst string, workers int, v visitor) error {
	return walkCopy(ctx, src, dst, workers, v, false, nil)
}

// refreshTree makes dst, a copy of src made earlier (a warm sandbox), the
// copy copyTree would make now: it compares each entry of both with lstat
// and copies only what differs (a file whose size, modification time or
// mode is not the one in src, a link whose target is not the one it should
// have), removes what src no longer has or v leaves out, and leaves the
// rest alone. v sees every entry of src, as for copyTree.
func refreshTree(ctx context.Context, src, dst string, workers int, v visitor, warm *warmState) error {
	return walkCopy(ctx, src, dst, workers, v, true, warm)
}

func walkCopy(ctx context.Context, src, dst string, workers int, v visitor, refresh bool, warm *warmState) error {
	var st unix.Stat_t
	if err := unix.Stat(src, &st); err != nil {
		return &fs.PathError{Op: "stat", Path: src, Err: err}
	}
	if !refresh {
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
	}
	// Every directory of dst is reached from this descriptor by a path
	// that may not go through a symlink: in a refresh, a directory of the
	// warm tree that became a link (by a process the harness left behind)
	// is never followed out of the sandbox.
	rootfd, err := unix.Open(dst, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dst, Err: err}
	}
	defer unix.Close(rootfd)
	if refresh {
		if err := unix.Fchmod(rootfd, 0o700); err != nil {
			return &fs.PathError{Op: "chmod", Path: dst, Err: err}
		}
	}
	c := &copier{ctx: ctx, v: v, jobs: make(chan dirJob, 1024), refresh: refresh, warm: warm, rootfd: rootfd}
	c.dirs = append(c.dirs, dirMode{"", uint32(st.Mode) & 0o7777, st.Mtim})
	c.pending.Add(1)
	c.jobs <- dirJob{src: src, dst: dst, rel: "", trusted: true}
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range c.jobs {
				c.dir(j)
				c.pending.Done()
			}
		}()
	}
	go func() {
		c.pending.Wait()
		close(c.jobs)
	}()
	wg.Wait()
	if c.err != nil {
		return c.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Directory modes and times last: a read-only directory must take its
	// files first, and every file written into a directory changes its
	// modification time.
	for i := len(c.dirs) - 1; i >= 0; i-- {
		d := c.dirs[i]
		path := filepath.Join(dst, filepath.FromSlash(d.rel))
		fd, err := openBeneath(rootfd, d.rel)
		if err != nil {
			return &fs.PathError{Op: "open", Path: path, Err: err}
		}
		err = unix.Fchmod(fd, d.mode)
		if err == nil {
			err = setDirTimes(fd, d.mtime)
		}
		unix.Close(fd)
		if err != nil {
			return &fs.PathError{Op: "chmod", Path: path, Err: err}
		}
	}
	return nil
}

type dirJob struct {
	src, dst, rel string
	// trusted is false in a refresh when the warm state cannot be
	// believed below this directory (it was not the directory the state
	// says): its entries are listed and stat'ed.
	trusted bool
}

type dirMode struct {
	rel   string // relative to the destination root, slashes; "" the root
	mode  uint32
	mtime unix.Timespec
}

type copier struct {
	ctx     context.Context
	v       visitor
	jobs    chan dirJob
	pending sync.WaitGroup
	refresh bool
	// warm, in a refresh, is what the destination holds as the last sync
	// saw it, so that it need not be listed and stat'ed again; a
	// directory it does not list (.git) is.
	warm *warmState
	// rootfd is the destination root, open.
	rootfd int

	mu   sync.Mutex
	err  error
	dirs []dirMode
}

func (c *copier) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

func (c *copier) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil || c.ctx.Err() != nil
}

// dir copies the entries of one directory; its subdirectories become jobs
// of their own.
func (c *copier) dir(j dirJob) {
	if c.failed() {
		return
	}
	sfd, err := unix.Open(j.src, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		c.fail(&fs.PathError{Op: "open", Path: j.src, Err: err})
		return
	}
	defer unix.Close(sfd)
	dfd, err := openBeneath(c.rootfd, j.rel)
	if err != nil {
		c.fail(&fs.PathError{Op: "open", Path: j.dst, Err: err})
		return
	}
	defer unix.Close(dfd)
	rels, err := readRels(sfd, j.src, j.rel)
	if err != nil {
		c.fail(err)
		return
	}
	// In a refresh, what dst has and src does not is removed (after the
	// loop below).
	var have []string      // dst's names, when the warm state does not list them
	var warmed []warmEntry // dst's entries, when it does
	known := false         // this directory's entries are in the warm state
	matched := 0           // names of src found in the warm state
	if c.refresh {
		if kids, ok := c.warm.dir(j.rel); ok && j.trusted {
			known, warmed = true, kids
		} else if have, err = readNames(dfd, j.dst); err != nil {
			c.fail(err)
			return
		}
	}
	var subdirs []dirJob
	var modes []dirMode
	made := make([]statEntry, 0, len(rels))
	defer func() {
		if len(made) > 0 {
			c.v.done(made)
		}
	}()
	for _, rel := range rels {
		if c.ctx.Err() != nil {
			return
		}
		name := baseName(rel, j.rel)
		var st unix.Stat_t
		if err := unix.Fstatat(sfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone meanwhile
			}
			c.fail(&fs.PathError{Op: "lstat", Path: filepath.Join(j.src, name), Err: err})
			return
		}
		skip := c.v.entry(rel, j.src, name, toWarm(&st))
		var cur unix.Stat_t
		var links uint64
		exists, trusted := false, true
		if c.refresh {
			var err error
			if ws, ok := lookupWarm(warmed, name); known && ok {
				matched++
				cur = unix.Stat_t{Size: ws.size, Mtim: ws.mtime}
				setStatField(&cur.Mode, ws.mode)
				links = uint64(ws.nlink)
			} else {
				// Not in the state (new in src, or not walked by the
				// last sync: .git): ask.
				err = unix.Fstatat(dfd, name, &cur, unix.AT_SYMLINK_NOFOLLOW)
				links = uint64(cur.Nlink)
			}
			if err == nil {
				exists = true
				if skip || !sameEntry(&st, &cur, links) {
					if err := removeAt(dfd, j.dst, name); err != nil {
						c.fail(err)
						return
					}
					exists = false
				}
			}
		}
		if skip {
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			if exists {
				// The state may be stale: what is there must be a
				// directory, not a link to one.
				if err := chmodDirAt(dfd, name); err != nil {
					if err := removeAt(dfd, j.dst, name); err != nil {
						c.fail(err)
						return
					}
					exists, trusted = false, false
				}
			}
			if !exists {
				if err := unix.Mkdirat(dfd, name, 0o700); err != nil {
					c.fail(&fs.PathError{Op: "mkdir", Path: filepath.Join(j.dst, name), Err: err})
					return
				}
			}
			made = append(made, statEntry{rel: rel, st: toWarm(&st)})
			dst := filepath.Join(j.dst, name)
			modes = append(modes, dirMode{rel, uint32(st.Mode) & 0o7777, st.Mtim})
			subdirs = append(subdirs, dirJob{src: filepath.Join(j.src, name), dst: dst, rel: rel, trusted: j.trusted && trusted})
		case unix.S_IFREG:
			made = append(made, statEntry{rel: rel, st: toWarm(&st)})
			if exists {
				continue // the same size, time and mode: kept
			}
			if err := copyFileAt(sfd, dfd, name, &st); err != nil {
				c.fail(&fs.PathError{Op: "copy", Path: filepath.Join(j.src, name), Err: err})
				return
			}
		case unix.S_IFLNK:
			target, err := readlinkAt(sfd, name)
			if err != nil {
				c.fail(&fs.PathError{Op: "readlink", Path: filepath.Join(j.src, name), Err: err})
				return
			}
			if t, ok := c.v.link(rel, filepath.Join(j.src, name), target); ok {
				same := false
				if exists {
					if cur, err := readlinkAt(dfd, name); err == nil && cur == t {
						same = true
					} else if err := removeAt(dfd, j.dst, name); err != nil {
						c.fail(err)
						return
					}
				}
				if !same {
					if err := unix.Symlinkat(t, dfd, name); err != nil {
						c.fail(&fs.PathError{Op: "symlink", Path: filepath.Join(j.dst, name), Err: err})
						return
					}
				}
				made = append(made, statEntry{rel: rel, st: toWarm(&st)})
			}
		default:
			// Devices, FIFOs and sockets are not copied.
		}
	}
	if c.refresh && !(known && matched == len(warmed)) {
		for _, e := range warmed {
			have = append(have, e.name)
		}
		in := make(map[string]bool, len(rels))
		for _, rel := range rels {
			in[baseName(rel, j.rel)] = true
		}
		for _, n := range have {
			if !in[n] {
				if err := removeAt(dfd, j.dst, n); err != nil {
					c.fail(err)
					return
				}
			}
		}
	}
	if len(modes) > 0 {
		c.mu.Lock()
		c.dirs = append(c.dirs, modes...)
		c.mu.Unlock()
	}
	for _, sd := range subdirs {
		c.pending.Add(1)
		select {
		case c.jobs <- sd:
		default:
			// The queue is full: do it here rather than wait.
			c.dir(sd)
			c.pending.Done()
		}
	}
}

// sameEntry reports whether, in a refresh, the entry have of dst can stay
// as the copy of st: the same type, and for a regular file the same size,
// modification time and mode. Links are compared by target later.
func sameEntry(st, have *unix.Stat_t, links uint64) bool {
	if st.Mode&unix.S_IFMT != have.Mode&unix.S_IFMT {
		return false
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return true
	}
	// A file with another link (the agent made it) is copied again: a
	// write through the other name would change it.
	return have.Size == st.Size && have.Mtim == st.Mtim && have.Mode&0o7777 == st.Mode&0o7777 && links <= 1
}

// removeAt removes name from the directory dfd (path), and all below it.
func removeAt(dfd int, path, name string) error {
	err := unix.Unlinkat(dfd, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		return removeAll(filepath.Join(path, name))
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return &fs.PathError{Op: "remove", Path: filepath.Join(path, name), Err: err}
	}
	return nil
}

// readNames lists the directory open as fd.
func readNames(fd int, path string) ([]string, error) { return readRels(fd, path, "") }

// uniqueRels returns rels without the repeats of a path, in order.
func uniqueRels(rels []string) []string {
	seen := make(map[string]bool, len(rels))
	out := rels[:0]
	for _, rel := range rels {
		if !seen[rel] {
			seen[rel] = true
			out = append(out, rel)
		}
	}
	return out
}

// baseName returns the name of rel, a path below the directory dir (""
// the root).
func baseName(rel, dir string) string {
	if dir == "" {
		return rel
	}
	return rel[len(dir)+1:]
}

func readlinkAt(dirfd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// copyFileAt copies the regular file name of directory sfd into directory
// dfd, with st's mode and modification time.
func copyFileAt(sfd, dfd int, name string, st *unix.Stat_t) error {
	in, err := unix.Openat(sfd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(in)
	mode := uint32(st.Mode) & 0o7777
	out, err := unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, mode|0o600)
	if err != nil {
		return err
	}
	err = copyData(in, out, st.Size)
	if err == nil && mode != (mode|0o600)&^umask {
		err = unix.Fchmod(out, mode)
	}
	if err == nil {
		err = unix.UtimesNanoAt(dfd, name, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
	}
	if cerr := unix.Close(out); err == nil {
		err = cerr
	}
	return err
}

// umask is the process's file mode creation mask.
var umask = func() uint32 {
	m := unix.Umask(0)
	unix.Umask(m)
	return uint32(m)
}()

var bufPool = sync.Pool{New: func() any { b := make([]byte, 128<<10); return &b }}

// copyRest copies in from its offset to its end with read and write.
func copyRest(in, out int) error {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	for {
		n, err := unix.Read(in, buf)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err
		}
		if n == 0 {
			return nil
		}
		for w := 0; w < n; {
			m, err := unix.Write(out, buf[w:n])
			if err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return err
			}
			w += m
		}
	}
}

// fileMode is os's FileMode of an st_mode.
func fileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	}
	if mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// statEntry is an entry of a tree, with what lstat said of it that
// matters here.
type statEntry struct {
	rel string
	st  warmStat
}

// toWarm keeps of st its mode, size and modification time.
func toWarm(st *unix.Stat_t) warmStat {
	return warmStat{mode: uint32(st.Mode), nlink: uint32(st.Nlink), size: st.Size, mtime: st.Mtim}
}

// statTree lstats every entry below root on workers goroutines, and hands
// them to visit one directory at a time (concurrently); directories for
// which skip is true are neither entered nor handed over, and a .git file
// or link is not handed over either.
func statTree(ctx context.Context, root string, workers int, skip func(rel string) bool, visit func([]statEntry)) error {
	return statTreeFrom(ctx, root, "", workers, skip, visit)
}

// statTreeFrom is statTree for the entries below the directory start
// (relative to root, slashes); their paths are relative to root.
func statTreeFrom(ctx context.Context, root, start string, workers int, skip func(rel string) bool, visit func([]statEntry)) error {
	jobs := make(chan string, 1024)
	var pending sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	var dir func(rel string)
	dir = func(rel string) {
		if ctx.Err() != nil {
			fail(ctx.Err())
			return
		}
		path := filepath.Join(root, filepath.FromSlash(rel))
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			fail(&fs.PathError{Op: "open", Path: path, Err: err})
			return
		}
		defer unix.Close(fd)
		rels, err := readRels(fd, path, rel)
		if err != nil {
			fail(err)
			return
		}
		batch := make([]statEntry, 0, len(rels))
		var subdirs []string
		for _, r := range rels {
			name := baseName(r, rel)
			var st unix.Stat_t
			if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				fail(&fs.PathError{Op: "lstat", Path: filepath.Join(path, name), Err: err})
				return
			}
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				if !skip(r) {
					subdirs = append(subdirs, r)
					batch = append(batch, statEntry{rel: r, st: toWarm(&st)})
				}
				continue
			}
			if name == ".git" {
				continue // a .git file or link: never synced
			}
			batch = append(batch, statEntry{rel: r, st: toWarm(&st)})
		}
		if len(batch) > 0 {
			visit(batch)
		}
		for _, sd := range subdirs {
			pending.Add(1)
			select {
			case jobs <- sd:
			default:
				dir(sd)
				pending.Done()
			}
		}
	}
	pending.Add(1)
	jobs <- start
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rel := range jobs {
				dir(rel)
				pending.Done()
			}
		}()
	}
	go func() {
		pending.Wait()
		close(jobs)
	}()
	wg.Wait()
	return firstErr
}

// openComponents is openBeneath for kernels without openat2, and for
// systems without it (copytree_other.go): one openat per component, none
// of them followed if it is a link (O_NOFOLLOW), and ".." refused. It is
// as safe as openat2's RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS against the
// links an agent plants in the sandbox: every step opens a child of the
// directory the step before opened, so no link and no ".." can lead out
// of rootfd, whatever is renamed meanwhile (a directory moved elsewhere
// below the root is still below it); a component that is a link fails
// with ELOOP (or ENOTDIR), as openat2 fails with ELOOP. Magic links are
// links too. rel "" is the root.
func openComponents(rootfd int, rel string) (int, error) {
	fd, err := unix.Openat(rootfd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || rel == "." || rel == "" {
		return fd, err
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			unix.Close(fd)
			return -1, unix.EXDEV
		}
		next, err := unix.Openat(fd, part, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// chmodDirAt makes the directory name of dfd writable for the copy; it
// fails, changing nothing, when name is not a directory (a link to one
// included).
func chmodDirAt(dfd int, name string) error {
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, 0o700)
}

// setStatField stores v in *p, a field of unix.Stat_t whose width is the
// system's: st_mode is 32 bits on Linux, 16 on macOS and FreeBSD.
func setStatField[T ~uint16 | ~uint32 | ~uint64](p *T, v uint32) { *p = T(v) }

// readRelsPortable is readRels by the directory reading of package os,
// for systems without getdents64 (copytree_other.go): the directory open
// as fd (path) is opened again (the listing of fd itself would move its
// offset) and its names read whole.
func readRelsPortable(fd int, path, rel string) ([]string, error) {
	dfd, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "readdir", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(dfd), path)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	rels := make([]string, 0, len(names))
	for _, name := range names {
		if name == "" || name == "." || name == ".." {
			continue
		}
		if rel != "" {
			name = rel + "/" + name
		}
		rels = append(rels, name)
	}
	// A name renamed over while the directory was read may be listed
	// twice: once is what a listing means.
	return uniqueRels(rels), nil
}

// dirTimesPortable is setDirTimes for systems without a futimens the
// copy can call (copytree_other.go): utimensat on the path "." of the
// directory fd, which is the directory itself and follows nothing.
func dirTimesPortable(fd int, t unix.Timespec) error {
	return unix.UtimesNanoAt(fd, ".", []unix.Timespec{t, t}, 0)
}
