// Package skillmd reads Agent Skills as files: a skill is a directory
// holding SKILL.md, whose YAML front matter names the skill and describes
// it, and the resources its instructions refer to. Parse checks a
// SKILL.md's front matter (ValidateName, the limits); ReadDir and ReadFile
// read a skill whole, within limits of size and without following a
// symlink out of where it may lead; CheckDir checks one without reading
// it.
//
// The cut. Skills were in four places: SKILL.md parsing and reading in
// persona, fetching and planning in skill, the sandbox side in mount and
// session. persona needs a SKILL.md's verdict when it loads a persona
// (a local skill is checked at every load) and persona must not import
// skill, which imports mount and harness to plan a run. So what both need,
// a skill as files, is this package, below both; persona keeps the skill
// sources as a persona file writes them (persona.ParseSkillSource) and
// reading a persona's skill (persona.ReadSkill); skill keeps fetching,
// the cache and the plan.
package skillmd

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/internal/frontmatter"
	"go.yaml.in/yaml/v3"
)

// MaxName and MaxDescription are the limits of a skill's name and
// description, in characters.
const (
	MaxName        = 64
	MaxDescription = 1024
)

// ValidateName checks a skill's name: 1 to 64 lowercase letters, digits
// and hyphens.
func ValidateName(name string) error {
	switch {
	case name == "":
		return errors.New("is empty; want lowercase letters, digits and hyphens")
	case len(name) > MaxName:
		return fmt.Errorf("%q is %d characters long; the limit is %d", name, utf8.RuneCountInString(name), MaxName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("%q holds %q; want lowercase letters, digits and hyphens only", name, r)
		}
	}
	return nil
}

// FileError is a problem of a SKILL.md file, at a line (1-based; 0 when it
// concerns the whole file).
type FileError struct {
	File    string
	Line    int
	Message string
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Message)
}

// Meta is the front matter of a SKILL.md that workforce reads: the name
// and the description, with the lines they are on.
type Meta struct {
	Name            string `json:"name"`
	Description     string `json:"description"`
	NameLine        int    `json:"-"`
	DescriptionLine int    `json:"-"`
}

// Parse parses the front matter of a SKILL.md and checks it: the file
// starts with a line "---", YAML follows up to the next line "---", and it
// is a mapping whose name is a valid skill name (ValidateName) and whose
// description is not empty and at most 1,024 characters. Other keys
// (license, allowed-tools, metadata...) are the harness's business. file
// names the file in errors, which are *FileError values (joined when there
// are several), each at its line.
func Parse(file string, data []byte) (*Meta, error) {
	fail := func(line int, format string, args ...any) error {
		return &FileError{File: file, Line: line, Message: fmt.Sprintf(format, args...)}
	}
	doc, err := frontmatter.Parse(data, frontmatter.Options{})
	if err != nil {
		var fe *frontmatter.Error
		if !errors.As(err, &fe) {
			return nil, fail(0, "%v", err)
		}
		switch fe.Kind {
		case frontmatter.NoFrontMatter:
			return nil, fail(1, "no front matter: a SKILL.md starts with a line --- and YAML naming the skill (name: ...) and saying when to use it (description: ...), then a line ---")
		case frontmatter.NotClosed:
			return nil, fail(1, "the front matter is not closed: want a line --- after it")
		case frontmatter.Syntax:
			return nil, fail(max(fe.Line, 1), "invalid YAML in the front matter: %s", fe.Msg)
		case frontmatter.NotMapping:
			return nil, fail(fe.Line, "the front matter is not a mapping; want name: and description:")
		case frontmatter.DuplicateKey:
			return nil, fail(fe.Line, "invalid YAML in the front matter: key %q is given twice, at lines %d and %d", fe.Key, fe.First, fe.Line)
		}
		return nil, fail(fe.Line, "%s", fe.Msg)
	}
	if doc.Root == nil {
		return nil, fail(1, "the front matter is empty; want name: and description:")
	}
	meta := &Meta{}
	var errs []error
	str := func(n *yaml.Node) (string, bool) {
		return n.Value, n.Kind == yaml.ScalarNode && n.Tag == "!!str"
	}
	null := func(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }
	switch f := doc.Get("name"); {
	case f == nil:
		errs = append(errs, fail(1, "the front matter has no name; want name: followed by lowercase letters, digits and hyphens"))
	default:
		meta.NameLine = f.Value.Line + 1
		name, ok := str(f.Value)
		if !ok && !null(f.Value) {
			errs = append(errs, fail(meta.NameLine, "name is not a string"))
			break
		}
		if err := ValidateName(name); err != nil {
			errs = append(errs, fail(meta.NameLine, "name %v", err))
			break
		}
		meta.Name = name
	}
	switch f := doc.Get("description"); {
	case f == nil:
		errs = append(errs, fail(1, "the front matter has no description; want description: saying what the skill does and when to use it"))
	default:
		meta.DescriptionLine = f.Value.Line + 1
		desc, ok := str(f.Value)
		if !ok && !null(f.Value) {
			errs = append(errs, fail(meta.DescriptionLine, "description is not a string"))
			break
		}
		if strings.TrimSpace(desc) == "" {
			errs = append(errs, fail(meta.DescriptionLine, "description is empty; want what the skill does and when to use it"))
			break
		}
		if n := utf8.RuneCountInString(desc); n > MaxDescription {
			errs = append(errs, fail(meta.DescriptionLine, "description is %d characters long; the limit is %d", n, MaxDescription))
			break
		}
		meta.Description = desc
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return meta, nil
}
