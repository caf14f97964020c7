package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	claude, err := NewEntry("api.anthropic.com:443", "harness claude (api key)")
	if err != nil {
		t.Fatal(err)
	}
	type probe struct {
		host string
		port int
		want bool
	}
	tests := []struct {
		name       string
		src        Sources
		wantMode   Mode
		wantOrigin map[string]string // rule -> origin, among Entries
		probes     []probe
		wantErr    string
	}{
		{
			name:       "default is allowlist with dev",
			src:        Sources{},
			wantMode:   Allowlist,
			wantOrigin: map[string]string{"registry.npmjs.org:443": "preset dev", "github.com:443": "preset dev"},
			probes:     []probe{{"pypi.org", 443, true}, {"pypi.org", 80, false}, {"example.com", 443, false}},
		},
		{
			name: "user allow adds to dev, origins kept",
			src: Sources{User: []Spec{
				{Origin: "config.json", Allow: []string{"example.com"}},
				{Origin: "--network-allow", Allow: []string{"localhost:11434"}},
			}, Always: []Entry{claude}},
			wantMode: Allowlist,
			wantOrigin: map[string]string{"example.com": "config.json", "localhost:11434": "--network-allow",
				"pypi.org:443": "preset dev", "api.anthropic.com:443": "harness claude (api key)"},
			probes: []probe{{"example.com", 8080, true}, {"api.anthropic.com", 443, true}, {"pypi.org", 443, true}},
		},
		{
			name:     "empty presets drop dev",
			src:      Sources{User: []Spec{{Origin: "config.json", Presets: []string{}, Allow: []string{"example.com"}}}},
			wantMode: Allowlist,
			probes:   []probe{{"example.com", 443, true}, {"pypi.org", 443, false}},
		},
		{
			name:     "a flag's mode replaces config.json's",
			src:      Sources{User: []Spec{{Origin: "config.json", Mode: "open"}, {Origin: "--network", Mode: "allowlist"}}},
			wantMode: Allowlist,
			probes:   []probe{{"example.com", 443, false}},
		},
		{
			name:     "user open",
			src:      Sources{User: []Spec{{Origin: "--network", Mode: "open"}}},
			wantMode: Open,
			probes:   []probe{{"example.com", 443, true}},
		},
		{
			name:     "a narrowing open never widens an allowlist",
			src:      Sources{User: []Spec{{Origin: "config.json", Mode: "allowlist"}}, Narrow: []Spec{{Origin: "persona p", Mode: "open"}}},
			wantMode: Allowlist,
			probes:   []probe{{"example.com", 443, false}, {"pypi.org", 443, true}},
		},
		{
			name: "a narrowing list intersects",
			src: Sources{
				User:   []Spec{{Origin: "config.json", Allow: []string{"*.example.com"}}},
				Narrow: []Spec{{Origin: "persona p", Presets: []string{}, Allow: []string{"api.example.com:443", "evil.test", "pypi.org"}}},
			},
			wantMode:   Allowlist,
			wantOrigin: map[string]string{"api.example.com:443": "config.json", "pypi.org:443": "preset dev"},
			probes: []probe{{"api.example.com", 443, true}, {"api.example.com", 80, false}, {"www.example.com", 443, false},
				{"evil.test", 443, false}, {"pypi.org", 443, true}, {"github.com", 443, false}},
		},
		{
			name: "narrowing an open user gives the narrowing list",
			src: Sources{
				User:   []Spec{{Origin: "--network", Mode: "open"}},
				Narrow: []Spec{{Origin: "task t1", Presets: []string{}, Allow: []string{"example.com"}}},
			},
			wantMode: Allowlist,
			probes:   []probe{{"example.com", 443, true}, {"example.org", 443, false}},
		},
		{
			name: "none wins, always entries stay",
			src: Sources{
				User:   []Spec{{Origin: "--network", Mode: "open"}},
				Narrow: []Spec{{Origin: "persona p", Mode: "none"}, {Origin: "task", Mode: "open"}},
				Always: []Entry{claude},
			},
			wantMode: None,
			probes:   []probe{{"example.com", 443, false}, {"pypi.org", 443, false}, {"api.anthropic.com", 443, true}},
		},
		{
			name:     "a spec saying nothing narrows nothing",
			src:      Sources{User: []Spec{{Origin: "--network", Mode: "open"}}, Narrow: []Spec{{Origin: "persona p"}}},
			wantMode: Open,
			probes:   []probe{{"example.com", 443, true}},
		},
		{
			name: "a narrowing spec cannot reach what the user denied",
			src: Sources{
				User:   []Spec{{Origin: "config.json", Mode: "none"}},
				Narrow: []Spec{{Origin: "persona p", Mode: "allowlist", Allow: []string{"example.com"}}},
			},
			wantMode: None,
			probes:   []probe{{"example.com", 443, false}},
		},
		{name: "bad mode", src: Sources{User: []Spec{{Origin: "config.json", Mode: "closed"}}}, wantErr: `config.json: network mode "closed"`},
		{name: "bad rule", src: Sources{Narrow: []Spec{{Origin: "persona p", Allow: []string{"http://x"}}}}, wantErr: "persona p: network rule"},
		{name: "bad preset", src: Sources{User: []Spec{{Origin: "config.json", Presets: []string{"all"}}}}, wantErr: `config.json: unknown network preset "all" (known: dev)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol, err := Resolve(tt.src)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Resolve = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if pol.Mode != tt.wantMode {
				t.Errorf("Mode = %q, want %q", pol.Mode, tt.wantMode)
			}
			origins := map[string]string{}
			for _, e := range pol.Entries() {
				origins[e.Rule.String()] = e.Origin
			}
			for rule, origin := range tt.wantOrigin {
				if origins[rule] != origin {
					t.Errorf("entry %s has origin %q, want %q (entries %v)", rule, origins[rule], origin, pol.Entries())
				}
			}
			for _, p := range tt.probes {
				if got, why := pol.Allows(p.host, p.port); got != p.want {
					t.Errorf("Allows(%s, %d) = %v (%s), want %v", p.host, p.port, got, why, p.want)
				}
			}
		})
	}
}

// TestExplicit: only the user's and the always-allowed rules naming one
// host let a private address through; a preset, a wildcard or a
// narrowing spec's rule does not.
func TestExplicit(t *testing.T) {
	ollama, _ := NewEntry("localhost:11434", "base URL OLLAMA_HOST")
	pol, err := Resolve(Sources{
		User:   []Spec{{Origin: "--network", Mode: "open", Allow: []string{"db.internal", "*.corp.example", "10.1.2.3"}}},
		Narrow: []Spec{{Origin: "persona p", Presets: []string{}, Allow: []string{"db.internal", "10.9.9.9", "localhost"}}},
		Always: []Entry{ollama},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		port int
		want bool
	}{
		{"db.internal", 5432, true},
		{"10.1.2.3", 80, true},
		{"localhost", 11434, true},
		{"localhost", 22, false},
		{"x.corp.example", 443, false},
		{"10.9.9.9", 80, false},
		{"pypi.org", 443, false},
	}
	for _, tt := range tests {
		if got := pol.Explicit(tt.host, tt.port); got != tt.want {
			t.Errorf("Explicit(%s, %d) = %v, want %v", tt.host, tt.port, got, tt.want)
		}
	}
}

func TestSpecial(t *testing.T) {
	tests := []struct{ ip, want string }{
		{"127.0.0.1", "loopback"},
		{"127.8.9.10", "loopback"},
		{"::1", "loopback"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"10.0.0.1", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"100.64.0.1", "reserved"},
		{"255.255.255.255", "reserved"},
		{"::ffff:127.0.0.1", "loopback"},
		{"::ffff:169.254.169.254", "link-local"},
		{"64:ff9b::a9fe:a9fe", "link-local"}, // NAT64 of 169.254.169.254
		{"64:ff9b::808:808", ""},             // NAT64 of 8.8.8.8
		{"8.8.8.8", ""},
		{"172.32.0.1", ""},
		{"2606:4700::1111", ""},
	}
	for _, tt := range tests {
		if got := Special(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("Special(%s) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}
