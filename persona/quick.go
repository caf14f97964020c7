package persona

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
)

// The JSON Schema is the definition of a valid persona file, and every
// error message about a file's shape comes from it. Validating with it
// costs more than decoding the file, though, and loading a thousand
// personas must take a few milliseconds. So Parse first tries quickParse: a
// strict decode plus Go checks that accept a subset of what the schema
// accepts. Only when quickParse declines does Parse run the schema, which
// then either explains the problem or accepts the file. FuzzQuickParse
// checks that quickParse never accepts what the schema rejects.

// quickParse decodes data when it can tell cheaply that the schema accepts
// it; ok false means "ask the schema", not "invalid".
func quickParse(data []byte) (spec *Spec, ok bool) {
	if !plainKeys(data) {
		return nil, false
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if !s.schemaOK() {
		return nil, false
	}
	return &s, true
}

var knownKeys = sync.OnceValue(func() map[string]bool {
	keys := map[string]bool{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				add(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" && !keys[name] {
				keys[name] = true
				add(f.Type)
			}
		}
	}
	add(reflect.TypeOf(Spec{}))
	return keys
})

// plainKeys scans data once and reports false when the decoder could read
// it differently from the schema: a null, an empty string (the schema has
// minimum lengths the struct cannot see), an escaped string (keys compare
// after unescaping), or an object key that matches a field name only when
// case is ignored (encoding/json is case-insensitive, the schema is not).
func plainKeys(data []byte) bool {
	known := knownKeys()
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == 'n' {
			return false // null; "null" inside strings is skipped below
		}
		if c != '"' {
			continue
		}
		start := i + 1
		end := bytes.IndexByte(data[start:], '"')
		if end < 0 {
			return false
		}
		end += start
		str := data[start:end]
		if len(str) == 0 || bytes.IndexByte(str, '\\') >= 0 {
			return false
		}
		i = end
		j := end + 1
		for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
			j++
		}
		if j < len(data) && data[j] == ':' {
			key := string(str)
			if !known[key] {
				lower := strings.ToLower(key)
				for k := range known {
					if strings.ToLower(k) == lower {
						return false
					}
				}
			}
		}
	}
	return true
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
		if sk.ID == "" || sk.Source == "" {
			return false
		}
	}
	for name, in := range s.Inputs {
		if !isEnvName(name) || (in.Env != "" && !isEnvName(in.Env)) {
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
	return s.Sidecars.schemaOK()
}

func (r *Runtime) schemaOK() bool {
	if r.Harness != "" && !IsHarness(r.Harness) {
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
