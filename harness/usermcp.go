package harness

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"path/filepath"
	"slices"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/tailscale/hujson"
)

// The remote MCP servers the user configured. A harness that starts an
// MCP server of the user's own configuration over HTTP (streamable HTTP
// or SSE) reaches its host: the issue's "hosts of remote MCP servers the
// user configured" are always allowed in a confined run, like the
// harness's own API. Only the user's own files count (never the
// project's .mcp.json, .codex/config.toml, opencode.json or
// .gemini/settings.json, nor a persona's mcpServers: those can be the
// agent's). Where each harness keeps them (measured with claude 2.1.330,
// codex 0.169.0, opencode 1.18.33, gemini 0.61.0):
//
//   - claude: mcpServers.NAME.url of the user's ~/.claude.json
//     ($CLAUDE_CONFIG_DIR/.claude.json when set), type "http" or "sse";
//   - codex: mcp_servers.NAME.url of $CODEX_HOME/config.toml;
//   - opencode: mcp.NAME.url of a "remote" server in $OPENCODE_CONFIG and
//     the user's opencode.json / config.json (JSONC);
//   - gemini: mcpServers.NAME.httpUrl or .url of
//     $GEMINI_CLI_HOME/.gemini/settings.json (else ~/.gemini/).
//
// A file that is missing or cannot be parsed gives none: the harness says
// what is wrong with its own configuration.

// UserMCPServers returns the URLs of the remote MCP servers the user's own
// configuration of harness h names, in environment env, each with the
// file and key it came from. Only http and https URLs with a host are
// returned.
func UserMCPServers(h string, env []string) []PolicyEntry {
	get := envLookup(env)
	home := get("HOME")
	var out []PolicyEntry
	add := func(u, origin string) {
		if p, err := url.Parse(u); err == nil && p.Host != "" && (p.Scheme == "http" || p.Scheme == "https") {
			out = append(out, PolicyEntry{Value: u, Origin: origin})
		}
	}
	type jsonServer struct {
		Type    string `json:"type"`
		URL     string `json:"url"`
		HTTPURL string `json:"httpUrl"`
	}
	readJSON := func(path string, v any) bool {
		data, err := readOptional(path)
		if err != nil || data == nil {
			return false
		}
		std, err := hujson.Standardize(data)
		return err == nil && json.Unmarshal(std, v) == nil
	}
	switch h {
	case persona.HarnessClaude:
		path := filepath.Join(home, ".claude.json")
		if dir := get("CLAUDE_CONFIG_DIR"); filepath.IsAbs(dir) {
			path = filepath.Join(dir, ".claude.json")
		} else if home == "" {
			return nil
		}
		var c struct {
			MCPServers map[string]jsonServer `json:"mcpServers"`
		}
		if readJSON(path, &c) {
			for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
				if s := c.MCPServers[name]; s.Type == "http" || s.Type == "sse" {
					add(s.URL, fmt.Sprintf("%s mcpServers.%s.url", path, name))
				}
			}
		}
	case persona.HarnessCodex:
		path := filepath.Join(codexHome(env), "config.toml")
		data, err := readOptional(path)
		if err != nil || data == nil {
			return nil
		}
		var c struct {
			MCPServers map[string]struct {
				URL string `toml:"url"`
			} `toml:"mcp_servers"`
		}
		if toml.Unmarshal(data, &c) != nil {
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
			add(c.MCPServers[name].URL, fmt.Sprintf("%s mcp_servers.%s.url", path, name))
		}
	case persona.HarnessOpencode:
		for _, path := range opencodeUserConfigs(get) {
			var c struct {
				MCP map[string]jsonServer `json:"mcp"`
			}
			if !readJSON(path, &c) {
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(c.MCP)) {
				if s := c.MCP[name]; s.Type == "remote" {
					add(s.URL, fmt.Sprintf("%s mcp.%s.url", path, name))
				}
			}
		}
	case persona.HarnessGemini:
		base := get("GEMINI_CLI_HOME")
		if base == "" {
			if base = home; base == "" {
				return nil
			}
		}
		path := filepath.Join(base, ".gemini", "settings.json")
		var c struct {
			MCPServers map[string]jsonServer `json:"mcpServers"`
		}
		if readJSON(path, &c) {
			for _, name := range slices.Sorted(maps.Keys(c.MCPServers)) {
				s := c.MCPServers[name]
				if s.HTTPURL != "" {
					add(s.HTTPURL, fmt.Sprintf("%s mcpServers.%s.httpUrl", path, name))
				} else {
					add(s.URL, fmt.Sprintf("%s mcpServers.%s.url", path, name))
				}
			}
		}
	}
	return out
}

// opencodeUserConfigs are the user's own opencode configuration files:
// $OPENCODE_CONFIG, then opencode.json, config.json and opencode.jsonc of
// the user's configuration directory.
func opencodeUserConfigs(get func(string) string) []string {
	var paths []string
	if p := get("OPENCODE_CONFIG"); p != "" {
		paths = append(paths, p)
	}
	cfg := get("XDG_CONFIG_HOME")
	if cfg == "" && get("HOME") != "" {
		cfg = filepath.Join(get("HOME"), ".config")
	}
	if cfg != "" {
		paths = append(paths, filepath.Join(cfg, "opencode", "opencode.json"), filepath.Join(cfg, "opencode", "config.json"), filepath.Join(cfg, "opencode", "opencode.jsonc"))
	}
	return paths
}
