package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/renameio/v2"
)

// The lock file records, in the layer, what each install put there: the
// source as given, what it resolved to (a git commit, an npm package's
// name@version; nothing for a directory or a tarball), the personas, and a
// hash of every file installed. install --frozen checks a source against
// it; workforce outdated compares it with the sources now.

// LockFile is the lock file's name in a layer directory: JSON, named
// without .json so that the loader does not read it as a persona.
const LockFile = "workforce.lock"

// lockVersion is the lock file's format.
const lockVersion = 1

// Lock is a layer's lock file.
type Lock struct {
	Version int         `json:"lockfileVersion"`
	Packs   []LockEntry `json:"packs"`
}

// LockEntry is one installed source.
type LockEntry struct {
	Source   string   `json:"source"`
	Resolved string   `json:"resolved,omitempty"`
	Personas []string `json:"personas"`
	// Files maps each installed file, relative to the layer (slashes), to
	// "sha256-" and the hex SHA-256 of its content.
	Files map[string]string `json:"files"`
}

// Entry returns the entry of source, nil when there is none.
func (l *Lock) Entry(source string) *LockEntry {
	for i := range l.Packs {
		if l.Packs[i].Source == source {
			return &l.Packs[i]
		}
	}
	return nil
}

// ReadLock reads the lock file of the layer dir; a missing one is empty.
func ReadLock(dir string) (*Lock, error) {
	path := filepath.Join(dir, LockFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Version: lockVersion}, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lock
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if l.Version != lockVersion {
		return nil, fmt.Errorf("%s: lockfileVersion %d; this workforce reads %d", path, l.Version, lockVersion)
	}
	for _, e := range l.Packs {
		if e.Source == "" {
			return nil, fmt.Errorf("%s: an entry without a source", path)
		}
	}
	return &l, nil
}

// record replaces the entry of e.Source with e, and takes e's personas out
// of every other entry (an install replaced them).
func (l *Lock) record(e LockEntry) {
	var kept []LockEntry
	for _, o := range l.Packs {
		if o.Source == e.Source {
			continue
		}
		var ps []string
		for _, id := range o.Personas {
			if !slices.Contains(e.Personas, id) {
				ps = append(ps, id)
			}
		}
		if len(ps) == 0 {
			continue
		}
		files := map[string]string{}
		for f, h := range o.Files {
			if !owned(f, e.Personas) {
				files[f] = h
			}
		}
		o.Personas, o.Files = ps, files
		kept = append(kept, o)
	}
	l.Packs = append(kept, e)
	sort.Slice(l.Packs, func(i, j int) bool { return l.Packs[i].Source < l.Packs[j].Source })
}

// owned reports whether the file f of a layer belongs to one of ids.
func owned(f string, ids []string) bool {
	for _, id := range ids {
		if f == id+".json" || strings.HasPrefix(f, id+"__assets/") {
			return true
		}
	}
	return false
}

// write writes the lock into the layer dir, atomically.
func (l *Lock) write(dir string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return err
	}
	return renameio.WriteFile(filepath.Join(dir, LockFile), buf.Bytes(), 0o644, renameio.WithTempDir(dir))
}

// hashTree returns the hash of every regular file below dir, by path
// relative to it, skipping the names skip holds at its top.
func hashTree(dir string, names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range names {
		err := filepath.WalkDir(filepath.Join(dir, name), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			rel, _ := filepath.Rel(dir, p)
			out[filepath.ToSlash(rel)] = "sha256-" + hex.EncodeToString(sum[:])
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FrozenError reports a source that does not match its lock entry.
type FrozenError struct {
	Source, Why string
}

func (e *FrozenError) Error() string {
	return fmt.Sprintf("%s does not match the lock file: %s", e.Source, e.Why)
}

// checkFrozen compares what an install of source would write with its
// lock entry.
func checkFrozen(l *Lock, source, resolved string, personas []string, files map[string]string) error {
	e := l.Entry(source)
	if e == nil {
		return &FrozenError{source, "the lock file has no entry for it"}
	}
	if e.Resolved != resolved {
		return &FrozenError{source, fmt.Sprintf("it resolves to %s, the lock to %s", orNone(resolved), orNone(e.Resolved))}
	}
	ps := slices.Clone(personas)
	sort.Strings(ps)
	locked := slices.Clone(e.Personas)
	sort.Strings(locked)
	if !slices.Equal(ps, locked) {
		return &FrozenError{source, fmt.Sprintf("it holds personas %s, the lock %s", strings.Join(ps, ", "), strings.Join(locked, ", "))}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if e.Files[f] != files[f] {
			return &FrozenError{source, fmt.Sprintf("%s differs from the locked file", f)}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(e.Files)) {
		if _, ok := files[f]; !ok {
			return &FrozenError{source, fmt.Sprintf("the locked %s is not in it", f)}
		}
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// Status is how a locked source compares with the source now.
type Status struct {
	Source string `json:"source"`
	// Locked and Current are what it resolved to then and now (a commit, an
	// npm name@version); for a directory or tarball, its files' hashes are
	// compared instead and both are empty.
	Locked   string `json:"locked"`
	Current  string `json:"current"`
	Outdated bool   `json:"outdated"`
	// Why says what moved.
	Why string `json:"why,omitempty"`
}

// Outdated compares each entry of the lock of the layer dir with its
// source now: a git ref's commit (git ls-remote), an npm spec's version
// (npm pack), a directory's or tarball's files.
func Outdated(ctx context.Context, dir string) ([]Status, error) {
	l, err := ReadLock(dir)
	if err != nil {
		return nil, err
	}
	out := []Status{}
	for _, e := range l.Packs {
		st := Status{Source: e.Source, Locked: e.Resolved}
		if url, ref, ok := ParseGitSource(e.Source); ok {
			if st.Current, err = RemoteCommit(ctx, url, ref); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Source, err)
			}
			st.Outdated = st.Current != e.Resolved
			if st.Outdated {
				st.Why = "the ref moved"
			}
			out = append(out, st)
			continue
		}
		p, cleanup, err := Open(ctx, e.Source)
		if err != nil {
			cleanup()
			return nil, fmt.Errorf("%s: %w", e.Source, err)
		}
		st.Current = p.Resolved
		files, err := Hashes(p)
		cleanup()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Source, err)
		}
		switch {
		case st.Current != e.Resolved:
			st.Outdated, st.Why = true, "a new version"
		case !maps.Equal(files, e.Files):
			st.Outdated, st.Why = true, "its files changed"
		}
		out = append(out, st)
	}
	return out, nil
}
