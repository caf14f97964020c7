package skill

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/rogpeppe/go-internal/lockedfile"
	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/skillmd"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Cache is the cache of fetched skills of a workforce home,
// <home>/cache/skills: one directory per source, <key>/, holding the
// skill's directory (skill/) and what was fetched (meta.json). An entry is
// written whole beside the others and renamed into place, under a lock
// file (<key>.lock) that every reader and writer of the entry takes, so
// that concurrent runs share the cache safely: one fetches, the others
// wait and use what it fetched.
type Cache struct {
	// Dir is the cache directory.
	Dir string
	// Env is the environment npm and npx run with; nil means the
	// process's.
	Env []string
	// fetch fetches a source into a work directory; nil means fetchers.
	fetch func(ctx context.Context, src persona.SkillSource, work string, env []string) (*fetched, error)
}

// NewCache returns the skill cache of the workforce home dir
// (home.SkillCache).
func NewCache(dir string) *Cache {
	return &Cache{Dir: home.SkillCache(dir)}
}

// Meta is what the cache knows of an entry (meta.json).
type Meta struct {
	Source string            `json:"source"`
	Kind   persona.SkillKind `json:"kind"`
	// Name is the skill's name (its SKILL.md's); Version the package's
	// version, when the source has one (npm).
	Name    string    `json:"name"`
	Version string    `json:"version,omitempty"`
	Fetched time.Time `json:"fetched"`
}

// Key returns the cache key of a source: the name it installs as, when
// known, and a hash of the source as written, which holds the version it
// asks for (npm:review@1.2.0, a /tree/<ref> URL).
func Key(source string, src persona.SkillSource) string {
	sum := sha256.Sum256([]byte(source))
	name := src.Name
	if skillmd.ValidateName(name) != nil || len(name) > 32 {
		name = string(src.Kind)
		if name == "skills.sh" {
			name = "skills-sh"
		}
	}
	return name + "-" + hex.EncodeToString(sum[:8])
}

// entryDir is the directory of a source's entry.
func (c *Cache) entryDir(source string, src persona.SkillSource) string {
	return filepath.Join(c.Dir, Key(source, src))
}

// Lookup returns the entry's metadata of a source when the cache holds it,
// without locking or reading the skill: for plans, which say whether a run
// will fetch.
func (c *Cache) Lookup(source string, src persona.SkillSource) (*Meta, string, bool) {
	dir := c.entryDir(source, src)
	meta, err := readMeta(dir)
	if err != nil || meta.Source != source {
		return nil, dir, false
	}
	return meta, dir, true
}

func readMeta(dir string) (*Meta, error) {
	data, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "meta.json"), err)
	}
	return &m, nil
}

// Get returns the skill of a remote source: from the cache, or, when the
// cache does not hold it (or refresh is set), fetched and put in the
// cache first. fetched says it was fetched. A fetch that fails leaves the
// cache as it was, an older entry included, and its error names the
// source.
func (c *Cache) Get(ctx context.Context, source string, src persona.SkillSource, refresh bool) (content *skillmd.Content, meta *Meta, fetched bool, err error) {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return nil, nil, false, fmt.Errorf("cannot create the skill cache: %w", err)
	}
	key := Key(source, src)
	unlock, err := lockedfile.MutexAt(filepath.Join(c.Dir, key+".lock")).Lock()
	if err != nil {
		return nil, nil, false, fmt.Errorf("cannot lock the skill cache: %w", err)
	}
	defer unlock()
	dir := filepath.Join(c.Dir, key)
	if !refresh {
		content, meta, err := readEntry(dir, source)
		if err == nil {
			return content, meta, false, nil
		}
		// Missing, or damaged: fetched again.
	}
	content, meta, err = c.fetchInto(ctx, source, src, dir)
	if err != nil {
		return nil, nil, false, fmt.Errorf("cannot fetch skill %s: %w", source, err)
	}
	return content, meta, true, nil
}

// readEntry reads a cache entry whole.
func readEntry(dir, source string) (*skillmd.Content, *Meta, error) {
	meta, err := readMeta(dir)
	if err != nil {
		return nil, nil, err
	}
	if meta.Source != source {
		return nil, nil, fmt.Errorf("%s holds %s, not %s", dir, meta.Source, source)
	}
	sdir := filepath.Join(dir, "skill")
	real, err := filepath.EvalSymlinks(sdir)
	if err != nil {
		return nil, nil, err
	}
	content, err := skillmd.ReadDir(sdir, real, "")
	if err != nil {
		return nil, nil, err
	}
	if content.Name != meta.Name {
		return nil, nil, fmt.Errorf("%s: the skill is named %q, the entry says %q", dir, content.Name, meta.Name)
	}
	return content, meta, nil
}

// fetchInto fetches source and replaces the entry dir with it: the new
// entry is written beside the others, then renamed into place; the old
// one, when there is one, is put back if that fails.
func (c *Cache) fetchInto(ctx context.Context, source string, src persona.SkillSource, dir string) (*skillmd.Content, *Meta, error) {
	work, err := os.MkdirTemp("", "workforce-skill-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(work)
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	fetch := c.fetch
	if fetch == nil {
		fetch = fetchSource
	}
	got, err := fetch(ctx, src, work, env)
	if err != nil {
		return nil, nil, err
	}
	realWork, err := filepath.EvalSymlinks(work)
	if err != nil {
		return nil, nil, err
	}
	content, err := skillmd.ReadDir(got.dir, realWork, "")
	if err != nil {
		return nil, nil, err
	}
	meta := &Meta{Source: source, Kind: src.Kind, Name: content.Name, Version: got.version, Fetched: time.Now().UTC().Truncate(time.Second)}

	stage, err := os.MkdirTemp(c.Dir, ".staging-")
	if err != nil {
		return nil, nil, err
	}
	defer removeAll(stage)
	entry := filepath.Join(stage, "entry")
	if err := writeFiles(filepath.Join(entry, "skill"), content.Files); err != nil {
		return nil, nil, err
	}
	data, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	if err := renameio.WriteFile(filepath.Join(entry, "meta.json"), append(data, '\n'), 0o644, renameio.WithTempDir(entry)); err != nil {
		return nil, nil, err
	}
	old := filepath.Join(stage, "old")
	hadOld := false
	if _, err := os.Lstat(dir); err == nil {
		if err := os.Rename(dir, old); err != nil {
			return nil, nil, fmt.Errorf("cannot replace %s: %w", dir, err)
		}
		hadOld = true
	}
	if err := os.Rename(entry, dir); err != nil {
		if hadOld {
			_ = os.Rename(old, dir)
		}
		return nil, nil, fmt.Errorf("cannot write %s: %w", dir, err)
	}
	return content, meta, nil
}

// writeFiles writes a skill's files below dir, which must not exist.
func writeFiles(dir string, files []skillmd.File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := os.WriteFile(p, f.Data, mode); err != nil {
			return err
		}
	}
	return nil
}

// removeAll removes dir, making read-only directories writable first
// when it has to (npm leaves some).
func removeAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o755)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// errorTail returns the last lines of a command's output, for errors.
func errorTail(out []byte) string {
	s := strings.TrimSpace(string(out))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	if s == "" {
		return "no output"
	}
	return s
}
