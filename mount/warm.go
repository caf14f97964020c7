package mount

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path"

	"github.com/google/renameio/v2"
	"golang.org/x/sys/unix"
)

// A warm sandbox (Park) keeps beside its tree the state of every entry as
// the last sync-back saw it (sync-back stats them all anyway), so that the
// next refresh compares the real tree with that state instead of listing
// and stat'ing the sandbox again: half the system calls. The state is a
// cache: missing, damaged or of another format, it is ignored and the
// sandbox is stat'ed. It is consumed by the refresh that reads it.

// warmStateMagic starts a warm state file; the digit is its format.
const warmStateMagic = "workforce warm state 2\n"

// warmStat is an entry of the sandbox as sync-back saw it.
type warmStat struct {
	mode  uint32 // st_mode: type and permissions
	nlink uint32 // links to a regular file: one, unless the agent made more
	size  int64
	mtime unix.Timespec
}

// warmState is the entries of a sandbox by path (slashes), and the names
// in each directory.
type warmState struct {
	byPath map[string]warmStat
	names  map[string][]string // by directory, "" the root
}

// kids returns the names in directory rel; ok is false when the state
// does not list that directory (it was not walked: .git).
func (w *warmState) kids(rel string) ([]string, bool) {
	if w == nil {
		return nil, false
	}
	k, ok := w.names[rel]
	return k, ok
}

// stat returns the entry rel.
func (w *warmState) stat(rel string) (warmStat, bool) {
	if w == nil {
		return warmStat{}, false
	}
	st, ok := w.byPath[rel]
	return st, ok
}

// stateFile is where the state of the warm tree tree is kept.
func stateFile(tree string) string { return tree + ".state" }

// saveWarmState writes the entries after for tree.
func saveWarmState(tree string, after []statEntry) error {
	t, err := renameio.NewPendingFile(stateFile(tree), renameio.WithPermissions(0o600))
	if err != nil {
		return err
	}
	defer t.Cleanup()
	w := bufio.NewWriterSize(t, 64<<10)
	w.WriteString(warmStateMagic)
	buf := binary.AppendUvarint(nil, uint64(len(after)))
	w.Write(buf)
	for i := range after {
		e := &after[i]
		buf = binary.AppendUvarint(buf[:0], uint64(len(e.rel)))
		buf = append(buf, e.rel...)
		buf = binary.AppendUvarint(buf, uint64(e.st.mode))
		buf = binary.AppendUvarint(buf, uint64(e.st.nlink))
		buf = binary.AppendVarint(buf, e.st.size)
		buf = binary.AppendVarint(buf, e.st.mtime.Sec)
		buf = binary.AppendVarint(buf, e.st.mtime.Nsec)
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return t.CloseAtomicallyReplace()
}

// loadWarmState reads and removes the state of the warm tree tree; nil
// when there is none or it cannot be trusted.
func loadWarmState(tree string) *warmState {
	name := stateFile(tree)
	data, err := os.ReadFile(name)
	if err != nil {
		return nil
	}
	os.Remove(name)
	st, err := readWarmState(data)
	if err != nil {
		return nil
	}
	return st
}

var errDamaged = errors.New("damaged warm state")

func readWarmState(data []byte) (*warmState, error) {
	rest, ok := bytes.CutPrefix(data, []byte(warmStateMagic))
	if !ok {
		return nil, errors.New("not a warm state")
	}
	uvarint := func() (uint64, bool) {
		v, n := binary.Uvarint(rest)
		if n <= 0 {
			return 0, false
		}
		rest = rest[n:]
		return v, true
	}
	varint := func() (int64, bool) {
		v, n := binary.Varint(rest)
		if n <= 0 {
			return 0, false
		}
		rest = rest[n:]
		return v, true
	}
	count, ok := uvarint()
	if !ok || count > uint64(len(rest)) {
		return nil, errDamaged
	}
	w := &warmState{byPath: make(map[string]warmStat, count), names: map[string][]string{"": nil}}
	for range count {
		n, ok := uvarint()
		if !ok || n == 0 || n > uint64(len(rest)) {
			return nil, errDamaged
		}
		p := string(rest[:n])
		rest = rest[n:]
		mode, ok1 := uvarint()
		nlink, ok5 := uvarint()
		size, ok2 := varint()
		sec, ok3 := varint()
		nsec, ok4 := varint()
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !safeRel(p) || p == "." || mode > 1<<32-1 || nlink > 1<<32-1 {
			return nil, errDamaged
		}
		ws := warmStat{mode: uint32(mode), nlink: uint32(nlink), size: size, mtime: unix.Timespec{Sec: sec, Nsec: nsec}}
		w.byPath[p] = ws
		dir, base := path.Split(p)
		if dir != "" {
			dir = dir[:len(dir)-1]
		}
		w.names[dir] = append(w.names[dir], base)
		if ws.mode&unix.S_IFMT == unix.S_IFDIR {
			if _, ok := w.names[p]; !ok {
				w.names[p] = nil
			}
		}
	}
	if len(rest) != 0 || len(w.byPath) != int(count) {
		return nil, errDamaged
	}
	return w, nil
}
