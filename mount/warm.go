package mount

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"iter"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unsafe"

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

// warmEntry is an entry of a directory of the sandbox, by name.
type warmEntry struct {
	name string
	st   warmStat
}

// warmState is the entries of a sandbox by directory ("" the root). Loading
// it is one pass over the file with no map of every path (it is on the path
// of every warm run, before the refresh can start); each directory's
// entries are sorted by the worker that refreshes that directory (dir), so
// that the sorting is done in parallel.
type warmState struct {
	dirs  map[string][]warmEntry
	count int // entries in all
}

// dir returns the entries of directory rel sorted by name; ok is false when
// the state does not list that directory (it was not walked: .git) or lists
// a name twice (it is damaged). It sorts in place: the refresh calls it
// once per directory, never twice for one.
func (w *warmState) dir(rel string) ([]warmEntry, bool) {
	if w == nil {
		return nil, false
	}
	d, ok := w.dirs[rel]
	if !ok {
		return nil, false
	}
	slices.SortFunc(d, func(a, b warmEntry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(d); i++ {
		if d[i].name == d[i-1].name {
			return nil, false
		}
	}
	return d, true
}

// lookupWarm returns the entry name of d, sorted by dir.
func lookupWarm(d []warmEntry, name string) (warmStat, bool) {
	i, ok := slices.BinarySearchFunc(d, name, func(e warmEntry, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return warmStat{}, false
	}
	return d[i].st, true
}

// stateFile is where the state of the warm tree tree is kept.
func stateFile(tree string) string { return tree + ".state" }

// saveWarmState writes the entries after for tree.
func saveWarmState(tree string, after iter.Seq[*statEntry]) error {
	t, err := renameio.NewPendingFile(stateFile(tree), renameio.WithPermissions(0o600), renameio.WithTempDir(filepath.Dir(tree)))
	if err != nil {
		return err
	}
	defer t.Cleanup()
	w := bufio.NewWriterSize(t, 64<<10)
	w.WriteString(warmStateMagic)
	count := 0
	for range after {
		count++
	}
	buf := binary.AppendUvarint(nil, uint64(count))
	w.Write(buf)
	for e := range after {
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

// readWarmState reads a warm state file's data, which must not change
// after: the names of the entries are substrings of it, not copies.
func readWarmState(data []byte) (*warmState, error) {
	text := unsafe.String(unsafe.SliceData(data), len(data))
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
	w := &warmState{dirs: map[string][]warmEntry{"": nil}, count: int(count)}
	// The names are substrings of text, and the entries one array in
	// the file's order, in which a directory's entries are (nearly
	// always) one run: a directory's slice is its run of that array,
	// copied only when its entries are in several runs.
	all := make([]warmEntry, count)
	type run struct {
		dir    string
		lo, hi int
	}
	var runs []run
	for i := range all {
		n, ok := uvarint()
		if !ok || n == 0 || n > uint64(len(rest)) {
			return nil, errDamaged
		}
		at := len(text) - len(rest)
		p := text[at : at+int(n)]
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
		dir, base := path.Split(p)
		if dir != "" {
			dir = dir[:len(dir)-1]
		}
		all[i] = warmEntry{name: base, st: ws}
		if len(runs) > 0 && runs[len(runs)-1].dir == dir {
			runs[len(runs)-1].hi = i + 1
		} else {
			runs = append(runs, run{dir, i, i + 1})
		}
		if ws.mode&unix.S_IFMT == unix.S_IFDIR {
			if _, ok := w.dirs[p]; !ok {
				w.dirs[p] = nil
			}
		}
	}
	for _, r := range runs {
		if have := w.dirs[r.dir]; have == nil {
			w.dirs[r.dir] = all[r.lo:r.hi:r.hi]
		} else {
			w.dirs[r.dir] = append(have, all[r.lo:r.hi]...) // a copy: have's capacity ends at its run
		}
	}
	if len(rest) != 0 {
		return nil, errDamaged
	}
	return w, nil
}
