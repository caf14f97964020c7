package skillmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// File is one file of a skill: its slash path in the skill's directory,
// its content, and whether it is executable.
type File struct {
	Path string
	Data []byte
	Exec bool
}

// Content is a skill read whole: its front matter and its files, SKILL.md
// among them, sorted by path.
type Content struct {
	Meta
	Files []File
}

// Size returns the bytes of the skill's files.
func (c *Content) Size() int64 {
	var n int64
	for _, f := range c.Files {
		n += int64(len(f.Data))
	}
	return n
}

// Limits of one skill read from disk.
var (
	MaxFiles       = 1000
	MaxBytes int64 = 16 << 20
)

// ErrMissing is wrapped by the errors about skills whose file or directory
// does not exist.
var ErrMissing = errors.New("skill not found")

// ReadFile reads a skill given as one .md file, which installs as
// <name>/SKILL.md: its front matter must name it name.
func ReadFile(file, name string) (*Content, error) {
	data, err := readRegular(file)
	if err != nil {
		return nil, err
	}
	meta, err := Parse(file, data)
	if err != nil {
		return nil, err
	}
	if meta.Name != name {
		return nil, &FileError{File: file, Line: meta.NameLine,
			Message: fmt.Sprintf("name %q differs from %q, the name the file installs as (its stem, or its directory's name for a SKILL.md); they must be equal", meta.Name, name)}
	}
	return &Content{Meta: *meta, Files: []File{{Path: "SKILL.md", Data: data}}}, nil
}

func readRegular(file string) ([]byte, error) {
	fi, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrMissing, file)
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	if fi.Size() > MaxBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, MaxBytes)
	}
	return os.ReadFile(file)
}

// ReadDir reads the skill directory dir whole: SKILL.md and every other
// file below it (.git directories left out). A symlink is followed when it
// leads to a regular file inside within (a clean absolute path, symlinks
// resolved); any other symlink, or a special file, is an error. When name
// is not empty, the skill's name must be name: a skill's name is its
// directory's.
func ReadDir(dir, within, name string) (*Content, error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s does not exist", ErrMissing, dir)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory; a skill source names a .md file or a skill directory holding SKILL.md", dir)
	}
	md := filepath.Join(dir, "SKILL.md")
	if _, err := os.Stat(md); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s holds no SKILL.md", ErrMissing, dir)
	}
	c := &Content{}
	var total int64
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			if pathutil.IsDotGit(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if !pathutil.Within(within, real) {
				return fmt.Errorf("%s leads through a symlink to %s, outside %s", p, real, within)
			}
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file; a skill holds regular files only", p)
		}
		if len(c.Files) >= MaxFiles {
			return fmt.Errorf("%s holds more than %d files; a skill is a small directory", dir, MaxFiles)
		}
		if total += st.Size(); total > MaxBytes {
			return fmt.Errorf("%s holds more than %d bytes; a skill is a small directory", dir, MaxBytes)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		c.Files = append(c.Files, File{Path: rel, Data: data, Exec: st.Mode()&0o111 != 0})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, f := range c.Files {
		if f.Path == "SKILL.md" {
			data = f.Data
		}
	}
	meta, err := Parse(md, data)
	if err != nil {
		return nil, err
	}
	if name != "" && meta.Name != name {
		return nil, &FileError{File: md, Line: meta.NameLine,
			Message: fmt.Sprintf("name %q differs from the skill's directory name %q; they must be equal", meta.Name, name)}
	}
	c.Meta = *meta
	return c, nil
}

// CheckDir checks the skill directory dir without reading it whole: it
// exists, and its SKILL.md's front matter is valid and names it name. It
// reads SKILL.md only.
func CheckDir(dir, name string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s does not exist", ErrMissing, dir)
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory; a skill source names a .md file or a skill directory holding SKILL.md", dir)
	}
	md := filepath.Join(dir, "SKILL.md")
	data, err := readRegular(md)
	if errors.Is(err, ErrMissing) {
		return fmt.Errorf("%w: %s holds no SKILL.md", ErrMissing, dir)
	}
	if err != nil {
		return err
	}
	meta, err := Parse(md, data)
	if err != nil {
		return err
	}
	if meta.Name != name {
		return &FileError{File: md, Line: meta.NameLine,
			Message: fmt.Sprintf("name %q differs from the skill's directory name %q; they must be equal", meta.Name, name)}
	}
	return nil
}
