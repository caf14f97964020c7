//go:build !portablefs

package mount

import (
	"bytes"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// FuzzEachDirent: records of any bytes never make the reader read outside
// them, and every name it gives is a name: not empty, no NUL, not "." or
// "..".
func FuzzEachDirent(f *testing.F) {
	// Two real records: "a" and ".".
	rec := func(name string) []byte {
		b := make([]byte, (direntName+len(name)+1+7)&^7)
		b[direntIno] = 1
		*(*uint16)(unsafe.Pointer(&b[direntReclen])) = uint16(len(b))
		copy(b[direntName:], name)
		return b
	}
	f.Add(append(rec("a"), rec(".")...))
	f.Add(rec("a name"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, buf []byte) {
		err := eachDirent(buf, func(name []byte) {
			if len(name) == 0 || bytes.IndexByte(name, 0) >= 0 || string(name) == "." || string(name) == ".." {
				t.Errorf("name %q", name)
			}
		})
		if err != nil && err != unix.EIO {
			t.Errorf("error %v", err)
		}
	})
}
