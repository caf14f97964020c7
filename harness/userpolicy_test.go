package harness

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReadUserPolicy reads the reads and hosts the user's own harness
// configuration denies and allows, as the run's policy adds them.
func TestReadUserPolicy(t *testing.T) {
	tests := []struct {
		name, harness, file, content string
		deny, hosts                  []string
		notes                        int
		wantErr                      string
	}{
		{name: "claude: no settings", harness: "claude"},
		{name: "claude: sandbox settings", harness: "claude", file: ".claude/settings.json",
			content: `{"sandbox": {"filesystem": {"denyRead": ["~/.secrets", "//etc/shadow", "/local", "**/.env", "rel/path"]},
				"network": {"allowedDomains": ["github.com", "*.npmjs.org"]}}}`,
			deny: []string{"HOME/.secrets", "/etc/shadow", "HOME/.claude/local"}, hosts: []string{"github.com", "*.npmjs.org"}, notes: 2},
		{name: "claude: bad JSON", harness: "claude", file: ".claude/settings.json", content: `{"sandbox": `, wantErr: "settings.json"},
		{name: "codex: no profile selected", harness: "codex", file: ".codex/config.toml", content: "model = \"o4\"\n"},
		{name: "codex: a built-in profile", harness: "codex", file: ".codex/config.toml", content: "default_permissions = \":workspace\"\n"},
		{name: "codex: the selected profile and the one it extends", harness: "codex", file: ".codex/config.toml", content: `
default_permissions = "mine"
[permissions.base.filesystem]
"/srv/private" = "none"
[permissions.base.network.domains]
"pypi.org" = "allow"
[permissions.mine]
extends = "base"
[permissions.mine.filesystem]
"~/.config/secret" = "none"
"/usr" = "read"
"/data/**/key" = "none"
":project_roots" = { "." = "write", "**/.env" = "none" }
[permissions.mine.network.domains]
"api.example.com" = "allow"
"evil.example.com" = "deny"
[permissions.other.filesystem]
"/other" = "none"
`,
			deny: []string{"HOME/.config/secret", "/srv/private"}, hosts: []string{"api.example.com", "pypi.org"}, notes: 2},
		{name: "codex: a profile that is not there", harness: "codex", file: ".codex/config.toml", content: "default_permissions = \"gone\"\n", notes: 1},
		{name: "codex: bad TOML", harness: "codex", file: ".codex/config.toml", content: "default_permissions = \n", wantErr: "config.toml"},
		{name: "opencode: none", harness: "opencode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				path := filepath.Join(home, tt.file)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p, err := ReadUserPolicy(tt.harness, []string{"HOME=" + home})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var deny, hosts []string
			for _, e := range p.DenyRead {
				deny = append(deny, strings.Replace(e.Value, home, "HOME", 1))
				if !strings.Contains(e.Origin, tt.file) {
					t.Errorf("entry %q: origin %q does not name %s", e.Value, e.Origin, tt.file)
				}
			}
			for _, e := range p.AllowHosts {
				hosts = append(hosts, e.Value)
			}
			if !reflect.DeepEqual(deny, tt.deny) || !reflect.DeepEqual(hosts, tt.hosts) || len(p.Notes) != tt.notes {
				t.Errorf("deny %q, hosts %q, notes %q; want %q, %q, %d notes", deny, hosts, p.Notes, tt.deny, tt.hosts, tt.notes)
			}
		})
	}
}

// TestReadUserPolicyBaseURLs reads the model providers' base URLs of the
// user's own harness configuration: their hosts are the harness's own.
func TestReadUserPolicyBaseURLs(t *testing.T) {
	home := t.TempDir()
	write := func(rel, content string) {
		path := filepath.Join(home, rel)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".codex/config.toml", "openai_base_url = \"https://gw.example/v1\"\n[model_providers.mock]\nbase_url = \"http://127.0.0.1:9/v1\"\n")
	write("oc.json", `{"provider": {"mock": {"options": {"baseURL": "http://model.test:8/v1"}}}}`)
	write(".claude/settings.json", `{"env": {"ANTHROPIC_BASE_URL": "https://proxy.corp.example"}}`)
	env := []string{"HOME=" + home, "OPENCODE_CONFIG=" + filepath.Join(home, "oc.json")}
	for h, want := range map[string][]string{
		"codex":    {"https://gw.example/v1", "http://127.0.0.1:9/v1"},
		"opencode": {"http://model.test:8/v1"},
		"claude":   {"https://proxy.corp.example"},
		"gemini":   nil,
	} {
		p, err := ReadUserPolicy(h, env)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range p.BaseURLs {
			got = append(got, e.Value)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: base URLs %q, want %q", h, got, want)
		}
	}
}
