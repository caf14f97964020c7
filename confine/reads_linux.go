package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// readDirRights are what a readable directory gets, beneath it: reading
// files, listing directories, executing files. readFileRights are what a
// readable file gets. Landlock has them from ABI 1 on.
const (
	readDirRights  = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSReadDir | ll.AccessFSExecute)
	readFileRights = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSExecute)
)

// osList lists a directory for ReadRules: a directory the launcher may
// not list (EACCES) lists as empty, so nothing in it is granted.
func osList(dir string) ([]fs.DirEntry, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrPermission) {
		return nil, nil
	}
	return ents, err
}

// readRules returns the rules that grant the read rights of p.Read (nil
// for none): ReadRules of its deny and allow lists, listed now, and the
// writable set of p, which the harness reads too. Each path is opened
// once without following a symlink (one that became a symlink since the
// listing gets no rule) and named by its descriptor, so that the rule is
// on the inode the walk found; done closes the descriptors, after the
// rules are in place.
func readRules(p Policy) (rules []landlock.Rule, done func(), err error) {
	var fds []int
	done = func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	if p.Read == nil {
		return nil, done, nil
	}
	if err := p.Read.check(); err != nil {
		return nil, done, err
	}
	deny, allow := p.Read.effective()
	if p.Net != nil && p.Net.Overlay != nil {
		// The harness reads the upper layer through the merged tree
		// only: by its own path it would list the whiteouts, the names
		// of the hidden files. The overlay reads its layers with the
		// launcher's credentials from the mount, not the harness's.
		deny = append(deny, p.Net.Overlay.Upper, p.Net.Overlay.Work)
	}
	walked, err := ReadRules(deny, allow, osList)
	if err != nil {
		return nil, done, fmt.Errorf("sandbox read policy: %w", err)
	}
	paths := make([]string, 0, len(walked)+len(p.Dirs)+len(p.Files)+len(p.Devices))
	for _, r := range walked {
		paths = append(paths, r.Path)
	}
	// The writable set is followed as its write rules are; the walk's
	// paths are not.
	nWalked := len(paths)
	paths = append(append(append(paths, p.Dirs...), p.Files...), p.Devices...)
	_, procErr := os.Stat("/proc/self/fd")
	// One descriptor a rule, held until the rules are in place: where
	// that would pass the descriptor limit (a directory on the way with
	// thousands of entries), each path is checked on its descriptor and
	// named by its path, a race with a writer of that directory before
	// the harness starts.
	var lim unix.Rlimit
	byFD := procErr == nil && unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && uint64(len(paths))+256 < lim.Cur
	for i, path := range paths {
		flags := unix.O_PATH | unix.O_CLOEXEC
		if i < nWalked {
			flags |= unix.O_NOFOLLOW
		}
		fd, err := unix.Open(path, flags, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EACCES) {
			// Gone since the listing, or out of the launcher's reach:
			// nothing to grant.
			continue
		}
		if err != nil {
			done()
			return nil, func() {}, fmt.Errorf("sandbox read rule %s: %w", path, err)
		}
		fds = append(fds, fd)
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			done()
			return nil, func() {}, fmt.Errorf("sandbox read rule %s: %w", path, err)
		}
		rights := readFileRights
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFLNK:
			continue
		case unix.S_IFDIR:
			rights = readDirRights
		}
		name := path
		if byFD {
			name = "/proc/self/fd/" + strconv.Itoa(fd)
		} else {
			fds = fds[:len(fds)-1]
			unix.Close(fd)
		}
		rules = append(rules, landlock.PathAccess(rights, name))
	}
	return rules, done, nil
}

// effective returns the deny and allow lists r means on this system: in
// strict mode "/" is denied and the read roots that exist are allowed.
// Each path is resolved (ResolvePath) and kept as written too.
func (r *ReadPolicy) effective() (deny, allow []string) {
	deny = slices.Clone(r.Deny)
	allow = slices.Clone(r.Allow)
	if r.Strict {
		deny = append(deny, "/")
		allow = append(allow, r.Roots...)
		for _, root := range StrictRoots {
			matches, _ := filepath.Glob(root)
			for _, m := range matches {
				if fi, err := os.Lstat(m); err == nil && fi.IsDir() {
					allow = append(allow, m)
				} else if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
					// /lib -> usr/lib: the target is granted by its path.
					allow = append(allow, ResolvePath(m))
				}
			}
		}
	}
	return resolveAll(deny), resolveAll(allow)
}

// resolveAll returns paths, each followed by its resolved form
// (ResolvePath) when that differs.
func resolveAll(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		out = append(out, p)
		if r := ResolvePath(p); r != p {
			out = append(out, r)
		}
	}
	return out
}
