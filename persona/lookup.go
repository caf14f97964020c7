package persona

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/suggest"
)

// UnknownError is the error of a reference to a persona id that no
// layer defines.
type UnknownError struct {
	ID string
	// Similar are the ids of the catalog ID was likely meant to be, the
	// likeliest first (a typing mistake away, or holding its letters in
	// order: reviewer for code-reviewer).
	Similar []string
}

func (e *UnknownError) Error() string { return fmt.Sprintf("unknown persona %q", e.ID) }

// Hints are what to say after the error: the ids it was likely meant to
// be, then where to see them all.
func (e *UnknownError) Hints() []string {
	hints := []string{"`workforce list` shows the personas of every layer"}
	if h := suggest.Hint("", e.Similar); h != "" {
		hints = append([]string{h}, hints...)
	}
	return hints
}

// Lookup finds the persona and tier a reference names, "ID" or "ID@TIER"
// (the default tier when none is given), and resolves it. The id may be a
// pattern (IsPattern), which must then match exactly one persona; an id
// that names none is an *UnknownError.
func (c *Catalog) Lookup(ref string) (*Persona, *Resolved, error) {
	id, tier := SplitRef(ref)
	var p *Persona
	if IsPattern(id) {
		ps, err := c.Select(id)
		if err != nil {
			return nil, nil, err
		}
		if len(ps) > 1 {
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID
			}
			return nil, nil, fmt.Errorf("pattern %q matches %d personas (%s); name one", id, len(ps), strings.Join(ids, ", "))
		}
		p = ps[0]
	} else {
		var ok bool
		if p, ok = c.Get(id); !ok {
			ids := make([]string, len(c.Personas))
			for i, p := range c.Personas {
				ids[i] = p.ID
			}
			return nil, nil, &UnknownError{ID: id, Similar: suggest.Closest(id, ids)}
		}
	}
	r, err := p.Resolve(tier)
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

// DiagnosticsOf returns the catalog's errors and warnings about the files
// p was merged from, and about every file, in any layer, that would have
// been persona p but failed to load or to resolve: a file named
// <id>.json, or whose id member names p's id (an override that fails
// leaves the persona below it in place, and this is where that is said).
// Errors come first, and each such file ends with a line saying which
// persona is used instead. The result is text.
func (c *Catalog) DiagnosticsOf(p *Persona) []string {
	files := map[string]bool{}
	for _, o := range p.Chain {
		files[o.File] = true
	}
	var failed []string
	for _, d := range c.Errors {
		if !files[d.File] && c.wouldBe(d.File, p.ID) && !slices.Contains(failed, d.File) {
			failed = append(failed, d.File)
		}
	}
	out := []string{}
	for _, ds := range [][]*Diagnostic{c.Errors, c.Warnings} {
		for _, d := range ds {
			if files[d.File] || slices.Contains(failed, d.File) {
				out = append(out, d.Error())
			}
		}
	}
	for _, f := range failed {
		out = append(out, fmt.Sprintf("%s: not used, since it does not load: %s comes from the %s layer (%s)", f, p.ID, p.Layer, p.Path))
	}
	return out
}

// wouldBe reports whether file, read by the catalog, defines or was meant
// to define persona id: its name is <id>.json, or its id member is id.
func (c *Catalog) wouldBe(file, id string) bool {
	named, read := c.ids[file]
	if !read {
		return false
	}
	base := strings.TrimPrefix(filepath.Base(file), LayerBuiltin+":")
	return named == id || base == id+".json"
}

// Diagnostics returns all the catalog's errors and warnings as text,
// errors first.
func (c *Catalog) Diagnostics() []string {
	out := []string{}
	for _, d := range c.Errors {
		out = append(out, d.Error())
	}
	for _, d := range c.Warnings {
		out = append(out, d.Error())
	}
	return out
}
