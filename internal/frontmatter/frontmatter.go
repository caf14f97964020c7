// Package frontmatter reads the YAML front matter of a Markdown file: the
// lines between a first line "---" and the next line "---", parsed with
// the line of every top-level key as the file numbers it, then the body.
//
// It is the one parser of the two formats workforce reads this way, an
// Agent Skill's SKILL.md (internal/skillmd) and a Claude Code or opencode
// agent file (native). It owns what they share: a byte order mark is
// dropped, blanks after "---" are allowed, the front matter must be a
// mapping, each key given once, and every error carries its line in the
// file. What they do not share stays theirs: the words of their errors
// (Error has a Kind for them to choose by), whether empty front matter is
// allowed, what the body means, and, as options, the agent readers'
// second try of a value holding ": " (Options.QuoteColons) and their
// refusal of keys that are not strings (Options.StringKeys).
package frontmatter

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// Options change how Parse reads.
type Options struct {
	// QuoteColons reads front matter that is not valid YAML a second
	// time, with the plain value of each top-level "key: value" line that
	// holds ": " single-quoted, as Claude Code and opencode read their
	// agent files ("description: Use when: ..."). A line with a comment
	// (" #") is left as it is. When the second try fails too, the error
	// is the first's.
	QuoteColons bool
	// StringKeys refuses a key that is not a string (a list or a mapping
	// as a key), as the agent readers do (KeyNotString). Without it such
	// a key is listed with its node's value, empty for a list or a
	// mapping, as a SKILL.md reader that looks at two keys can afford.
	StringKeys bool
}

// Field is a top-level key of the front matter, its value, and the line
// of the key in the file (1-based).
type Field struct {
	Key   string
	Value *yaml.Node
	Line  int
}

// Document is a file's front matter, parsed, and its body.
type Document struct {
	// Root is the front matter's mapping node; nil when it holds nothing
	// (blank lines or comments only), and then Fields is empty.
	Root *yaml.Node
	// Fields are the mapping's keys in the order of the file.
	Fields []Field
	// Body is what follows the closing line, as it is.
	Body []byte
}

// Get returns the field key, nil when the front matter does not set it.
func (d *Document) Get(key string) *Field {
	for i := range d.Fields {
		if d.Fields[i].Key == key {
			return &d.Fields[i]
		}
	}
	return nil
}

// ErrorKind tells what is wrong with a front matter, so that each format
// can say it in its own words.
type ErrorKind int

// Kinds of Error.
const (
	// NoFrontMatter: the file's first line is not "---".
	NoFrontMatter ErrorKind = iota + 1
	// NotClosed: no line "---" follows the first.
	NotClosed
	// Syntax: the front matter is not valid YAML; Error.Msg says why.
	Syntax
	// NotMapping: the front matter is YAML but not a mapping.
	NotMapping
	// KeyNotString: a key of the mapping is a list or a mapping.
	KeyNotString
	// DuplicateKey: Error.Key is given at Error.First and again at
	// Error.Line.
	DuplicateKey
)

// Error is a problem of a front matter, at a line of the file.
type Error struct {
	Kind ErrorKind
	// Line is the file's line (1-based): the first line for
	// NoFrontMatter and NotClosed; 0 for a Syntax error the YAML parser
	// gave no line for, which it does for one on its own first line (the
	// file's second) and for some that concern no line.
	Line int
	// Msg is the YAML parser's message for Syntax, without its
	// "yaml: line N: " prefix.
	Msg string
	// Key and First are the key given twice and the line it was first
	// given at, for DuplicateKey.
	Key   string
	First int
}

func (e *Error) Error() string {
	var msg string
	switch e.Kind {
	case NoFrontMatter:
		msg = `no front matter: the file does not start with a line "---"`
	case NotClosed:
		msg = `the front matter is not closed: no line "---" after the first`
	case Syntax:
		msg = "invalid YAML in the front matter: " + e.Msg
	case NotMapping:
		msg = "the front matter is not a mapping of keys to values"
	case KeyNotString:
		msg = "a key of the front matter is not a string"
	case DuplicateKey:
		msg = fmt.Sprintf("%s is given twice in the front matter, at lines %d and %d", e.Key, e.First, e.Line)
	}
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %s", e.Line, msg)
	}
	return msg
}

// Parse reads the front matter of data and returns it with the body.
// Errors are *Error values.
func Parse(data []byte, opts Options) (*Document, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isDelimiter(first) {
		return nil, &Error{Kind: NoFrontMatter, Line: 1}
	}
	var head, body []byte
	closed := false
	for off := 0; off < len(rest); {
		line, after, _ := bytes.Cut(rest[off:], []byte("\n"))
		if isDelimiter(line) {
			head, body, closed = rest[:off], after, true
			break
		}
		off += len(line) + 1
	}
	if !closed {
		return nil, &Error{Kind: NotClosed, Line: 1}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(head, &doc); err != nil {
		fixed, changed := quoteColons(head)
		doc = yaml.Node{}
		if !opts.QuoteColons || !changed || yaml.Unmarshal(fixed, &doc) != nil {
			return nil, syntaxError(err)
		}
	}
	d := &Document{Body: body}
	if len(doc.Content) == 0 {
		return d, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &Error{Kind: NotMapping, Line: root.Line + 1}
	}
	d.Root = root
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1 // the YAML starts on the file's second line
		if opts.StringKeys && k.Kind != yaml.ScalarNode {
			return nil, &Error{Kind: KeyNotString, Line: line}
		}
		if at, dup := seen[k.Value]; dup {
			return nil, &Error{Kind: DuplicateKey, Line: line, Key: k.Value, First: at}
		}
		seen[k.Value] = line
		d.Fields = append(d.Fields, Field{Key: k.Value, Value: v, Line: line})
	}
	return d, nil
}

// isDelimiter reports whether line is "---", blanks after it aside.
func isDelimiter(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// syntaxError is a YAML parser's error at the file's line: the parser
// counts from the front matter's first line, the file's second.
func syntaxError(err error) *Error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "yaml: line "); ok {
		if n, after, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return &Error{Kind: Syntax, Line: line + 1, Msg: after}
			}
		}
	}
	return &Error{Kind: Syntax, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// plainColon is a top-level "key: value" line whose plain value holds
// ": ", which YAML reads as a mapping; a line with a comment (" #") is
// left as it is, its meaning kept.
var plainColon = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_-]+):[ \t]+([^'"|>\[{&*!#\s][^\r#]*?: [^\r#]*?)\s*$`)
})

// quoteColons single-quotes the values of plainColon lines; changed is
// false when there is none.
func quoteColons(head []byte) ([]byte, bool) {
	lines := bytes.Split(head, []byte("\n"))
	changed := false
	for i, l := range lines {
		if m := plainColon().FindSubmatch(l); m != nil {
			lines[i] = []byte(string(m[1]) + ": '" + strings.ReplaceAll(string(m[2]), "'", "''") + "'")
			changed = true
		}
	}
	return bytes.Join(lines, []byte("\n")), changed
}
