package session

import "golang.org/x/sys/unix"

// opaque reports whether dir, a directory of an overlay's upper layer
// mounted with userxattr, is opaque: it replaced the real directory,
// whose entries it hides.
func opaque(dir string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(dir, "user.overlay.opaque", buf)
	return err == nil && n > 0 && buf[0] == 'y'
}
