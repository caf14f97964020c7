package persona

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// SchemaJSON is the JSON Schema of a persona file. It is also published at
// persona/schema/persona.schema.json so that editors can validate files that
// set "$schema".
//
//go:embed schema/persona.schema.json
var SchemaJSON []byte

// SchemaURL is the $id of the persona schema.
const SchemaURL = "https://github.com/seed-3bc194a6/workforce/persona/schema/persona.schema.json"

var (
	schemaOnce sync.Once
	schema     *jsonschema.Schema
	schemaErr  error
)

func compiledSchema() (*jsonschema.Schema, error) {
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		if err := c.AddResource(SchemaURL, bytes.NewReader(SchemaJSON)); err != nil {
			schemaErr = err
			return
		}
		schema, schemaErr = c.Compile(SchemaURL)
	})
	return schema, schemaErr
}

// Diagnostic is an error or a warning about one file: persona reports
// with internal/diag's type, which the workforce home shares for
// config.json.
type Diagnostic = diag.Diagnostic

// Parse parses one persona file and checks it against the schema and the
// rules a single file can be checked against: sidecar paths are safe
// (ValidatePath), a scope does not set a sidecar path and inline content
// together. Sidecar paths are returned as written; Anchor resolves them.
// name is used in errors. Syntax errors and schema violations carry the
// line and column of the offending value; every violation is listed.
//
// A file must be UTF-8: an invalid byte is an error at its line and column
// (a JSON decoder would replace it silently). A file that says "inherit":
// false must be a whole persona on its own (checkWhole). Its env may not
// set a loader variable (LoaderVariable), an error at the variable's name.
func Parse(name string, data []byte) (*Spec, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if spec, ok := quickParse(data); ok {
		if errs := checkFile(name, data, spec); len(errs) > 0 {
			return nil, errs
		}
		return spec, nil
	}
	return parseSlow(name, data)
}

// parseSlow validates data with the JSON Schema and reports every
// violation with its position.
func parseSlow(name string, data []byte) (*Spec, error) {
	// The fast path's decoder refuses invalid UTF-8, so only this path
	// needs to look for it.
	if off := invalidUTF8(data); off >= 0 {
		line, col := diag.Position(data, off)
		return nil, &diag.Diagnostic{File: name, Line: line, Column: col,
			Message: fmt.Sprintf("invalid UTF-8: byte %#02x; a persona file is UTF-8 text", data[off])}
	}
	if err := validateSchema(name, data); err != nil {
		return nil, err
	}
	var spec Spec
	if err := json.Unmarshal(data, &spec); err != nil {
		return nil, diag.JSONError(name, data, err)
	}
	if errs := checkFile(name, data, &spec); len(errs) > 0 {
		return nil, errs
	}
	return &spec, nil
}

// invalidUTF8 returns the offset of the first byte of data that is not
// part of a valid UTF-8 encoding, or -1.
func invalidUTF8(data []byte) int {
	if utf8.Valid(data) {
		return -1
	}
	for off := 0; off < len(data); {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n == 1 {
			return off
		}
		off += n
	}
	return -1
}

// validateSchema checks data against the JSON Schema.
func validateSchema(name string, data []byte) error {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return diag.JSONError(name, data, err)
	}
	if _, err := dec.Token(); err == nil {
		off := int(dec.InputOffset())
		line, col := diag.Position(data, off-1)
		return &diag.Diagnostic{File: name, Line: line, Column: col, Message: "unexpected data after the JSON object"}
	}
	sch, err := compiledSchema()
	if err != nil {
		return fmt.Errorf("persona schema: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return &diag.Diagnostic{File: name, Message: err.Error()}
		}
		return schemaErrors(name, data, ve)
	}
	return nil
}

// checkFile applies the per-file rules the schema does not express.
func checkFile(name string, data []byte, s *Spec) diag.Errors {
	var errs diag.Errors
	var pos map[string]int
	at := func(field, msg string) {
		if pos == nil {
			pos = diag.Positions(data)
		}
		d := &diag.Diagnostic{File: name, Field: field, Message: msg}
		if off, ok := pos[field]; ok {
			d.Line, d.Column = diag.Position(data, off)
		}
		errs = append(errs, d)
	}
	check := func(tier string, sc *Sidecars) {
		for _, c := range Channels {
			p, _, content := sc.Fields(c)
			if *p != "" {
				ref := SidecarRef{Tier: tier, Channel: c}
				if err := ValidatePath(*p); err != nil {
					at(ref.Field(), err.Error())
				}
				if *content != "" {
					at(ref.Field(), fmt.Sprintf("set either %s or %sContent, not both", c, c))
				}
			}
		}
	}
	check("", &s.Sidecars)
	for _, t := range Tiers {
		if rt := s.Tiers[t]; rt != nil {
			check(t, &rt.Sidecars)
		}
	}
	// The network's hosts (the schema checks its mode and presets).
	checkNet := func(prefix string, n *netspec.Spec) {
		if n == nil {
			return
		}
		for i, a := range n.Allow {
			if _, err := netspec.ParseRule(a); err != nil {
				at(prefix+"network.allow."+strconv.Itoa(i), err.Error())
			}
		}
	}
	checkNet("", s.Network)
	for _, t := range Tiers {
		if rt := s.Tiers[t]; rt != nil {
			checkNet("tiers."+t+".", rt.Network)
		}
	}
	if !s.Inherits() {
		if s.Extends == s.ID {
			at("inherit", `"inherit": false takes nothing from a lower persona of the same id, and "extends" names it; drop one`)
		} else if s.Extends == "" {
			for _, d := range checkWhole(name, s) {
				if pos == nil {
					pos = diag.Positions(data)
				}
				off, ok := pos[d.Field]
				if !ok || d.Field == "" {
					off, ok = pos[diag.KeyPos+"inherit"]
				}
				if ok {
					d.Line, d.Column = diag.Position(data, off)
				}
				errs = append(errs, d)
			}
		}
	}
	if len(s.Env) > 0 {
		names := make([]string, 0, len(s.Env))
		for k := range s.Env {
			if envProblem(k, s.Env[k]) != "" {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		for _, k := range names {
			// At the variable's name.
			if pos == nil {
				pos = diag.Positions(data)
			}
			d := &diag.Diagnostic{File: name, Field: "env." + k, Message: envProblem(k, s.Env[k])}
			if off, ok := pos[diag.KeyPos+"env."+k]; ok {
				d.Line, d.Column = diag.Position(data, off)
			}
			errs = append(errs, d)
		}
	}
	for i, sk := range s.Skills {
		field := "skills." + strconv.Itoa(i)
		if len(sk.Files) > 0 {
			paths := make([]string, 0, len(sk.Files))
			for p := range sk.Files {
				paths = append(paths, p)
			}
			sort.Strings(paths)
			for _, p := range paths {
				if err := ValidateSkillFilePath(p); err != nil {
					at(field+".files", err.Error())
				}
			}
			if _, ok := sk.Files["SKILL.md"]; !ok {
				at(field+".files", "an inline skill's files hold SKILL.md")
			}
			continue
		}
		if _, err := ParseSkillSource(sk.Source); err != nil {
			at(field+".source", err.Error())
		}
	}
	return errs
}

// checkWhole checks a file that says "inherit": false and extends nothing
// as the cascade checks a persona with nothing below it: it must be whole
// on its own.
func checkWhole(name string, s *Spec) diag.Errors {
	return checkMerged(&Persona{ID: s.ID, Path: name, Spec: standalone(s, Origin{})}, true)
}

// schemaErrors flattens a validation error into one diagnostic per leaf
// violation, sorted by position.
func schemaErrors(name string, data []byte, ve *jsonschema.ValidationError) diag.Errors {
	pos := diag.Positions(data)
	var errs diag.Errors
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			// A oneOf whose branches all fail reports each branch; the
			// branches' own messages are more useful than the summary.
			// A branch of another type (boolean, when an object was
			// given) says nothing the others do not.
			causes := e.Causes
			if len(causes) > 1 {
				var kept []*jsonschema.ValidationError
				for _, c := range causes {
					if len(c.Causes) > 0 || !strings.HasPrefix(c.Message, "expected ") {
						kept = append(kept, c)
					}
				}
				if len(kept) > 0 {
					causes = kept
				}
			}
			for _, c := range causes {
				walk(c)
			}
			return
		}
		field := pointerToField(e.InstanceLocation)
		add := func(msg, at string) {
			key := field + "\x00" + msg
			if seen[key] {
				return
			}
			seen[key] = true
			d := &diag.Diagnostic{File: name, Field: field, Message: msg}
			if off, ok := pos[at]; ok {
				d.Line, d.Column = diag.Position(data, off)
			}
			errs = append(errs, d)
		}
		if names, ok := unknownFields(e.Message); ok {
			// One error per unknown member, at its name.
			for _, n := range names {
				add("unknown field '"+n+"'", diag.KeyPos+joinField(field, n))
			}
			return
		}
		add(schemaMessage(e.Message), field)
	}
	walk(ve)
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].Line != errs[j].Line {
			return errs[i].Line < errs[j].Line
		}
		return errs[i].Column < errs[j].Column
	})
	return errs
}

// schemaMessage rewords the validator's messages for people.
func schemaMessage(m string) string {
	switch {
	case strings.HasPrefix(m, "value must be one of "):
		return "must be one of " + strings.ReplaceAll(strings.TrimPrefix(m, "value must be one of "), `"`, "")
	case strings.HasPrefix(m, "missing properties: "):
		return "missing required field " + strings.TrimPrefix(m, "missing properties: ")
	case strings.HasPrefix(m, "additionalProperties "):
		return "unknown field " + strings.TrimSuffix(strings.TrimPrefix(m, "additionalProperties "), " not allowed")
	case strings.HasPrefix(m, "expected "):
		return "must be " + strings.TrimPrefix(m, "expected ")
	}
	return m
}

// unknownFields returns the member names of the validator's message about
// members the schema does not allow ("additionalProperties 'a', 'b' not
// allowed").
func unknownFields(m string) ([]string, bool) {
	rest, ok := strings.CutPrefix(m, "additionalProperties ")
	if !ok {
		return nil, false
	}
	rest, ok = strings.CutSuffix(rest, " not allowed")
	if !ok {
		return nil, false
	}
	var names []string
	for _, q := range strings.Split(rest, ", ") {
		if len(q) < 2 || q[0] != '\'' || q[len(q)-1] != '\'' {
			return nil, false
		}
		names = append(names, q[1:len(q)-1])
	}
	return names, len(names) > 0
}

func joinField(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// pointerToField converts a JSON pointer ("/tiers/best/harness") to the
// dotted field name used in messages ("tiers.best.harness").
func pointerToField(ptr string) string {
	if ptr == "" || ptr == "/" {
		return ""
	}
	parts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, p := range parts {
		p = strings.ReplaceAll(p, "~1", "/")
		parts[i] = strings.ReplaceAll(p, "~0", "~")
	}
	return strings.Join(parts, ".")
}
