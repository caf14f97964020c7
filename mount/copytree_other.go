//go:build !linux || portablefs

package mount

import "golang.org/x/sys/unix"

// The sandbox copy where Linux's fast paths are missing (macOS, the BSDs),
// and on Linux in a build with the portablefs tag, which runs the tests
// of the copy through these fallbacks. They do what copytree_linux.go does
// by portable means, and are as safe against the links an agent plants:
// the destination's directories are still reached from the root's
// descriptor one component at a time through no link (openComponents).
// What they cost more: one allocation per name read, and data copied by
// read and write instead of copy_file_range (no clone of the blocks).

// readRels lists the directory open as fd (see readRelsPortable).
func readRels(fd int, path, rel string) ([]string, error) { return readRelsPortable(fd, path, rel) }

// copyData copies in, from its offset to its end, to out, with read and
// write; size is what it is expected to hold.
func copyData(in, out int, size int64) error { return copyRest(in, out) }

// openBeneath opens the directory rel (slashes; "" for the root) below
// the directory rootfd, through no symlink (see openComponents).
func openBeneath(rootfd int, rel string) (int, error) { return openComponents(rootfd, rel) }

// setDirTimes sets the access and modification times of the directory
// open as fd (see dirTimesPortable).
func setDirTimes(fd int, t unix.Timespec) error { return dirTimesPortable(fd, t) }
