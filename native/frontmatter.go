package native

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// A markdown agent file (Claude Code's, opencode's) is YAML front matter
// between two "---" lines, then the body, which is the agent's prompt.

// Error is a problem with a native agent file, at a line of it when it is
// known (1-based; 0 when not).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// field is one top-level key of the front matter, with its value node and
// the line of the key in the file.
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

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// parseFrontMatter splits data into its front matter, parsed, and body.
// The front matter must open the file; the body is what follows the
// closing line, without the one empty line that usually separates them.
func parseFrontMatter(file string, data []byte) (*frontMatter, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a byte order mark, as Claude Code strips it
	rest, ok := cutLine(data, "---")
	if !ok {
		return nil, &Error{File: file, Line: 1, Msg: `no front matter: the file must start with a "---" line`}
	}
	var head []byte
	body := []byte(nil)
	found := false
	line := 2
	for len(rest) > 0 {
		l, after, _ := bytes.Cut(rest, []byte("\n"))
		if string(bytes.TrimRight(l, " \t\r")) == "---" {
			body, found = after, true
			break
		}
		head = append(head, rest[:len(rest)-len(after)]...)
		rest = after
		line++
	}
	if !found {
		return nil, &Error{File: file, Line: 1, Msg: `the front matter is not closed: no "---" line after the first`}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(head, &doc); err != nil {
		// Claude Code and opencode read a value holding ": " (description:
		// Use when: ...) by quoting it and trying again; so does this.
		if fixed, changed := quoteColons(head); !changed || yaml.Unmarshal(fixed, &doc) != nil {
			msg := strings.TrimPrefix(err.Error(), "yaml: ")
			n := 1 // yaml names no line for the first
			if m := yamlLine().FindStringSubmatch(err.Error()); m != nil {
				n, _ = strconv.Atoi(m[1])
				msg = err.Error()[len(m[0]):]
			}
			return nil, &Error{File: file, Line: n + 1, Msg: "front matter: " + msg} // the YAML starts on the file's second line
		}
	}
	fm := &frontMatter{}
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		if root.Kind != yaml.MappingNode {
			return nil, &Error{File: file, Line: root.Line + 1, Msg: "front matter: want a mapping of keys to values"}
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, &Error{File: file, Line: k.Line + 1, Msg: "front matter: a key must be a string"}
			}
			if seen[k.Value] {
				return nil, &Error{File: file, Line: k.Line + 1, Msg: fmt.Sprintf("front matter: %s is set twice", k.Value)}
			}
			seen[k.Value] = true
			fm.fields = append(fm.fields, field{key: k.Value, value: v, line: k.Line + 1})
		}
	}
	body, _ = cutLine(body, "")
	fm.body = string(body)
	return fm, nil
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

// plainColon is a top-level "key: value" line whose plain value holds
// ": ", which YAML reads as a mapping; a line with a comment (" #") is
// left as it is, its meaning kept.
var plainColon = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_-]+):[ \t]+([^'"|>\[{&*!#\s][^\r#]*?: [^\r#]*?)\s*$`)
})

// quoteColons single-quotes the values of plainColon lines, as the
// harnesses' readers do before a second try; changed is false when there
// is none.
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
