package harness

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Failed runs. What a harness says when it cannot reach its model, per
// harness, as measured in a clean home (no login, no key variable), with
// a fake key against a local server answering as the provider does for a
// refused key (401), and through a proxy refusing the connection with
// workforce's 403 (harness/testdata/failure holds the lines; claude
// 2.1.330, codex 0.169.0, opencode 1.18.33, gemini 0.61.0; claude 2.1.332
// prints the same three lines, codex 0.171.0 the same 401 line, its 403
// not measured again):
//
//   - claude -p: a result with is_error and "Not logged in · Please run
//     /login" (no key), "Invalid API key · Fix external API key" (refused;
//     it first retries a 401 up to ten times, CLAUDE_CODE_MAX_RETRIES),
//     "Couldn't connect through your proxy (ERR_PROXY_TUNNEL)" (the 403);
//     exit 1, stderr empty.
//   - codex exec: with no key it still sends its request, without one;
//     a 401 ends in turn.failed "unexpected status 401 Unauthorized: ...";
//     exit 1. The proxy's 403 is "HTTP CONNECT failed with status 403", and
//     codex then waits for the network until the time limit.
//   - opencode run: without a key it lists none of the provider's models:
//     an error event "Unexpected server error. Check server logs for
//     details." on stdout, exit 1, and its reason only in its log, which
//     reaches stderr with --print-logs (OneShotLogArgs):
//     "ProviderModelNotFoundError: Model not found: PROVIDER/MODEL". A
//     refused key is an error event "invalid x-api-key" with statusCode
//     401; the proxy's 403 one with its body, naming the host.
//   - gemini -p: no login exits 41 before any output, stderr "Please set
//     an Auth method in your .../settings.json or specify one of the
//     following environment variables before running: GEMINI_API_KEY,
//     ..."; a refused key (with security.auth.selectedType
//     "gemini-api-key", without which a key and a base URL give "Invalid
//     auth method selected", exit 41) a result with status error and the
//     provider's "API key not valid", exit 144; a proxy's 403 makes it
//     retry (fetch failed) until the time limit.
//
// Diagnose reads the table; a harness's new wording is one line of it.

// The kinds of a failed run's cause.
const (
	// CauseCredentials: the harness has no credentials for its model's
	// provider, or the provider refused them.
	CauseCredentials = "credentials"
	// CauseModel: the harness does not know the model.
	CauseModel = "model"
	// CauseNetwork: the sandbox's network policy denied the connection
	// (workforce's proxy answered 403).
	CauseNetwork = "network"
)

// Cause is the likely cause of a failed run: its kind (CauseCredentials,
// CauseModel, CauseNetwork), a sentence saying it and what to do, and the
// line of the harness's output or stderr that says so.
type Cause struct {
	Kind     string
	Message  string
	Evidence string
}

// FailurePattern is a line a harness prints when it fails for a known
// reason: Text is a regular expression matched against the error of its
// output and each line of its stderr.
type FailurePattern struct {
	Harness string
	Kind    string
	// Refused says the harness had credentials and the provider refused
	// them (CauseCredentials); otherwise they were missing. A model
	// pattern of opencode (which lists no model of a provider it has no
	// key for) is read as missing credentials when no key variable of
	// the provider is set.
	Refused  bool
	Text     string
	Measured string
}

// FailurePatterns are the measured failure lines, per harness (see the
// comment above, and harness/testdata/failure).
var FailurePatterns = []FailurePattern{
	{persona.HarnessClaude, CauseCredentials, false, `Not logged in`, claudeMeasured},
	{persona.HarnessClaude, CauseCredentials, true, `Invalid API key`, claudeMeasured},
	{persona.HarnessClaude, CauseCredentials, true, `"error":"authentication_failed"`, claudeMeasured},
	{persona.HarnessClaude, CauseNetwork, false, `ERR_PROXY_TUNNEL`, claudeMeasured},
	{persona.HarnessCodex, CauseCredentials, true, `status 401 Unauthorized`, codexMeasured},
	{persona.HarnessCodex, CauseNetwork, false, `HTTP CONNECT failed with status 403`, codexMeasured},
	{persona.HarnessOpencode, CauseNetwork, false, `Forbidden: workforce: the run's network policy denies`, opencodeMeasured},
	{persona.HarnessOpencode, CauseModel, false, `ProviderModelNotFoundError`, opencodeMeasured},
	{persona.HarnessOpencode, CauseCredentials, true, `AI_APICallError: (invalid x-api-key|Incorrect API key|API key not valid|Unauthorized)`, opencodeMeasured},
	{persona.HarnessOpencode, CauseCredentials, true, `^(invalid x-api-key|Incorrect API key|API key not valid)`, opencodeMeasured},
	{persona.HarnessGemini, CauseCredentials, false, `Please set an Auth method`, geminiMeasured},
	{persona.HarnessGemini, CauseCredentials, false, `Invalid auth method selected`, geminiMeasured},
	{persona.HarnessGemini, CauseCredentials, true, `API key not valid`, geminiMeasured},
}

// loginHints say how to log each harness in, after the key variables.
var loginHints = map[string]string{
	persona.HarnessClaude:   "run claude and /login",
	persona.HarnessCodex:    "run codex login",
	persona.HarnessOpencode: "run opencode auth login",
	persona.HarnessGemini:   "run gemini and choose how to log in",
}

// Failure is what a failed one-shot run left to explain it.
type Failure struct {
	Harness string
	// Model is the model the run asked for (opencode's
	// "provider/model"); empty for the harness's default.
	Model string
	// ErrorText is the error the harness's output reported.
	ErrorText string
	// Stderr is (the end of) the harness's standard error, with its log
	// lines where OneShotLogArgs sends them there.
	Stderr []byte
	// Env is the harness's environment ("NAME=value").
	Env []string
	// Denied are the hosts workforce's proxy denied during the run
	// ("host:port"), in the order of the record.
	Denied []string
}

// maxEvidence is the longest evidence a Cause keeps.
const maxEvidence = 400

// Diagnose is the likely cause of the failure f, from FailurePatterns
// and the proxy's denials: nil when nothing known explains it. A denial
// of the host of the model's provider is the cause whatever the harness
// said.
func Diagnose(f Failure) *Cause {
	provider, vars := keysOf(f.Harness, f.Model)
	host := providerHost(f.Harness, provider)
	for _, d := range f.Denied {
		if h, _, _ := strings.Cut(d, ":"); host != "" && h == host {
			return networkCause(f.Harness, d, "")
		}
	}
	p, line := match(f)
	if p == nil {
		return nil
	}
	evidence := cutText(line, maxEvidence)
	switch p.Kind {
	case CauseNetwork:
		denied := ""
		if len(f.Denied) > 0 {
			denied = f.Denied[0]
		} else if m := deniesRe().FindStringSubmatch(line); m != nil {
			denied = m[1]
		}
		return networkCause(f.Harness, denied, evidence)
	case CauseModel:
		if !hasAny(f.Env, vars) && len(vars) > 0 {
			return &Cause{Kind: CauseCredentials, Evidence: evidence,
				Message: fmt.Sprintf("%s has no credentials for %s (it lists none of its models, and %s is unset): %s", f.Harness, provider, orList(vars), loginText(f.Harness, "set", vars))}
		}
		model := f.Model
		if model == "" {
			model = "the model"
		}
		return &Cause{Kind: CauseModel, Evidence: evidence,
			Message: fmt.Sprintf("%s does not know %s: check the model's name (the harness's line says which it knows)", f.Harness, model)}
	}
	of := ""
	if provider != "" {
		of = " for " + provider
	}
	if p.Refused {
		return &Cause{Kind: CauseCredentials, Evidence: evidence,
			Message: fmt.Sprintf("%s's credentials%s were refused: %s", f.Harness, of, loginText(f.Harness, "check", vars))}
	}
	return &Cause{Kind: CauseCredentials, Evidence: evidence,
		Message: fmt.Sprintf("%s has no credentials%s: %s", f.Harness, of, loginText(f.Harness, "set", vars))}
}

// deniesRe finds the host and port in workforce's denial message.
var deniesRe = lazyre.New(`network policy denies (\S+?:\d+)`)

// patternRes are FailurePatterns' expressions, compiled when first
// needed (nothing is compiled at start-up).
var patternRes = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(FailurePatterns))
	for i, p := range FailurePatterns {
		out[i] = regexp.MustCompile(p.Text)
	}
	return out
})

// match is the first pattern of f.Harness found in f's error, or else in
// a line of its stderr (the last such line), with the line.
func match(f Failure) (*FailurePattern, string) {
	var lines []string
	if t := strings.TrimSpace(f.ErrorText); t != "" {
		lines = append(lines, t)
	}
	sc := bufio.NewScanner(bytes.NewReader(f.Stderr))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var errLines []string
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			errLines = append(errLines, t)
		}
	}
	for i := len(errLines) - 1; i >= 0; i-- {
		lines = append(lines, errLines[i])
	}
	for i, p := range FailurePatterns {
		if p.Harness != f.Harness {
			continue
		}
		for _, l := range lines {
			if patternRes()[i].MatchString(l) {
				return &FailurePatterns[i], l
			}
		}
	}
	return nil, ""
}

// networkCause is the cause of a connection to denied (host:port, empty
// when unknown) that the sandbox's network policy refused.
func networkCause(h, denied, evidence string) *Cause {
	if denied == "" {
		return &Cause{Kind: CauseNetwork, Evidence: evidence,
			Message: fmt.Sprintf("the sandbox's network policy denied a connection of %s (workforce's proxy answered 403): the result's network.denied names the host; allow it with --network-allow HOST or in config.json's network.allow", h)}
	}
	host, _, _ := strings.Cut(denied, ":")
	return &Cause{Kind: CauseNetwork, Evidence: evidence,
		Message: fmt.Sprintf("the sandbox's network policy denied %s its connection to %s (workforce's proxy answered 403): allow it with --network-allow %s or in config.json's network.allow", h, denied, host)}
}

// keysOf are the provider of the model a harness runs, and the variables
// of its key (APIKeys).
func keysOf(h, model string) (string, []string) {
	provider := ""
	switch h {
	case persona.HarnessOpencode:
		provider, _, _ = strings.Cut(model, "/")
	case persona.HarnessClaude:
		provider = "anthropic"
	case persona.HarnessCodex:
		provider = "openai"
	case persona.HarnessGemini:
		provider = "google"
	}
	for _, k := range APIKeys {
		if k.Harness == h && k.Provider == provider {
			return provider, k.KeyVars
		}
	}
	return provider, nil
}

// providerHost is the API host of provider for harness h.
func providerHost(h, provider string) string {
	for _, k := range APIKeys {
		if k.Harness == h && k.Provider == provider {
			return k.Host
		}
	}
	if h == persona.HarnessOpencode {
		return OpencodeProviders[provider]
	}
	return ""
}

// loginText says how to give harness h credentials: verb ("set",
// "check") the key variables vars, or log in.
func loginText(h, verb string, vars []string) string {
	hint := loginHints[h]
	if len(vars) == 0 {
		return hint
	}
	return verb + " " + orList(vars) + ", or " + hint
}

func orList(vars []string) string { return strings.Join(vars, " or ") }

// hasAny reports whether env sets one of vars to a value.
func hasAny(env, vars []string) bool {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		for _, name := range vars {
			if k == name && v != "" {
				return true
			}
		}
	}
	return false
}
