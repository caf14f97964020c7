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
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/pack"
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
		return nil, diag.JSONError(path, data, err)
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
	if old := l.Entry(e.Source); old != nil {
		// What an install of some of a source's personas (--persona)
		// wrote is added to what the source's entry held: the others
		// stay tracked with the files they have, which --frozen and
		// outdated then find differ when the source moved meanwhile.
		installed := slices.Clone(e.Personas)
		for _, id := range old.Personas {
			if !slices.Contains(installed, id) {
				e.Personas = append(e.Personas, id)
			}
		}
		for f, h := range old.Files {
			if !owned(f, installed) {
				e.Files[f] = h
			}
		}
		sort.Strings(e.Personas)
	}
	l.forget(e.Personas, e.Source)
	l.Packs = append(l.Packs, e)
	sort.Slice(l.Packs, func(i, j int) bool { return l.Packs[i].Source < l.Packs[j].Source })
}

// forget takes ids out of every entry but the one of source (an install
// or an import replaced them), dropping entries left with none.
func (l *Lock) forget(ids []string, source string) {
	var kept []LockEntry
	for _, o := range l.Packs {
		if o.Source == source {
			continue
		}
		var ps []string
		for _, id := range o.Personas {
			if !slices.Contains(ids, id) {
				ps = append(ps, id)
			}
		}
		if len(ps) == 0 {
			continue
		}
		files := map[string]string{}
		for f, h := range o.Files {
			if !owned(f, ids) {
				files[f] = h
			}
		}
		o.Personas, o.Files = ps, files
		kept = append(kept, o)
	}
	l.Packs = kept
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
	for _, id := range personas {
		if !slices.Contains(e.Personas, id) {
			return &FrozenError{source, fmt.Sprintf("it holds persona %s, which the lock does not", id)}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(files)) {
		if e.Files[f] != files[f] {
			return &FrozenError{source, fmt.Sprintf("%s differs from the locked file", f)}
		}
	}
	for _, f := range slices.Sorted(maps.Keys(e.Files)) {
		if _, ok := files[f]; !ok && owned(f, personas) {
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
// (npm pack), a directory's or tarball's files; sources are opened with o.
func Outdated(ctx context.Context, dir string, o OpenOptions) ([]Status, error) {
	l, err := ReadLock(dir)
	if err != nil {
		return nil, err
	}
	out := []Status{}
	for _, e := range l.Packs {
		st := Status{Source: e.Source, Locked: e.Resolved}
		fail := func(err error) {
			st.Outdated, st.Why = true, "cannot check: "+err.Error()
			out = append(out, st)
		}
		if url, ref, ok := ParseGitSource(e.Source); ok {
			if pinned(ref, e.Resolved) {
				st.Current = e.Resolved // a commit stays itself
			} else if st.Current, err = RemoteCommit(ctx, url, ref); err != nil {
				fail(err)
				continue
			}
			st.Outdated = st.Current != e.Resolved
			if st.Outdated {
				st.Why = "the ref moved"
			}
			out = append(out, st)
			continue
		}
		p, cleanup, err := Open(ctx, e.Source, o)
		if err != nil {
			cleanup()
			fail(err)
			continue
		}
		st.Current = p.Resolved
		p.Personas = slices.DeleteFunc(p.Personas, func(ps pack.Persona) bool { return !slices.Contains(e.Personas, ps.ID) })
		files, err := Hashes(p)
		cleanup()
		if err != nil {
			fail(err)
			continue
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

// pinned reports whether ref names the commit resolved: its full name or
// an abbreviation of it.
func pinned(ref, resolved string) bool {
	ref = strings.ToLower(ref)
	return len(ref) >= 4 && isHex(ref) && strings.HasPrefix(resolved, ref)
}

func isHex(s string) bool {
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
