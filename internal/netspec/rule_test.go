package netspec

import (
	"slices"
	"strings"
	"testing"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in      string
		want    string // String() of the rule; "" when an error is wanted
		wantErr string
	}{
		{in: "example.com", want: "example.com"},
		{in: "Example.COM.", want: "example.com"},
		{in: "example.com:443", want: "example.com:443"},
		{in: "*.example.com", want: "*.example.com"},
		{in: "*.example.com:8443", want: "*.example.com:8443"},
		{in: "my_host.internal", want: "my_host.internal"},
		{in: "localhost:11434", want: "localhost:11434"},
		{in: "10.0.0.1", want: "10.0.0.1"},
		{in: "169.254.169.254:80", want: "169.254.169.254:80"},
		{in: "::1", want: "[::1]"},
		{in: "[::1]", want: "[::1]"},
		{in: "[2001:db8::1]:8080", want: "[2001:db8::1]:8080"},
		{in: "::ffff:10.1.2.3", want: "10.1.2.3"},
		{in: "", wantErr: "empty"},
		{in: " example.com", wantErr: "spaces"},
		{in: "https://example.com", wantErr: "not a URL"},
		{in: "example.com/path", wantErr: "without a path"},
		{in: "user@example.com", wantErr: "without a path"},
		{in: "*", wantErr: "--network open"},
		{in: "*example.com", wantErr: "wildcard"},
		{in: "a.*.example.com", wantErr: "wildcard"},
		{in: "*.10.0.0.1", wantErr: "numeric"},
		{in: "example.com:0", wantErr: "between 1 and 65535"},
		{in: "example.com:65536", wantErr: "between 1 and 65535"},
		{in: "example.com:", wantErr: "empty port"},
		{in: "example.com:https", wantErr: "not a number"},
		{in: "exa mple.com", wantErr: "not allowed"},
		{in: "a..b", wantErr: "empty label"},
		{in: "-a.com", wantErr: "hyphen"},
		{in: "bücher.de", wantErr: "xn--"},
		{in: "1.2.3", wantErr: "numeric"},
		{in: "[1.2.3.4]:80", wantErr: "IPv6"},
		{in: "[::1", wantErr: "without its ]"},
		{in: "[::1]x", wantErr: "nothing or :port"},
		{in: "fe80::1%eth0", wantErr: "not an IPv6 address"},
		{in: "a:b:c", wantErr: "not an IPv6 address"},
		{in: strings.Repeat("a", 64) + ".com", wantErr: "63"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRule(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRule(%q) = %v, %v; want an error with %q", tt.in, r, err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.in) {
					t.Errorf("ParseRule(%q): error %q does not name the rule", tt.in, err)
				}
				return
			}
			if err != nil || r.String() != tt.want {
				t.Fatalf("ParseRule(%q) = %q, %v; want %q", tt.in, r, err, tt.want)
			}
		})
	}
}

// FuzzParseRule: any string parses or not without panicking; a rule that
// parses reads back from its String as the same rule, and matches what it
// names.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com:443", "[::1]:80", "10.0.0.1", "::1", "a_b.c-d", "x:1", "*.", "[", "::ffff:1.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			return
		}
		again, err := ParseRule(r.String())
		if err != nil || again != r {
			t.Fatalf("ParseRule(%q) = %#v, whose String %q reads back as %#v, %v", s, r, r.String(), again, err)
		}
		port := r.Port
		if port == 0 {
			port = 443
		}
		host := r.Host
		switch {
		case r.IP.IsValid():
			host = r.IP.String()
		case r.Wildcard:
			host = "x." + r.Host
		}
		if !r.Match(host, port) {
			t.Fatalf("rule %q does not match %s:%d", r, host, port)
		}
		if r.Wildcard && r.Match(r.Host, port) {
			t.Fatalf("wildcard rule %q matches its suffix %s itself", r, r.Host)
		}
	})
}

func TestRuleMatch(t *testing.T) {
	tests := []struct {
		rule, host string
		port       int
		want       bool
	}{
		{"example.com", "example.com", 443, true},
		{"example.com", "example.com", 22, true},
		{"example.com:443", "example.com", 80, false},
		{"example.com", "www.example.com", 443, false},
		{"*.example.com", "www.example.com", 443, true},
		{"*.example.com", "a.b.example.com", 443, true},
		{"*.example.com", "example.com", 443, false},
		{"*.example.com", "badexample.com", 443, false},
		{"10.0.0.1", "10.0.0.1", 80, true},
		{"10.0.0.1", "10.0.0.10", 80, false},
		{"[::1]:80", "::1", 80, true},
		{"localhost", "127.0.0.1", 80, false}, // names match names, not what they resolve to
	}
	for _, tt := range tests {
		r, err := ParseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Match(tt.host, tt.port); got != tt.want {
			t.Errorf("%q.Match(%q, %d) = %v, want %v", tt.rule, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestIntersect(t *testing.T) {
	tests := []struct{ a, b, want string }{ // want "" for nothing in common
		{"example.com", "example.com:443", "example.com:443"},
		{"example.com:80", "example.com:443", ""},
		{"*.example.com", "a.example.com", "a.example.com"},
		{"a.example.com:443", "*.example.com", "a.example.com:443"},
		{"*.example.com", "*.a.example.com", "*.a.example.com"},
		{"*.a.example.com", "*.example.com", "*.a.example.com"},
		{"*.example.com", "*.example.org", ""},
		{"*.example.com", "example.com", ""},
		{"10.0.0.1", "10.0.0.1:22", "10.0.0.1:22"},
		{"10.0.0.1", "example.com", ""},
	}
	for _, tt := range tests {
		a, _ := ParseRule(tt.a)
		b, _ := ParseRule(tt.b)
		got, ok := Intersect(a, b)
		if (tt.want == "") == ok || (ok && got.String() != tt.want) {
			t.Errorf("Intersect(%q, %q) = %q, %v; want %q", tt.a, tt.b, got, ok, tt.want)
		}
	}
}

func TestPresetsParse(t *testing.T) {
	for name, rules := range Presets {
		for _, r := range rules {
			if _, err := ParseRule(r); err != nil {
				t.Errorf("preset %s: %v", name, err)
			}
		}
	}
	for _, want := range []string{"registry.npmjs.org:443", "files.pythonhosted.org:443", "proxy.golang.org:443", "static.crates.io:443", "repo1.maven.org:443", "codeload.github.com:443", "gitlab.com:443"} {
		if !slices.Contains(Presets["dev"], want) {
			t.Errorf("preset dev lacks %s", want)
		}
	}
}

// FuzzNormalizeHost: a host that normalises stays the same when
// normalised again, and a rule made of it matches it.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"Example.COM.", "[::1]", "10.0.0.1", "::ffff:127.0.0.1", "a_b", "fe80::1%eth0", "bücher.de"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := NormalizeHost(s)
		if err != nil {
			return
		}
		again, err := NormalizeHost(h)
		if err != nil || again != h {
			t.Fatalf("NormalizeHost(%q) = %q, which normalises to %q, %v", s, h, again, err)
		}
		rule := h
		if strings.Contains(h, ":") {
			rule = "[" + h + "]"
		}
		r, err := ParseRule(rule)
		if err != nil {
			t.Fatalf("host %q (from %q) is no rule: %v", h, s, err)
		}
		if !r.Match(h, 443) {
			t.Fatalf("rule %q does not match host %q", r, h)
		}
	})
}
