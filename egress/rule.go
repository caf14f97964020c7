package egress

import "github.com/seed-3bc194a6/workforce/internal/netspec"

// The rules of an allow list and the presets are internal/netspec's, so
// that a configuration, a persona and a batch file are checked when they
// are loaded with the very parser the proxy runs with.

// Rule is one entry of an allow list (netspec.Rule).
type Rule = netspec.Rule

// ParseRule reads one allow-list entry (netspec.ParseRule).
func ParseRule(s string) (Rule, error) { return netspec.ParseRule(s) }

// NormalizeHost returns host as rules match it (netspec.NormalizeHost).
func NormalizeHost(host string) (string, error) { return netspec.NormalizeHost(host) }

// Presets are the named allow lists a spec's "presets" adds
// (netspec.Presets).
var Presets = netspec.Presets
