// Package native reads and writes the harnesses' own agent formats, and
// maps them to personas and back: Claude Code subagents (markdown with YAML
// front matter), opencode agents (the same, with opencode's keys) and codex
// custom agents (TOML).
//
// An agent file becomes a flat persona (no tiers) that says "inherit":
// false, since the file means only what it says: a persona of the same id
// in a lower layer (the built-in code-reviewer under an imported "Code
// Reviewer") lends it nothing. Its harness, name (the persona id, which
// must be kebab-case), description (also the intent, which agent files do
// not have), prompt, model ("inherit" when the file names none: the
// harness's own default), reasoning effort, permission rules and MCP
// servers go each into its persona field when the field can hold it
// exactly. Every other key of the file, and a value a persona field cannot
// hold exactly, is kept unchanged in the persona's "native" block for that
// harness, in the file's order (codex's in key order, as its TOML reader
// gives them), so that writing the persona back gives the file again. A
// name that is no persona id gives one in kebab-case and is kept there too.
//
// A persona becomes an agent file per tier (Export): the tier's values in
// the harness's keys, the native block restored, and the sidecar text of
// the harness's channel appended to the prompt after a marker line
// ("<!-- workforce:agentsMd extend -->"), since agent files have no
// sidecars; reading the file splits it off again. What the harness's
// format cannot say is listed, field by field, in Export's Dropped.
//
// Files are written in one canonical layout: keys in a fixed order (the
// harness's documented ones first, then the native block's), values as
// go.yaml.in/yaml/v3 or go-toml write them, one empty line between front
// matter and body. A file in that layout reads and writes back byte for
// byte; any other valid file writes back with the same meaning.
package native

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Agent is a native agent file, in the terms of a persona.
type Agent struct {
	Harness     string
	Name        string
	Description string
	// Model is "inherit" when the file names none.
	Model  string
	Prompt string
	// Sidecar is the persona sidecar text the prompt carried, after the
	// marker line; nil when there was none.
	Sidecar     *Sidecar
	Settings    persona.HarnessSettings
	Permissions persona.Permissions
	MCPServers  map[string]persona.MCPServer
	// Rest is the file's keys that have no persona field, or a value the
	// field cannot hold exactly, in the file's order, as a JSON object.
	Rest json.RawMessage
}

// Sidecar is persona sidecar text carried in a prompt.
type Sidecar struct {
	Channel persona.Channel
	Mode    persona.Mode
	Text    string
}

// ModelInherit is the model of an agent that names none: the harness's
// own default.
const ModelInherit = persona.ModelInherit

// This package's patterns are compiled on first use (sync.OnceValue):
// every command links it, and compiling them at start-up cost each command
// half a millisecond (GODEBUG=inittrace=1).

// sidecarMarker is the line that starts the sidecar text in a prompt.
var sidecarMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^<!-- workforce:(claudeMd|agentsMd)(?: (overwrite|extend))? -->\n`)
})

// splitSidecar splits prompt at its last sidecar marker line; the
// prompt before it loses its final newlines (joinSidecar puts one empty
// line between them).
func splitSidecar(prompt string) (string, *Sidecar) {
	all := sidecarMarker().FindAllStringSubmatchIndex(prompt, -1)
	if len(all) == 0 {
		return prompt, nil
	}
	m := all[len(all)-1]
	if strings.TrimSpace(prompt[m[1]:]) == "" {
		// An empty sidecar is none.
		return strings.TrimRight(prompt[:m[0]], "\n"), nil
	}
	sc := &Sidecar{Channel: persona.Channel(prompt[m[2]:m[3]]), Text: prompt[m[1]:]}
	if m[4] >= 0 {
		sc.Mode = persona.Mode(prompt[m[4]:m[5]])
	}
	return strings.TrimRight(prompt[:m[0]], "\n"), sc
}

// joinSidecar is the prompt carrying sc after a marker line.
func joinSidecar(prompt string, sc *Sidecar) string {
	if sc == nil || sc.Text == "" {
		return prompt
	}
	marker := "<!-- workforce:" + string(sc.Channel)
	if sc.Mode != "" {
		marker += " " + string(sc.Mode)
	}
	marker += " -->\n"
	if prompt = strings.TrimRight(prompt, "\n"); prompt != "" {
		prompt += "\n\n"
	}
	return prompt + marker + sc.Text
}

// Spec is the flat persona a holds. It inherits nothing from a lower
// persona of its id (Inherit false): clear Inherit to lay it over one.
func (a *Agent) Spec() *persona.Spec {
	s := &persona.Spec{
		ID: a.Name, Inherit: new(false), Intent: a.Name, Description: a.Description,
		MCPServers: a.MCPServers,
	}
	s.Harness, s.Model, s.SystemPrompt = a.Harness, a.Model, a.Prompt
	if a.Settings != (persona.HarnessSettings{}) {
		hs := a.Settings
		s.HarnessSettings = &hs
	}
	if p := a.Permissions; len(p.Allow) > 0 || len(p.Deny) > 0 || p.Mode != "" {
		s.Permissions = &p
	}
	if sc := a.Sidecar; sc != nil {
		_, mode, content := s.Sidecars.Fields(sc.Channel)
		*content, *mode = sc.Text, sc.Mode
	}
	if len(a.Rest) > 0 && !bytes.Equal(a.Rest, []byte("{}")) {
		s.Native = &persona.Native{}
		switch a.Harness {
		case persona.HarnessClaude:
			s.Native.Claude = a.Rest
		case persona.HarnessOpencode:
			s.Native.Opencode = a.Rest
		case persona.HarnessCodex:
			s.Native.Codex = a.Rest
		}
	}
	return s
}

// MarshalPersona encodes s as a persona file: two-space indentation, HTML
// left as it is, a final newline.
func MarshalPersona(s *persona.Spec) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Dropped is a persona value an agent file of the harness cannot say.
type Dropped struct {
	Field, Value, Why string
}

func (d Dropped) String() string {
	if d.Value == "" {
		return fmt.Sprintf("%s: %s", d.Field, d.Why)
	}
	return fmt.Sprintf("%s %s: %s", d.Field, d.Value, d.Why)
}

// notKebab are the runs of characters a persona id does not have.
var notKebab = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9]+`) })

// kebabID is the persona id of an agent named name: lower case, every run
// of other characters a hyphen ("Code Reviewer" and opencode's
// "review/deep" give code-reviewer and review-deep); empty when nothing is
// left. The name itself is kept in the native block when it differs.
func kebabID(name string) string {
	return strings.Trim(notKebab().ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// nameValue returns the native block's name, when it holds one.
func nameValue(rest json.RawMessage) (string, bool) { return restValue(rest, "name") }

// restValue returns the string the native block holds for key.
func restValue(rest json.RawMessage, key string) (string, bool) {
	ks, vs, err := keys(rest)
	if err != nil {
		return "", false
	}
	for i, k := range ks {
		var s string
		if k == key && json.Unmarshal(vs[i], &s) == nil {
			return s, true
		}
	}
	return "", false
}

// restValueRaw returns the JSON value the native block holds for key.
func restValueRaw(rest json.RawMessage, key string) (json.RawMessage, bool) {
	ks, vs, err := keys(rest)
	if err != nil {
		return nil, false
	}
	for i, k := range ks {
		if k == key {
			return vs[i], true
		}
	}
	return nil, false
}
