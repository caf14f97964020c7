package netspec

import (
	"strings"
	"testing"
)

func TestParseEntry(t *testing.T) {
	tests := []struct {
		in   string
		want Entry
		err  string
	}{
		{in: "github.com", want: Entry{Host: "github.com"}},
		{in: "GitHub.COM.", want: Entry{Host: "github.com"}},
		{in: "registry.npmjs.org:443", want: Entry{Host: "registry.npmjs.org", Port: 443}},
		{in: "*.githubusercontent.com", want: Entry{Host: "*.githubusercontent.com"}},
		{in: "localhost:11434", want: Entry{Host: "localhost", Port: 11434}},
		{in: "10.0.0.1", want: Entry{Host: "10.0.0.1"}},
		{in: "10.0.0.1:65535", want: Entry{Host: "10.0.0.1", Port: 65535}},
		{in: "[::1]:8080", want: Entry{Host: "::1", Port: 8080}},
		{in: "[2001:DB8::1]", want: Entry{Host: "2001:db8::1"}},
		{in: "2001:db8::1", want: Entry{Host: "2001:db8::1"}},
		{in: "under_score.example", want: Entry{Host: "under_score.example"}},
		{in: "", err: "empty"},
		{in: "host:", err: "port after ':' is missing"},
		{in: "host:0", err: `port "0": want a number from 1 to 65535`},
		{in: "host:65536", err: `port "65536"`},
		{in: "host:08", err: `port "08"`},
		{in: "host:+8", err: `port "+8"`},
		{in: "host:http", err: `port "http"`},
		{in: ":443", err: "the host is missing"},
		{in: "*", err: `'*' only as the whole first label`},
		{in: "*.", err: "'*' only as the whole first label"},
		{in: "a.*.com", err: `'*' only as the whole first label`},
		{in: "*x.com", err: `'*' only as the whole first label`},
		{in: "a..b", err: "empty label"},
		{in: "-a.com", err: "starting or ending with '-'"},
		{in: "a b.com", err: `" " is not allowed`},
		{in: "http://a.com", err: "not a URL"},
		{in: strings.Repeat("a", 64) + ".com", err: "longer than 63"},
		{in: "[::1", err: "without ']'"},
		{in: "[::1]x", err: "want ':' and a port"},
		{in: "[::1]:", err: "port after ':' is missing"},
		{in: "[1.2.3.4]:80", err: "is not an IPv6 address"},
		{in: "[fe80::1%eth0]", err: "is not an IPv6 address"},
		{in: "::1:80:zz", err: "not a host name nor an IP address"},
	}
	for _, tt := range tests {
		got, err := ParseEntry(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseEntry(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("ParseEntry(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

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

// FuzzParseEntry: what ParseEntry accepts reads back the same from its
// String, and holds no byte a header or a command line would choke on.
func FuzzParseEntry(f *testing.F) {
	for _, s := range []string{"github.com", "*.example.com:443", "[::1]:8080", "10.0.0.1", "2001:db8::1", "a..b", "host:0", "[x]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEntry(s)
		if err != nil {
			return
		}
		if e.Host == "" || e.Port < 0 || e.Port > 65535 || strings.ContainsAny(e.Host, " /\x00\r\n[]") {
			t.Fatalf("ParseEntry(%q) = %#v: a bad entry accepted", s, e)
		}
		back, err := ParseEntry(e.String())
		if err != nil || back != e {
			t.Fatalf("ParseEntry(%q) = %#v, but its String %q reads back as %#v, %v", s, e, e.String(), back, err)
		}
	})
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
		{s: Spec{Allow: []string{"ok.com", "bad host"}}, field: "allow[1]", err: `"bad host": host "bad host"`},
		{s: Spec{Presets: presets("dev", "all")}, field: "presets[1]", err: `unknown network preset "all"`},
	}
	for _, tt := range tests {
		field, err := tt.s.Check()
		if field != tt.field || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%+v.Check() = %q, %v; want %q, %q", tt.s, field, err, tt.field, tt.err)
		}
	}
}
