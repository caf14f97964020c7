package native

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Codex custom agents (codex 0.169.0): a TOML file in .codex/agents/ or
// $CODEX_HOME/agents/ (recursively), whose name comes from its name key,
// with a required description and developer_instructions (the prompt); the
// other keys are config.toml's, applied to the agent when spawned. Codex
// rejects an unknown top-level key, so Export writes only what the persona
// or its native block holds.

// bareKey is a TOML bare key, as codex's config keys all are.
var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// ParseCodex reads a codex custom agent file.
func ParseCodex(file string, data []byte) (*Agent, error) {
	if err := checkUTF8(file, data); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := toml.Unmarshal(data, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, &Error{File: file, Line: row, Column: col, Msg: "invalid TOML: " + strings.TrimPrefix(de.Error(), "toml: ")}
		}
		return nil, &Error{File: file, Msg: "invalid TOML: " + strings.TrimPrefix(err.Error(), "toml: ")}
	}
	fail := func(key, msg string) error {
		return &Error{File: file, Line: keyLine(data, key), Msg: key + ": " + msg}
	}
	str := func(key string, required bool) (string, error) {
		v, ok := m[key]
		if !ok {
			if required {
				return "", &Error{File: file, Msg: key + ": missing; a codex agent file must set it"}
			}
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fail(key, "want a string (text in quotes), not "+tomlKind(v))
		}
		if required && strings.TrimSpace(s) == "" {
			return "", fail(key, "must not be blank")
		}
		delete(m, key)
		return s, nil
	}
	a := &Agent{Harness: persona.HarnessCodex, Model: ModelInherit}
	var err error
	if a.Name, err = str("name", true); err != nil {
		return nil, err
	}
	raw := a.Name
	if a.Name = kebabID(raw); a.Name == "" {
		return nil, fail("name", fmt.Sprintf("%q gives no persona id (lower-case letters and digits in words joined by -)", raw))
	}
	if raw != a.Name {
		m["name"] = raw // kept as written
	}
	if a.Description, err = str("description", true); err != nil {
		return nil, err
	}
	prompt, err := str("developer_instructions", true)
	if err != nil {
		return nil, err
	}
	a.Prompt, a.Sidecar = splitSidecar(prompt)
	if strings.TrimSpace(a.Prompt) == "" && a.Sidecar == nil {
		return nil, fail("developer_instructions", "holds nothing but a workforce marker line")
	}
	if s, ok := m["model"].(string); ok && s != "" {
		a.Model = s
		delete(m, "model")
	}
	take := func(key string, allowed []string, dst *string) {
		if s, ok := m[key].(string); ok && slices.Contains(allowed, s) {
			*dst = s
			delete(m, key)
		}
	}
	take("model_reasoning_effort", []string{"low", "medium", "high"}, &a.Settings.Reasoning)
	take("sandbox_mode", []string{"read-only", "workspace-write", "danger-full-access"}, &a.Settings.SandboxMode)
	take("approval_policy", []string{"untrusted", "on-failure", "on-request", "never"}, &a.Settings.ApprovalPolicy)
	if t, ok := m["sandbox_workspace_write"].(map[string]any); ok && len(t) == 1 {
		if b, ok := t["network_access"].(bool); ok {
			a.Settings.WorkspaceWriteNetworkAccess = &b
			delete(m, "sandbox_workspace_write")
		}
	}
	if servers, ok := codexServers(m["mcp_servers"]); ok {
		a.MCPServers = servers
		delete(m, "mcp_servers")
	}
	var rest object
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !bareKey().MatchString(k) {
			return nil, &Error{File: file, Msg: fmt.Sprintf("%q is not a codex config key (codex's keys are bare words of letters, digits, _ and -)", k)}
		}
		v, err := json.Marshal(m[k])
		if err != nil {
			// A float nan or inf, which a persona file (JSON) cannot
			// hold.
			return nil, fail(k, "holds a value a persona file cannot: nan and inf have no JSON form")
		}
		rest.add(k, v)
	}
	a.Rest = rest.raw()
	return a, nil
}

// codexServers maps codex's mcp_servers table to persona servers when
// every server is one a persona server says exactly: a command with args
// and env, or a URL with headers.
func codexServers(v any) (map[string]persona.MCPServer, bool) {
	t, ok := v.(map[string]any)
	if !ok || len(t) == 0 {
		return nil, false
	}
	out := map[string]persona.MCPServer{}
	for name, sv := range t {
		s, ok := sv.(map[string]any)
		if !ok {
			return nil, false
		}
		var srv persona.MCPServer
		for k, x := range s {
			var ok bool
			switch k {
			case "command":
				srv.Command, ok = x.(string)
			case "args":
				srv.Args, ok = strings_(x)
			case "env":
				srv.Env, ok = stringMap(x)
			case "url":
				srv.URL, ok = x.(string)
			case "http_headers":
				srv.Headers, ok = stringMap(x)
			}
			if !ok {
				return nil, false
			}
		}
		normalize(&srv)
		switch {
		case srv.Command != "" && srv.URL == "" && srv.Headers == nil:
			srv.Type = "stdio"
		case srv.URL != "" && srv.Command == "" && srv.Args == nil && srv.Env == nil:
			srv.Type = "http"
		default:
			return nil, false
		}
		out[name] = srv
	}
	return out, true
}

func strings_(v any) ([]string, bool) {
	l, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

func stringMap(v any) (map[string]string, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]string, len(t))
	for k, x := range t {
		s, ok := x.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}

// FormatCodex writes a as a codex custom agent file.
func FormatCodex(a *Agent) ([]byte, error) {
	type kv struct {
		key       string
		value     any
		multiline bool
	}
	var plain, tables []kv
	written := map[string]bool{"developer_instructions": true}
	add := func(key string, value any) {
		plain = append(plain, kv{key: key, value: value})
		written[key] = true
	}
	name, _ := nameValue(a.Rest)
	if name == "" {
		name = a.Name
	}
	add("name", name)
	add("description", a.Description)
	if m := a.Model; m != "" && m != ModelInherit {
		// Codex names OpenAI's models without their provider; any other
		// name (meta-llama/llama-3.1-70b on a provider of the file's
		// model_provider) is the model's own.
		add("model", strings.TrimPrefix(m, "openai/"))
	}
	hs := a.Settings
	for _, x := range []struct{ key, v string }{
		{"model_reasoning_effort", hs.Reasoning}, {"sandbox_mode", hs.SandboxMode}, {"approval_policy", hs.ApprovalPolicy},
	} {
		if x.v != "" {
			add(x.key, x.v)
		}
	}
	ks, vs, err := keys(a.Rest)
	if err != nil {
		return nil, fmt.Errorf("native.codex: %w", err)
	}
	for i, k := range ks {
		if k == "name" {
			continue // written above
		}
		if written[k] || k == "mcp_servers" && len(a.MCPServers) > 0 || k == "sandbox_workspace_write" && hs.WorkspaceWriteNetworkAccess != nil {
			return nil, fmt.Errorf("native.codex: %s is a persona field's key; set the field instead", k)
		}
		v, err := jsonValue(vs[i])
		if err != nil {
			return nil, fmt.Errorf("native.codex.%s: %w", k, err)
		}
		if _, ok := v.(map[string]any); ok {
			tables = append(tables, kv{key: k, value: v})
		} else {
			add(k, v)
		}
	}
	plain = append(plain, kv{key: "developer_instructions", value: joinSidecar(a.Prompt, a.Sidecar), multiline: true})
	if len(a.MCPServers) > 0 {
		servers := map[string]any{}
		for name, s := range a.MCPServers {
			srv := map[string]any{}
			switch s.Type {
			case "stdio":
				srv["command"] = s.Command
				if len(s.Args) > 0 {
					srv["args"] = s.Args
				}
				if len(s.Env) > 0 {
					srv["env"] = s.Env
				}
			case "http":
				srv["url"] = s.URL
				if len(s.Headers) > 0 {
					srv["http_headers"] = s.Headers
				}
			default:
				return nil, fmt.Errorf("mcpServers.%s: codex takes stdio and http servers, not %s", name, s.Type)
			}
			servers[name] = srv
		}
		tables = append(tables, kv{key: "mcp_servers", value: servers})
	}
	if b := hs.WorkspaceWriteNetworkAccess; b != nil {
		tables = append(tables, kv{key: "sandbox_workspace_write", value: map[string]any{"network_access": *b}})
	}
	slices.SortStableFunc(tables, func(x, y kv) int { return strings.Compare(x.key, y.key) })
	// A struct made for the file: its fields in this order, and the
	// prompt as a multi-line string. go-toml writes the plain keys, then
	// the tables.
	all := append(plain, tables...)
	fields := make([]reflect.StructField, len(all))
	for i, f := range all {
		tag := f.key
		if f.multiline {
			tag += ",multiline"
		}
		fields[i] = reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[any](), Tag: reflect.StructTag(`toml:"` + tag + `"`)}
	}
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for i, f := range all {
		v.Field(i).Set(reflect.ValueOf(f.value))
	}
	var buf bytes.Buffer
	enc := toml.NewEncoder(&buf)
	enc.SetIndentTables(false)
	if err := enc.Encode(v.Interface()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// tomlKind names the kind of a TOML value as the TOML specification does,
// for messages.
func tomlKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean (true or false)"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case toml.LocalDate, toml.LocalTime, toml.LocalDateTime, time.Time:
		return "a date or time"
	}
	return "another kind of value"
}

// keyLine returns the line of the top-level key in a TOML file, 0 when it
// is not found: for messages about a value that parsed.
func keyLine(data []byte, key string) int {
	re := regexp.MustCompile(`^\s*("?)` + regexp.QuoteMeta(key) + `("?)\s*=`)
	for i, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(l), []byte("[")) {
			return 0
		}
		if re.Match(l) {
			return i + 1
		}
	}
	return 0
}

// normalize makes a server's empty lists and maps nil, as a persona file
// without them reads.
func normalize(s *persona.MCPServer) {
	if len(s.Args) == 0 {
		s.Args = nil
	}
	if len(s.Env) == 0 {
		s.Env = nil
	}
	if len(s.Headers) == 0 {
		s.Headers = nil
	}
}
