// Package netspec holds the words of a network policy as every source
// writes them (config.json's "network", a persona's and a batch task's
// "network", --network and --network-allow): the mode names, the presets
// (names and hosts, presets.go) and the rules of an allow list (rule.go:
// their syntax, matching and intersection), a policy written as one JSON
// object (ParseJSON: --network-narrow), read in one place so that
// what a file is checked with when it is loaded is what the proxy runs
// with. What a policy means (narrowing, the proxy, brokering) is the
// egress package's. It imports nothing of workforce, so that the
// configuration, the persona and the batch file can all use it.
package netspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
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

// PresetDev is the preset of package registries and git forges
// (presets.go).
const PresetDev = "dev"

// CheckMode returns an error unless m is one of Modes.
func CheckMode(m string) error {
	if slices.Contains(Modes, m) {
		return nil
	}
	return fmt.Errorf("unknown network mode %q: want %s", m, strings.Join(Modes, ", "))
}

// CheckPreset returns an error unless p names one of Presets.
func CheckPreset(p string) error {
	if _, ok := Presets[p]; ok {
		return nil
	}
	return fmt.Errorf("unknown network preset %q: want %s", p, strings.Join(slices.Sorted(maps.Keys(Presets)), ", "))
}

// Spec is a network policy as a source writes it: config.json's
// "network", a persona's (top level or tier), a batch task's. Presets nil
// is absent (the default presets apply), an empty list drops them.
type Spec struct {
	Mode    string    `json:"mode,omitzero" yaml:"mode,omitempty"`
	Allow   []string  `json:"allow,omitzero" yaml:"allow,omitempty"`
	Presets *[]string `json:"presets,omitzero" yaml:"presets,omitempty"`
}

// ParseJSON reads a policy written as one JSON object ({"mode": "none",
// "allow": [...], "presets": [...]}: --network-narrow), checked: an
// unknown field, a second value or a wrong word is an error.
func ParseJSON(s string) (Spec, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	var n Spec
	if err := dec.Decode(&n); err != nil {
		return Spec{}, fmt.Errorf("want a JSON object such as {\"mode\": \"none\"}: %v", err)
	}
	if dec.More() {
		return Spec{}, errors.New("want one JSON object")
	}
	if field, err := n.Check(); err != nil {
		return Spec{}, fmt.Errorf("%s: %w", field, err)
	}
	return n, nil
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
		if _, err := ParseRule(a); err != nil {
			return fmt.Sprintf("allow[%d]", i), err
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
