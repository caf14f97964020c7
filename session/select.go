package session

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Selector picks part of the agent's work by path (sessions diff and
// sessions apply PATH|GLOB...). Each pattern is a path or a doublestar
// glob (* and ? within a name, ** across /, [a-z], {a,b}), relative to
// the user's working directory when that is inside the project root, to
// the root otherwise; an absolute path must be inside the root. A pattern
// names a file, or a directory and everything below it; a path that is
// not a valid glob, or names a file literally ("app/[id].tsx"), matches
// as written.
type Selector struct {
	args     []string
	patterns []string // relative to the root, with slashes
	used     []bool
}

// NewSelector makes the selector of patterns given in the working
// directory cwd, for the project root root; without patterns it selects
// everything.
func NewSelector(root, cwd string, patterns []string) (*Selector, error) {
	prefix := "."
	if rel, err := filepath.Rel(root, cwd); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		prefix = filepath.ToSlash(rel)
	}
	s := &Selector{args: patterns, used: make([]bool, len(patterns))}
	for _, arg := range patterns {
		p := filepath.ToSlash(arg)
		if filepath.IsAbs(arg) {
			rel, err := filepath.Rel(root, filepath.Clean(arg))
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return nil, fmt.Errorf("%s is not inside the project root %s", arg, root)
			}
			p = filepath.ToSlash(rel)
		} else {
			p = path.Join(prefix, p)
		}
		if p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("%s is not inside the project root %s", arg, root)
		}
		s.patterns = append(s.patterns, p)
	}
	return s, nil
}

// Match reports whether the path rel (relative to the root, with slashes)
// is selected; a nil Selector, or one without patterns, selects every
// path.
func (s *Selector) Match(rel string) bool {
	if s == nil || len(s.patterns) == 0 {
		return true
	}
	hit := false
	for i, p := range s.patterns {
		if matchPath(p, rel) {
			s.used[i], hit = true, true
		}
	}
	return hit
}

// Unmatched returns the patterns, as given, that matched no path passed to
// Match so far.
func (s *Selector) Unmatched() []string {
	if s == nil {
		return nil
	}
	var out []string
	for i, u := range s.used {
		if !u {
			out = append(out, s.args[i])
		}
	}
	return out
}

// matchPath reports whether the pattern p names rel or one of its parent
// directories.
func matchPath(p, rel string) bool {
	if p == "." {
		return true
	}
	for d := rel; ; {
		if d == p {
			return true
		}
		if ok, err := doublestar.Match(p, d); err == nil && ok {
			return true
		}
		i := strings.LastIndexByte(d, '/')
		if i < 0 {
			return false
		}
		d = d[:i]
	}
}
