package netspec

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCheckModeAndPreset(t *testing.T) {
	for _, m := range []string{"allowlist", "open", "none"} {
		if err := CheckMode(m); err != nil {
			t.Errorf("CheckMode(%q) = %v", m, err)
		}
	}
	for _, m := range []string{"", "Open", "closed", "allow"} {
		if err := CheckMode(m); err == nil || !strings.Contains(err.Error(), "want none, allowlist, open") {
			t.Errorf("CheckMode(%q) = %v, want an error naming the modes", m, err)
		}
	}
	if err := CheckPreset("dev"); err != nil {
		t.Errorf("CheckPreset(dev) = %v", err)
	}
	if err := CheckPreset("all"); err == nil || !strings.Contains(err.Error(), "want dev") {
		t.Errorf("CheckPreset(all) = %v, want an error naming the presets", err)
	}
}

func TestSpecCheck(t *testing.T) {
	presets := func(p ...string) *[]string { return &p }
	tests := []struct {
		s     Spec
		field string
		err   string
	}{
		{s: Spec{}},
		{s: Spec{Mode: "allowlist", Allow: []string{"a.com", "*.b.org:443"}, Presets: presets()}},
		{s: Spec{Mode: "wide"}, field: "mode", err: `unknown network mode "wide"`},
		{s: Spec{Allow: []string{"ok.com", "bad host"}}, field: "allow[1]", err: `network rule "bad host": character`},
		{s: Spec{Presets: presets("dev", "all")}, field: "presets[1]", err: `unknown network preset "all"`},
	}
	for _, tt := range tests {
		field, err := tt.s.Check()
		if field != tt.field || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v.Check() = %q, %v; want %q, %q", tt.s, field, err, tt.field, tt.err)
		}
	}
}

// TestParseJSON: --network-narrow's policy, one JSON object of the
// policy's fields, checked.
func TestParseJSON(t *testing.T) {
	none := []string{}
	tests := []struct {
		in   string
		want Spec
		err  string
	}{
		{in: `{"mode": "none"}`, want: Spec{Mode: "none"}},
		{in: `{"allow": ["a.example:443"], "presets": []}`, want: Spec{Allow: []string{"a.example:443"}, Presets: &none}},
		{in: ` {} `, want: Spec{}},
		{in: `{"mode": "wide"}`, err: `mode: unknown network mode "wide"`},
		{in: `{"allow": ["bad host"]}`, err: `allow[0]: network rule "bad host"`},
		{in: `{"hosts": ["a"]}`, err: `want a JSON object such as {"mode": "none"}: json: unknown field "hosts"`},
		{in: `none`, err: `want a JSON object such as {"mode": "none"}`},
		{in: `{"mode": "none"} {}`, err: "want one JSON object"},
	}
	for _, tt := range tests {
		got, err := ParseJSON(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseJSON(%s) = %+v, %v; want an error with %q", tt.in, got, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseJSON(%s) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParseJSON: what ParseJSON accepts passes Check, and reads back the
// same from its own JSON.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"mode": "none"}`, `{"allow": ["*.a.example:80"], "presets": ["dev"]}`, `{}`, `[`, `{"mode": "x"} 1`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseJSON(s)
		if err != nil {
			return
		}
		if field, err := n.Check(); err != nil {
			t.Fatalf("ParseJSON(%q) = %+v, which fails Check at %s: %v", s, n, field, err)
		}
		b, err := json.Marshal(n)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseJSON(string(b))
		if err != nil || !reflect.DeepEqual(again, n) {
			t.Fatalf("ParseJSON(%q) = %+v, whose JSON %s reads back as %+v, %v", s, n, b, again, err)
		}
	})
}
