package frontmatter

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		opts   Options
		fields string // key@line, space-separated
		body   string
		err    *Error
	}{
		{name: "plain", data: "---\nname: a\ndescription: b\n---\n\nBody.\n", fields: "name@2 description@3", body: "\nBody.\n"},
		{name: "BOM, CRLF, blanks after ---", data: "\xef\xbb\xbf--- \r\nname: a\r\n---\t\r\nBody", fields: "name@2", body: "Body"},
		{name: "closed at the end", data: "---\nname: a\n---", fields: "name@2"},
		{name: "empty", data: "---\n# a comment\n---\n", fields: ""},
		{name: "no front matter", data: "# Title\n---\n", err: &Error{Kind: NoFrontMatter, Line: 1}},
		{name: "empty file", data: "", err: &Error{Kind: NoFrontMatter, Line: 1}},
		{name: "not closed", data: "---\nname: a\n", err: &Error{Kind: NotClosed, Line: 1}},
		{name: "only the opening line", data: "---", err: &Error{Kind: NotClosed, Line: 1}},
		{name: "syntax", data: "---\nname: a\ndescription: b: c\n---\n", err: &Error{Kind: Syntax, Line: 3, Msg: "mapping values are not allowed in this context"}},
		{name: "not a mapping", data: "---\n\n- a\n---\n", err: &Error{Kind: NotMapping, Line: 3}},
		{name: "duplicate", data: "---\nname: a\nx: 1\nname: b\n---\n", err: &Error{Kind: DuplicateKey, Line: 4, Key: "name", First: 2}},
		{name: "a list as a key", data: "---\n[a]: 1\n---\n", fields: "@2"},
		{name: "a list as a key, refused", data: "---\nname: a\n[a]: 1\n---\n", opts: Options{StringKeys: true}, err: &Error{Kind: KeyNotString, Line: 3}},
		{name: "a value holding a colon", data: "---\ndescription: Use when: x\n---\n", err: &Error{Kind: Syntax, Line: 0, Msg: "mapping values are not allowed in this context"}},
		{name: "a value holding a colon, quoted", data: "---\ndescription: Use when: x\n---\n", opts: Options{QuoteColons: true}, fields: "description@2"},
		{name: "a commented value holding a colon", data: "---\ndescription: Use when: x # c\n---\n", opts: Options{QuoteColons: true}, err: &Error{Kind: Syntax, Line: 0, Msg: "mapping values are not allowed in this context"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.data), tt.opts)
			if tt.err != nil {
				var fe *Error
				if !errors.As(err, &fe) || *fe != *tt.err {
					t.Fatalf("Parse(%q) = %#v, want %#v", tt.data, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q) = %v", tt.data, err)
			}
			var got []string
			for _, f := range doc.Fields {
				got = append(got, f.Key+"@"+strconv.Itoa(f.Line))
			}
			if strings.Join(got, " ") != tt.fields || string(doc.Body) != tt.body {
				t.Errorf("Parse(%q) = fields %q, body %q; want %q, %q", tt.data, got, doc.Body, tt.fields, tt.body)
			}
			if (doc.Root == nil) != (tt.fields == "") {
				t.Errorf("Parse(%q).Root = %v, want nil only for empty front matter", tt.data, doc.Root)
			}
		})
	}
}

func TestGetAndQuoted(t *testing.T) {
	doc, err := Parse([]byte("---\nname: a\ndescription: Use when: it's late\n---\n"), Options{QuoteColons: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := doc.Get("description"); f == nil || f.Value.Value != "Use when: it's late" || f.Line != 3 {
		t.Errorf("Get(description) = %+v, want the quoted value at line 3", f)
	}
	if f := doc.Get("model"); f != nil {
		t.Errorf("Get(model) = %+v, want nil", f)
	}
}

func TestErrorWithoutLine(t *testing.T) {
	_, err := Parse([]byte("---\na: \x01\n---\n"), Options{})
	var fe *Error
	if !errors.As(err, &fe) || fe.Kind != Syntax || fe.Line != 0 || strings.HasPrefix(fe.Msg, "yaml:") {
		t.Errorf("Parse(a control character) = %#v, want a Syntax error without a line", err)
	}
}
