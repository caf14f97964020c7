package batch

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
	"github.com/seed-3bc194a6/workforce/report"
)

// Task is one entry of a batch file: a one-shot run of a persona with a
// task, in a project directory.
type Task struct {
	// ID names the task in the batch: unique, a safe name (SafeName).
	ID string `json:"id" yaml:"id"`
	// Persona is PERSONA or PERSONA@TIER.
	Persona string `json:"persona" yaml:"persona"`
	// Task is the text given to the harness.
	Task string `json:"task" yaml:"task"`
	// Dir is the project directory, relative to the batch file's
	// directory (or absolute); empty is the batch file's directory.
	Dir string `json:"dir,omitempty" yaml:"dir,omitempty"`
	// Repo and Ref name a git repository and a revision, for the queue
	// (workforce worker); the local pool refuses them.
	Repo string `json:"repo,omitempty" yaml:"repo,omitempty"`
	Ref  string `json:"ref,omitempty" yaml:"ref,omitempty"`
	// Harness runs the persona on this harness instead of its tier's.
	Harness string `json:"harness,omitempty" yaml:"harness,omitempty"`
	// Model runs the persona on this model instead of its tier's (the
	// child run's --model, which refuses a model the harness cannot
	// reach).
	Model string `json:"model,omitempty" yaml:"model,omitempty"`
	// Inputs are the persona's input values.
	Inputs map[string]string `json:"inputs,omitempty" yaml:"inputs,omitempty"`
	// Timeout limits the run, as a Go duration ("30m"); empty: the
	// persona's timeoutSeconds.
	Timeout string `json:"timeout,omitempty" yaml:"timeout,omitempty"`
	// Network narrows the network policy of the task's run ({"mode",
	// "allow", "presets"}): the child run gets it as --network-narrow,
	// which never widens what the user's (or the worker's) config.json
	// and flags allow.
	Network *netspec.Spec `json:"network,omitempty" yaml:"network,omitempty"`
	// Attempt makes the task's run an attempt of workforce eval (run
	// --attempt): its setup, check and protected files; nothing syncs
	// back and no branch is made. A batch file cannot set it.
	Attempt *report.AttemptSpec `json:"attempt,omitempty" yaml:"-"`
	// PersonaHash is the hash of the persona the submitter resolved
	// (workforce eval): part of the digest, so that an edited persona's
	// attempts run again. A batch file cannot set it.
	PersonaHash string `json:"personaHash,omitempty" yaml:"-"`

	// Line is the entry's line in the batch file (1-based).
	Line int `json:"-" yaml:"-"`
}

// fields are the keys an entry may have.
var fields = []string{"id", "persona", "task", "dir", "repo", "ref", "harness", "model", "inputs", "timeout", "network"}

// networkFields are the keys of a task's network.
var networkFields = []string{"mode", "allow", "presets"}

// safeName is what an id may be: a file name on every system, that no
// option parser takes for a flag.
var safeName = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// personaRef is PERSONA or PERSONA@TIER.
var personaRef = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9][A-Za-z0-9._-]*)?$`)

// plainName is an input's name an error may print as it is.
var plainName = lazyre.New(`^[A-Za-z0-9_.-]+$`)

// SafeName reports whether s may name a task or a batch: letters, digits,
// '.', '_' and '-', starting with a letter or digit, at most 100 bytes.
func SafeName(s string) bool { return safeName().MatchString(s) }

// TimeoutDuration is the task's timeout; 0 when it sets none. Validate
// has checked it.
func (t Task) TimeoutDuration() time.Duration {
	d, _ := time.ParseDuration(t.Timeout)
	return d
}

// Digest identifies the entry as written: two entries with the same
// digest run the same task. Resume compares it with the digest of the
// entry as run.
func (t Task) Digest() string {
	data, _ := json.Marshal(t) // map keys sorted, Line left out
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// ProjectDir is the task's directory: Dir resolved against base, the
// batch file's directory.
func (t Task) ProjectDir(base string) string {
	if filepath.IsAbs(t.Dir) {
		return filepath.Clean(t.Dir)
	}
	return filepath.Join(base, t.Dir)
}

// ParseError is a batch file that cannot be read: the file, the line of
// the entry (0 when none applies), and what is wrong.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// Format is the syntax of a batch file.
type Format int

const (
	// JSONL: one JSON object a line; blank lines are skipped.
	JSONL Format = iota
	// YAML: a sequence of mappings.
	YAML
)

// FormatOf returns the format of the file name with content data: by its
// extension (.jsonl, .ndjson, .json; .yaml, .yml), else JSONL when its
// first non-blank byte is '{', else YAML.
func FormatOf(name string, data []byte) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".ndjson", ".json":
		return JSONL
	case ".yaml", ".yml":
		return YAML
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '{' {
		return JSONL
	}
	return YAML
}

// Problems are every problem of a batch file, by line: each a
// *ParseError naming the file and the line. Its text is one problem a
// line, so that a wrong file is put right in one go.
type Problems []*ParseError

func (p Problems) Error() string {
	lines := make([]string, len(p))
	for i, e := range p {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap gives the problems to errors.Is and errors.As.
func (p Problems) Unwrap() []error {
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errs
}

// sorted is p by line, the problems of a line in the order found.
func (p Problems) sorted() Problems {
	slices.SortStableFunc(p, func(a, b *ParseError) int { return a.Line - b.Line })
	return p
}

// Parse reads the batch file name, with content data, and checks each
// entry (Validate) and that ids are unique. It goes on past a wrong
// entry: the error is Problems, every problem found, each naming the
// file and the entry's line; tasks are the entries without one. A YAML
// file that is not YAML is one problem.
func Parse(name string, data []byte) ([]Task, error) {
	var tasks []Task
	var probs Problems
	if FormatOf(name, data) == JSONL {
		tasks, probs = parseJSONL(name, data)
	} else {
		tasks, probs = parseYAML(name, data)
	}
	if len(tasks) == 0 && len(probs) == 0 {
		return nil, Problems{{File: name, Err: errors.New("no tasks")}}
	}
	seen := map[string]int{}
	valid := tasks[:0:0]
	for _, t := range tasks {
		bad := false
		if err := t.Validate(); err != nil {
			probs, bad = append(probs, &ParseError{File: name, Line: t.Line, Err: err}), true
		}
		if l, ok := seen[t.ID]; ok && t.ID != "" {
			probs, bad = append(probs, &ParseError{File: name, Line: t.Line, Err: fmt.Errorf("id %q is taken by the task on line %d", t.ID, l)}), true
		} else if t.ID != "" {
			seen[t.ID] = t.Line
		}
		if !bad {
			valid = append(valid, t)
		}
	}
	if len(probs) > 0 {
		return valid, probs.sorted()
	}
	return valid, nil
}

// Validate checks one entry: its id, persona, task and timeout, and that
// it names either a directory or a repository.
func (t Task) Validate() error {
	nulIn := t.nulField()
	switch {
	case t.ID == "":
		return errors.New("id is missing")
	case !SafeName(t.ID):
		return fmt.Errorf("id %q: want letters, digits, '.', '_' and '-', starting with a letter or digit, at most 100 bytes", t.ID)
	case nulIn != "":
		// Each ends as an argument of a program (the task too: the
		// harness gets it as one), where a NUL cannot go: refused here,
		// not when the run starts, after a worker's checkout.
		return fmt.Errorf("task %s: %s holds a NUL byte", t.ID, nulIn)
	case t.Persona == "":
		return fmt.Errorf("task %s: persona is missing", t.ID)
	case !personaRef().MatchString(t.Persona):
		return fmt.Errorf("task %s: persona %q: want PERSONA or PERSONA@TIER", t.ID, t.Persona)
	case strings.TrimSpace(t.Task) == "":
		return fmt.Errorf("task %s: task is missing or empty", t.ID)
	case t.Dir != "" && t.Repo != "":
		return fmt.Errorf("task %s: dir and repo conflict: give one", t.ID)
	case t.Ref != "" && t.Repo == "":
		return fmt.Errorf("task %s: ref goes with repo", t.ID)
	case t.Model != "" && (strings.TrimSpace(t.Model) == "" || strings.ContainsAny(t.Model, " \t\r\n") || strings.HasPrefix(t.Model, "-")):
		return fmt.Errorf("task %s: model %q: want a model's name, such as claude-opus-4-5, gpt-5-mini or openai/gpt-5-mini", t.ID, t.Model)
	}
	for k := range t.Inputs {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("task %s: input name %q: want a name without '='", t.ID, k)
		}
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("task %s: timeout %q: want a positive duration such as 90s or 30m", t.ID, t.Timeout)
		}
	}
	if t.Network != nil {
		if field, err := t.Network.Check(); err != nil {
			return fmt.Errorf("task %s: network.%s: %w", t.ID, field, err)
		}
	}
	return nil
}

// nulField names the first field of t that holds a NUL byte ("inputs.K"
// for the value of input K, "an input's name" for a name); "" when none
// does.
func (t Task) nulField() string {
	nul := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	for _, f := range []struct{ name, v string }{{"id", t.ID}, {"persona", t.Persona}, {"task", t.Task}, {"dir", t.Dir},
		{"repo", t.Repo}, {"ref", t.Ref}, {"harness", t.Harness}, {"model", t.Model}, {"timeout", t.Timeout}} {
		if nul(f.v) {
			return f.name
		}
	}
	keys := make([]string, 0, len(t.Inputs))
	for k := range t.Inputs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch {
		case nul(k):
			return "an input's name"
		case nul(t.Inputs[k]) && plainName().MatchString(k):
			return "inputs." + k
		case nul(t.Inputs[k]):
			return fmt.Sprintf("inputs.%q", k)
		}
	}
	return ""
}

// parseJSONL reads one JSON object a line, and the problem of each line
// that is not one.
func parseJSONL(name string, data []byte) ([]Task, Problems) {
	var tasks []Task
	var probs Problems
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var t Task
		if err := dec.Decode(&t); err != nil {
			probs = append(probs, &ParseError{File: name, Line: n, Err: jsonError(err)})
			continue
		}
		if _, err := dec.Token(); err != io.EOF {
			probs = append(probs, &ParseError{File: name, Line: n, Err: errors.New("more than one JSON value on the line: want one object a line")})
			continue
		}
		if t.Attempt != nil || t.PersonaHash != "" {
			probs = append(probs, &ParseError{File: name, Line: n, Err: errors.New("attempt and personaHash are workforce eval's: a batch file cannot set them")})
			continue
		}
		t.Line = n
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		probs = append(probs, &ParseError{File: name, Err: err})
	}
	return tasks, probs
}

// jsonError says what encoding/json found wrong in words of the file.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("%s: want a %s, not a JSON %s", te.Field, te.Type.Kind(), te.Value)
	}
	if s, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s; want %s", s, strings.Join(fields, ", "))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the JSON object is cut short")
	}
	return fmt.Errorf("not a JSON object: %v", err)
}

// parseYAML reads a sequence of mappings, and the problem of each entry
// that is not a task; a file that is not YAML is one problem.
func parseYAML(name string, data []byte) ([]Task, Problems) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Problems{{File: name, Line: yamlLine(err), Err: yamlError(err)}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode {
		return nil, Problems{{File: name, Line: seq.Line, Err: errors.New("want a list of tasks (- id: ...)")}}
	}
	var tasks []Task
	var probs Problems
	for _, n := range seq.Content {
		if n.Kind != yaml.MappingNode {
			probs = append(probs, &ParseError{File: name, Line: n.Line, Err: errors.New("a task must be a mapping (id: ..., persona: ..., task: ...)")})
			continue
		}
		if p := yamlEntry(name, n); len(p) > 0 {
			probs = append(probs, p...)
			continue
		}
		var t Task
		if err := n.Decode(&t); err != nil {
			probs = append(probs, &ParseError{File: name, Line: n.Line, Err: yamlError(err)})
			continue
		}
		t.Line = n.Line
		tasks = append(tasks, t)
	}
	return tasks, probs
}

// yamlEntry checks the keys and the shape of the values of the entry n
// of the file name: the problem of each.
func yamlEntry(name string, n *yaml.Node) Problems {
	var probs Problems
	add := func(line int, err error) { probs = append(probs, &ParseError{File: name, Line: line, Err: err}) }
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch {
		case !slices.Contains(fields, k.Value):
			add(k.Line, fmt.Errorf("unknown field %q; want %s", k.Value, strings.Join(fields, ", ")))
		case k.Value == "network":
			if err := yamlNetwork(v); err != nil {
				add(v.Line, err)
			}
		case k.Value == "inputs" && v.Kind != yaml.MappingNode:
			add(v.Line, errors.New("inputs: want a mapping NAME: VALUE"))
		case k.Value == "inputs":
			for j := 1; j < len(v.Content); j += 2 {
				if v.Content[j].Kind != yaml.ScalarNode {
					add(v.Content[j].Line, fmt.Errorf("inputs.%s: want a string", v.Content[j-1].Value))
				}
			}
		case v.Kind != yaml.ScalarNode:
			add(v.Line, fmt.Errorf("%s: want a string", k.Value))
		}
	}
	return probs
}

// yamlNetwork checks the shape of a task's network in YAML: a mapping of
// mode (a string), allow and presets (lists of strings).
func yamlNetwork(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return errors.New("network: want a mapping (mode: ..., allow: [...], presets: [...])")
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		k, val := v.Content[j], v.Content[j+1]
		switch k.Value {
		case "mode":
			if val.Kind != yaml.ScalarNode {
				return fmt.Errorf("network.mode: want a string (line %d)", val.Line)
			}
		case "allow", "presets":
			if val.Kind != yaml.SequenceNode {
				return fmt.Errorf("network.%s: want a list of strings (line %d)", k.Value, val.Line)
			}
			for _, e := range val.Content {
				if e.Kind != yaml.ScalarNode {
					return fmt.Errorf("network.%s: want a list of strings (line %d)", k.Value, e.Line)
				}
			}
		default:
			return fmt.Errorf("network: unknown field %q; want %s (line %d)", k.Value, strings.Join(networkFields, ", "), k.Line)
		}
	}
	return nil
}

// yamlLineRE finds the line a yaml error names.
var yamlLineRE = lazyre.New(`line (\d+)`)

// yamlLine is the line a yaml error names; 0 when none.
func yamlLine(err error) int {
	var n int
	if m := yamlLineRE().FindStringSubmatch(err.Error()); m != nil {
		fmt.Sscan(m[1], &n)
	}
	return n
}

// yamlError is err without the "yaml: line N:" the ParseError says.
func yamlError(err error) error {
	s := err.Error()
	s = strings.TrimPrefix(s, "yaml: ")
	s = yamlLineRE().ReplaceAllString(s, "")
	s = strings.TrimLeft(s, ": ")
	if s == "" {
		return err
	}
	return errors.New(s)
}
