package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Network facts: what each harness needs of the network, as data (issue
// 41). The versions are those of Measured. Where a fact comes from says
// its Source:
//
//   - SourceMeasured: measured for issue 41 on Linux 6.18, unprivileged,
//     each harness completing a scripted-model turn in a private network
//     namespace whose only way out was a proxy that recorded every
//     attempted connection (the table: the proxy variables each
//     honours, the hosts it contacts besides its model, and the switch
//     that stops them).
//   - SourceUpstream: documented by the harness's vendor or read in its
//     source, not measured here: a host of a login type the measurement
//     did not use (it ran with fake credentials and a scripted model).
//
// A run in a sandbox gets every Switch (they cost nothing and leak less),
// and all six ProxyVars whatever a harness honours: with the proxy no
// harness resolved a name itself.

// Fact sources.
const (
	SourceMeasured = "measured"
	SourceUpstream = "upstream, not measured"
)

// Login types: how a harness authenticates.
const (
	LoginAPIKey       = "API key"
	LoginClaude       = "Claude subscription"
	LoginChatGPT      = "ChatGPT login"
	LoginGoogle       = "Google login"
	LoginProviderKeys = "the model's provider (API key)"
)

// ProxyVars are the proxy variables a confined run sets, all six.
var ProxyVars = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"}

// NetHost is a host a harness must reach: for which login, and where the
// fact comes from.
type NetHost struct {
	Host, Login, Source string
}

// NetSwitch is what stops traffic a harness makes besides its model's:
// an environment variable, arguments, or a setting of its per-session
// settings file; Stops names the hosts it stops (measured).
type NetSwitch struct {
	Env      []string
	Args     []string
	Settings []string // dotted keys set to false in settings.json
	Stops    []string
	Source   string
}

// NetworkFacts are one harness's network facts, at Measured's version.
type NetworkFacts struct {
	Harness string
	// Proxy says which proxy variables it honours (measured).
	Proxy string
	// Hosts are the hosts it must reach, per login type.
	Hosts []NetHost
	// Switches stop its other traffic.
	Switches []NetSwitch
	// Unswitched are hosts it contacts that no switch stops, and what
	// a refusal does.
	Unswitched []string
}

// NetworkTable is the network facts of each harness.
var NetworkTable = map[string]NetworkFacts{
	persona.HarnessClaude: {
		Harness: persona.HarnessClaude,
		Proxy:   "any of the six",
		Hosts: []NetHost{
			{"api.anthropic.com", LoginAPIKey, SourceMeasured},
			{"api.anthropic.com", LoginClaude, SourceUpstream},
			{"claude.ai", LoginClaude, SourceUpstream},
			{"console.anthropic.com", LoginClaude, SourceUpstream},
			{"platform.claude.com", LoginClaude, SourceUpstream},
		},
		Switches: []NetSwitch{{Env: []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"},
			Stops: []string{"everything but api.anthropic.com (telemetry, error reports, updates)"}, Source: SourceMeasured}},
	},
	persona.HarnessCodex: {
		Harness: persona.HarnessCodex,
		Proxy:   "HTTPS_PROXY/https_proxy for https, HTTP_PROXY/http_proxy for http, ALL_PROXY for both",
		Hosts: []NetHost{
			{"api.openai.com", LoginAPIKey, SourceUpstream},
			{"chatgpt.com", LoginChatGPT, SourceUpstream},
			{"auth.openai.com", LoginChatGPT, SourceUpstream},
		},
		Switches: []NetSwitch{
			{Args: []string{"-c", "features.plugins=false"}, Stops: []string{"github.com", "api.github.com"}, Source: SourceMeasured},
			{Args: []string{"-c", "analytics.enabled=false"}, Stops: []string{"chatgpt.com", "ab.chatgpt.com"}, Source: SourceMeasured},
		},
	},
	persona.HarnessOpencode: {
		Harness: persona.HarnessOpencode,
		Proxy:   "by scheme (HTTPS_PROXY, HTTP_PROXY and their lower-case forms); ALL_PROXY ignored",
		Hosts: []NetHost{
			{"the API host of the model's provider (OpencodeProviders, below)", LoginProviderKeys, SourceUpstream},
		},
		Switches:   []NetSwitch{{Env: []string{"OPENCODE_DISABLE_MODELS_FETCH=1"}, Stops: []string{"models.opencode.ai"}, Source: SourceMeasured}},
		Unswitched: []string{"registry.npmjs.org, for @opencode-ai/plugin: no switch found; a refusal (403) only logs a warning (measured)"},
	},
	persona.HarnessGemini: {
		Harness: persona.HarnessGemini,
		Proxy:   "the first of HTTPS_PROXY, https_proxy, HTTP_PROXY, http_proxy, for everything",
		Hosts: []NetHost{
			{"generativelanguage.googleapis.com", LoginAPIKey, SourceUpstream},
			{"oauth2.googleapis.com", LoginGoogle, SourceUpstream},
			{"cloudcode-pa.googleapis.com", LoginGoogle, SourceUpstream},
			{"accounts.google.com", LoginGoogle, SourceUpstream},
		},
		Switches: []NetSwitch{{Settings: []string{"privacy.usageStatisticsEnabled"}, Stops: []string{"play.googleapis.com"}, Source: SourceMeasured}},
	},
}

// OpencodeProviders are the API hosts of opencode's providers, by the
// provider part of a model ("anthropic/claude-sonnet-4-5"): opencode is
// multi-provider, and the persona's model decides which it reaches
// (upstream: the providers' documented endpoints, as models.dev lists
// them; not measured).
var OpencodeProviders = map[string]string{
	"anthropic":  "api.anthropic.com",
	"openai":     "api.openai.com",
	"google":     "generativelanguage.googleapis.com",
	"openrouter": "openrouter.ai",
	"groq":       "api.groq.com",
	"mistral":    "api.mistral.ai",
	"xai":        "api.x.ai",
	"deepseek":   "api.deepseek.com",
	"opencode":   "opencode.ai",
}

// APIKey is how a harness takes a provider's API key and its base URL:
// what brokering a key replaces (the harness gets a placeholder key and a
// base URL pointing at workforce's proxy).
type APIKey struct {
	// Provider is the harness's name of the provider (opencode's
	// provider id); Broker the proxy's (egress.Providers).
	Harness, Provider, Broker string
	// KeyVars are the variables holding the key, in the order the
	// harness reads them.
	KeyVars []string
	// BaseURL is how the harness takes another base URL: a variable, or
	// a configuration key.
	BaseURL string
	// BasePath is what the harness's base URL holds past the API's root:
	// the path its client appends its requests' to ("/v1": it sends
	// BASE/messages for /v1/messages). A base URL of the user's own is
	// the broker's upstream with BasePath taken off its end.
	BasePath string
	Host     string
	Source   string
}

// APIKeys are the API keys each harness takes from the environment
// (and, for codex and opencode, from their login files: SeededKeys).
// Measured with codex 0.169.0 (and 0.171.0, make e2e) and opencode 1.18.33 against a recording
// server at the base URL: codex exec sends CODEX_API_KEY, else auth.json's
// OPENAI_API_KEY, as "Authorization: Bearer" to BASE/responses (first a
// websocket GET there, refused by the broker, then the POST), and ignores
// OPENAI_API_KEY and OPENAI_BASE_URL of the environment; opencode's
// anthropic provider sends x-api-key to BASE/messages, openai
// Authorization: Bearer to BASE/responses, google x-goog-api-key to
// BASE/models/MODEL:streamGenerateContent, each from the variable or
// auth.json's "api" entry, and ignores GEMINI_API_KEY. The variables a
// harness ignores are brokered all the same: a placeholder costs nothing,
// and the real key stays out.
var APIKeys = []APIKey{
	{persona.HarnessClaude, "anthropic", "anthropic", []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"}, "ANTHROPIC_BASE_URL", "", "api.anthropic.com", SourceUpstream},
	{persona.HarnessCodex, "openai", "openai", []string{"CODEX_API_KEY", "OPENAI_API_KEY"}, `-c openai_base_url="URL" (the built-in provider; or -c model_providers.ID.base_url for a provider of its own); OPENAI_BASE_URL ignored`, "/v1", "api.openai.com", SourceMeasured},
	{persona.HarnessOpencode, "anthropic", "anthropic", []string{"ANTHROPIC_API_KEY"}, `provider.anthropic.options.baseURL in its configuration`, "/v1", "api.anthropic.com", SourceMeasured},
	{persona.HarnessOpencode, "openai", "openai", []string{"OPENAI_API_KEY"}, `provider.openai.options.baseURL in its configuration`, "/v1", "api.openai.com", SourceMeasured},
	{persona.HarnessOpencode, "google", "gemini", []string{"GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"}, `provider.google.options.baseURL in its configuration`, "/v1beta", "generativelanguage.googleapis.com", SourceMeasured},
	{persona.HarnessGemini, "google", "gemini", []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, "GOOGLE_GEMINI_BASE_URL", "", "generativelanguage.googleapis.com", SourceUpstream},
}

// APIKeyOf returns the row of APIKeys of harness h and provider p.
func APIKeyOf(h, p string) (APIKey, bool) {
	for _, k := range APIKeys {
		if k.Harness == h && k.Provider == p {
			return k, true
		}
	}
	return APIKey{}, false
}

// OtherProviderKeys are the API keys of providers workforce knows besides
// those APIKeys lists: a confined run in namespaces gets none of them,
// nor a variable of APIKeys its harness's rows do not broker (claude's run
// gets no OPENAI_API_KEY).
var OtherProviderKeys = []string{
	"XAI_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY",
	"AZURE_OPENAI_API_KEY", "AZURE_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY", "CEREBRAS_API_KEY",
	"PERPLEXITY_API_KEY", "COHERE_API_KEY", "HF_TOKEN", "HUGGINGFACE_API_KEY", "VERCEL_API_KEY",
	"AWS_BEARER_TOKEN_BEDROCK", "VERTEX_API_KEY",
}

// ProviderKeyVar reports whether k names a provider's API key workforce
// knows: a variable of APIKeys or of OtherProviderKeys.
func ProviderKeyVar(k string) bool {
	if slices.Contains(OtherProviderKeys, k) {
		return true
	}
	for _, ak := range APIKeys {
		if slices.Contains(ak.KeyVars, k) {
			return true
		}
	}
	return false
}

// AgentSocketVars are variables naming the sockets of the user's agents
// and daemons (ssh-agent, gpg-agent, docker, podman, the D-Bus buses, the
// keyring, the terminal multiplexer the user works in): a pathname Unix
// socket stays reachable inside the namespaces, so a confined run does not
// get them (the mount namespace hides the directories that hold most).
var AgentSocketVars = []string{
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DOCKER_HOST", "CONTAINER_HOST",
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "GNOME_KEYRING_CONTROL", "TMUX", "STY",
}

// dropAgentSockets returns env without AgentSocketVars, and the names it
// dropped.
func dropAgentSockets(env []string) ([]string, []string) {
	var dropped []string
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(AgentSocketVars, k) {
			dropped = append(dropped, k)
			return true
		}
		return false
	})
	return out, dropped
}

// networkSwitches returns the switches of harness h: the variables to
// set, the arguments to add, the settings to set false.
func networkSwitches(h string) (env, args, settings []string) {
	for _, s := range NetworkTable[h].Switches {
		env = append(env, s.Env...)
		args = append(args, s.Args...)
		settings = append(settings, s.Settings...)
	}
	return env, args, settings
}

// NetworkDoc renders the network facts for docs/harnesses.md: per
// harness, the proxy variables it honours, the hosts it must reach per
// login type, the switches a run in a sandbox applies, and where each
// fact comes from; then the API keys and the other provider keys.
func NetworkDoc() string {
	var b strings.Builder
	b.WriteString(`
## The network

A confined run reaches the network only through workforce's proxy (docs/sandbox.md). These are the facts the run
and the proxy use, per harness: the proxy variables it honours (a run sets all six: ` + "`" + strings.Join(ProxyVars, "`, `") + "`" + `), the hosts
it must reach for each login type (always allowed), and the switches every run in a sandbox applies to stop the
harness's other traffic (telemetry, updates, model lists; ` + "`--dry-run`" + ` shows them in the environment, the arguments and the
settings). *measured*: on Linux 6.18 with each harness completing a scripted-model turn in a private network
namespace whose only way out was a recording proxy (issue 41); *upstream, not measured*: documented by the vendor or
read in its source, for a login type the measurement did not use.

| harness | proxy variables it honours (measured) | hosts it must reach | switches in a sandbox | other hosts |
|---|---|---|---|---|
`)
	for _, h := range persona.Harnesses {
		f := NetworkTable[h]
		var hosts, switches []string
		for _, x := range f.Hosts {
			host := x.Host
			if !strings.Contains(host, " ") {
				host = "`" + host + "`"
			}
			hosts = append(hosts, fmt.Sprintf("%s (%s; %s)", host, x.Login, x.Source))
		}
		for _, s := range f.Switches {
			var what []string
			for _, e := range s.Env {
				what = append(what, "`"+e+"`")
			}
			if len(s.Args) > 0 {
				what = append(what, "`"+strings.Join(s.Args, " ")+"`")
			}
			for _, k := range s.Settings {
				what = append(what, "settings `"+k+": false`")
			}
			switches = append(switches, fmt.Sprintf("%s stops %s (%s)", strings.Join(what, " "), strings.Join(s.Stops, ", "), s.Source))
		}
		other := strings.Join(f.Unswitched, "; ")
		if other == "" {
			other = "none seen"
		}
		b.WriteString(fmt.Sprintf("| %s (%s) | %s | %s | %s | %s |\n", h, Measured[h], mdCell([]string{f.Proxy}),
			strings.Join(hosts, "<br>"), strings.Join(switches, "<br>"), mdCell([]string{other})))
	}
	b.WriteString(`
opencode reaches the provider of the persona's model (` + "`provider/model`" + `; upstream, not measured):
`)
	for _, p := range slices.Sorted(maps.Keys(OpencodeProviders)) {
		b.WriteString(fmt.Sprintf("`%s` → `%s`, ", p, OpencodeProviders[p]))
	}
	b.WriteString(`models.opencode.ai for its model list, when not switched off.

### API keys

How each harness takes a provider's API key and another base URL (upstream, not measured): what brokering replaces
with a placeholder key and a base URL pointing at workforce's proxy.

| harness | provider | key variables | base URL | path past the API's root | host | source |
|---|---|---|---|---|---|---|
`)
	for _, k := range APIKeys {
		bp := k.BasePath
		if bp == "" {
			bp = "none"
		} else {
			bp = "`" + bp + "`"
		}
		b.WriteString(fmt.Sprintf("| %s | %s | `%s` | %s | %s | `%s` | %s |\n", k.Harness, k.Provider, strings.Join(k.KeyVars, "`, `"), mdCell([]string{k.BaseURL}), bp, k.Host, k.Source))
	}
	b.WriteString(`
Other provider keys workforce knows, which a confined run does not get at all (nor the variables above that its own
harness's rows do not name): ` + "`" + strings.Join(OtherProviderKeys, "`, `") + "`" + `.

Variables naming the sockets of the user's agents and daemons, not passed into a confined run: ` + "`" + strings.Join(AgentSocketVars, "`, `") + "`" + `.
`)
	return b.String()
}

// RequiredHosts returns the hosts harness h must reach to run model, for
// every login type (which one the user's configuration uses is not known
// before the run): the table's hosts, and for opencode the API host of
// the model's provider ("provider/model"; none for a provider it does not
// list, or a model without one). The proxy always allows them.
func RequiredHosts(h, model string) []string {
	var out []string
	add := func(host string) {
		if !slices.Contains(out, host) {
			out = append(out, host)
		}
	}
	if h == persona.HarnessOpencode {
		if p, _, ok := strings.Cut(model, "/"); ok {
			if host, ok := OpencodeProviders[p]; ok {
				add(host)
			}
		}
		return out
	}
	for _, x := range NetworkTable[h].Hosts {
		add(x.Host)
	}
	return out
}
