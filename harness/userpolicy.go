package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/tailscale/hujson"

	"github.com/seed-3bc194a6/workforce/persona"
)

// The user's own harness policies. A harness run through workforce gets
// workforce's sandbox instead of its own (Landlock cannot nest in
// bubblewrap, and the harness's network sandbox would stand in the
// proxy's way), so what the user told the harness to deny would be lost:
// Claude Code's sandbox settings (sandbox.filesystem.denyRead,
// sandbox.network.allowedDomains in ~/.claude/settings.json) and the
// codex permission profile the user selected (default_permissions, its
// filesystem entries "none" and its network domains "allow" in
// ~/.codex/config.toml). UserPolicy reads them from the user's own
// configuration (never the project's: a project file can be the agent's)
// so that the run's policy adds them: the denied reads to its read
// rules, the allowed domains to its allow list. What cannot be carried
// (a glob, a path relative to the project, a special path of codex's) is
// left out with a note saying so.

// PolicyEntry is one entry of a user's harness policy, with where it came
// from (the file and the key).
type PolicyEntry struct {
	Value  string `json:"value"`
	Origin string `json:"origin"`
}

// UserPolicy is what the user's own configuration of harness h says of
// reads and the network.
type UserPolicy struct {
	// DenyRead are absolute paths the user's harness configuration
	// denies reading.
	DenyRead []PolicyEntry `json:"denyRead,omitempty"`
	// AllowHosts are host names (or *.suffix patterns) the user's
	// configuration lets the harness's commands reach.
	AllowHosts []PolicyEntry `json:"allowHosts,omitempty"`
	// BaseURLs are the base URLs of model providers the user's own
	// configuration of the harness names (codex's model_providers,
	// opencode's provider options, Claude Code's settings env): their
	// hosts are the harness's own API, always allowed.
	BaseURLs []PolicyEntry `json:"baseURLs,omitempty"`
	// Notes say what was left out, and why.
	Notes []string `json:"notes,omitempty"`
}

// ReadUserPolicy reads the policy the user's own configuration of
// harness h gives, in environment env (HOME, CLAUDE_CONFIG_DIR,
// CODEX_HOME): Claude Code's user settings for claude, the selected
// permission profile of codex's config.toml for codex; nothing for the
// others. A missing file is no policy; a file that cannot be parsed is an
// error naming it.
func ReadUserPolicy(h string, env []string) (UserPolicy, error) {
	get := envLookup(env)
	home := get("HOME")
	switch h {
	case persona.HarnessClaude:
		dir := get("CLAUDE_CONFIG_DIR")
		if dir == "" {
			if home == "" {
				return UserPolicy{}, nil
			}
			dir = filepath.Join(home, ".claude")
		}
		return claudeUserPolicy(filepath.Join(dir, "settings.json"), home)
	case persona.HarnessCodex:
		return codexUserPolicy(filepath.Join(codexHome(env), "config.toml"), home)
	case persona.HarnessOpencode:
		var p UserPolicy
		for _, path := range opencodeUserConfigs(get) {
			data, err := readOptional(path)
			if err != nil || data == nil {
				continue
			}
			var c struct {
				Provider map[string]struct {
					Options struct {
						BaseURL string `json:"baseURL"`
					} `json:"options"`
				} `json:"provider"`
			}
			if std, err := hujson.Standardize(data); err != nil || json.Unmarshal(std, &c) != nil {
				// Damaged: opencode says so itself.
				continue
			}
			for _, name := range slices.Sorted(maps.Keys(c.Provider)) {
				if u := c.Provider[name].Options.BaseURL; u != "" {
					p.BaseURLs = append(p.BaseURLs, PolicyEntry{Value: u, Origin: fmt.Sprintf("%s provider.%s.options.baseURL", path, name)})
				}
			}
		}
		return p, nil
	}
	return UserPolicy{}, nil
}

// readOptional reads path; a missing file is nil, nil.
func readOptional(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// claudeUserPolicy reads the sandbox part of Claude Code's user settings
// at path. Claude Code's paths: "//x" is the absolute /x, "~/x" is in the
// home, "/x" is relative to the settings file's directory; other paths
// are relative to the project, and left out.
func claudeUserPolicy(path, home string) (UserPolicy, error) {
	data, err := readOptional(path)
	if err != nil || data == nil {
		return UserPolicy{}, err
	}
	var s struct {
		Env     map[string]string `json:"env"`
		Sandbox struct {
			Filesystem struct {
				DenyRead []string `json:"denyRead"`
			} `json:"filesystem"`
			Network struct {
				AllowedDomains []string `json:"allowedDomains"`
			} `json:"network"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return UserPolicy{}, fmt.Errorf("%s: %w", path, err)
	}
	var p UserPolicy
	if u := s.Env["ANTHROPIC_BASE_URL"]; u != "" {
		p.BaseURLs = append(p.BaseURLs, PolicyEntry{Value: u, Origin: path + " env.ANTHROPIC_BASE_URL"})
	}
	for i, v := range s.Sandbox.Filesystem.DenyRead {
		origin := fmt.Sprintf("%s sandbox.filesystem.denyRead[%d]", path, i)
		var abs string
		switch {
		case hasGlob(v):
		case strings.HasPrefix(v, "//"):
			abs = filepath.Clean(v[1:])
		case strings.HasPrefix(v, "~/") && home != "":
			abs = filepath.Join(home, v[2:])
		case strings.HasPrefix(v, "/"):
			abs = filepath.Join(filepath.Dir(path), v[1:])
		}
		if abs == "" {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: %q left out: only a path (//abs, ~/path, /path) without a pattern can be denied", origin, v))
			continue
		}
		p.DenyRead = append(p.DenyRead, PolicyEntry{Value: abs, Origin: origin})
	}
	for i, v := range s.Sandbox.Network.AllowedDomains {
		p.AllowHosts = append(p.AllowHosts, PolicyEntry{Value: v, Origin: fmt.Sprintf("%s sandbox.network.allowedDomains[%d]", path, i)})
	}
	return p, nil
}

// codexProfile is a codex permission profile as config.toml writes it.
type codexProfile struct {
	Extends    string         `toml:"extends"`
	Filesystem map[string]any `toml:"filesystem"`
	Network    struct {
		Domains map[string]string `toml:"domains"`
	} `toml:"network"`
}

// codexUserPolicy reads the permission profile config.toml at path
// selects (default_permissions), following extends among the user's
// profiles (the built-in ones, ":read-only" and the like, add nothing).
// A filesystem entry "none" denies its path (an absolute or ~ path; a
// special path such as ":project_roots" and a pattern are left out); a
// network domain "allow" is allowed.
func codexUserPolicy(path, home string) (UserPolicy, error) {
	data, err := readOptional(path)
	if err != nil || data == nil {
		return UserPolicy{}, err
	}
	var c struct {
		DefaultPermissions string                  `toml:"default_permissions"`
		Permissions        map[string]codexProfile `toml:"permissions"`
		OpenAIBaseURL      string                  `toml:"openai_base_url"`
		ChatGPTBaseURL     string                  `toml:"chatgpt_base_url"`
		ModelProviders     map[string]struct {
			BaseURL string `toml:"base_url"`
		} `toml:"model_providers"`
	}
	if err := toml.Unmarshal(data, &c); err != nil {
		return UserPolicy{}, fmt.Errorf("%s: %w", path, err)
	}
	var p UserPolicy
	for _, u := range []struct{ v, key string }{{c.OpenAIBaseURL, "openai_base_url"}, {c.ChatGPTBaseURL, "chatgpt_base_url"}} {
		if u.v != "" {
			p.BaseURLs = append(p.BaseURLs, PolicyEntry{Value: u.v, Origin: path + " " + u.key})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.ModelProviders)) {
		if u := c.ModelProviders[name].BaseURL; u != "" {
			p.BaseURLs = append(p.BaseURLs, PolicyEntry{Value: u, Origin: fmt.Sprintf("%s model_providers.%s.base_url", path, name)})
		}
	}
	seen := map[string]bool{}
	for name := c.DefaultPermissions; name != "" && !strings.HasPrefix(name, ":") && !seen[name]; {
		seen[name] = true
		prof, ok := c.Permissions[name]
		if !ok {
			p.Notes = append(p.Notes, fmt.Sprintf("%s: permission profile %q is not defined", path, name))
			break
		}
		origin := fmt.Sprintf("%s permissions.%s", path, name)
		for _, key := range sortedKeys(prof.Filesystem) {
			v, ok := prof.Filesystem[key].(string)
			if !ok || v != "none" {
				if _, nested := prof.Filesystem[key].(map[string]any); nested {
					p.Notes = append(p.Notes, fmt.Sprintf("%s.filesystem: %q left out: entries relative to a special path are not carried", origin, key))
				}
				continue
			}
			var abs string
			switch {
			case hasGlob(key) || strings.HasPrefix(key, ":"):
			case strings.HasPrefix(key, "~/") && home != "":
				abs = filepath.Join(home, key[2:])
			case filepath.IsAbs(key):
				abs = filepath.Clean(key)
			}
			if abs == "" {
				p.Notes = append(p.Notes, fmt.Sprintf("%s.filesystem: %q left out: only an absolute or ~ path without a pattern can be denied", origin, key))
				continue
			}
			p.DenyRead = append(p.DenyRead, PolicyEntry{Value: abs, Origin: origin + ".filesystem"})
		}
		for _, host := range slices.Sorted(maps.Keys(prof.Network.Domains)) {
			if prof.Network.Domains[host] == "allow" {
				p.AllowHosts = append(p.AllowHosts, PolicyEntry{Value: host, Origin: origin + ".network.domains"})
			}
		}
		name = prof.Extends
	}
	return p, nil
}

// hasGlob reports whether s holds a pattern character.
func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[{") }
