//go:build !linux

package mount

import "golang.org/x/sys/unix"

// openAnon fails: unnamed temporary files are a Linux feature; the file is
// written under a temporary name instead.
func openAnon(int) (int, error) { return -1, errNoAnon }

func linkAnon(int, int, string) error { return errNoAnon }

// renameNoReplace renames tmp to name in dirfd unless there is a file at
// name (unix.EEXIST).
func renameNoReplace(dirfd int, tmp, name string) error { return linkNoReplace(dirfd, tmp, name) }

// renameAside cannot rename without replacing here: unix.ENOSYS, and
// unlinkChecked checks, then unlinks.
func renameAside(int, string, string) error { return unix.ENOSYS }

// exchangeAt cannot swap two names in one step here: unix.ENOSYS, and
// placeAt checks, then renames.
func exchangeAt(int, string, string) error { return unix.ENOSYS }

// copySparse copies the size bytes of in to out.
func copySparse(in, out int, size int64) error {
	if err := copyRangeRW(in, out, 0, size); err != nil {
		return err
	}
	return unix.Ftruncate(out, size)
}
