package egress

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// Mode is how a run's network is decided.
type Mode string

// The modes. Allowlist is the default.
const (
	// Allowlist lets through the hosts the policy lists (the preset "dev"
	// unless the user's presets say otherwise) and the always-allowed ones.
	Allowlist Mode = "allowlist"
	// Open lets through every host whose addresses are public, and a
	// private one that is listed explicitly.
	Open Mode = "open"
	// None lets through nothing but the always-allowed hosts (the
	// harness's own, which the caller passes).
	None Mode = "none"
)

// ParseMode reads a mode as config.json, a persona or --network write it.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Allowlist, Open, None:
		return m, nil
	}
	return "", fmt.Errorf("network mode %q: want allowlist, open or none", s)
}

// Spec is one "network" object as config.json, a persona (top level or
// tier), a batch task or the flags give it.
type Spec struct {
	// Origin says where the spec was read, for --dry-run and denials:
	// "config.json", "--network-allow", "persona reviewer".
	Origin string
	// Mode is "", "allowlist", "open" or "none"; "" leaves it unset.
	Mode string
	// Allow lists rules as ParseRule reads them.
	Allow []string
	// Presets names presets (Presets' keys); nil leaves them unset, an
	// empty list drops the default.
	Presets []string
}

// Entry is an allowed rule and where it came from: "config.json",
// "--network-allow", "preset dev", "harness claude (api key)".
type Entry struct {
	Rule   Rule
	Origin string
}

// String returns the rule and its origin, as --dry-run lists them.
func (e Entry) String() string { return e.Rule.String() + " (" + e.Origin + ")" }

// NewEntry parses rule (ParseRule) and gives it origin: what a caller
// passes as always allowed.
func NewEntry(rule, origin string) (Entry, error) {
	r, err := ParseRule(rule)
	if err != nil {
		return Entry{}, err
	}
	return Entry{Rule: r, Origin: origin}, nil
}

// Sources is what a run's policy is made of.
type Sources struct {
	// User is the user's word, config.json then the flags: it may widen.
	// A later spec's Mode replaces an earlier one's, the Allow lists add
	// up, the last Presets that is not nil wins (none: DefaultPresets).
	User []Spec
	// Narrow are the persona's (top level, tier) and a batch task's
	// specs, which an agent may have written: each may only narrow what
	// User allows. Each means on its own what it would mean as the user's
	// (its Presets defaulting the same way), and the result is what both
	// allow: "none" wins, "open" changes nothing, an allow list
	// intersects.
	Narrow []Spec
	// Always are allowed in every mode, "none" included, and never
	// narrowed: the harness's own API and login hosts, the hosts of the
	// user's MCP servers and base URLs. The caller makes them (NewEntry).
	Always []Entry
}

// DefaultPresets are the presets of a policy whose user specs name none.
var DefaultPresets = []string{"dev"}

// Policy is a run's resolved network policy.
type Policy struct {
	// Mode is the effective mode, and ModeOrigin the spec that set it
	// ("default" when none did).
	Mode       Mode
	ModeOrigin string
	// Allow is what the allow list lets through in mode allowlist; in
	// mode open, the user's rules (those naming one host let a private
	// address through); empty in mode none.
	Allow []Entry
	// Always is what every mode lets through.
	Always []Entry
	// explicit are the user's and the always-allowed rules naming one
	// host or address: a destination resolving to a private address
	// passes only when one of them names it (a narrowing spec cannot add
	// one).
	explicit []Rule
}

// Resolve makes a run's policy from its sources, or says which spec is
// wrong (an unknown mode or preset, a rule ParseRule refuses).
func Resolve(src Sources) (Policy, error) {
	pol := Policy{Mode: Allowlist, ModeOrigin: "default", Always: slices.Clone(src.Always)}
	var presets []string
	presetsOrigin := "default"
	for _, s := range src.User {
		if s.Mode != "" {
			m, err := ParseMode(s.Mode)
			if err != nil {
				return Policy{}, fmt.Errorf("%s: %w", s.Origin, err)
			}
			pol.Mode, pol.ModeOrigin = m, s.Origin
		}
		entries, err := parseAllow(s)
		if err != nil {
			return Policy{}, err
		}
		pol.Allow = addEntries(pol.Allow, entries...)
		if s.Presets != nil {
			presets, presetsOrigin = s.Presets, s.Origin
		}
	}
	if presets == nil {
		presets = DefaultPresets
	}
	pe, err := presetEntries(presets, presetsOrigin)
	if err != nil {
		return Policy{}, err
	}
	// The user's explicit rules are taken before the presets join: a
	// preset never lets a private address through.
	for _, e := range pol.Allow {
		if e.Rule.Explicit() {
			pol.explicit = append(pol.explicit, e.Rule)
		}
	}
	for _, e := range src.Always {
		if e.Rule.Explicit() {
			pol.explicit = append(pol.explicit, e.Rule)
		}
	}
	if pol.Mode == Allowlist {
		pol.Allow = addEntries(pe, pol.Allow...)
	}
	if pol.Mode == None {
		pol.Allow = nil
	}
	for _, s := range src.Narrow {
		if err := pol.narrow(s); err != nil {
			return Policy{}, err
		}
	}
	return pol, nil
}

// narrow makes pol allow only what it and s both allow.
func (pol *Policy) narrow(s Spec) error {
	if s.Mode == "" && s.Allow == nil && s.Presets == nil {
		return nil // says nothing
	}
	mode := Allowlist
	if s.Mode != "" {
		m, err := ParseMode(s.Mode)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Origin, err)
		}
		mode = m
	}
	switch {
	case mode == None:
		if pol.Mode != None {
			pol.Mode, pol.ModeOrigin, pol.Allow = None, s.Origin, nil
		}
		return nil
	case mode == Open || pol.Mode == None:
		return nil
	}
	own, err := parseAllow(s)
	if err != nil {
		return err
	}
	presets := s.Presets
	if presets == nil {
		presets = DefaultPresets
	}
	pe, err := presetEntries(presets, s.Origin)
	if err != nil {
		return err
	}
	own = addEntries(pe, own...)
	if pol.Mode == Open {
		// Everything public intersected with the spec's list is its list.
		pol.Mode, pol.ModeOrigin, pol.Allow = Allowlist, s.Origin, own
		return nil
	}
	var out []Entry
	for _, a := range pol.Allow {
		for _, b := range own {
			if r, ok := netspec.Intersect(a.Rule, b.Rule); ok {
				out = addEntries(out, Entry{Rule: r, Origin: a.Origin})
			}
		}
	}
	pol.Allow = out
	return nil
}

func parseAllow(s Spec) ([]Entry, error) {
	var out []Entry
	for _, a := range s.Allow {
		r, err := ParseRule(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.Origin, err)
		}
		out = addEntries(out, Entry{Rule: r, Origin: s.Origin})
	}
	return out, nil
}

// addEntries appends the entries whose rule list does not hold yet.
func addEntries(list []Entry, add ...Entry) []Entry {
	for _, e := range add {
		if !slices.ContainsFunc(list, func(x Entry) bool { return x.Rule == e.Rule }) {
			list = append(list, e)
		}
	}
	return list
}

func presetEntries(names []string, origin string) ([]Entry, error) {
	var out []Entry
	for _, n := range names {
		rules, ok := Presets[n]
		if !ok {
			return nil, fmt.Errorf("%s: unknown network preset %q (known: %s)", origin, n, strings.Join(presetNames(), ", "))
		}
		for _, s := range rules {
			r, err := ParseRule(s)
			if err != nil {
				return nil, fmt.Errorf("preset %s: %w", n, err)
			}
			out = addEntries(out, Entry{Rule: r, Origin: "preset " + n})
		}
	}
	return out, nil
}

func presetNames() []string {
	var names []string
	for n := range Presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Entries returns what the policy lets through and where each came from,
// the allow list then the always-allowed entries: what --dry-run lists.
func (pol Policy) Entries() []Entry {
	return append(slices.Clone(pol.Allow), pol.Always...)
}

// Allows reports whether the policy lets host (NormalizeHost's form) on
// port through by name, before its addresses are checked; when not, the
// reason says why.
func (pol Policy) Allows(host string, port int) (bool, string) {
	for _, e := range pol.Always {
		if e.Rule.Match(host, port) {
			return true, ""
		}
	}
	switch pol.Mode {
	case Open:
		return true, ""
	case None:
		return false, "the run's network mode is none (" + pol.ModeOrigin + ")"
	}
	for _, e := range pol.Allow {
		if e.Rule.Match(host, port) {
			return true, ""
		}
	}
	return false, "not in the run's allow list"
}

// Explicit reports whether the user's word or an always-allowed entry
// names host on port by itself (not through a wildcard or a preset): the
// condition for a destination resolving to a private address.
func (pol Policy) Explicit(host string, port int) bool {
	for _, r := range pol.explicit {
		if r.Match(host, port) {
			return true
		}
	}
	return false
}
