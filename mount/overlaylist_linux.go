package mount

import "golang.org/x/sys/unix"

// listingFSTypes are the file systems whose times the listing cache
// trusts: local ones, whose timestamps this machine's kernel makes from
// its own clock (statfs(2)'s f_type).
var listingFSTypes = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:      true, // ext2, ext3 and ext4 alike
	unix.XFS_SUPER_MAGIC:       true,
	unix.BTRFS_SUPER_MAGIC:     true,
	unix.TMPFS_MAGIC:           true,
	unix.F2FS_SUPER_MAGIC:      true,
	unix.OVERLAYFS_SUPER_MAGIC: true,
	0x2fc12fc1:                 true, // zfs
	0xca451a4e:                 true, // bcachefs
}

// listingFS reports whether the listing cache may be used for the
// project root: its file system is one of listingFSTypes.
func listingFS(root string) bool {
	var st unix.Statfs_t
	return unix.Statfs(root, &st) == nil && listingFSTypes[int64(st.Type)]
}
