// Package netspec checks the words of a network policy as every source
// writes them (config.json's "network", a persona's and a batch task's
// "network", --network and --network-allow): the mode names, the preset
// names and the HOST[:PORT] syntax of an allow-list entry. It knows the
// syntax only; what a policy means (presets' hosts, narrowing, the proxy)
// is the egress package's. It imports nothing of workforce, so that the
// configuration, the persona and the batch file can all use it.
package netspec

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// The modes of a network policy.
const (
	// ModeAllowlist lets the harness reach the hosts the policy lists
	// (and the harness's own API and login hosts).
	ModeAllowlist = "allowlist"
	// ModeOpen lets it reach any public host.
	ModeOpen = "open"
	// ModeNone lets it reach nothing but its own API and login hosts.
	ModeNone = "none"
)

// Modes lists the mode names, widest last.
var Modes = []string{ModeNone, ModeAllowlist, ModeOpen}

// PresetDev is the preset of package registries and git forges.
const PresetDev = "dev"

// Presets lists the preset names a policy may use.
var Presets = []string{PresetDev}

// CheckMode returns an error unless m is one of Modes.
func CheckMode(m string) error {
	if slices.Contains(Modes, m) {
		return nil
	}
	return fmt.Errorf("unknown network mode %q: want %s", m, strings.Join(Modes, ", "))
}

// CheckPreset returns an error unless p is one of Presets.
func CheckPreset(p string) error {
	if slices.Contains(Presets, p) {
		return nil
	}
	return fmt.Errorf("unknown network preset %q: want %s", p, strings.Join(Presets, ", "))
}

// Entry is one entry of an allow list: a host name (lower case), a
// wildcard "*.suffix" (every name below suffix, not suffix itself), or
// an IP address; Port is 0 for any port.
type Entry struct {
	Host string
	Port int
}

// String returns the entry as ParseEntry reads it back: HOST, HOST:PORT,
// or an IPv6 address in brackets when it has a port.
func (e Entry) String() string {
	if e.Port == 0 {
		return e.Host
	}
	h := e.Host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return h + ":" + strconv.Itoa(e.Port)
}

// Wildcard reports whether the entry is a "*.suffix".
func (e Entry) Wildcard() bool { return strings.HasPrefix(e.Host, "*.") }

// ParseEntry reads an allow-list entry, HOST[:PORT]: a host name
// (letters, digits, '-' and '_' in dot-separated labels of at most 63
// bytes, no label starting or ending with '-', at most 253 bytes; a final
// dot dropped), "*." and such a name, an IPv4 address, an IPv6 address
// (in brackets when a port follows: [::1]:8080), and an optional port
// from 1 to 65535. Host names are made lower case. The error says what
// is wrong, without the entry (the caller names it and where it is).
func ParseEntry(s string) (Entry, error) {
	if s == "" {
		return Entry{}, errors.New("empty: want HOST or HOST:PORT")
	}
	if strings.Contains(s, "/") {
		return Entry{}, errors.New("a host has no '/': want HOST or HOST:PORT, not a URL")
	}
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return Entry{}, errors.New("'[' without ']': want [IPv6] or [IPv6]:PORT")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			if port[0] != ':' {
				return Entry{}, errors.New("want ':' and a port after ']'")
			}
			port = port[1:]
			if port == "" {
				return Entry{}, errors.New("the port after ':' is missing")
			}
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return Entry{}, fmt.Errorf("%q in brackets is not an IPv6 address", host)
		}
		host = a.String()
	case strings.Count(s, ":") > 1:
		// A bare IPv6 address: no port (brackets give one).
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" {
			return Entry{}, errors.New("not a host name nor an IP address (an IPv6 address with a port goes in brackets: [::1]:8080)")
		}
		host = a.String()
	default:
		if h, p, ok := strings.Cut(s, ":"); ok {
			if p == "" {
				return Entry{}, errors.New("the port after ':' is missing")
			}
			host, port = h, p
		}
		if err := checkName(host); err != nil {
			return Entry{}, err
		}
		host = strings.TrimSuffix(strings.ToLower(host), ".")
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.String()
		}
	}
	e := Entry{Host: host}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || port[0] == '0' || port[0] == '+' {
			return Entry{}, fmt.Errorf("port %q: want a number from 1 to 65535", port)
		}
		e.Port = n
	}
	return e, nil
}

// checkName checks a host name or "*.name".
func checkName(h string) error {
	name := strings.TrimSuffix(h, ".")
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		name = rest
	}
	if name == "" {
		return errors.New("the host is missing: want HOST or HOST:PORT")
	}
	if len(name) > 253 {
		return errors.New("the host name is longer than 253 bytes")
	}
	for _, label := range strings.Split(name, ".") {
		switch {
		case label == "":
			return fmt.Errorf("host %q has an empty label (two dots, or a dot first)", h)
		case len(label) > 63:
			return fmt.Errorf("host %q has a label longer than 63 bytes", h)
		case label[0] == '-' || label[len(label)-1] == '-':
			return fmt.Errorf("host %q has a label starting or ending with '-'", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				if c == '*' {
					return fmt.Errorf("host %q: a '*' only as the whole first label (*.example.com)", h)
				}
				return fmt.Errorf("host %q: %q is not allowed in a host name (letters, digits, '-', '_' and dots)", h, string(rune(c)))
			}
		}
	}
	return nil
}

// Spec is a network policy as a source writes it: config.json's
// "network", a persona's (top level or tier), a batch task's. Presets nil
// is absent (the default presets apply), an empty list drops them.
type Spec struct {
	Mode    string    `json:"mode,omitzero" yaml:"mode,omitempty"`
	Allow   []string  `json:"allow,omitzero" yaml:"allow,omitempty"`
	Presets *[]string `json:"presets,omitzero" yaml:"presets,omitempty"`
}

// IsZero reports whether s says nothing.
func (s Spec) IsZero() bool { return s.Mode == "" && s.Allow == nil && s.Presets == nil }

// Check returns the first problem of s: the field it is in ("mode",
// "allow[1]", "presets[0]") and what is wrong; "" and nil when there is
// none.
func (s Spec) Check() (field string, err error) {
	if s.Mode != "" {
		if err := CheckMode(s.Mode); err != nil {
			return "mode", err
		}
	}
	for i, a := range s.Allow {
		if _, err := ParseEntry(a); err != nil {
			return fmt.Sprintf("allow[%d]", i), fmt.Errorf("%q: %w", a, err)
		}
	}
	if s.Presets != nil {
		for i, p := range *s.Presets {
			if err := CheckPreset(p); err != nil {
				return fmt.Sprintf("presets[%d]", i), err
			}
		}
	}
	return "", nil
}
