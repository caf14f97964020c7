// Package catalog builds the Go source of a built-in persona catalog: it
// reads the persona JSON files of a directory in sorted order, validates
// them with the loader's own code, inlines every sidecar (claudeMd and
// agentsMd, top level and per tier) as claudeMdContent / agentsMdContent,
// drops the paths, inlines every local skill (a .md file or a skill
// directory) as the skill's files, and renders one gofmt-ed Go file.
//
// The generated file holds, per persona, the JSON re-encoded from the parsed
// persona (fields in schema order, two-space indentation), so the output
// depends only on the persona content, never on the input's formatting or
// the machine. A missing, unsafe or unreadable sidecar is an error naming the
// JSON file, the field and the path.
package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Options say what to generate.
type Options struct {
	// Dir is the catalog directory holding the *.json files.
	Dir string
	// Package is the Go package name of the output.
	Package string
	// Var is the name of the generated variable; default "Files".
	Var string
}

// Build reads the catalog in opts.Dir and returns the persona files with
// their sidecars inlined, sorted by file name.
func Build(dir string) ([]persona.File, error) {
	matches, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(matches)
	var files []persona.File
	var errs []error
	for _, path := range matches {
		f, err := inline(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	// The catalog must load as the built-in layer: ids unique, overrides
	// resolvable, every persona complete.
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer(files)})
	for _, d := range cat.Errors {
		d.File = filepath.Join(dir, strings.TrimPrefix(d.File, persona.LayerBuiltin+":"))
		errs = append(errs, d)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return files, nil
}

// inline parses one persona file and replaces its sidecar paths with their
// content.
func inline(path string) (persona.File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return persona.File{}, fmt.Errorf("%s: %w", path, err)
	}
	spec, err := persona.Parse(path, data)
	if err != nil {
		return persona.File{}, err
	}
	written := spec.SidecarRefs()
	warns, err := persona.Anchor(spec, path)
	if err != nil {
		return persona.File{}, err
	}
	if len(warns) > 0 {
		// A missing sidecar is a warning when loading; here it is fatal.
		msgs := make([]error, len(warns))
		for i, w := range warns {
			msgs[i] = w
		}
		return persona.File{}, errors.Join(msgs...)
	}
	if err := inlineSkills(spec, path); err != nil {
		return persona.File{}, err
	}
	for i, ref := range spec.SidecarRefs() {
		text, err := os.ReadFile(ref.Path)
		if err != nil {
			return persona.File{}, &diag.Diagnostic{File: path, Field: ref.Field(),
				Message: fmt.Sprintf("cannot read sidecar %q: %v", written[i].Path, err)}
		}
		if !utf8.Valid(text) {
			return persona.File{}, &diag.Diagnostic{File: path, Field: ref.Field(),
				Message: fmt.Sprintf("sidecar %q is not UTF-8 text", written[i].Path)}
		}
		setContent(spec, ref, string(text))
	}
	spec.Schema = ""
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(spec); err != nil {
		return persona.File{}, err
	}
	return persona.File{Name: filepath.Base(path), Data: out.Bytes()}, nil
}

// inlineSkills replaces every local skill of spec, read from path, with
// its files in Skill.Files (the source stays, naming where it came from).
// A missing skill, an invalid SKILL.md, a path that is unsafe or leads out
// of the catalog directory, or a file that is not UTF-8 text is an error
// naming the JSON file and the skill.
func inlineSkills(spec *persona.Spec, path string) error {
	warns, err := persona.AnchorSkills(spec, path)
	if err != nil {
		return err
	}
	if len(warns) > 0 {
		msgs := make([]error, len(warns))
		for i, w := range warns {
			msgs[i] = w
		}
		return errors.Join(msgs...)
	}
	for i := range spec.Skills {
		sk := &spec.Skills[i]
		if len(sk.Files) > 0 || sk.Path == "" {
			continue
		}
		c, err := persona.ReadSkill(*sk)
		if err != nil {
			return &diag.Diagnostic{File: path, Field: fmt.Sprintf("skills.%d.source", i), Message: err.Error()}
		}
		sk.Files = map[string]string{}
		for _, f := range c.Files {
			if !utf8.Valid(f.Data) {
				return &diag.Diagnostic{File: path, Field: fmt.Sprintf("skills.%d.source", i),
					Message: fmt.Sprintf("file %s of skill %q is not UTF-8 text; a built-in skill carries text files only", f.Path, sk.Source)}
			}
			sk.Files[f.Path] = string(f.Data)
		}
	}
	return nil
}

// setContent moves a sidecar from its path field to its content field.
func setContent(spec *persona.Spec, ref persona.SidecarRef, text string) {
	sc := &spec.Sidecars
	if ref.Tier != "" {
		sc = &spec.Tiers[ref.Tier].Sidecars
	}
	p, _, c := sc.Fields(ref.Channel)
	*p, *c = "", text
}

// Render returns the gofmt-ed Go source declaring the catalog.
func Render(opts Options, files []persona.File) ([]byte, error) {
	name := opts.Var
	if name == "" {
		name = "Files"
	}
	var b bytes.Buffer
	b.WriteString("// Code generated by github.com/seed-3bc194a6/workforce/generate; DO NOT EDIT.\n\n")
	fmt.Fprintf(&b, "package %s\n\n", opts.Package)
	b.WriteString("import \"github.com/seed-3bc194a6/workforce/persona\"\n\n")
	fmt.Fprintf(&b, "// %s is the built-in persona catalog, generated from the persona files of\n// this directory with their sidecars inlined.\n", name)
	fmt.Fprintf(&b, "var %s = []persona.File{\n", name)
	for _, f := range files {
		fmt.Fprintf(&b, "{Name: %s, Data: []byte(%s)},\n", strconv.Quote(f.Name), goString(string(f.Data)))
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// goString renders s as raw string literals, so that the generated file
// reads like the catalog: backquotes, which a raw literal cannot hold, are
// joined in as "`". Text a raw literal would alter (carriage returns, NUL,
// invalid UTF-8) is quoted instead.
func goString(s string) string {
	if strings.ContainsAny(s, "\r\x00") || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	return "`" + strings.ReplaceAll(s, "`", "` + \"`\" + `") + "`"
}

// PackageName returns the package name of the Go files in dir, ignoring
// generated and test files, or the directory's base name.
func PackageName(dir string) string {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	sort.Strings(matches)
	for _, m := range matches {
		if strings.HasSuffix(m, "_test.go") {
			continue
		}
		data, err := os.ReadFile(m)
		if err != nil || bytes.Contains(data, []byte("DO NOT EDIT.")) {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "package "); ok {
				return strings.TrimSpace(rest)
			}
		}
	}
	abs, _ := filepath.Abs(dir)
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '.' {
			return '_'
		}
		return r
	}, filepath.Base(abs))
}
