package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/frontmatter"
	"go.yaml.in/yaml/v3"
)

// A markdown agent file (Claude Code's, opencode's) is YAML front matter
// between two "---" lines, then the body, which is the agent's prompt.

// Error is a problem with a native agent file, at a line of it when it is
// known (1-based; 0 when not), and at a column of that line (counted in
// characters) when that is known too.
type Error struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// checkUTF8 refuses an agent file that is not UTF-8 text, at the line and
// column of its first invalid byte: the readers would turn the byte into
// U+FFFD and the persona would say what the file does not.
func checkUTF8(file string, data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		off += n
	}
	line, col := diag.Position(data, off)
	return &Error{File: file, Line: line, Column: col,
		Msg: fmt.Sprintf("invalid UTF-8: byte %#02x; an agent file is UTF-8 text", data[off])}
}

// field is one top-level key of the front matter, with its value node and
// the line of the key in the file (0 for an opencode configuration's).
type field struct {
	key   string
	value *yaml.Node
	line  int
}

// frontMatter is a parsed markdown agent file.
type frontMatter struct {
	fields []field
	body   string
}

// get returns the field key, nil when absent.
func (fm *frontMatter) get(key string) *field {
	for i := range fm.fields {
		if fm.fields[i].key == key {
			return &fm.fields[i]
		}
	}
	return nil
}

// parseFrontMatter splits data into its front matter, parsed, and body.
// The front matter must open the file: a first line "---" followed by a
// line break, as the harnesses take it (a file that is only "---" has
// none); the body is what follows the closing line, without the one empty
// line that usually separates them. A value holding ": " (description:
// Use when: ...) is read as Claude Code and opencode read it, quoted on a
// second try.
func parseFrontMatter(file string, data []byte) (*frontMatter, error) {
	if err := checkUTF8(file, data); err != nil {
		return nil, err
	}
	if !hasFrontMatter(data) {
		return nil, &Error{File: file, Line: 1, Msg: `no front matter: the file must start with a "---" line`}
	}
	doc, err := frontmatter.Parse(data, frontmatter.Options{QuoteColons: true, StringKeys: true})
	if err != nil {
		return nil, frontMatterError(file, err)
	}
	fm := &frontMatter{}
	for _, f := range doc.Fields {
		fm.fields = append(fm.fields, field{key: f.Key, value: f.Value, line: f.Line})
	}
	body, _ := cutLine(doc.Body, "")
	fm.body = string(body)
	return fm, nil
}

// frontMatterError says a front matter error in the words of the agent
// readers.
func frontMatterError(file string, err error) error {
	var fe *frontmatter.Error
	if !errors.As(err, &fe) {
		return &Error{File: file, Msg: err.Error()}
	}
	line, msg := fe.Line, ""
	switch fe.Kind {
	case frontmatter.NoFrontMatter:
		msg = `no front matter: the file must start with a "---" line`
	case frontmatter.NotClosed:
		msg = `the front matter is not closed: no "---" line after the first`
	case frontmatter.Syntax:
		msg = "front matter: " + fe.Msg
		if line == 0 {
			line = 2 // the YAML's first line, which the parser does not name
		}
	case frontmatter.NotMapping:
		msg = "front matter: want a mapping of keys to values"
	case frontmatter.KeyNotString:
		msg = "front matter: a key must be a string"
	case frontmatter.DuplicateKey:
		msg = fmt.Sprintf("front matter: %s is set twice", fe.Key)
	default:
		msg = fe.Error()
	}
	return &Error{File: file, Line: line, Msg: msg}
}

// cutLine returns data after its first line when that line is want
// (trailing blanks aside).
func cutLine(data []byte, want string) ([]byte, bool) {
	l, after, found := bytes.Cut(data, []byte("\n"))
	if !found || string(bytes.TrimRight(l, " \t\r")) != want {
		return data, false
	}
	return after, true
}

// entry is a front matter key and its value, for writing.
type entry struct {
	key   string
	value *yaml.Node
}

// str is a YAML string value.
func str(s string) *yaml.Node {
	n := &yaml.Node{}
	n.SetString(s)
	return n
}

// formatMarkdown writes front matter of entries, then body after one
// empty line.
func formatMarkdown(entries []entry, body string) ([]byte, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for _, e := range entries {
		doc.Content = append(doc.Content, str(e.key), e.value)
	}
	var buf bytes.Buffer
	buf.WriteString("---\n")
	if len(entries) > 0 {
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	buf.WriteString("---\n\n")
	buf.WriteString(body)
	if body != "" && !strings.HasSuffix(body, "\n") {
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// restEntries returns the entries of a native block but those the
// persona's fields wrote (written): the field wins, and the block's value
// is named in the Dropped list.
func restEntries(harness string, rest json.RawMessage, written func(string) bool) ([]entry, []Dropped, error) {
	ks, vs, err := keys(rest)
	if err != nil {
		return nil, nil, fmt.Errorf("native.%s: %w", harness, err)
	}
	var out []entry
	var dropped []Dropped
	for i, k := range ks {
		if written(k) {
			dropped = append(dropped, Dropped{Field: "native." + harness + "." + k, Why: "the persona's own field is written in its place"})
			continue
		}
		n, err := jsonNode(vs[i])
		if err != nil {
			return nil, nil, fmt.Errorf("native.%s.%s: %w", harness, k, err)
		}
		out = append(out, entry{k, n})
	}
	return out, dropped, nil
}

// markdownPrompt is the prompt and sidecar of a markdown agent's body,
// trimmed as the harnesses trim it; the sidecar text keeps one final
// newline.
func markdownPrompt(body string) (string, *Sidecar) {
	prompt, sc := splitSidecar(strings.TrimSpace(body))
	if sc != nil {
		sc.Text = strings.TrimSpace(sc.Text) + "\n"
	}
	return prompt, sc
}

// hasFrontMatter reports whether data opens with a front matter line.
func hasFrontMatter(data []byte) bool {
	_, ok := cutLine(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), "---")
	return ok
}
