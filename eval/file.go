package eval

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"go.yaml.in/yaml/v3"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
	"github.com/seed-3bc194a6/workforce/report"
)

// File is a case file: the cases, the personas they run on unless the
// command line says, and how many attempts each.
type File struct {
	// Name is the file as given (problems name it).
	Name     string
	Cases    []Case
	Personas []string
	// Attempts is the file's attempts; 0 when it sets none.
	Attempts int
	// personaLines are the lines of Personas.
	personaLines []int
}

// Case is one case of a file: a task, where it runs, what runs before
// and after the agent, and what its result must be.
type Case struct {
	ID   string
	Task string
	// Dir is the project directory, relative to the file's directory;
	// Repo and Ref name a repository for a queue.
	Dir, Repo, Ref string
	Inputs         map[string]string
	// Model is the model of every run ("" the tier's), Models the model
	// by persona id or harness name (Model for the others).
	Model   string
	Models  map[string]string
	Timeout string
	Setup   string
	Check   string
	Protect []string
	// SetupTimeout and CheckTimeout limit the setup and the check; 0:
	// report.DefaultStepTimeoutMS.
	SetupTimeout, CheckTimeout time.Duration
	Network                    *netspec.Spec
	Expect                     Expect
	// Line is the case's line in the file.
	Line int
}

// Expect are a case's assertions on an attempt's result, the changed
// files taken against the tree after setup.
type Expect struct {
	// Status is the status the run must end with; "" is succeeded.
	Status report.Status
	// Changed are globs each of which must match a changed file;
	// Unchanged globs no changed file may match.
	Changed, Unchanged []string
	// Message is a regular expression the final message must match.
	Message   string
	messageRE *regexp.Regexp
	// MaxCostUSD, MaxDuration and MaxTurns limit the run; nil or 0 when
	// the case sets none.
	MaxCostUSD  *float64
	MaxDuration time.Duration
	MaxTurns    *int
}

// ModelFor is the model the case runs persona id on harness h with: by
// the persona's id, else by the harness, else the case's one model ("":
// the tier's).
func (c Case) ModelFor(id, h string) string {
	if m, ok := c.Models[id]; ok {
		return m
	}
	if m, ok := c.Models[h]; ok {
		return m
	}
	return c.Model
}

// Problem is one problem of a case file: the file, the line, where in
// the file (cases[2] (id x): expect.status) and what is wrong.
type Problem struct {
	File  string
	Line  int
	Where string
	Err   error
}

func (p *Problem) Error() string {
	s := p.File
	if p.Line > 0 {
		s += ":" + strconv.Itoa(p.Line)
	}
	if p.Where != "" {
		s += ": " + p.Where
	}
	return s + ": " + p.Err.Error()
}

func (p *Problem) Unwrap() error { return p.Err }

// Problems are every problem of a case file, by line, one a line: a
// file with any runs nothing.
type Problems []*Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// topFields, caseFields and expectFields are the keys a file, a case and
// its expect may have.
var (
	topFields    = []string{"cases", "personas", "attempts"}
	caseFields   = []string{"id", "task", "dir", "repo", "ref", "inputs", "model", "timeout", "setup", "check", "protect", "setupTimeout", "checkTimeout", "network", "expect"}
	expectFields = []string{"status", "changed", "unchanged", "message", "maxCostUsd", "maxDuration", "maxTurns"}
)

// parser gathers the problems of one file.
type parser struct {
	name  string
	probs Problems
}

func (p *parser) add(n *yaml.Node, where string, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.probs = append(p.probs, &Problem{File: p.name, Line: line, Where: where, Err: fmt.Errorf(format, args...)})
}

// Parse reads the case file name, with content data (YAML, or JSON,
// which is YAML): its fields, each case's, and that case ids are unique.
// It goes on past a problem: the error is Problems, every problem of the
// file, each naming the file, the line and the field; the file returned
// holds the cases without one.
func Parse(name string, data []byte) (*File, error) {
	p := &parser{name: name}
	f := &File{Name: name}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Problems{{File: name, Line: yamlLine(err), Err: errors.New(yamlText(err))}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, Problems{{File: name, Line: max(1, doc.Line), Err: errors.New("want a mapping with cases (a list), and optional personas and attempts")}}
	}
	top := doc.Content[0]
	var cases *yaml.Node
	eachField(top, func(k, v *yaml.Node) {
		switch k.Value {
		case "cases":
			cases = v
		case "personas":
			f.Personas = p.personas(v)
			for _, n := range v.Content {
				f.personaLines = append(f.personaLines, n.Line)
			}
		case "attempts":
			f.Attempts = p.positiveInt(v, "attempts")
		default:
			p.add(k, "", "unknown field %q; want %s", k.Value, strings.Join(topFields, ", "))
		}
	})
	switch {
	case cases == nil:
		p.add(top, "", "cases is missing: want a list of cases (- id: ..., task: ...)")
	case cases.Kind != yaml.SequenceNode || len(cases.Content) == 0:
		p.add(cases, "cases", "want a list of cases (- id: ..., task: ...)")
	default:
		seen := map[string]int{}
		for i, n := range cases.Content {
			c, ok := p.parseCase(i, n)
			if l, dup := seen[c.ID]; dup && c.ID != "" {
				p.add(n, where(i, c.ID, "id"), "taken by the case on line %d", l)
				ok = false
			} else if c.ID != "" {
				seen[c.ID] = n.Line
			}
			if ok {
				f.Cases = append(f.Cases, c)
			}
		}
	}
	if len(p.probs) > 0 {
		slices.SortStableFunc(p.probs, func(a, b *Problem) int { return a.Line - b.Line })
		return f, p.probs
	}
	return f, nil
}

// eachField calls fn with each key and value of the mapping n.
func eachField(n *yaml.Node, fn func(k, v *yaml.Node)) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

// where names a field of case i (its id when it has one).
func where(i int, id, field string) string {
	s := fmt.Sprintf("cases[%d]", i)
	if id != "" && batch.SafeName(id) {
		s += " (id " + id + ")"
	}
	if field != "" {
		s += ": " + field
	}
	return s
}

// personas reads a list of PERSONA[@TIER].
func (p *parser) personas(v *yaml.Node) []string {
	list, ok := p.strings(v, "personas")
	if !ok {
		return nil
	}
	for i, ref := range list {
		if err := checkPersonaRef(ref); err != nil {
			p.add(v.Content[i], fmt.Sprintf("personas[%d]", i), "%v", err)
		}
	}
	return list
}

// checkPersonaRef checks a persona reference of a file.
func checkPersonaRef(ref string) error {
	if err := (batch.Task{ID: "x", Persona: ref, Task: "x"}).Validate(); err != nil {
		return fmt.Errorf("%q: want PERSONA or PERSONA@TIER", ref)
	}
	return nil
}

// strings reads a list of strings.
func (p *parser) strings(v *yaml.Node, where string) ([]string, bool) {
	if v.Kind != yaml.SequenceNode {
		p.add(v, where, "want a list of strings")
		return nil, false
	}
	out := make([]string, 0, len(v.Content))
	for _, e := range v.Content {
		if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
			p.add(e, where, "want a list of strings")
			return nil, false
		}
		out = append(out, e.Value)
	}
	return out, true
}

// scalar reads a string.
func (p *parser) scalar(v *yaml.Node, where string) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		p.add(v, where, "want a string")
		return "", false
	}
	return v.Value, true
}

// positiveInt reads a whole number of at least 1.
func (p *parser) positiveInt(v *yaml.Node, where string) int {
	n, err := strconv.Atoi(v.Value)
	if v.Kind != yaml.ScalarNode || err != nil || n < 1 || n > 1000 {
		p.add(v, where, "%q: want a whole number from 1 to 1000", v.Value)
		return 0
	}
	return n
}

// duration reads a positive Go duration.
func (p *parser) duration(v *yaml.Node, where string) time.Duration {
	s, ok := p.scalar(v, where)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		p.add(v, where, "%q: want a positive duration such as 90s or 30m", s)
		return 0
	}
	return d
}

// globs reads a list of doublestar globs, relative to the project.
func (p *parser) globs(v *yaml.Node, where string) []string {
	list, ok := p.strings(v, where)
	if !ok {
		return nil
	}
	for i, g := range list {
		if g == "" || !doublestar.ValidatePattern(g) || strings.HasPrefix(g, "/") || slices.Contains(strings.Split(g, "/"), "..") {
			p.add(v.Content[i], fmt.Sprintf("%s[%d]", where, i), "%q: want a glob relative to the project (src/**/*.go), without .. or a leading /", g)
		}
	}
	return list
}

// parseCase reads case i; ok false when it has a problem.
func (p *parser) parseCase(i int, n *yaml.Node) (c Case, ok bool) {
	before := len(p.probs)
	c.Line = n.Line
	if n.Kind != yaml.MappingNode {
		p.add(n, where(i, "", ""), "a case must be a mapping (id: ..., task: ...)")
		return c, false
	}
	eachField(n, func(k, v *yaml.Node) {
		if k.Value == "id" && v.Kind == yaml.ScalarNode {
			c.ID = v.Value
		}
	})
	eachField(n, func(k, v *yaml.Node) { p.caseField(&c, i, k, v) })
	p.checkCase(&c, i, n)
	return c, len(p.probs) == before
}

// caseField reads the field k: v of case i into c.
func (p *parser) caseField(c *Case, i int, k, v *yaml.Node) {
	w := where(i, c.ID, k.Value)
	str := func(dst *string) {
		if s, ok := p.scalar(v, w); ok {
			*dst = s
		}
	}
	switch k.Value {
	case "id", "task", "dir", "repo", "ref", "timeout", "setup", "check":
		dst := map[string]*string{"id": &c.ID, "task": &c.Task, "dir": &c.Dir, "repo": &c.Repo, "ref": &c.Ref,
			"timeout": &c.Timeout, "setup": &c.Setup, "check": &c.Check}[k.Value]
		str(dst)
	case "inputs":
		c.Inputs = p.stringMap(v, w)
	case "model":
		if v.Kind == yaml.MappingNode {
			c.Models = p.stringMap(v, w)
		} else {
			str(&c.Model)
		}
	case "protect":
		c.Protect = p.globs(v, w)
	case "setupTimeout":
		c.SetupTimeout = p.duration(v, w)
	case "checkTimeout":
		c.CheckTimeout = p.duration(v, w)
	case "network":
		c.Network = p.network(v, w)
	case "expect":
		c.Expect = p.expect(v, i, c.ID)
	default:
		p.add(k, where(i, c.ID, ""), "unknown field %q; want %s", k.Value, strings.Join(caseFields, ", "))
	}
}

// stringMap reads a mapping of strings.
func (p *parser) stringMap(v *yaml.Node, w string) map[string]string {
	if v.Kind != yaml.MappingNode {
		p.add(v, w, "want a mapping NAME: VALUE")
		return nil
	}
	out := map[string]string{}
	eachField(v, func(k, val *yaml.Node) {
		if s, ok := p.scalar(val, w+"."+k.Value); ok {
			out[k.Value] = s
		}
	})
	return out
}

// network reads a case's network: {mode, allow, presets}, as a batch
// task's.
func (p *parser) network(v *yaml.Node, w string) *netspec.Spec {
	var spec netspec.Spec
	if v.Kind != yaml.MappingNode {
		p.add(v, w, "want a mapping (mode: ..., allow: [...], presets: [...])")
		return nil
	}
	bad := false
	eachField(v, func(k, _ *yaml.Node) {
		if !slices.Contains([]string{"mode", "allow", "presets"}, k.Value) {
			p.add(k, w, "unknown field %q; want mode, allow, presets", k.Value)
			bad = true
		}
	})
	if bad {
		return nil
	}
	if err := v.Decode(&spec); err != nil {
		p.add(v, w, "%s", yamlText(err))
		return nil
	}
	if field, err := spec.Check(); err != nil {
		p.add(v, w+"."+field, "%v", err)
	}
	return &spec
}

// expect reads case i's expect.
func (p *parser) expect(v *yaml.Node, i int, id string) Expect {
	var e Expect
	if v.Kind != yaml.MappingNode {
		p.add(v, where(i, id, "expect"), "want a mapping (status: ..., changed: [...], ...)")
		return e
	}
	eachField(v, func(k, val *yaml.Node) {
		w := where(i, id, "expect."+k.Value)
		switch k.Value {
		case "status":
			if s, ok := p.scalar(val, w); ok {
				e.Status = report.Status(s)
				if !slices.Contains(report.Statuses, e.Status) {
					p.add(val, w, "%q: want one of %s", s, statusList())
				}
			}
		case "changed":
			e.Changed = p.globs(val, w)
		case "unchanged":
			e.Unchanged = p.globs(val, w)
		case "message":
			if s, ok := p.scalar(val, w); ok {
				re, err := regexp.Compile(s)
				if err != nil {
					p.add(val, w, "not a regular expression: %v", err)
				}
				e.Message, e.messageRE = s, re
			}
		case "maxCostUsd":
			f, err := strconv.ParseFloat(val.Value, 64)
			if val.Kind != yaml.ScalarNode || err != nil || f < 0 {
				p.add(val, w, "%q: want a number of US dollars, 0 or more", val.Value)
			}
			e.MaxCostUSD = &f
		case "maxDuration":
			e.MaxDuration = p.duration(val, w)
		case "maxTurns":
			n := p.positiveInt(val, w)
			e.MaxTurns = &n
		default:
			p.add(k, where(i, id, "expect"), "unknown field %q; want %s", k.Value, strings.Join(expectFields, ", "))
		}
	})
	return e
}

// statusList is the statuses an expect may name.
func statusList() string {
	s := make([]string, len(report.Statuses))
	for i, st := range report.Statuses {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}

// checkCase checks what the fields of case i say together: what a batch
// task checks (id, task, dir or repo, timeout, inputs), and a check or
// an expect to judge an attempt by.
func (p *parser) checkCase(c *Case, i int, n *yaml.Node) {
	switch {
	case c.ID == "":
		p.add(n, where(i, "", "id"), "missing")
	case !batch.SafeName(c.ID):
		p.add(n, where(i, "", "id"), "%q: want letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 bytes", c.ID)
	case strings.TrimSpace(c.Task) == "":
		p.add(n, where(i, c.ID, "task"), "missing or empty")
	case filepath.IsAbs(c.Dir):
		p.add(n, where(i, c.ID, "dir"), "%q: want a directory relative to the case file's", c.Dir)
	default:
		t := batch.Task{ID: "case", Persona: "p", Task: c.Task, Dir: c.Dir, Repo: c.Repo, Ref: c.Ref, Inputs: c.Inputs, Timeout: c.Timeout, Model: c.Model}
		if err := t.Validate(); err != nil {
			p.add(n, where(i, c.ID, ""), "%s", strings.TrimPrefix(err.Error(), "task case: "))
		}
	}
	for k, m := range c.Models {
		if err := (batch.Task{ID: "x", Persona: "p", Task: "x", Model: m}).Validate(); err != nil || m == "" {
			p.add(n, where(i, c.ID, "model."+k), "%q: want a model's name", m)
		}
	}
}

// yamlLine is the line a yaml error names; 0 when none.
func yamlLine(err error) int {
	s := err.Error()
	if _, rest, ok := strings.Cut(s, "line "); ok {
		end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(rest)
		}
		n, _ := strconv.Atoi(rest[:end])
		return n
	}
	return 0
}

// yamlText is a yaml error without its "yaml: line N:" prefix.
func yamlText(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(s, "line ") {
		if _, rest, ok := strings.Cut(s, ": "); ok {
			s = rest
		}
	}
	return s
}
