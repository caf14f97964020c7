package main

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/seed-3bc194a6/workforce/pick"
	"github.com/seed-3bc194a6/workforce/report"
)

// jsonEncoders are the calls that make JSON text, by the name package
// main imports their package under.
var jsonEncoders = map[string]bool{
	"json.Marshal": true, "json.MarshalIndent": true, "json.NewEncoder": true,
	"jsonv2.Marshal": true, "jsonv2.MarshalWrite": true, "jsonv2.MarshalEncode": true,
	"jsontext.NewEncoder": true, "jsonv1.Marshal": true, "jsonv1.MarshalIndent": true, "jsonv1.NewEncoder": true,
}

// jsonNotPrinted are the functions of package main, by file, that make
// JSON text that is never printed, so need not be the writers' bytes:
// personaHash hashes a persona (the hashes in the history must stay what
// they are).
var jsonNotPrinted = map[string]string{
	"history.go": "personaHash",
}

// TestOneJSONWriter fails when a file of package main other than
// output.go makes JSON text itself (json.Marshal, an Encoder, jsonv2's
// Marshal...): the commands print JSON through writeJSON and
// writeJSONLine only, so that every document and every line is written
// the same way.
func TestOneJSONWriter(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || name == "output.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && jsonNotPrinted[name] == fn.Name.Name {
				continue
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && jsonEncoders[callName(c)] {
					t.Errorf("%s: %s makes JSON outside output.go: print it with writeJSON or writeJSONLine", fset.Position(c.Pos()), callName(c))
				}
				return true
			})
		}
	}
}

// TestWriteJSONLine checks the lines writeJSONLine prints for what the
// commands print as lines: pick's answer (printed by jsonv2 before, the
// same bytes), an event, a detached batch's id; <, > and & as themselves.
func TestWriteJSONLine(t *testing.T) {
	s := func(v string) *string { return &v }
	when := time.Date(2026, 11, 24, 22, 48, 35, 705_000_000, time.UTC)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"pick's answer", pick.Answer{Persona: s("code-reviewer"), Confidence: s("high"), Reason: "<a> & b é"},
			`{"persona":"code-reviewer","confidence":"high","reason":"<a> & b é"}` + "\n"},
		{"pick's answer without a persona", pick.Answer{Confidence: s("low"), Reason: ""},
			`{"persona":null,"confidence":"low","reason":""}` + "\n"},
		{"an event", report.Event{Type: report.EventMessage, Time: when, SessionID: "s1", Text: "x <y>"},
			`{"type":"message","time":"2026-11-24T22:48:35.705Z","sessionId":"s1","text":"x <y>"}` + "\n"},
		{"a detached batch", struct {
			BatchID   string `json:"batchId"`
			Following int    `json:"following"`
		}{"b1", 2}, `{"batchId":"b1","following":2}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeJSONLine(&b, tt.v); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("writeJSONLine printed %q, want %q", b.String(), tt.want)
			}
			if tt.name == "pick's answer" {
				old, err := jsonv2.Marshal(tt.v, jsontext.EscapeForHTML(false))
				if err != nil || string(old)+"\n" != tt.want {
					t.Errorf("jsonv2 printed %q, %v; want %q", old, err, tt.want)
				}
			}
		})
	}
}
