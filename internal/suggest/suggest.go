// Package suggest finds the names a mistyped name was likely meant to
// be, for a "did you mean" hint: the names within a few typing mistakes
// of it (letters added, dropped, changed or swapped: --josn for --json),
// then the names that hold its letters in order (reviewer for
// code-reviewer, github.com/sahilm/fuzzy's matching, as the picker's).
package suggest

import (
	"slices"
	"sort"
	"strings"

	"github.com/sahilm/fuzzy"
)

// Max is the most names Closest returns.
const Max = 3

// Closest returns the names among candidates that name was likely meant
// to be, the likeliest first, at most Max; none when nothing is close.
// Names differing only in case count as one mistake apart.
func Closest(name string, candidates []string) []string {
	if name == "" {
		return nil
	}
	type near struct {
		name string
		dist int
	}
	var typos []near
	limit := max(1, len([]rune(name))/3)
	for _, c := range candidates {
		if c == name {
			continue
		}
		if d := distance(strings.ToLower(name), strings.ToLower(c)); d <= limit {
			typos = append(typos, near{c, max(d, 1)})
		}
	}
	sort.SliceStable(typos, func(i, j int) bool { return typos[i].dist < typos[j].dist })
	var out []string
	for _, n := range typos {
		out = appendNew(out, n.name)
	}
	if len([]rune(name)) >= 3 {
		for _, m := range fuzzy.Find(name, candidates) {
			if m.Str != name {
				out = appendNew(out, m.Str)
			}
		}
	}
	if len(out) > Max {
		out = out[:Max]
	}
	return out
}

// Hint is "did you mean A?" (or "A or B?", "A, B or C?") of the names
// prefix+name, "" when there are none.
func Hint(prefix string, names []string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = prefix + n
	}
	last := q[len(q)-1]
	if len(q) == 1 {
		return "did you mean " + last + "?"
	}
	return "did you mean " + strings.Join(q[:len(q)-1], ", ") + " or " + last + "?"
}

func appendNew(out []string, s string) []string {
	if slices.Contains(out, s) {
		return out
	}
	return append(out, s)
}

// distance is the optimal string alignment distance of a and b: the
// letters inserted, deleted, replaced or swapped with their neighbour
// that turn a into b.
func distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance of s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}
