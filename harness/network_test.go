package harness

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

func TestRequiredHosts(t *testing.T) {
	tests := []struct {
		harness, model string
		want           []string
	}{
		{"claude", "claude-opus-4-5", []string{"api.anthropic.com", "claude.ai", "console.anthropic.com", "platform.claude.com"}},
		{"codex", "gpt-5", []string{"api.openai.com", "chatgpt.com", "auth.openai.com"}},
		{"gemini", "gemini-2.5-pro", []string{"generativelanguage.googleapis.com", "oauth2.googleapis.com", "cloudcode-pa.googleapis.com", "accounts.google.com"}},
		{"opencode", "anthropic/claude-sonnet-4-5", []string{"api.anthropic.com"}},
		{"opencode", "openrouter/x/y", []string{"openrouter.ai"}},
		{"opencode", "inherit", nil},
		{"opencode", "unknown/m", nil},
		{"vim", "m", nil},
	}
	for _, tt := range tests {
		if got := RequiredHosts(tt.harness, tt.model); !slices.Equal(got, tt.want) {
			t.Errorf("RequiredHosts(%s, %s) = %q, want %q", tt.harness, tt.model, got, tt.want)
		}
	}
}

// TestNetworkTable: every harness has its facts, each fact says where it
// comes from, every switch stops something, and what the run applies is
// the table's.
func TestNetworkTable(t *testing.T) {
	for _, h := range persona.Harnesses {
		f, ok := NetworkTable[h]
		if !ok || f.Harness != h || f.Proxy == "" || len(f.Hosts) == 0 || len(f.Switches) == 0 {
			t.Errorf("NetworkTable[%s] = %+v: incomplete", h, f)
			continue
		}
		for _, x := range f.Hosts {
			if x.Source != SourceMeasured && x.Source != SourceUpstream || x.Login == "" {
				t.Errorf("%s: host %+v says not where it comes from or for which login", h, x)
			}
		}
		for _, s := range f.Switches {
			if len(s.Env)+len(s.Args)+len(s.Settings) == 0 || len(s.Stops) == 0 || s.Source != SourceMeasured {
				t.Errorf("%s: switch %+v", h, s)
			}
		}
	}
	for _, k := range APIKeys {
		if !persona.IsHarness(k.Harness) || len(k.KeyVars) == 0 || k.BaseURL == "" || k.Host == "" {
			t.Errorf("APIKeys entry %+v: incomplete", k)
		}
		for _, v := range k.KeyVars {
			if slices.Contains(OtherProviderKeys, v) {
				t.Errorf("%s is both a harness's key and another provider's", v)
			}
		}
	}
	if len(ProxyVars) != 6 {
		t.Errorf("ProxyVars = %q, want all six", ProxyVars)
	}
	if doc := NetworkDoc(); !strings.Contains(doc, "OPENCODE_DISABLE_MODELS_FETCH=1") || !strings.Contains(doc, SourceUpstream) {
		t.Errorf("NetworkDoc lacks the table's facts:\n%s", doc)
	}
}
