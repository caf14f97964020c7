// Package diag is the diagnostic of workforce's file readers: an error or a
// warning about one file, with the dotted field it concerns and the line
// and column where it is, and the positions of a JSON document's values
// that put JSON syntax and type errors at their place.
//
// It is its own package, below persona and internal/home, so that the
// workforce home can report a broken config.json at its line and column
// without importing persona, which reads personas and imports the home.
package diag

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Diagnostic is an error or a warning about one file. Line and Column are
// 1-based and zero when unknown; Field is the dotted field name
// ("tiers.best.harness") or empty.
type Diagnostic struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// Error formats the diagnostic as "file:line:col: field: message".
func (d *Diagnostic) Error() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Column)
	}
	b.WriteString(": ")
	if d.Field != "" {
		b.WriteString(d.Field)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// String is Error, so that warnings print the same way as errors.
func (d *Diagnostic) String() string { return d.Error() }

// Errors is a list of diagnostics returned as one error, one per line.
type Errors []*Diagnostic

func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, d := range e {
		msgs[i] = d.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the diagnostics, for errors.As.
func (e Errors) Unwrap() []error {
	errs := make([]error, len(e))
	for i, d := range e {
		errs[i] = d
	}
	return errs
}

// Flatten flattens err into diagnostics: an Errors list, a single
// *Diagnostic, or any other error attributed to file.
func Flatten(file string, err error) []*Diagnostic {
	if err == nil {
		return nil
	}
	var list Errors
	if errors.As(err, &list) {
		return list
	}
	var d *Diagnostic
	if errors.As(err, &d) {
		return []*Diagnostic{d}
	}
	return []*Diagnostic{{File: file, Message: err.Error()}}
}

// Position converts a byte offset of data into a 1-based line and column;
// the column counts characters, not bytes. An offset out of range is taken
// as the nearest end.
func Position(data []byte, off int) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > len(data) {
		off = len(data)
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	col = utf8.RuneCount(before[start:]) + 1
	return line, col
}

// KeyPos prefixes the dotted name of an object member in the map
// Positions returns to find where its name, rather than its value, starts.
const KeyPos = "\x00"

// Positions maps every value of the JSON document data, by dotted field
// name ("tiers.best.harness", list elements by index: "skills.0.source";
// "" is the document itself), to the byte offset where it starts, and
// KeyPos plus the dotted name of every object member to the offset of its
// name. It reads as far as the document is valid. Callers compute it only
// when there is something to report.
func Positions(data []byte) map[string]int {
	pos := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(data))
	next := func() int {
		off := int(dec.InputOffset())
		for off < len(data) {
			switch data[off] {
			case ' ', '\t', '\r', '\n', ':', ',':
				off++
				continue
			}
			break
		}
		return off
	}
	var value func(path string) bool
	value = func(path string) bool {
		start := next()
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		pos[path] = start
		join := func(k string) string {
			if path == "" {
				return k
			}
			return path + "." + k
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				kstart := next()
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				k, _ := kt.(string)
				pos[KeyPos+join(k)] = kstart
				if !value(join(k)) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !value(join(strconv.Itoa(i))) {
					return false
				}
			}
			_, err = dec.Token()
			return err == nil
		}
		return true
	}
	value("")
	return pos
}

// JSONError turns an error of decoding data, the content of file, with
// encoding/json into a diagnostic at its line and column: a syntax error
// ("invalid JSON: ..."), an unexpected end, a value of the wrong type,
// which is reported at the field as the document names it (never with Go's
// names) and with the kind of value wanted, or an unknown member (a
// decoder that disallows them), at its place when only one member has its
// name. Other errors become a diagnostic of the whole file.
func JSONError(file string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := -1
	msg := err.Error()
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1
		msg = "invalid JSON: " + se.Error()
	case errors.As(err, &te):
		// te.Field is a path of Go names: an embedded struct's type
		// ("Runtime.harnessSettings.timeoutSeconds"), and neither map
		// keys nor list indexes. The value's place in the document gives
		// the field as the file names it.
		field, start := valueAt(data, int(te.Offset)-1)
		line, col := Position(data, start)
		return &Diagnostic{File: file, Line: line, Column: col, Field: field,
			Message: fmt.Sprintf("must be %s, not %s", jsonType(te.Type.Kind()), te.Value)}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = len(data)
		msg = "invalid JSON: unexpected end of file"
	case strings.HasPrefix(msg, "json: unknown field "):
		// A decoder that disallows unknown fields names the member but
		// not its place: it is the member of that name, when the
		// document has one only.
		name, qerr := strconv.Unquote(strings.TrimPrefix(msg, "json: unknown field "))
		if qerr != nil {
			name = strings.TrimPrefix(msg, "json: unknown field ")
		}
		d := &Diagnostic{File: file, Message: fmt.Sprintf("unknown field %q", name)}
		found := 0
		for k, at := range Positions(data) {
			f, ok := strings.CutPrefix(k, KeyPos)
			if !ok || (f != name && !strings.HasSuffix(f, "."+name)) {
				continue
			}
			found++
			d.Field, d.Message = f, "unknown field"
			d.Line, d.Column = Position(data, at)
		}
		if found != 1 {
			d.Field, d.Line, d.Column, d.Message = "", 0, 0, fmt.Sprintf("unknown field %q", name)
		}
		return d
	}
	if off < 0 {
		return &Diagnostic{File: file, Message: msg}
	}
	line, col := Position(data, off)
	return &Diagnostic{File: file, Line: line, Column: col, Message: msg}
}

// valueAt returns the dotted field name and the start of the innermost
// value of data holding the byte at off: the value starting last at or
// before it (values nest, and come in the order of the document).
func valueAt(data []byte, off int) (field string, start int) {
	start = -1
	for k, at := range Positions(data) {
		if strings.HasPrefix(k, KeyPos) || at > off {
			continue
		}
		if at > start || (at == start && len(k) > len(field)) {
			field, start = k, at
		}
	}
	if start < 0 {
		return "", max(off, 0)
	}
	return field, start
}

// jsonType names the JSON values a Go kind holds, for messages.
func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number written without a fraction or an exponent, within 64 bits"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return k.String()
}
