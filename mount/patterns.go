package mount

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// patternSet matches paths against gitignore-syntax patterns as go-git's
// gitignore matcher does, faster for the common case: without negations,
// a plain name ("node_modules", "dist/") matches any path whose last
// element is that name, a map lookup instead of a glob per pattern, and
// only the other patterns go to the matcher. The copy asks it for every
// file of the project.
type patternSet struct {
	names    map[string]bool // plain names, files or directories
	dirNames map[string]bool // plain names with a trailing slash: directories only
	rest     gitignore.Matcher
	anyRest  bool
}

func newPatternSet(lines []string) *patternSet {
	ps := &patternSet{names: map[string]bool{}, dirNames: map[string]bool{}}
	negated := false
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "!") {
			negated = true
		}
	}
	var rest []string
	for _, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		name, dirOnly := strings.CutSuffix(l, "/")
		if !negated && name != "" && !strings.ContainsAny(name, "/*?[\\!") {
			if dirOnly {
				ps.dirNames[name] = true
			} else {
				ps.names[name] = true
			}
			continue
		}
		rest = append(rest, l)
	}
	ps.rest = gitignore.NewMatcher(parsePatterns(rest))
	ps.anyRest = len(rest) > 0
	return ps
}

// Match reports whether path (its elements) matches.
func (ps *patternSet) Match(path []string, isDir bool) bool {
	if len(path) == 0 {
		return false
	}
	// As go-git: a plain name matches any element of the path; one with a
	// trailing slash matches a directory, so not the last element of a
	// file's path.
	last := len(path) - 1
	for i, el := range path {
		if ps.names[el] || ps.dirNames[el] && (i < last || isDir) {
			return true
		}
	}
	return ps.anyRest && ps.rest.Match(path, isDir)
}

// MatchRel reports whether rel (a slash path) or one of its parent
// directories matches. Without other than plain-name patterns it looks at
// each element in place, without splitting rel.
func (ps *patternSet) MatchRel(rel string, isDir bool) bool {
	if ps.anyRest {
		return match(ps, rel, isDir)
	}
	for rel != "" {
		el, rest, more := strings.Cut(rel, "/")
		if ps.names[el] || ps.dirNames[el] && (more || isDir) {
			return true
		}
		rel = rest
	}
	return false
}
