package persona

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Persona ids, tags and file names may be selected with doublestar glob
// patterns: * and ? within a name, ** across path separators, [a-z]
// classes and {a,b} alternatives. A string without any of the meta
// characters is a pattern that matches itself alone.

// IsPattern reports whether s holds a glob meta character, so that it
// selects by pattern rather than naming one thing.
func IsPattern(s string) bool { return strings.ContainsAny(s, "*?[{\\") }

// CheckPattern returns a *PatternError when pattern is not a valid glob.
func CheckPattern(pattern string) error {
	if !doublestar.ValidatePattern(pattern) {
		return &PatternError{Pattern: pattern}
	}
	return nil
}

// PatternError is a pattern that is not a valid glob: the command line's
// mistake.
type PatternError struct{ Pattern string }

func (e *PatternError) Error() string {
	return fmt.Sprintf("invalid pattern %q: an unclosed [ or {, or a \\ at its end", e.Pattern)
}

// MatchPattern reports whether name matches the glob pattern; an invalid
// pattern matches nothing (CheckPattern reports it).
func MatchPattern(pattern, name string) bool {
	ok, err := doublestar.Match(pattern, name)
	return ok && err == nil
}

// NoMatchError reports a selector that matched nothing: an id, a pattern of
// ids, a tag or a file pattern.
type NoMatchError struct {
	// What is selected: "persona", "tag", "file".
	What    string
	Pattern string
	// Known are the names the pattern was tried against, sorted.
	Known []string
}

func (e *NoMatchError) Error() string {
	known := strings.Join(e.Known, ", ")
	if len(e.Known) > 12 {
		known = strings.Join(e.Known[:12], ", ") + fmt.Sprintf(", ... (%d in all)", len(e.Known))
	}
	if known == "" {
		known = "none"
	}
	if IsPattern(e.Pattern) {
		return fmt.Sprintf("pattern %q matches no %s; %ss: %s", e.Pattern, e.What, e.What, known)
	}
	return fmt.Sprintf("unknown %s %q; %ss: %s", e.What, e.Pattern, e.What, known)
}

// SelectNames returns the names matching any of patterns, in the order of
// names, each once. A pattern that matches no name is a *NoMatchError
// (what names the kind of thing, for the message), as is an invalid one.
func SelectNames(what string, names, patterns []string) ([]string, error) {
	picked := make([]bool, len(names))
	for _, pat := range patterns {
		if err := CheckPattern(pat); err != nil {
			return nil, err
		}
		found := false
		for i, n := range names {
			if MatchPattern(pat, n) {
				picked[i], found = true, true
			}
		}
		if !found {
			known := slices.Clone(names)
			slices.Sort(known)
			return nil, &NoMatchError{What: what, Pattern: pat, Known: slices.Compact(known)}
		}
	}
	var out []string
	for i, n := range names {
		if picked[i] {
			out = append(out, n)
		}
	}
	return out, nil
}

// Select returns the personas whose id matches any of patterns, sorted by
// id; a pattern matching none is a *NoMatchError.
func (c *Catalog) Select(patterns ...string) ([]*Persona, error) {
	ids, err := SelectNames("persona", c.IDs(), patterns)
	if err != nil {
		return nil, err
	}
	out := make([]*Persona, 0, len(ids))
	for _, id := range ids {
		p, _ := c.Get(id)
		out = append(out, p)
	}
	return out, nil
}

// Harnesses returns the harnesses the tiers of p run, distinct, in the
// order of its tiers.
func (p *Persona) Harnesses() []string {
	var out []string
	for _, t := range p.Spec.TierNames() {
		if h := p.Spec.tierHarness(t); h != "" && !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}
