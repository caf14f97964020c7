package harness

import (
	"io/fs"
	"syscall"
)

// changeAndInode returns a file's change time (ns) and inode.
func changeAndInode(fi fs.FileInfo) (int64, uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return st.Ctim.Sec*1e9 + st.Ctim.Nsec, st.Ino
}
