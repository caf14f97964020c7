package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// encodingJSON is what writeJSON must print: the output of encoding/json.
func encodingJSON(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkWriteJSON checks writeJSON(v) against encoding/json's output for
// same, which is v itself, or v with every invalid UTF-8 byte replaced by
// U+FFFD: encoding/json writes those as the escape \ufffd, writeJSON as
// the character, the same JSON string either way.
func checkWriteJSON(t testing.TB, v, same any) {
	t.Helper()
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	if want := encodingJSON(t, same); b.String() != want {
		t.Fatalf("writeJSON printed\n%s\nencoding/json prints\n%s", b.String(), want)
	}
}

// TestWriteJSON checks that writeJSON prints what encoding/json prints for
// the shapes commands print: structs with omitempty fields, nil and empty
// lists and maps, maps whose keys need sorting, strings encoding/json
// escapes or repairs.
func TestWriteJSON(t *testing.T) {
	yes := true
	odd := "<a & b> \u2028 \u2029 \x7f \x00 \x1b \t\n\r\b\f \"q\" \\ \\ufffd é 日本 \ufffd"
	tests := []struct {
		name string
		v    any
	}{
		{"list output", report.List{Personas: []report.ListRow{{ID: "a", Source: "dir:1", Tiers: []string{"best"}, Description: odd}}, Warnings: []string{}}},
		{"nil lists", report.List{Personas: []report.ListRow{{ID: "a"}}}},
		{"map with unsorted keys", map[string]any{"z": 1, "a": []any{nil, 1.5, "x", false}, "é": map[string]int{"b": 2, "a": 1, "B": 3}}},
		{"persona spec with omitempty fields", &persona.Spec{ID: "a", Inputs: map[string]persona.Input{"X": {Optional: false}, "Y": {Optional: true}},
			Mount: &persona.Mount{Enabled: &yes}, Tiers: map[string]*persona.Runtime{"best": {Model: odd}, "minimum": {}}}},
		{"provenance", persona.Provenance{"tiers.best.model": {{Layer: "project", File: "/p.json"}}, "env.A": nil}},
		{"numbers", map[string]any{"i": 1 << 53, "f": 1e21, "small": 1e-7, "neg": math.Copysign(0, -1), "u": uint64(1<<64 - 1)}},
		{"empty", struct{}{}},
		{"null", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkWriteJSON(t, tt.v, tt.v) })
	}
}

// FuzzWriteJSON feeds writeJSON arbitrary strings as keys and values.
func FuzzWriteJSON(f *testing.F) {
	f.Add("id", "<tag> & \u2028")
	f.Add("\xff", "\x00\x1f\x7f\xc3")
	f.Add("\\ufffd", "a\xffb\xe6\x97c")
	row := func(key, value string) map[string]any {
		return map[string]any{key: value, "row": report.ListRow{ID: key, Description: value, Tiers: []string{value}}}
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		checkWriteJSON(t, row(key, value), row(repairUTF8(key), repairUTF8(value)))
	})
}

// repairUTF8 replaces every byte of s that is not part of valid UTF-8 with
// U+FFFD, as both encoders do.
func repairUTF8(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r) // RuneError for an invalid byte
		i += n
	}
	return b.String()
}
