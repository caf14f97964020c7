package netspec

import (
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
