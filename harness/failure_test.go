package harness

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDiagnose reads the measured output of each harness that failed
// for lack of credentials, with refused ones, and through a proxy that
// refused its connection (testdata/failure), as a run does: the error its
// output parser reports, and its stderr.
func TestDiagnose(t *testing.T) {
	tests := []struct {
		name     string
		harness  string
		model    string
		fixture  string // testdata/failure/FIXTURE.stdout.jsonl and .stderr.txt, each optional
		env      []string
		denied   []string
		kind     string // "" for no cause
		message  string // a regular expression the message matches
		evidence string
	}{
		{"claude no key", "claude", "", "claude-nokey", nil, nil,
			CauseCredentials, `^claude has no credentials for anthropic: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, or run claude and /login$`, "Not logged in"},
		{"claude refused key", "claude", "", "claude-401r", []string{"ANTHROPIC_API_KEY=sk-x"}, nil,
			CauseCredentials, `^claude's credentials for anthropic were refused: check ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, or run claude and /login$`, "Invalid API key"},
		{"claude proxy 403", "claude", "", "claude-403r", nil, []string{"api.anthropic.com:443"},
			CauseNetwork, `denied claude its connection to api\.anthropic\.com:443 .*--network-allow api\.anthropic\.com `, ""},
		{"claude proxy 403, another host", "claude", "", "claude-403r", nil, []string{"example.com:443"},
			CauseNetwork, `connection to example\.com:443`, "ERR_PROXY_TUNNEL"},
		{"codex refused key", "codex", "", "codex-401", []string{"OPENAI_API_KEY=sk-x"}, nil,
			CauseCredentials, `^codex's credentials for openai were refused: check CODEX_API_KEY or OPENAI_API_KEY, or run codex login$`, "401 Unauthorized"},
		{"codex proxy 403", "codex", "", "codex-403", nil, nil,
			CauseNetwork, `result's network\.denied names the host`, "HTTP CONNECT failed with status 403"},
		{"opencode no key", "opencode", "anthropic/claude-sonnet-4-5-20250929", "opencode-nokey", []string{"HOME=/h"}, nil,
			CauseCredentials, `^opencode has no credentials for anthropic \(it lists none of its models, and ANTHROPIC_API_KEY is unset\): set ANTHROPIC_API_KEY, or run opencode auth login$`, "ProviderModelNotFoundError"},
		{"opencode unknown model", "opencode", "anthropic/claude-sonnet-4-5-20250929", "opencode-nokey", []string{"ANTHROPIC_API_KEY=sk-x"}, nil,
			CauseModel, `^opencode does not know anthropic/claude-sonnet-4-5-20250929`, "Model not found"},
		{"opencode refused key", "opencode", "anthropic/claude-sonnet-4-5-20250929", "opencode-401", []string{"ANTHROPIC_API_KEY=sk-x"}, nil,
			CauseCredentials, `^opencode's credentials for anthropic were refused: check ANTHROPIC_API_KEY, or run opencode auth login$`, "invalid x-api-key"},
		{"opencode proxy 403", "opencode", "anthropic/claude-sonnet-4-5-20250929", "opencode-403", nil, nil,
			CauseNetwork, `connection to api\.anthropic\.com:443 .*--network-allow api\.anthropic\.com `, "Forbidden: workforce"},
		{"gemini no login", "gemini", "", "gemini-nokey", nil, nil,
			CauseCredentials, `^gemini has no credentials for google: set GEMINI_API_KEY or GOOGLE_API_KEY, or run gemini and choose how to log in$`, "Please set an Auth method"},
		{"gemini refused key", "gemini", "", "gemini-badkey", []string{"GEMINI_API_KEY=x"}, nil,
			CauseCredentials, `^gemini's credentials for google were refused: check GEMINI_API_KEY or GOOGLE_API_KEY, or run gemini and choose how to log in$`, "API key not valid"},
		{"gemini bad auth", "gemini", "", "gemini-badauth", nil, nil,
			CauseCredentials, `^gemini has no credentials for google`, "Invalid auth method"},
		{"a failure of another kind", "claude", "", "", nil, nil, "", "", ""},
		{"another harness's line", "codex", "", "claude-nokey", nil, nil, "", "", ""},
		{"the provider's host denied, whatever was said", "opencode", "anthropic/m", "", nil, []string{"registry.npmjs.org:443", "api.anthropic.com:443"},
			CauseNetwork, `connection to api\.anthropic\.com:443`, ""},
		{"another host denied is no cause", "opencode", "anthropic/m", "", nil, []string{"registry.npmjs.org:443"}, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Failure{Harness: tt.harness, Model: tt.model, Env: tt.env, Denied: tt.denied}
			if tt.fixture != "" {
				base := filepath.Join("testdata", "failure", tt.fixture)
				if out, err := os.ReadFile(base + ".stdout.jsonl"); err == nil {
					// As a run reads it: the parser's error (claude's and
					// opencode's harnesses as named by the fixture).
					h := strings.SplitN(tt.fixture, "-", 2)[0]
					o, _ := ParseOutput(h, out)
					if o != nil {
						f.ErrorText = o.FailureText()
					}
				}
				f.Stderr, _ = os.ReadFile(base + ".stderr.txt")
			} else if tt.name == "a failure of another kind" {
				f.ErrorText = "API Error: 500 Internal server error"
			}
			c := Diagnose(f)
			if tt.kind == "" {
				if c != nil {
					t.Fatalf("Diagnose = %+v, want nil", *c)
				}
				return
			}
			if c == nil {
				t.Fatalf("Diagnose = nil, want a cause of kind %s", tt.kind)
			}
			if c.Kind != tt.kind {
				t.Errorf("Diagnose kind = %q, want %q (%s)", c.Kind, tt.kind, c.Message)
			}
			if !regexp.MustCompile(tt.message).MatchString(c.Message) {
				t.Errorf("Diagnose message = %q, want it to match %q", c.Message, tt.message)
			}
			if !strings.Contains(c.Evidence, tt.evidence) {
				t.Errorf("Diagnose evidence = %q, want it to hold %q", c.Evidence, tt.evidence)
			}
			if len(c.Evidence) > maxEvidence+len("…") {
				t.Errorf("Diagnose evidence is %d bytes, more than %d", len(c.Evidence), maxEvidence)
			}
		})
	}
}

// TestFailurePatterns checks the table: each pattern compiles, names a
// harness, a kind and the version it was measured on.
func TestFailurePatterns(t *testing.T) {
	for i, p := range FailurePatterns {
		if _, ok := loginHints[p.Harness]; !ok {
			t.Errorf("FailurePatterns[%d] names harness %q, which has no login hint", i, p.Harness)
		}
		switch p.Kind {
		case CauseCredentials, CauseModel, CauseNetwork:
		default:
			t.Errorf("FailurePatterns[%d] has kind %q", i, p.Kind)
		}
		if p.Measured == "" || p.Text == "" {
			t.Errorf("FailurePatterns[%d] = %+v: no text or measured version", i, p)
		}
	}
}

// TestOneShotLogArgs: opencode's one-shot run sends its log to stderr
// at WARN, where its errors are (measured: its log file did not hold
// the error).
func TestOneShotLogArgs(t *testing.T) {
	if !LogsOnStderr("opencode") || LogsOnStderr("claude") {
		t.Fatalf("LogsOnStderr(opencode, claude) = %v, %v; want true, false", LogsOnStderr("opencode"), LogsOnStderr("claude"))
	}
	if got := strings.Join(OneShotLogArgs["opencode"], " "); got != "--print-logs --log-level WARN" {
		t.Errorf("OneShotLogArgs[opencode] = %q", got)
	}
}

// FuzzDiagnose: whatever a harness prints, Diagnose returns no cause or
// one of the three kinds, with a message, and evidence no longer than
// maxEvidence that is part of what was printed.
func FuzzDiagnose(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "failure", "*"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		h := strings.SplitN(filepath.Base(p), "-", 2)[0]
		f.Add(h, "anthropic/m", "", b, "api.anthropic.com:443")
		f.Add(h, "", string(b), []byte(nil), "")
	}
	f.Fuzz(func(t *testing.T, h, model, errText string, stderr []byte, denied string) {
		fl := Failure{Harness: h, Model: model, ErrorText: errText, Stderr: stderr}
		if denied != "" {
			fl.Denied = []string{denied}
		}
		c := Diagnose(fl)
		if c == nil {
			return
		}
		switch c.Kind {
		case CauseCredentials, CauseModel, CauseNetwork:
		default:
			t.Fatalf("Diagnose kind %q", c.Kind)
		}
		if c.Message == "" {
			t.Fatal("Diagnose gave a cause with no message")
		}
		if len(c.Evidence) > maxEvidence+len("…") {
			t.Fatalf("evidence of %d bytes", len(c.Evidence))
		}
		if ev := strings.TrimSuffix(c.Evidence, "…"); ev != "" && !strings.Contains(errText, ev) && !strings.Contains(string(stderr), ev) {
			t.Fatalf("evidence %q is not in what the harness printed", c.Evidence)
		}
	})
}
