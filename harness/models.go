package harness

import (
	"fmt"
	"path/filepath"
	"strings"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Which models each harness can reach. A model is named as the persona's
// tier or --model names it: bare (claude-opus-4-5, gpt-5-mini, opus) or
// with its provider (anthropic/claude-opus-4-5, openai/gpt-5-mini).
// ModelVendor tells the vendor from the provider when one is named, else
// from the start of the name (modelVendors); a name neither says is of no
// known vendor (a gateway's alias, a Bedrock inference profile, a local
// model) and is left to the harness. CheckModel refuses a model of a
// known vendor the harness cannot reach: claude reaches Anthropic's,
// codex OpenAI's, gemini Google's, opencode any provider's; a harness the
// user pointed at a provider of their own (OwnProvider) reaches any.

// The vendors of models.
const (
	VendorAnthropic = "Anthropic"
	VendorOpenAI    = "OpenAI"
	VendorGoogle    = "Google"
)

// modelVendors are the vendors of bare model names, by the start of the
// name (case-insensitive). A prefix ending in '-' matches any name it
// starts; another (an alias, a model family) matches the name itself or
// the name followed by '-' or '[' (sonnet[1m], o3-mini).
var modelVendors = []struct{ prefix, vendor string }{
	{"claude-", VendorAnthropic}, {"opus", VendorAnthropic}, {"sonnet", VendorAnthropic}, {"haiku", VendorAnthropic},
	{"opusplan", VendorAnthropic},
	{"gpt-", VendorOpenAI}, {"chatgpt-", VendorOpenAI}, {"codex-", VendorOpenAI},
	{"o1", VendorOpenAI}, {"o3", VendorOpenAI}, {"o4", VendorOpenAI},
	{"gemini-", VendorGoogle},
}

// providerVendors are the vendors of the providers a model may be named
// with (PROVIDER/MODEL, as opencode names them).
var providerVendors = map[string]string{
	"anthropic": VendorAnthropic,
	"openai":    VendorOpenAI,
	"google":    VendorGoogle, "google-vertex": VendorGoogle,
}

// harnessVendors are the vendor each harness reaches without a provider
// of the user's own, and how its models are named; opencode's is none:
// it reaches every provider.
var harnessVendors = map[string]struct{ vendor, takes string }{
	persona.HarnessClaude: {VendorAnthropic, "Anthropic models (claude-*, or the aliases opus, sonnet, haiku)"},
	persona.HarnessCodex:  {VendorOpenAI, "OpenAI models (gpt-*, o1, o3, o4-*, codex-*) unless its config.toml names a model provider of your own (model_provider, model_providers)"},
	persona.HarnessGemini: {VendorGoogle, "Gemini models (gemini-*)"},
}

// VendorHarness is the harness that reaches the models of vendor besides
// opencode, which reaches all: claude for Anthropic's, codex for
// OpenAI's, gemini for Google's; "" for another vendor.
func VendorHarness(vendor string) string {
	for _, h := range persona.Harnesses {
		if v, ok := harnessVendors[h]; ok && v.vendor == vendor {
			return h
		}
	}
	return ""
}

// ModelVendor returns the vendor of model and the provider it names
// (PROVIDER/MODEL; "" when none). A provider of providerVendors decides
// the vendor; with another (openrouter, ollama, openai-codex) and for a
// bare name, the model's own name (after the last '/') is classified by
// modelVendors. "" is a name no table knows, and persona.ModelInherit,
// which names no model.
func ModelVendor(model string) (vendor, provider string) {
	if p, rest, ok := strings.Cut(model, "/"); ok && isProviderName(p) {
		if v, ok := providerVendors[strings.ToLower(p)]; ok {
			return v, p
		}
		// Another provider (openai-codex, openrouter/anthropic): the
		// vendor of the model's own name, which codex and gemini take
		// without the provider.
		v, _ := ModelVendor(rest[strings.LastIndexByte(rest, '/')+1:])
		return v, p
	}
	if model == persona.ModelInherit {
		return "", ""
	}
	name := strings.ToLower(model)
	for _, mv := range modelVendors {
		if !strings.HasPrefix(name, mv.prefix) {
			continue
		}
		if strings.HasSuffix(mv.prefix, "-") {
			return mv.vendor, ""
		}
		if rest := name[len(mv.prefix):]; rest == "" || rest[0] == '-' || rest[0] == '[' {
			return mv.vendor, ""
		}
	}
	return "", ""
}

// isProviderName reports whether p, what comes before the first '/' of a
// model's name, names a provider: letters, digits, '-', '_' and '.'
// (not a Bedrock ARN's "arn:aws:bedrock:...").
func isProviderName(p string) bool {
	if p == "" {
		return false
	}
	for _, c := range p {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ModelError is a model a harness cannot reach: its vendor is not the
// harness's.
type ModelError struct {
	Model, Harness, Vendor string
}

func (e *ModelError) Error() string {
	whose := e.Vendor + " model"
	return fmt.Sprintf("model %s is a%s %s, which %s cannot reach: %s takes %s",
		e.Model, article(whose), whose, e.Harness, e.Harness, harnessVendors[e.Harness].takes)
}

// article is "n" before a word that starts with a vowel.
func article(s string) string {
	if s != "" && strings.ContainsRune("AEIOUaeiou", rune(s[0])) {
		return "n"
	}
	return ""
}

// Runs returns the harnesses that can run the model: the one of its
// vendor, and opencode.
func (e *ModelError) Runs() []string {
	return []string{VendorHarness(e.Vendor), persona.HarnessOpencode}
}

// CheckModel refuses model on harness h with a *ModelError when its
// vendor is another than the one h reaches: a Claude model on codex, a
// GPT on claude. An empty model,
// persona.ModelInherit and a name of no known vendor pass, and so does
// every model on opencode and on a harness the user pointed at a provider
// of their own (OwnProvider, in the environment env with the harness
// arguments extra).
func CheckModel(h, model string, env, extra []string) error {
	hv, ok := harnessVendors[h]
	if !ok || model == "" || model == persona.ModelInherit {
		return nil
	}
	vendor, _ := ModelVendor(model)
	if vendor == hv.vendor || vendor == "" {
		return nil
	}
	if own, _ := OwnProvider(h, env, extra); own {
		return nil
	}
	return &ModelError{Model: model, Harness: h, Vendor: vendor}
}

// OwnProvider reports whether the user pointed harness h at a model
// provider of their own, which may serve any model, and where: for
// claude ANTHROPIC_BASE_URL (in env or the env of ~/.claude/settings.json);
// for codex OPENAI_BASE_URL, --oss or -c model_provider=... among the
// harness arguments extra, or in its config.toml model_provider (but
// "openai"), model_providers, a profile's model_provider or
// openai_base_url; for gemini GOOGLE_GEMINI_BASE_URL. A configuration
// that cannot be read is no provider (the run says so elsewhere).
func OwnProvider(h string, env, extra []string) (bool, string) {
	get := envLookup(env)
	switch h {
	case persona.HarnessClaude:
		if get("ANTHROPIC_BASE_URL") != "" {
			return true, "ANTHROPIC_BASE_URL"
		}
		if p, err := ReadUserPolicy(h, env); err == nil && len(p.BaseURLs) > 0 {
			return true, p.BaseURLs[0].Origin
		}
	case persona.HarnessCodex:
		if get("OPENAI_BASE_URL") != "" {
			return true, "OPENAI_BASE_URL"
		}
		for _, a := range extra {
			if a == "--oss" || strings.Contains(a, "model_provider") {
				return true, "the harness argument " + a
			}
		}
		return codexOwnProvider(filepath.Join(codexHome(env), "config.toml"))
	case persona.HarnessGemini:
		if get("GOOGLE_GEMINI_BASE_URL") != "" {
			return true, "GOOGLE_GEMINI_BASE_URL"
		}
	}
	return false, ""
}

// codexOwnProvider reports whether codex's config.toml at path names a
// model provider other than OpenAI's, and which key.
func codexOwnProvider(path string) (bool, string) {
	data, err := readOptional(path)
	if err != nil || data == nil {
		return false, ""
	}
	var c struct {
		ModelProvider  string         `toml:"model_provider"`
		ModelProviders map[string]any `toml:"model_providers"`
		OpenAIBaseURL  string         `toml:"openai_base_url"`
		Profiles       map[string]struct {
			ModelProvider string `toml:"model_provider"`
		} `toml:"profiles"`
	}
	if toml.Unmarshal(data, &c) != nil {
		return false, ""
	}
	switch {
	case c.ModelProvider != "" && c.ModelProvider != "openai":
		return true, path + " model_provider"
	case len(c.ModelProviders) > 0:
		return true, path + " model_providers"
	case c.OpenAIBaseURL != "":
		return true, path + " openai_base_url"
	}
	for name, p := range c.Profiles {
		if p.ModelProvider != "" && p.ModelProvider != "openai" {
			return true, path + " profiles." + name + ".model_provider"
		}
	}
	return false, ""
}
