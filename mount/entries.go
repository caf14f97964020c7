package mount

import (
	"iter"
	"path"
)

// entryList is entries kept as the batches that brought them (one per
// directory of a walk): keeping a batch copies nothing, and a walk of
// 20,000 files brings 20,000 entries. A batch, once added, is not changed.
type entryList struct {
	batches [][]statEntry
}

func (l *entryList) add(batch []statEntry) {
	if len(batch) > 0 {
		l.batches = append(l.batches, batch)
	}
}

// all yields every entry, batch by batch in the order added.
func (l *entryList) all() iter.Seq[*statEntry] {
	return func(yield func(*statEntry) bool) {
		for _, b := range l.batches {
			for i := range b {
				if !yield(&b[i]) {
					return
				}
			}
		}
	}
}

// seenState is the sandbox as the last Sync with SyncOptions.Remember saw
// it: the entries its walk handed over and, when the journal narrowed the
// walk, the copy's entries that nothing in dirty names, neither them nor a
// directory above them (what a walk of the sandbox would see of them is
// what the copy made).
type seenState struct {
	walked entryList
	base   *entryList          // nil when the walk saw the whole sandbox
	dirty  map[string]struct{} // what the journal named
	dirs   map[string]bool     // the directories of the copy in dirty
}

// all yields the entries, the copy's first.
func (a *seenState) all() iter.Seq[*statEntry] {
	return func(yield func(*statEntry) bool) {
		if a.base != nil {
			for e := range a.base.all() {
				if _, ok := a.dirty[e.rel]; ok {
					continue
				}
				if len(a.dirs) > 0 && underAny(e.rel, a.dirs) {
					continue
				}
				if !yield(e) {
					return
				}
			}
		}
		for e := range a.walked.all() {
			if !yield(e) {
				return
			}
		}
	}
}

// underAny reports whether a directory above rel is in dirs.
func underAny(rel string, dirs map[string]bool) bool {
	for d := dirOf(rel); d != ""; d = dirOf(d) {
		if dirs[d] {
			return true
		}
	}
	return false
}

// dirOf is the directory of rel ("" for a name at the root).
func dirOf(rel string) string {
	d := path.Dir(rel)
	if d == "." {
		return ""
	}
	return d
}
