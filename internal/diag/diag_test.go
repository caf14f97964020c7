package diag

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestError(t *testing.T) {
	tests := []struct {
		d    Diagnostic
		want string
	}{
		{Diagnostic{File: "a.json", Message: "m"}, "a.json: m"},
		{Diagnostic{File: "a.json", Field: "tiers.best", Message: "m"}, "a.json: tiers.best: m"},
		{Diagnostic{File: "a.json", Line: 2, Column: 5, Field: "f", Message: "m"}, "a.json:2:5: f: m"},
	}
	for _, tt := range tests {
		if got := tt.d.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestFlatten(t *testing.T) {
	a, b := &Diagnostic{File: "a", Message: "x"}, &Diagnostic{File: "b", Message: "y"}
	if got := Flatten("f", fmt.Errorf("wrapped: %w", Errors{a, b})); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Flatten(Errors) = %v", got)
	}
	if got := Flatten("f", fmt.Errorf("wrapped: %w", a)); len(got) != 1 || got[0] != a {
		t.Errorf("Flatten(*Diagnostic) = %v", got)
	}
	if got := Flatten("f", errors.New("plain")); len(got) != 1 || got[0].Error() != "f: plain" {
		t.Errorf("Flatten(plain) = %v", got)
	}
	if got := Flatten("f", nil); got != nil {
		t.Errorf("Flatten(nil) = %v", got)
	}
	var d *Diagnostic
	if !errors.As(Errors{a, b}, &d) || d != a {
		t.Errorf("errors.As(Errors) = %v, want the first", d)
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncé\nx")
	tests := []struct{ off, line, col int }{
		{-1, 1, 1}, {0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {6, 2, 3}, {7, 3, 1}, {100, 3, 2},
	}
	for _, tt := range tests {
		if line, col := Position(data, tt.off); line != tt.line || col != tt.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tt.off, line, col, tt.line, tt.col)
		}
	}
}

func TestPositions(t *testing.T) {
	data := []byte(`{"a": {"b": [1, {"c": true}]}, "d": "x"}`)
	pos := Positions(data)
	for field, want := range map[string]string{
		"": `{"a"`, "a": `{"b"`, "a.b": `[1,`, "a.b.0": `1,`, "a.b.1.c": `true`, "d": `"x"`,
		KeyPos + "a": `"a"`, KeyPos + "a.b.1.c": `"c"`, KeyPos + "d": `"d"`,
	} {
		off, ok := pos[field]
		if !ok || !strings.HasPrefix(string(data[off:]), want) {
			t.Errorf("Positions()[%q] = %d, %v, want the offset of %s", field, off, ok, want)
		}
	}
}

func TestJSONError(t *testing.T) {
	var v struct {
		A struct {
			N int `json:"n"`
		} `json:"a"`
	}
	tests := []struct{ data, want string }{
		{"{\n  \"a\": {\"n\": 1.5}\n}", "f.json:2:14: a.n: must be a whole number written without a fraction or an exponent, within 64 bits, not number 1.5"},
		{"{\n  \"a\": }", "f.json:2:8: invalid JSON: invalid character '}' looking for beginning of value"},
		{`{"a": {`, "f.json:1:7: invalid JSON: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		err := json.Unmarshal([]byte(tt.data), &v)
		if err == nil {
			t.Fatalf("Unmarshal(%s) = nil error", tt.data)
		}
		if got := JSONError("f.json", []byte(tt.data), err).Error(); got != tt.want {
			t.Errorf("JSONError(%s) = %q, want %q", tt.data, got, tt.want)
		}
	}
}

// TestJSONErrorUnknownField: a decoder that disallows unknown members
// names one without its place; JSONError finds it, when the document has
// one member of that name.
func TestJSONErrorUnknownField(t *testing.T) {
	type entry struct {
		Source string `json:"source"`
	}
	var v struct {
		Packs []entry `json:"packs"`
	}
	tests := []struct{ data, want string }{
		{"{\n  \"packs\": [{\"source\": \"s\", \"bogus\": 1}]\n}", "f.json:2:29: packs.0.bogus: unknown field"},
		{`{"bogus": 1, "packs": [{"bogus": 2}]}`, `f.json: unknown field "bogus"`},
	}
	for _, tt := range tests {
		dec := json.NewDecoder(strings.NewReader(tt.data))
		dec.DisallowUnknownFields()
		err := dec.Decode(&v)
		if err == nil {
			t.Fatalf("Decode(%s) = nil error", tt.data)
		}
		if got := JSONError("f.json", []byte(tt.data), err).Error(); got != tt.want {
			t.Errorf("JSONError(%s) = %q, want %q", tt.data, got, tt.want)
		}
	}
}
