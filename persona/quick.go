package persona

import (
	"bytes"
	"encoding/json"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/seed-3bc194a6/workforce/internal/netspec"
)

// The JSON Schema is the definition of a valid persona file, and every
// error message about a file's shape comes from it. Validating with it
// costs more than decoding the file, though, and loading a thousand
// personas must take a few milliseconds. So Parse first tries quickParse: a
// strict decode plus Go checks that accept a subset of what the schema
// accepts. Only when quickParse declines does Parse run the schema, which
// then either explains the problem or accepts the file. FuzzParse
// checks that quickParse never accepts what the schema rejects.

// quickParse decodes data when it can tell cheaply that the schema accepts
// it; ok false means "ask the schema", not "invalid". It decodes with the
// JSON v2 decoder, which matches member names exactly as the schema does
// (encoding/json ignores case), rejects unknown members and duplicate
// names, and is about twice as fast.
func quickParse(data []byte) (spec *Spec, ok bool) {
	if !plainTokens(data) {
		return nil, false
	}
	var s Spec
	if err := jsonv2.Unmarshal(data, &s, jsonv2.RejectUnknownMembers(true)); err != nil {
		return nil, false
	}
	if !s.schemaOK() {
		return nil, false
	}
	return &s, true
}

// plainTokens reports false when data holds a null or an empty string
// outside of other strings: a decoder reads both as an absent field, while
// the schema rejects them (types and minimum lengths). It looks for quotes
// and n bytes with bytes.IndexByte, which is several times faster than a
// loop over every byte; FuzzPlainTokens compares it with that loop.
func plainTokens(data []byte) bool {
	for {
		q := bytes.IndexByte(data, '"')
		outside := data
		if q >= 0 {
			outside = data[:q]
		}
		if bytes.IndexByte(outside, 'n') >= 0 {
			return false
		}
		if q < 0 {
			return true
		}
		data = data[q+1:]
		if len(data) > 0 && data[0] == '"' {
			return false
		}
		// Skip to the closing quote: the first one not escaped by an odd
		// number of backslashes.
		for {
			e := bytes.IndexByte(data, '"')
			if e < 0 {
				return true // unterminated: the decoder reports it
			}
			backslashes := 0
			for i := e - 1; i >= 0 && data[i] == '\\'; i-- {
				backslashes++
			}
			data = data[e+1:]
			if backslashes%2 == 0 {
				break
			}
		}
	}
}

// schemaOK checks what the schema checks beyond types and field names.
func (s *Spec) schemaOK() bool {
	if !isKebab(s.ID) || (s.Extends != "" && !isKebab(s.Extends)) {
		return false
	}
	if s.Tags != nil && len(s.Tags) == 0 {
		return false
	}
	if s.Tiers != nil && len(s.Tiers) == 0 {
		return false
	}
	if s.DefaultTier != "" && !IsTier(s.DefaultTier) {
		return false
	}
	for name, rt := range s.Tiers {
		if !IsTier(name) || rt == nil || !rt.schemaOK() {
			return false
		}
	}
	for _, sk := range s.Skills {
		if sk.ID == "" || sk.Source == "" || sk.Files != nil && len(sk.Files) == 0 {
			return false
		}
	}
	for name, in := range s.Inputs {
		if !isEnvName(name) || (in.Env != "" && !isEnvName(in.Env)) {
			return false
		}
		if in.Picker != nil && (in.Picker.Provider == "" || in.Picker.Resource == "") {
			return false
		}
	}
	for name := range s.Env {
		if !isEnvName(name) {
			return false
		}
	}
	for _, m := range s.MCPServers {
		switch m.Type {
		case "stdio":
			if m.Command == "" {
				return false
			}
		case "http", "sse":
			if m.URL == "" {
				return false
			}
		default:
			return false
		}
	}
	if p := s.Permissions; p != nil && p.Mode != "" {
		switch p.Mode {
		case "default", "acceptEdits", "bypassPermissions", "plan", "dontAsk":
		default:
			return false
		}
	}
	// The cloud's objects are left to the schema: workforce ignores them,
	// and they are rare.
	c := &s.CloudFields
	if c.Integrations != nil || c.Capabilities != nil || c.Memory != nil || c.Relay != nil {
		return false
	}
	if n := s.Native; n != nil {
		for _, b := range []json.RawMessage{n.Claude, n.Opencode, n.Codex} {
			if b != nil && (len(b) == 0 || b[0] != '{') {
				return false
			}
		}
	}
	return s.Runtime.schemaOK()
}

func (r *Runtime) schemaOK() bool {
	if r.Harness != "" && !IsKnownHarness(r.Harness) {
		return false
	}
	if hs := r.HarnessSettings; hs != nil {
		if !oneOf(hs.Reasoning, "low", "medium", "high") ||
			!oneOf(hs.SandboxMode, "read-only", "workspace-write", "danger-full-access") ||
			!oneOf(hs.ApprovalPolicy, "untrusted", "on-failure", "on-request", "never") ||
			hs.TimeoutSeconds < 0 {
			return false
		}
	}
	if n := r.Network; n != nil {
		// The schema checks the mode and the preset names; the hosts are
		// checkFile's (at their position).
		if n.Mode != "" && netspec.CheckMode(n.Mode) != nil {
			return false
		}
		if n.Presets != nil {
			for _, p := range *n.Presets {
				if netspec.CheckPreset(p) != nil {
					return false
				}
			}
		}
	}
	return r.Sidecars.schemaOK()
}

func (s *Sidecars) schemaOK() bool {
	for _, m := range []Mode{s.ClaudeMdMode, s.AgentsMdMode} {
		if m != "" && m != ModeOverwrite && m != ModeExtend {
			return false
		}
	}
	return true
}

// oneOf reports whether v is empty (unset) or one of the allowed values.
func oneOf(v string, allowed ...string) bool {
	if v == "" {
		return true
	}
	for _, a := range allowed {
		if v == a {
			return true
		}
	}
	return false
}

// isKebab matches ^[a-z0-9]+(-[a-z0-9]+)*$.
func isKebab(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// isEnvName matches ^[A-Za-z_][A-Za-z0-9_]*$.
func isEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i], i == 0) {
			return false
		}
	}
	return true
}
