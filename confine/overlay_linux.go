package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// This file is the overlay in the launcher (Namespaces.Overlay): the
// mount, its whiteouts, and the probe of OverlayAvailable.

// overlayFD is the launcher's descriptor on the overlay's root, opened
// right after the mount and kept for the rename supervisor (rename_linux.go):
// -1 until then.
var overlayFD = -1

// mountOverlay mounts o in the launcher's mount namespace: the whiteouts
// made in Upper, then the overlay mounted on Target (userxattr) with its
// layers named by the launcher's descriptors on them, /proc/self/fd/N:
// overlayfs shows its options as they were given, so mountinfo names no
// real path, and no mount of the layers themselves is made (a bind
// would show its source's path in mountinfo's root field, and
// unmounting it again costs an RCU grace period).
func mountOverlay(o *Overlay) error {
	if err := makeWhiteouts(o); err != nil {
		return err
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, dir := range []string{o.Lower, o.Upper, o.Work} {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("cannot open the overlay's layer %s: %w", dir, err)
		}
		fds = append(fds, fd)
	}
	opts := fmt.Sprintf("lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d,workdir=/proc/self/fd/%d,userxattr", fds[0], fds[1], fds[2])
	if err := unix.Mount("overlay", o.Target, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("cannot mount the overlay on %s: %w", o.Target, err)
	}
	fd, err := unix.Open(o.Target, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open the overlay: %w", err)
	}
	overlayFD = fd
	return nil
}

// resolveBeneath resolves paths below a directory descriptor without
// following a symbolic link or leaving the directory: the agent wrote
// Upper in an earlier run of the session.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// makeWhiteouts makes a whiteout (a character device 0:0, which needs no
// privilege) in o.Upper for each of o.Whiteouts that exists in o.Lower,
// with the directories on the way made in Upper with the lower ones'
// mode and times. A path Upper has already (the agent's own file there,
// or a whiteout), or whose directory is not a directory in both layers,
// is left alone: the merged tree does not show the lower file then.
func makeWhiteouts(o *Overlay) error {
	if len(o.Whiteouts) == 0 {
		return nil
	}
	lower, err := unix.Open(o.Lower, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open the overlay's lower layer: %w", err)
	}
	defer unix.Close(lower)
	upper, err := unix.Open(o.Upper, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cannot open the overlay's upper layer: %w", err)
	}
	defer unix.Close(upper)
	for _, rel := range o.Whiteouts {
		if err := whiteout(lower, upper, rel); err != nil {
			return fmt.Errorf("cannot hide %s in the overlay: %w", rel, err)
		}
	}
	return nil
}

// whiteout makes the whiteout of rel (makeWhiteouts).
func whiteout(lower, upper int, rel string) error {
	var st unix.Stat_t
	if unix.Fstatat(lower, rel, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return nil // not in the lower layer (or not reachable): nothing to hide
	}
	dir, base := filepath.Split(rel)
	parent, err := unix.Dup(upper)
	if err != nil {
		return err
	}
	defer func() { unix.Close(parent) }()
	done := ""
	for _, name := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if name == "" {
			continue
		}
		done = filepath.Join(done, name)
		var lst unix.Stat_t
		if err := unix.Fstatat(lower, done, &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil || lst.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil
		}
		made := unix.Mkdirat(parent, name, lst.Mode&0o7777) == nil
		next, err := unix.Openat2(parent, name, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath})
		if err != nil {
			return nil // not a directory in Upper: the lower one is not shown
		}
		unix.Close(parent)
		parent = next
		if made {
			// The merged directory shows the upper one's attributes.
			_ = unix.Fchmodat(parent, "", lst.Mode&0o7777, unix.AT_EMPTY_PATH)
			ts := []unix.Timespec{lst.Atim, lst.Mtim}
			_ = unix.UtimesNanoAt(parent, "", ts, unix.AT_EMPTY_PATH)
		}
	}
	err = unix.Mknodat(parent, base, unix.S_IFCHR, 0)
	if errors.Is(err, unix.EEXIST) {
		return nil
	}
	return err
}

// probeOverlayArg, after LauncherArg and a directory, makes the launcher
// the probe of probeOverlay.
const probeOverlayArg = "probe-overlay"

// probeOverlay starts the launcher in the namespaces a harness gets, as
// the probe of an overlay in a directory made under dir (the system's
// temporary directory when empty), and removes that directory.
func probeOverlay(dir string) error {
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, "overlay-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o := probeLayout(tmp)
	for _, d := range []string{o.Lower, o.Upper, o.Work, o.Target} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(o.Lower, "hidden"), nil, 0o600); err != nil {
		return err
	}
	defer RemoveOverlayDirs(o.Upper, o.Work)
	return runProbe(overlayCaps, probeOverlayArg, tmp)
}

// probeLayout is the overlay the probe mounts in dir.
func probeLayout(dir string) *Overlay {
	return &Overlay{Lower: filepath.Join(dir, "lower"), Upper: filepath.Join(dir, "upper"), Work: filepath.Join(dir, "work"),
		Target: filepath.Join(dir, "target"), Whiteouts: []string{"hidden"}}
}

// probeOverlayMain is the probe of probeOverlay, in the namespaces: it
// mounts the overlay as the launcher does, checks that the whiteout
// hides its file and that a file written in the merged tree lands in
// the upper layer.
func probeOverlayMain(dir string) int {
	o := probeLayout(dir)
	err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	if err == nil {
		err = mountOverlay(o)
	}
	if err == nil {
		if _, serr := os.Lstat(filepath.Join(o.Target, "hidden")); serr == nil {
			err = errors.New("the overlay shows a file its whiteout hides")
		}
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(o.Target, "written"), nil, 0o600)
	}
	if err == nil {
		if _, serr := os.Stat(filepath.Join(o.Upper, "written")); serr != nil {
			err = fmt.Errorf("a file written in the overlay is not in its upper layer: %w", serr)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// removeWritable removes path and what is below it, making each
// directory listable and writable by its owner first. It goes by
// descriptors, name by name, as os.RemoveAll does: the agent may nest
// directories deeper than a path can name (PATH_MAX), and a path would
// fail there (ENAMETOOLONG) and leave the session unremovable. A
// missing path is fs.ErrNotExist; links are removed, never followed.
func removeWritable(path string) error {
	parent, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(parent)
	if err := removeWritableAt(parent, filepath.Base(path)); err != nil {
		return &fs.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// removeWritableAt is removeWritable of the entry name in the directory
// dir.
func removeWritableAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if err != unix.EISDIR {
		return err // nil, ENOENT, or the error of a file
	}
	fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	var st unix.Stat_t
	if err = unix.Fstat(fd, &st); err == nil && st.Mode&0o700 != 0o700 {
		// fchmod(2) takes no O_PATH descriptor; its /proc link is the
		// directory itself, whatever is at name by now.
		err = unix.Fchmodat(unix.AT_FDCWD, self, st.Mode&0o7777|0o700, 0)
	}
	var list int
	if err == nil {
		list, err = unix.Open(self, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	}
	unix.Close(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(list), name)
	names, err := f.Readdirnames(-1)
	for _, n := range names {
		if err != nil {
			break
		}
		if err = removeWritableAt(list, n); err == unix.ENOENT {
			err = nil
		}
	}
	f.Close()
	if err != nil {
		return err
	}
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}
