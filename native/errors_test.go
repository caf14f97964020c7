package native

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goNames matches what Go's decoders say of Go's types (int64, map[string]
// json.RawMessage, "Go struct field"), which errors must not show.
var goNames = regexp.MustCompile(`\bint64\b|float64|map\[|\[\]|Go (struct|value)|(^|[^.])json: |persona\.MCPServer`)

// TestReadErrors: an agent file the readers refuse gives an error naming
// the file, the line (and column when known), the key, and what is wanted
// in plain words; never Go's types; and invalid UTF-8 anywhere is refused
// at its place instead of being read as U+FFFD.
func TestReadErrors(t *testing.T) {
	tests := []struct {
		name, harness, file, data, want string
	}{
		{"claude body not UTF-8", "claude", "a.md", "---\nname: x\ndescription: d\n---\nbo\xffdy\n", "a.md:5:3: invalid UTF-8: byte 0xff"},
		{"claude front matter not UTF-8", "claude", "a.md", "---\nname: x\ndescription: d\xfe\n---\nbody\n", "a.md:3:15: invalid UTF-8: byte 0xfe"},
		{"opencode body not UTF-8", "opencode", "c.md", "---\ndescription: d\n---\n\xffbody\n", "c.md:4:1: invalid UTF-8: byte 0xff"},
		{"opencode without front matter not UTF-8", "opencode", "c.md", "just \xc3 text\n", "c.md:1:6: invalid UTF-8: byte 0xc3"},
		{"codex string not UTF-8", "codex", "b.toml", "name = \"x\xff\"\ndescription = \"d\"\ndeveloper_instructions = \"x\"\n", "b.toml:1:10: invalid UTF-8: byte 0xff"},
		{"codex comment not UTF-8", "codex", "b.toml", "# \xff\nname = \"x\"\ndescription = \"d\"\ndeveloper_instructions = \"x\"\n", "b.toml:1:3: invalid UTF-8"},
		{"codex name an integer", "codex", "b.toml", "name = 5\ndescription = \"d\"\ndeveloper_instructions = \"x\"\n", "b.toml:1: name: want a string (text in quotes), not an integer"},
		{"codex description a table", "codex", "b.toml", "name = \"x\"\ndeveloper_instructions = \"x\"\n[description]\na = 1\n", "b.toml: description: want a string (text in quotes), not a table"},
		{"codex prompt an array", "codex", "b.toml", "name = \"x\"\ndescription = \"d\"\ndeveloper_instructions = [\"x\"]\n", "b.toml:3: developer_instructions: want a string (text in quotes), not an array"},
		{"codex description a date", "codex", "b.toml", "name = \"x\"\ndescription = 1979-05-27\ndeveloper_instructions = \"x\"\n", "b.toml:2: description: want a string (text in quotes), not a date or time"},
		{"codex nan", "codex", "b.toml", "name = \"x\"\ndescription = \"d\"\ndeveloper_instructions = \"x\"\ntemperature = nan\n", "b.toml:4: temperature: holds a value a persona file cannot"},
		{"codex TOML syntax", "codex", "b.toml", "name = \"x\ndescription = \"d\"\n", "b.toml:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, tt.file)
			if err := os.WriteFile(file, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Source{Path: file, Harness: tt.harness, Name: "c"}.Read()
			if err == nil {
				t.Fatalf("Read() = nil error, want %q", tt.want)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.Contains(msg, tt.want) {
				t.Errorf("Read() error = %q, want %q", msg, tt.want)
			}
			if goNames.MatchString(msg) {
				t.Errorf("Read() error = %q, names Go's types", msg)
			}
		})
	}
}

// TestOpencodeConfigErrors: the agent map of an opencode configuration
// reports a value of the wrong kind at its place, by its path in the file.
func TestOpencodeConfigErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"not an object", `[1]`, "opencode.json:1:1: must be an object, not array"},
		{"agent a list", `{"agent": [1]}`, "opencode.json:1:11: agent: must be an object of agents by name"},
		{"agent entry a number", `{"agent": {"x": 5}}`, "opencode.json: agent.x: want an object"},
		{"description a number", "{\"agent\": {\"x\":\n {\"description\": 5}}}", "opencode.json:2:18: agent.x.description: want a string"},
		{"prompt not UTF-8", "{\"agent\": {\"x\": {\"description\": \"d\", \"prompt\": \"p\xff\"}}}", "opencode.json:1:50: invalid UTF-8: byte 0xff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "opencode.json")
			if err := os.WriteFile(file, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			var err error
			if _, err = Find(dir, ""); err == nil {
				_, err = Source{Path: file, Harness: "opencode", Name: "x", Config: true}.Read()
			}
			if err == nil {
				t.Fatalf("Find and Read = nil error, want %q", tt.want)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error = %q, want %q", msg, tt.want)
			}
			if goNames.MatchString(msg) {
				t.Errorf("error = %q, names Go's types", msg)
			}
		})
	}
}

// TestPluginServersErrors: a plugin's .mcp.json of the wrong shape is
// reported at its place, by the file's own names.
func TestPluginServersErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"command a number", `{"mcpServers": {"s": {"command": 5}}}`, ".mcp.json:1:34: mcpServers.s.command: must be a string, not number"},
		{"flat args a string", `{"s": {"command": "x", "args": "a"}}`, ".mcp.json:1:32: s.args: must be a list, not string"},
		{"not UTF-8", "{\"s\": {\"command\": \"\xff\"}}", ".mcp.json:1:20: invalid UTF-8"},
		{"malformed", `{"s": `, ".mcp.json:1:6: invalid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := pluginServers(dir)
			if err == nil {
				t.Fatalf("pluginServers() = nil error, want %q", tt.want)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.Contains(msg, tt.want) {
				t.Errorf("pluginServers() error = %q, want %q", msg, tt.want)
			}
			if goNames.MatchString(msg) {
				t.Errorf("pluginServers() error = %q, names Go's types", msg)
			}
		})
	}
}
