package harness

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestUserMCPServers reads the remote MCP servers of the user's own
// configuration of each harness: HTTP ones only, never a stdio server's
// command, and nothing from a file that cannot be parsed.
func TestUserMCPServers(t *testing.T) {
	tests := []struct {
		name, harness string
		files         map[string]string
		env           []string
		want          []string
	}{
		{"claude http and sse, not stdio", "claude", map[string]string{
			".claude.json": `{"mcpServers": {"docs": {"type": "http", "url": "https://mcp.docs.example/mcp"},
				"events": {"type": "sse", "url": "http://127.0.0.1:8808/sse"},
				"local": {"type": "stdio", "command": "npx", "args": ["-y", "x"], "url": "https://not.a.server"}}}`,
		}, nil, []string{"https://mcp.docs.example/mcp", "http://127.0.0.1:8808/sse"}},
		{"claude config dir", "claude", map[string]string{
			".claude.json":     `{"mcpServers": {"a": {"type": "http", "url": "https://home.example"}}}`,
			"cfg/.claude.json": `{"mcpServers": {"b": {"type": "http", "url": "https://dir.example"}}}`,
		}, []string{"CLAUDE_CONFIG_DIR=<home>/cfg"}, []string{"https://dir.example"}},
		{"codex", "codex", map[string]string{
			".codex/config.toml": "[mcp_servers.gh]\nurl = \"https://api.githubcopilot.example/mcp\"\n[mcp_servers.fs]\ncommand = \"fs-server\"\n",
		}, nil, []string{"https://api.githubcopilot.example/mcp"}},
		{"codex damaged", "codex", map[string]string{".codex/config.toml": "[mcp_servers.gh\n"}, nil, nil},
		{"opencode jsonc, remote only", "opencode", map[string]string{
			".config/opencode/opencode.json": `{
				// a comment
				"mcp": {"ctx": {"type": "remote", "url": "https://mcp.ctx.example/v1",},
					"loc": {"type": "local", "command": ["x"]}}}`,
		}, nil, []string{"https://mcp.ctx.example/v1"}},
		{"gemini httpUrl before url", "gemini", map[string]string{
			".gemini/settings.json": `{"mcpServers": {"a": {"httpUrl": "https://a.example/mcp", "url": "https://old.example"},
				"b": {"url": "https://b.example/sse"}, "c": {"command": "c"}, "d": {"url": "file:///etc/passwd"}}}`,
		}, nil, []string{"https://a.example/mcp", "https://b.example/sse"}},
		{"none", "claude", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for rel, content := range tt.files {
				path := filepath.Join(home, rel)
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := []string{"HOME=" + home}
			for _, kv := range tt.env {
				env = append(env, strings.ReplaceAll(kv, "<home>", home))
			}
			var got []string
			for _, e := range UserMCPServers(tt.harness, env) {
				got = append(got, e.Value)
				if e.Origin == "" {
					t.Errorf("%s has no origin", e.Value)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
