package git

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// BlobName returns the object name git gives a blob of the size bytes r
// reads, in the object format of the name like (SHA-1 for 40 digits,
// SHA-256 for 64): what `git hash-object --no-filters` prints, without
// starting git.
func BlobName(like string, r io.Reader, size int64) (string, error) {
	var h hash.Hash
	switch len(like) {
	case 40:
		h = sha1.New()
	case 64:
		h = sha256.New()
	default:
		return "", fmt.Errorf("%q is not an object name", like)
	}
	h.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	n, err := io.Copy(h, r)
	if err != nil {
		return "", err
	}
	if n != size {
		return "", fmt.Errorf("read %d bytes of %d", n, size)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// StoredIn returns which of names (full object names) the object store
// objects (a git directory's objects directory) holds itself, loose or in
// one of its packs; objects that only its alternates hold are not. It
// starts no git. The store and what is in it are not followed through
// links: a store that is a link holds nothing.
func StoredIn(objects string, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	if fi, err := os.Lstat(objects); err != nil || !fi.IsDir() {
		if err == nil || isNotExist(err) {
			return out, nil
		}
		return nil, err
	}
	var left []string
	for _, name := range names {
		if !IsObjectName(name) {
			continue
		}
		dir := filepath.Join(objects, name[:2])
		if fi, err := os.Lstat(dir); err == nil && fi.IsDir() {
			if fi, err := os.Lstat(filepath.Join(dir, name[2:])); err == nil && fi.Mode().IsRegular() {
				out[name] = true
				continue
			}
		}
		left = append(left, name)
	}
	if len(left) == 0 {
		return out, nil
	}
	packs := filepath.Join(objects, "pack")
	if fi, err := os.Lstat(packs); err != nil || !fi.IsDir() {
		return out, nil
	}
	idxs, err := filepath.Glob(filepath.Join(packs, "*.idx"))
	if err != nil {
		return nil, err
	}
	for _, idx := range idxs {
		if fi, err := os.Lstat(idx); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(idx)
		if err != nil {
			return nil, err
		}
		for _, name := range left {
			raw, err := hex.DecodeString(name)
			if err != nil {
				continue
			}
			if ok, err := packHas(data, raw); err != nil {
				return nil, fmt.Errorf("%s: %w", idx, err)
			} else if ok {
				out[name] = true
			}
		}
	}
	return out, nil
}

// packHas reports whether the pack index idx (version 1 or 2) lists the
// object of the binary name raw.
func packHas(idx, raw []byte) (bool, error) {
	const fanout = 256 * 4
	start, stride, skip := 0, len(raw), 0
	if bytes.HasPrefix(idx, []byte("\xfftOc")) {
		if len(idx) < 8 || binary.BigEndian.Uint32(idx[4:]) != 2 {
			return false, fmt.Errorf("a pack index of an unknown version")
		}
		start = 8
	} else {
		// Version 1: a 4-byte offset before each name.
		if len(raw) != sha1.Size {
			return false, nil
		}
		stride, skip = 4+sha1.Size, 4
	}
	if len(idx) < start+fanout {
		return false, fmt.Errorf("a pack index cut short")
	}
	n := int(binary.BigEndian.Uint32(idx[start+fanout-4:]))
	names := idx[start+fanout:]
	if n < 0 || len(names)/stride < n {
		return false, fmt.Errorf("a pack index cut short")
	}
	i := sort.Search(n, func(i int) bool {
		return bytes.Compare(names[i*stride+skip:i*stride+skip+len(raw)], raw) >= 0
	})
	return i < n && bytes.Equal(names[i*stride+skip:i*stride+skip+len(raw)], raw), nil
}

// isNotExist reports whether err says a path is not there (also when a
// component of it is not a directory).
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
