package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-3bc194a6/workforce/persona"
)

func TestModelVendor(t *testing.T) {
	for _, tc := range []struct{ model, vendor, provider string }{
		{"claude-opus-4-1", VendorAnthropic, ""},
		{"Claude-Sonnet-4-5", VendorAnthropic, ""},
		{"opus", VendorAnthropic, ""},
		{"sonnet[1m]", VendorAnthropic, ""},
		{"haiku", VendorAnthropic, ""},
		{"opusplan", VendorAnthropic, ""},
		{"anthropic/claude-opus-4-5", VendorAnthropic, "anthropic"},
		{"gpt-5-mini", VendorOpenAI, ""},
		{"o3", VendorOpenAI, ""},
		{"o4-mini", VendorOpenAI, ""},
		{"codex-mini-latest", VendorOpenAI, ""},
		{"openai/gpt-5", VendorOpenAI, "openai"},
		{"gemini-2.5-pro", VendorGoogle, ""},
		{"google/gemini-2.5-flash", VendorGoogle, "google"},
		// Another provider: the vendor of the model's own name.
		{"openrouter/anthropic/claude-sonnet-4-5", VendorAnthropic, "openrouter"},
		{"openai-codex/gpt-5.3-codex", VendorOpenAI, "openai-codex"},
		{"ollama/llama3", "", "ollama"},
		// Names no table knows: a family's start without its separator,
		// a Bedrock id and ARN, a local model.
		{"o30-preview", "", ""},
		{"opusculum", "", ""},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "", ""},
		{"arn:aws:bedrock:us-east-1:1:inference-profile/us.anthropic.claude-opus-4-1", "", ""},
		{"llama3", "", ""},
		{persona.ModelInherit, "", ""},
		{"", "", ""},
	} {
		v, p := ModelVendor(tc.model)
		if v != tc.vendor || p != tc.provider {
			t.Errorf("ModelVendor(%q) = %q, %q; want %q, %q", tc.model, v, p, tc.vendor, tc.provider)
		}
	}
}

func TestCheckModel(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home, "PATH=/nowhere"}
	withProvider := t.TempDir()
	if err := os.WriteFile(filepath.Join(withProvider, "config.toml"), []byte("model_provider = \"mock\"\n[model_providers.mock]\nbase_url = \"http://127.0.0.1:9/v1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	openaiProvider := t.TempDir()
	if err := os.WriteFile(filepath.Join(openaiProvider, "config.toml"), []byte("model_provider = \"openai\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, harness, model string
		env, extra           []string
		// refused is "" when the model passes, else what the error says.
		refused string
	}{
		{"claude takes claude-*", persona.HarnessClaude, "claude-opus-4-1", env, nil, ""},
		{"claude takes an alias", persona.HarnessClaude, "opus", env, nil, ""},
		{"claude takes anthropic/", persona.HarnessClaude, "anthropic/claude-opus-4-5", env, nil, ""},
		{"claude refuses a GPT", persona.HarnessClaude, "gpt-5", env, nil, "model gpt-5 is an OpenAI model, which claude cannot reach: claude takes Anthropic models"},
		{"claude takes a router's model of no vendor", persona.HarnessClaude, "openrouter/x/y", env, nil, ""},
		{"claude refuses a router's GPT", persona.HarnessClaude, "openrouter/openai/gpt-5", env, nil, "model openrouter/openai/gpt-5 is an OpenAI model, which claude cannot reach"},
		{"codex takes another provider's GPT", persona.HarnessCodex, "openai-codex/gpt-5.3-codex", env, nil, ""},
		{"claude takes a name of no vendor", persona.HarnessClaude, "us.anthropic.claude-opus-4-1-v1:0", env, nil, ""},
		{"claude takes any with a gateway", persona.HarnessClaude, "gpt-5", append(env, "ANTHROPIC_BASE_URL=http://gw"), nil, ""},
		{"codex refuses a Claude model", persona.HarnessCodex, "claude-opus-4-1", env, nil, "model claude-opus-4-1 is an Anthropic model, which codex cannot reach: codex takes OpenAI models (gpt-*, o1, o3, o4-*, codex-*) unless its config.toml names a model provider of your own"},
		{"codex takes gpt-*", persona.HarnessCodex, "gpt-5-mini", env, nil, ""},
		{"codex takes openai/", persona.HarnessCodex, "openai/o3", env, nil, ""},
		{"codex refuses gemini", persona.HarnessCodex, "gemini-2.5-pro", env, nil, "is a Google model, which codex cannot reach"},
		{"codex with a provider of config.toml", persona.HarnessCodex, "claude-opus-4-1", append(env, "CODEX_HOME="+withProvider), nil, ""},
		{"codex with model_provider openai", persona.HarnessCodex, "claude-opus-4-1", append(env, "CODEX_HOME="+openaiProvider), nil, "is an Anthropic model"},
		{"codex --oss", persona.HarnessCodex, "claude-opus-4-1", env, []string{"--oss"}, ""},
		{"codex -c model_provider", persona.HarnessCodex, "claude-opus-4-1", env, []string{"-c", "model_provider=mock"}, ""},
		{"gemini takes gemini-*", persona.HarnessGemini, "gemini-2.5-pro", env, nil, ""},
		{"gemini refuses a Claude model", persona.HarnessGemini, "sonnet", env, nil, "model sonnet is an Anthropic model, which gemini cannot reach: gemini takes Gemini models"},
		{"opencode takes any", persona.HarnessOpencode, "claude-opus-4-1", env, nil, ""},
		{"opencode takes a router's", persona.HarnessOpencode, "openrouter/x/y", env, nil, ""},
		{"inherit", persona.HarnessCodex, persona.ModelInherit, env, nil, ""},
		{"none", persona.HarnessCodex, "", env, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckModel(tc.harness, tc.model, tc.env, tc.extra)
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("CheckModel(%s, %s) = %v, want nil", tc.harness, tc.model, err)
				}
				return
			}
			var me *ModelError
			if !errors.As(err, &me) {
				t.Fatalf("CheckModel(%s, %s) = %v, want a *ModelError", tc.harness, tc.model, err)
			}
			if !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("error %q does not say %q", err, tc.refused)
			}
			if me.Model != tc.model || me.Harness != tc.harness {
				t.Errorf("error names %s on %s, want %s on %s", me.Model, me.Harness, tc.model, tc.harness)
			}
		})
	}
}

func TestVendorHarness(t *testing.T) {
	for v, h := range map[string]string{VendorAnthropic: persona.HarnessClaude, VendorOpenAI: persona.HarnessCodex, VendorGoogle: persona.HarnessGemini, "": ""} {
		if got := VendorHarness(v); got != h {
			t.Errorf("VendorHarness(%q) = %q, want %q", v, got, h)
		}
	}
}

// FuzzModelVendor checks the classifier on any name: a provider it
// returns is the start of the name before a '/', a vendor is one of the
// three, a bare name's vendor is the one of a prefix in the table, and
// the name's case does not change its vendor.
func FuzzModelVendor(f *testing.F) {
	for _, s := range []string{"claude-opus-4-1", "opus", "sonnet[1m]", "o3-mini", "o30", "gpt-5", "openai/gpt-5", "openrouter/a/b", "arn:aws:x/y", "/x", "inherit", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, model string) {
		vendor, provider := ModelVendor(model)
		switch vendor {
		case "", VendorAnthropic, VendorOpenAI, VendorGoogle:
		default:
			t.Fatalf("ModelVendor(%q) = vendor %q", model, vendor)
		}
		if provider != "" {
			if !strings.HasPrefix(model, provider+"/") || !isProviderName(provider) {
				t.Fatalf("ModelVendor(%q) = provider %q, not the start of the name", model, provider)
			}
			if v, ok := providerVendors[strings.ToLower(provider)]; ok {
				if vendor != v {
					t.Fatalf("ModelVendor(%q) = %q, not the vendor of provider %q", model, vendor, provider)
				}
				return
			}
		}
		if vendor != "" {
			name := strings.ToLower(model[strings.LastIndexByte(model, '/')+1:])
			if provider == "" {
				name = strings.ToLower(model)
			}
			found := false
			for _, mv := range modelVendors {
				found = found || mv.vendor == vendor && strings.HasPrefix(name, mv.prefix)
			}
			if !found {
				t.Fatalf("ModelVendor(%q) = %q, which no prefix of %q's gives", model, vendor, vendor)
			}
		}
		// (ASCII only: upper-casing some other letters changes their
		// lower case.)
		if ascii := strings.IndexFunc(model, func(r rune) bool { return r >= utf8.RuneSelf }) < 0; ascii {
			if v, _ := ModelVendor(strings.ToUpper(model)); v != vendor {
				t.Fatalf("ModelVendor(%q) = %q, but %q for its upper case", model, vendor, v)
			}
		}
		// Every harness takes a model of its own vendor.
		if h := VendorHarness(vendor); h != "" {
			if err := CheckModel(h, model, nil, nil); err != nil && model != persona.ModelInherit {
				t.Fatalf("CheckModel(%s, %q) = %v, for a model of its own vendor", h, model, err)
			}
		}
	})
}
