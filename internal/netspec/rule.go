package netspec

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one entry of an allow list: a host name, every name below a
// suffix ("*.example.com": sub.example.com and a.b.example.com, not
// example.com itself), or an IP address, each with a port or with any
// port (Port 0). The zero Rule matches nothing.
type Rule struct {
	// Host is the lower-case host name, without a final dot; for a
	// wildcard rule, the suffix without "*."; empty for an IP rule.
	Host string
	// Wildcard makes Host a suffix: the rule matches names below it.
	Wildcard bool
	// IP is the address of an IP rule (IPv4 for an IPv4-mapped IPv6
	// address); invalid for a name rule.
	IP netip.Addr
	// Port is the port the rule allows; 0 allows every port.
	Port int
}

// ParseRule reads one allow-list entry as config.json, a persona, a task
// or --network-allow write it: "host", "*.suffix", "host:port",
// "*.suffix:port", an IPv4 address with or without ":port", and an IPv6
// address bare ("::1"), in brackets ("[::1]") or with a port
// ("[::1]:8080"). Names are ASCII (an internationalised name in its
// "xn--" form), case does not matter and a final dot is dropped.
func ParseRule(s string) (Rule, error) {
	r, err := parseRule(s)
	if err != nil {
		return Rule{}, fmt.Errorf("network rule %q: %s", s, err)
	}
	return r, nil
}

func parseRule(s string) (Rule, error) {
	if s == "" {
		return Rule{}, fmt.Errorf("empty")
	}
	if strings.TrimSpace(s) != s {
		return Rule{}, fmt.Errorf("spaces around the rule")
	}
	if strings.Contains(s, "://") {
		return Rule{}, fmt.Errorf("a rule is a host, not a URL: write the host alone, or host:port")
	}
	if strings.ContainsAny(s, "/?#@") {
		return Rule{}, fmt.Errorf("a rule is a host or host:port, without a path, query or user")
	}
	// A bare IPv6 address: no port possible.
	if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
		ip, err := ParseIP(s)
		if err != nil {
			return Rule{}, fmt.Errorf("not an IPv6 address (one with a port is written [address]:port)")
		}
		return Rule{IP: ip}, nil
	}
	host, port := s, 0
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]")
		if end < 0 {
			return Rule{}, fmt.Errorf("an opening [ without its ]")
		}
		host = s[1:end]
		rest := s[end+1:]
		switch {
		case rest == "":
		case strings.HasPrefix(rest, ":"):
			p, err := parsePort(rest[1:])
			if err != nil {
				return Rule{}, err
			}
			port = p
		default:
			return Rule{}, fmt.Errorf("after ] comes nothing or :port")
		}
		raw, err := netip.ParseAddr(host)
		if err != nil || !raw.Is6() || raw.Zone() != "" {
			return Rule{}, fmt.Errorf("brackets hold an IPv6 address")
		}
		ip := raw.Unmap()
		return Rule{IP: ip, Port: port}, nil
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		p, err := parsePort(s[i+1:])
		if err != nil {
			return Rule{}, err
		}
		host, port = s[:i], p
	}
	if ip, err := ParseIP(host); err == nil {
		return Rule{IP: ip, Port: port}, nil
	}
	wildcard := false
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		wildcard, host = true, rest
	}
	if host == "*" || strings.Contains(host, "*") {
		return Rule{}, fmt.Errorf("a wildcard is only \"*.\" at the start, before a domain (every host is --network open)")
	}
	name, err := normalizeName(host)
	if err != nil {
		return Rule{}, err
	}
	if wildcard {
		if _, err := netip.ParseAddr(name); err == nil {
			return Rule{}, fmt.Errorf("a wildcard stands before a domain, not an address")
		}
	}
	return Rule{Host: name, Wildcard: wildcard, Port: port}, nil
}

func parsePort(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty port after the colon")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("port %q is not a number", s)
		}
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %s is not between 1 and 65535", s)
	}
	return p, nil
}

// ParseIP reads an address without a zone, an IPv4-mapped IPv6 address
// as its IPv4 address.
func ParseIP(s string) (netip.Addr, error) {
	ip, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, err
	}
	if ip.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("an address with a zone")
	}
	return ip.Unmap(), nil
}

// normalizeName returns the host name lower-case without a final dot, or
// why it is not a host name.
func normalizeName(host string) (string, error) {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "" {
		return "", fmt.Errorf("empty host")
	}
	if len(name) > 253 {
		return "", fmt.Errorf("a host name is at most 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" {
			return "", fmt.Errorf("an empty label (two dots, or a dot at the start)")
		}
		if len(l) > 63 {
			return "", fmt.Errorf("a label longer than 63 characters")
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("label %q starts or ends with a hyphen", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c >= 0x80:
				return "", fmt.Errorf("write an internationalised name in its xn-- form")
			default:
				return "", fmt.Errorf("character %q is not allowed in a host name", c)
			}
		}
	}
	last := labels[len(labels)-1]
	if strings.Trim(last, "0123456789") == "" {
		return "", fmt.Errorf("a numeric last label is not a host name, nor a whole IP address")
	}
	return name, nil
}

// String returns the rule as ParseRule reads it.
func (r Rule) String() string {
	var host string
	switch {
	case r.IP.IsValid() && r.IP.Is6():
		host = "[" + r.IP.String() + "]"
	case r.IP.IsValid():
		host = r.IP.String()
	case r.Wildcard:
		host = "*." + r.Host
	default:
		host = r.Host
	}
	if r.Port != 0 {
		return host + ":" + strconv.Itoa(r.Port)
	}
	return host
}

// Explicit reports whether the rule names one host or address, not names
// below a suffix: only such a rule lets a destination that resolves to a
// private address through.
func (r Rule) Explicit() bool { return !r.Wildcard && (r.Host != "" || r.IP.IsValid()) }

// Match reports whether the rule allows host (normalised by
// NormalizeHost) on port. A name rule matches names, an IP rule the
// address written as the host: a rule never matches what a name resolves
// to.
func (r Rule) Match(host string, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	if r.IP.IsValid() {
		ip, err := ParseIP(host)
		return err == nil && ip == r.IP
	}
	if r.Host == "" {
		return false
	}
	if r.Wildcard {
		return strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// NormalizeHost returns the host of a request as rules match it: a name
// lower-case without a final dot, an address in its canonical form
// (brackets dropped), or an error saying why it is no host.
func NormalizeHost(host string) (string, error) {
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := ParseIP(h); err == nil {
		return ip.String(), nil
	}
	if strings.ContainsAny(host, "[]") {
		return "", fmt.Errorf("host %q: brackets hold an IPv6 address", host)
	}
	name, err := normalizeName(host)
	if err != nil {
		return "", fmt.Errorf("host %q: %s", host, err)
	}
	return name, nil
}

// Intersect returns the rule allowing what both a and b allow, and false
// when they have nothing in common.
func Intersect(a, b Rule) (Rule, bool) {
	port := a.Port
	switch {
	case a.Port == 0:
		port = b.Port
	case b.Port != 0 && b.Port != a.Port:
		return Rule{}, false
	}
	switch {
	case a.IP.IsValid() || b.IP.IsValid():
		if a.IP != b.IP {
			return Rule{}, false
		}
		return Rule{IP: a.IP, Port: port}, true
	case !a.Wildcard && !b.Wildcard:
		if a.Host != b.Host {
			return Rule{}, false
		}
		return Rule{Host: a.Host, Port: port}, true
	case a.Wildcard && b.Wildcard:
		// *.x.y within *.y: the narrower suffix.
		switch {
		case a.Host == b.Host || strings.HasSuffix(a.Host, "."+b.Host):
			return Rule{Host: a.Host, Wildcard: true, Port: port}, true
		case strings.HasSuffix(b.Host, "."+a.Host):
			return Rule{Host: b.Host, Wildcard: true, Port: port}, true
		}
		return Rule{}, false
	case a.Wildcard:
		if !strings.HasSuffix(b.Host, "."+a.Host) {
			return Rule{}, false
		}
		return Rule{Host: b.Host, Port: port}, true
	default:
		if !strings.HasSuffix(a.Host, "."+b.Host) {
			return Rule{}, false
		}
		return Rule{Host: a.Host, Port: port}, true
	}
}
