package harness

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// geminiState is the state a sandboxed gemini run has.
var geminiStateVars = []string{"GEMINI_CLI_HOME=/s/state/gemini"}

const (
	geminiSettingsRel = "gemini/.gemini/settings.json"
	geminiGlobalRel   = "gemini/.gemini/GEMINI.md"
)

// TestGeminiMapping maps persona values to gemini: flags, the policy file,
// the session home's settings, and what it refuses.
func TestGeminiMapping(t *testing.T) {
	tests := []struct {
		name    string
		r       persona.Resolved
		noState bool
		confine bool
		// args are strings the argument list must hold, in order; policy
		// and settings fragments the policy file and the session's
		// settings.json must hold (compact JSON for settings).
		args            []string
		policy          []string
		settings        []string
		noSettings      bool
		global          string
		refused, field  string
		notArgs         []string
		notPolicyAtAll  bool
		applied, reason string
	}{
		{name: "model", r: persona.Resolved{Model: "gemini-2.5-pro"}, args: []string{"-m gemini-2.5-pro"}, notPolicyAtAll: true},
		{name: "model with the google provider", r: persona.Resolved{Model: "google/gemini-3-pro-preview"}, args: []string{"-m gemini-3-pro-preview"}},
		{name: "model of another provider", r: persona.Resolved{Model: "openai/gpt-5"}, refused: "Gemini models only", field: FieldModel},
		{name: "inherit", r: persona.Resolved{Model: persona.ModelInherit}, notArgs: []string{"-m"}},
		{name: "system prompt after the user's own", r: persona.Resolved{Model: "m", SystemPrompt: "Be the reviewer."}, global: "user global\n\nBe the reviewer."},
		{name: "system prompt without a home", r: persona.Resolved{Model: "m", SystemPrompt: "Be the reviewer."}, noState: true,
			refused: "no per-session gemini home", field: FieldSystemPrompt},
		{name: "mode default", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Mode: "default"}}, args: []string{"--approval-mode default"}},
		{name: "mode acceptEdits", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Mode: "acceptEdits"}}, args: []string{"--approval-mode auto_edit"}},
		{name: "mode plan", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Mode: "plan"}}, args: []string{"--approval-mode plan"}},
		{name: "mode bypassPermissions", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Mode: "bypassPermissions"}}, args: []string{"--approval-mode yolo"}},
		{name: "mode dontAsk denies what would ask", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Mode: "dontAsk"}},
			args:   []string{"--approval-mode default", "--policy /cfg/gemini-policy.toml --policy /s/state/gemini/.gemini/policies"},
			policy: []string{"toolName = \"write_file\"\ndecision = \"deny\"\npriority = 300", "toolName = \"*\"\nmcpName = \"*\"\ndecision = \"deny\""}},
		{name: "an unknown mode", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Mode: "auto"}}, refused: "no counterpart", field: FieldMode},
		{name: "deny Write and Bash", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Deny: []string{"Write", "Bash"}}},
			policy: []string{"toolName = \"write_file\"\ndecision = \"deny\"\npriority = 999\ndenyMessage = \"workforce: the persona denies Write\"",
				"toolName = \"run_shell_command\"\ndecision = \"deny\"", "toolName = \"read_background_output\"\ndecision = \"deny\""}},
		{name: "allow Edit, deny Edit wins", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Allow: []string{"Edit"}, Deny: []string{"Edit"}}},
			policy: []string{"toolName = \"replace\"\ndecision = \"allow\"\npriority = 600", "toolName = \"replace\"\ndecision = \"deny\"\npriority = 999"}},
		{name: "Bash prefixes", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Allow: []string{"Bash(npm run *)"}, Deny: []string{"Bash(git push:*)"}}},
			policy: []string{"commandPrefix = \"npm run\"\ndecision = \"allow\"", "commandPrefix = \"git push\"\ndecision = \"deny\""}},
		{name: "a whole Bash command", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Deny: []string{"Bash(rm -rf /)"}}},
			policy: []string{`commandRegex = "rm -rf /\""`}},
		{name: "a Bash pattern with a wildcard inside", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Deny: []string{"Bash(git * --force)"}}},
			refused: "commandPrefix matches the start", field: FieldDeny},
		{name: "a path rule", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Deny: []string{"Edit(/src/**)"}}},
			refused: "cannot match", field: FieldDeny},
		{name: "MCP rules", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Allow: []string{"mcp__docs"}, Deny: []string{"mcp__docs__drop"}}},
			policy: []string{"toolName = \"*\"\nmcpName = \"docs\"\ndecision = \"allow\"", "toolName = \"mcp_docs_drop\"\ndecision = \"deny\""}},
		{name: "a tool gemini lacks", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Deny: []string{"NotebookEdit"}}},
			applied: "nothing: gemini has no notebook tool", field: FieldDeny},
		{name: "an unknown tool", r: persona.Resolved{Model: "m", Permissions: persona.Permissions{Deny: []string{"Frobnicate"}}},
			refused: "no counterpart of Claude Code's Frobnicate", field: FieldDeny},
		{name: "effort", r: persona.Resolved{Model: "m", HarnessSettings: persona.HarnessSettings{Reasoning: "low"}},
			settings: []string{`{"match":{"model":"chat-base-3"},"modelConfig":{"generateContentConfig":{"thinkingConfig":{"thinkingLevel":"LOW"}}}}`,
				`{"match":{"model":"chat-base-2.5"},"modelConfig":{"generateContentConfig":{"thinkingConfig":{"thinkingBudget":1024}}}}`,
				`"customOverrides":[{"match":{"model":"mine"}`}},
		{name: "effort without a home", r: persona.Resolved{Model: "m", HarnessSettings: persona.HarnessSettings{Reasoning: "high"}}, noState: true,
			refused: "no per-session gemini home", field: FieldReasoning, noSettings: true},
		{name: "MCP servers beside the user's", r: persona.Resolved{Model: "m", MCPServers: map[string]persona.MCPServer{
			"docs": {Type: "stdio", Command: "docs-mcp", Args: []string{"--x"}},
			"web":  {Type: "http", URL: "https://example.com/mcp", Headers: map[string]string{"A": "b"}},
			"old":  {Type: "sse", URL: "https://example.com/sse"}}},
			settings: []string{`"docs":{"args":["--x"],"command":"docs-mcp"}`, `"web":{"headers":{"A":"b"},"httpUrl":"https://example.com/mcp"}`,
				`"old":{"url":"https://example.com/sse"}`, `"users":{"command":"u"}`}},
		{name: "confined: gemini's own sandbox off", r: persona.Resolved{Model: "m"}, confine: true,
			args: []string{"--sandbox=false"}, settings: []string{`"toolSandboxing":false`}},
		{name: "usage statistics off, the user's settings kept", r: persona.Resolved{Model: "m"},
			settings: []string{`"usageStatisticsEnabled":false`, `"selectedType":"gemini-api-key"`}},
		{name: "codex's settings refused", r: persona.Resolved{Model: "m", HarnessSettings: persona.HarnessSettings{SandboxMode: "read-only"}},
			refused: "codex's sandbox setting; gemini has no such sandbox", field: FieldSandboxMode},
	}
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(`// the user's
{"security": {"auth": {"selectedType": "gemini-api-key"}}, "mcpServers": {"users": {"command": "u"}},
 "modelConfigs": {"customOverrides": [{"match": {"model": "mine"}, "modelConfig": {}}]}}`), 0o644)
	os.WriteFile(filepath.Join(home, ".gemini", "GEMINI.md"), []byte("user global\n"), 0o644)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.ID, r.Harness = "rev", persona.HarnessGemini
			o := Options{ConfigDir: "/cfg", Env: []string{"HOME=" + home}, AllowUnmapped: true, Confined: tt.confine}
			if !tt.noState {
				o.State = geminiStateVars
			}
			inv, err := Plan(&r, o)
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Join(inv.Args, " ")
			last := 0
			for _, a := range tt.args {
				i := strings.Index(args[last:], a)
				if i < 0 {
					t.Errorf("args %q lack %q (after %d)", args, a, last)
					continue
				}
				last += i + len(a)
			}
			for _, a := range tt.notArgs {
				if slices.Contains(inv.Args, a) {
					t.Errorf("args %q hold %q", args, a)
				}
			}
			policy := inv.Files["/cfg/gemini-policy.toml"]
			for _, p := range tt.policy {
				if !strings.Contains(policy, p) {
					t.Errorf("policy lacks %q:\n%s", p, policy)
				}
			}
			if (policy != "") != strings.Contains(args, "--policy /cfg/gemini-policy.toml") || tt.notPolicyAtAll && policy != "" ||
				(policy != "") != strings.Contains(args, "--policy "+filepath.Join(map[bool]string{true: home, false: "/s/state/gemini"}[tt.noState], ".gemini", "policies")) {
				t.Errorf("policy file %q and args %q disagree", policy, args)
			}
			settings := inv.StateFiles[geminiSettingsRel]
			if tt.noSettings && settings != "" {
				t.Errorf("session settings written without a home: %s", settings)
			}
			if settings != "" {
				var v any
				if err := json.Unmarshal([]byte(settings), &v); err != nil {
					t.Fatalf("settings are not JSON: %v\n%s", err, settings)
				}
				b, _ := json.Marshal(v)
				settings = string(b)
			}
			for _, s := range tt.settings {
				if !strings.Contains(settings, s) {
					t.Errorf("settings lack %s:\n%s", s, settings)
				}
			}
			if got := inv.StateFiles[geminiGlobalRel]; got != tt.global {
				t.Errorf("GEMINI.md %q, want %q", got, tt.global)
			}
			var fm *FieldMapping
			for i, f := range inv.Mapping.Fields {
				if f.Field == tt.field {
					fm = &inv.Mapping.Fields[i]
				}
			}
			switch {
			case tt.refused != "" && (fm == nil || !strings.Contains(fm.Refused, tt.refused)):
				t.Errorf("mapping %v: want %s refused for %q", inv.Mapping.Fields, tt.field, tt.refused)
			case tt.refused == "" && inv.Mapping.Err() != nil:
				t.Errorf("refused: %v", inv.Mapping.Err())
			case tt.applied != "" && (fm == nil || fm.Applied != tt.applied):
				t.Errorf("mapping %v: want %s applied as %q", inv.Mapping.Fields, tt.field, tt.applied)
			}
		})
	}
}

// TestGeminiPolicyComma: gemini splits --policy at commas, so a policy
// path holding one is an error, not rules silently dropped.
func TestGeminiPolicyComma(t *testing.T) {
	r := &persona.Resolved{ID: "rev", Harness: persona.HarnessGemini, Model: "m", Permissions: persona.Permissions{Deny: []string{"Write"}}}
	_, err := Plan(r, Options{ConfigDir: "/a,b/cfg", State: geminiStateVars})
	if err == nil || !strings.Contains(err.Error(), "comma") {
		t.Errorf("err = %v, want one about the comma", err)
	}
}

// TestGeminiTrust: the project's trust, as gemini decides it in the
// user's real directory, becomes GEMINI_CLI_TRUST_WORKSPACE=true or
// --skip-trust.
func TestGeminiTrust(t *testing.T) {
	home := t.TempDir()
	project := t.TempDir()
	other := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(home, ".gemini", "trustedFolders.json"), []byte(`{"`+project+`": "TRUST_FOLDER"}`), 0o644)
	for _, tt := range []struct {
		name, dir string
		env       []string
		trusted   bool
	}{
		{"a trusted folder", project, nil, true},
		{"a subdirectory of one", filepath.Join(project, "sub"), nil, true},
		{"a folder nobody trusts", other, nil, false},
		{"trusted by the environment", other, []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, true},
		{"distrusted by the environment", project, []string{"GEMINI_CLI_TRUST_WORKSPACE=false"}, false},
		{"no directory known", "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &persona.Resolved{ID: "rev", Harness: persona.HarnessGemini, Model: "m"}
			inv, err := Plan(r, Options{ConfigDir: "/cfg", Env: append([]string{"HOME=" + home}, tt.env...), ProjectDir: tt.dir, State: geminiStateVars})
			if err != nil {
				t.Fatal(err)
			}
			env := slices.Contains(inv.SetEnv, "GEMINI_CLI_TRUST_WORKSPACE=true")
			skip := slices.Contains(inv.Args, "--skip-trust")
			if env != tt.trusted || skip == tt.trusted {
				t.Errorf("trust env %v, --skip-trust %v; want trusted %v", env, skip, tt.trusted)
			}
			// --skip-trust makes gemini load the project's .env fully
			// (measured): the session's settings turn it off.
			settings := inv.StateFiles[filepath.Join("gemini", ".gemini", "settings.json")]
			if ignore := strings.Contains(settings, `"ignoreLocalEnv": true`); ignore == tt.trusted {
				t.Errorf("advanced.ignoreLocalEnv set %v, trusted %v; want it exactly when untrusted:\n%s", ignore, tt.trusted, settings)
			}
		})
	}
}

// TestGeminiUntrustedGeminiEnv: a .gemini/.env in the working directory
// of an untrusted project, or above it in the project, which gemini
// loads under --skip-trust whatever its settings say, is refused by
// name; trusted, it loads as in the user's directory.
func TestGeminiUntrustedGeminiEnv(t *testing.T) {
	home := t.TempDir()
	project := t.TempDir()
	sub := filepath.Join(project, "a", "b")
	os.MkdirAll(filepath.Join(project, ".gemini"), 0o755)
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(project, ".gemini", ".env"), []byte("GOOGLE_GEMINI_BASE_URL=http://elsewhere\n"), 0o644)
	for _, tt := range []struct {
		name, dir, subdir string
		env               []string
		refused           bool
	}{
		{"the project's root", project, "", nil, true},
		{"below the root", sub, filepath.Join("a", "b"), nil, true},
		{"trusted", project, "", []string{"GEMINI_CLI_TRUST_WORKSPACE=true"}, false},
		{"above the project only", sub, "", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &persona.Resolved{ID: "rev", Harness: persona.HarnessGemini, Model: "m"}
			_, err := Plan(r, Options{ConfigDir: "/cfg", Env: append([]string{"HOME=" + home}, tt.env...), ProjectDir: tt.dir, Subdir: tt.subdir, State: geminiStateVars})
			if tt.refused != (err != nil) || err != nil && !strings.Contains(err.Error(), filepath.Join(project, ".gemini", ".env")) {
				t.Errorf("error %v; want refused %v, naming the file", err, tt.refused)
			}
		})
	}
}

// TestGeminiUserApprovalMode: an approval mode in the harness arguments
// (after --) replaces the persona's: gemini takes one (a second
// --approval-mode is joined to the first and refused, measured on
// 0.61.0), and the persona's policy rules stay.
func TestGeminiUserApprovalMode(t *testing.T) {
	r := &persona.Resolved{ID: "ed", Harness: persona.HarnessGemini, Model: "m",
		Permissions: persona.Permissions{Mode: "acceptEdits", Deny: []string{"Bash"}}}
	for _, tt := range []struct {
		name  string
		extra []string
		want  int // how many approval flags the command line holds
	}{
		{"none", nil, 1},
		{"--approval-mode", []string{"--approval-mode", "yolo"}, 1},
		{"--approval-mode=", []string{"--approval-mode=plan"}, 1},
		{"--yolo", []string{"--yolo"}, 1},
		{"-y", []string{"-y"}, 1},
		{"other flags", []string{"--debug"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := PlanOneShot(r, Options{ConfigDir: t.TempDir(), Env: []string{"PATH=/nonexistent"}, Extra: tt.extra, State: geminiStateVars}, OneShot{Task: "x"})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, a := range inv.Args {
				flag, _, _ := strings.Cut(a, "=")
				if flag == "--approval-mode" || flag == "--yolo" || flag == "-y" {
					n++
				}
			}
			if n != tt.want {
				t.Errorf("args %q hold %d approval flags, want %d", inv.Args, n, tt.want)
			}
			if !slices.Contains(inv.Args, "--policy") {
				t.Errorf("args %q: the persona's policy is gone", inv.Args)
			}
		})
	}
}

// TestGeminiOneShotArgs: gemini -p TASK -o stream-json, the task on stdin
// when it reads as a flag, the session id fixed, resume.
func TestGeminiOneShotArgs(t *testing.T) {
	r := &persona.Resolved{ID: "ed", Harness: persona.HarnessGemini, Model: "gemini-2.5-pro"}
	for _, tt := range []struct {
		name      string
		s         OneShot
		extra     []string
		wantArgs  string
		wantStdin string
		wantErr   error
	}{
		{name: "a new conversation", s: OneShot{Task: "write it", SessionID: "u-1"}, extra: []string{"--debug"},
			wantArgs: "-p|write it|-o|stream-json|-m|gemini-2.5-pro|--skip-trust|--session-id|u-1|--debug"},
		{name: "a task that reads as a flag", s: OneShot{Task: "--do it"},
			wantArgs: "-p||-o|stream-json|-m|gemini-2.5-pro|--skip-trust", wantStdin: "--do it"},
		{name: "resume", s: OneShot{Task: "again", Resume: "u-1"},
			wantArgs: "-p|again|-o|stream-json|-m|gemini-2.5-pro|--skip-trust|--resume|u-1"},
		{name: "no fixed id when resuming", s: OneShot{Task: "again", Resume: "u-1", SessionID: "u-2"}, wantErr: ErrNoSessionID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := PlanOneShot(r, Options{ConfigDir: t.TempDir(), Env: []string{"PATH=/nonexistent"}, Extra: tt.extra}, tt.s)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(inv.Args, "|"); got != tt.wantArgs {
				t.Errorf("args:\n got %s\nwant %s", got, tt.wantArgs)
			}
			if inv.Stdin != tt.wantStdin || !inv.OneShot {
				t.Errorf("stdin %q (one-shot %v), want %q", inv.Stdin, inv.OneShot, tt.wantStdin)
			}
		})
	}
}

// TestGeminiOutput reads what gemini 0.61.0 printed in make e2e
// (TestGeminiOneShot): the run's events, its usage, its denials, its
// errors; the runs that could not start (exit 41, 55) printed nothing.
func TestGeminiOutput(t *testing.T) {
	for _, tt := range []struct {
		file    string
		events  []string
		final   string
		denials []Denial
		errText string
		noRes   bool
	}{
		{file: "gemini-write.jsonl", final: "finished", events: []string{"started 8c4f5a1e-2b6d-4e7f-9a0b-1c2d3e4f5a6b",
			"tool_use write_file /sandbox/out.txt completed", "message finished", "usage 2 2 0"}},
		{file: "gemini-resume.jsonl", final: "resumed", events: []string{"started 8c4f5a1e-2b6d-4e7f-9a0b-1c2d3e4f5a6b", "message resumed", "usage 1 1 0"}},
		{file: "gemini-denied.jsonl", final: "could not write", denials: []Denial{{Tool: "write_file", Detail: "/sandbox/out.txt"}},
			events: []string{"started 7ae89858-2ad5-4b0f-b52f-e4abd5a06982", "tool_use write_file /sandbox/out.txt denied", "message could not write", "usage 2 2 0"}},
		{file: "gemini-http400.jsonl", errText: "API error 400 INVALID_ARGUMENT: workforce e2e: a bad request",
			events: []string{"started dd42c0f1-8e3e-4d73-8704-3439f13b485c", "usage 0 0 0", "error API error 400 INVALID_ARGUMENT: workforce e2e: a bad request"}},
		{file: "gemini-auth41.jsonl", noRes: true},
		{file: "gemini-untrusted55.jsonl", noRes: true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			out, err := ParseOutput(persona.HarnessGemini, fixture(t, tt.file))
			if tt.noRes {
				if !errors.Is(err, ErrNoResult) {
					t.Fatalf("err = %v, want ErrNoResult", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range out.Events {
				got = append(got, describe(e))
			}
			if !slices.Equal(got, tt.events) {
				t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.events, "\n"))
			}
			if out.Final != tt.final || !slices.Equal(out.Denials, tt.denials) || out.Model != "gemini-2.5-pro" {
				t.Errorf("final %q, denials %+v, model %q; want %q, %+v", out.Final, out.Denials, out.Model, tt.final, tt.denials)
			}
			if out.Error != (tt.errText != "") || !strings.Contains(out.ErrorText, tt.errText) {
				t.Errorf("error %v %q, want %q", out.Error, out.ErrorText, tt.errText)
			}
		})
	}
}

// TestGeminiDeltas: the assistant's pieces (delta) make one message, and
// a policy_violation is a denial.
func TestGeminiDeltas(t *testing.T) {
	data := `{"type":"init","session_id":"s","model":"m"}
{"type":"message","role":"assistant","content":"Hel","delta":true}
{"type":"message","role":"assistant","content":"lo.","delta":true}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"git push"}}
{"type":"tool_result","tool_id":"t1","status":"error","error":{"type":"policy_violation","message":"denied"}}
{"type":"tool_use","tool_name":"read_file","tool_id":"t2","parameters":{"file_path":"x"}}
{"type":"tool_result","tool_id":"t2","status":"error","error":{"type":"file_not_found","message":"no x"}}
{"type":"error","severity":"warning","message":"loop detected"}
{"type":"message","role":"assistant","content":"Done","delta":true}
{"type":"result","status":"success","stats":{"input_tokens":10,"output_tokens":3,"cached":4}}
`
	out, err := ParseOutput(persona.HarnessGemini, []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range out.Events {
		got = append(got, describe(e))
	}
	want := []string{"started s", "message Hello.", "tool_use run_shell_command git push denied", "tool_use read_file x failed",
		"error loop detected", "message Done", "usage 10 3 4"}
	if !slices.Equal(got, want) {
		t.Errorf("events:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out.Final != "Done" || len(out.Denials) != 1 || out.Usage.Cached != 4 {
		t.Errorf("outcome %+v", out)
	}
}

func FuzzParseGemini(f *testing.F) {
	fuzzOutput(f, "gemini", "gemini-write.jsonl", "gemini-resume.jsonl", "gemini-denied.jsonl", "gemini-http400.jsonl")
}

// TestGeminiStateLayout: the session home is seeded from the user's
// gemini home ($GEMINI_CLI_HOME, else ~), its global files by the names
// of context.fileName, its login a credential written back only as a
// refresh.
func TestGeminiStateLayout(t *testing.T) {
	home := t.TempDir()
	ghome := t.TempDir()
	os.MkdirAll(filepath.Join(ghome, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(ghome, ".gemini", "settings.json"), []byte(`{"context": {"fileName": ["AGENTS.md", "sub/X.md"]}}`), 0o644)
	l, err := State(persona.HarnessGemini, []string{"HOME=" + home, "GEMINI_CLI_HOME=" + ghome})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Vars) != 1 || l.Vars[0] != (StateVar{"GEMINI_CLI_HOME", "gemini"}) {
		t.Errorf("vars %+v", l.Vars)
	}
	seeds := map[string]StateSeed{}
	for _, s := range l.Seeds {
		seeds[s.To] = s
	}
	for to, from := range map[string]string{
		"gemini/.gemini/settings.json":    ".gemini/settings.json",
		"gemini/.gemini/AGENTS.md":        ".gemini/AGENTS.md",
		"gemini/.gemini/GEMINI.md":        ".gemini/GEMINI.md",
		"gemini/.gemini/skills":           ".gemini/skills",
		"gemini/.gemini/oauth_creds.json": ".gemini/oauth_creds.json",
		"gemini/.agents/skills":           ".agents/skills",
		"gemini/.env":                     ".env",
	} {
		if s, ok := seeds[to]; !ok || s.From != filepath.Join(ghome, from) {
			t.Errorf("seed %s = %+v, want from %s", to, s, filepath.Join(ghome, from))
		}
	}
	if _, ok := seeds["gemini/.gemini/sub/X.md"]; ok {
		t.Errorf("a name with a directory part is seeded")
	}
	for _, n := range []string{"tmp", "history", "projects.json", "trustedFolders.json", "installation_id"} {
		if _, ok := seeds["gemini/.gemini/"+n]; ok {
			t.Errorf("%s is seeded", n)
		}
	}
	cred := seeds["gemini/.gemini/oauth_creds.json"]
	if !cred.Credential {
		t.Fatalf("oauth_creds.json is not a credential")
	}
	was := `{"access_token":"a1","refresh_token":"r1","scope":"s","token_type":"Bearer","id_token":"i1","expiry_date":1}`
	if err := cred.CheckRefresh([]byte(was), []byte(`{"access_token":"a2","refresh_token":"r1","scope":"s","token_type":"Bearer","id_token":"i2","expiry_date":2}`)); err != nil {
		t.Errorf("a refresh refused: %v", err)
	}
	if err := cred.CheckRefresh([]byte(was), []byte(`{"access_token":"a2","refresh_token":"r1","scope":"other","token_type":"Bearer","id_token":"i2","expiry_date":2}`)); err == nil {
		t.Errorf("a changed scope written back")
	}
}

// TestGeminiAPIError: gemini's error message for an HTTP error carries
// the API's error JSON ("[API Error: {...}]"); the outcome says it in a
// line: the status code, the status name and the message. Anything
// else stays as gemini wrote it.
func TestGeminiAPIError(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`[API Error: {"error":{"code":400,"message":"a bad request","status":"INVALID_ARGUMENT"}}]`,
			"API error 400 INVALID_ARGUMENT: a bad request"},
		{`[API Error: {"error":{"code":429,"message":"quota\nexceeded \u001b[31m"}}]`, `API error 429: quota\nexceeded \033[31m`},
		{`[API Error: {"error":{"message":"no code"}}]`, "API error: no code"},
		{`[API Error: not json]`, `[API Error: not json]`},
		{`[API Error: {"error":{}}]`, `[API Error: {"error":{}}]`},
		{`[API Error: {"error":{"code":400}}] trailing`, `[API Error: {"error":{"code":400}}] trailing`},
		{"Invalid auth method selected.", "Invalid auth method selected."},
	} {
		if got := geminiAPIError(tt.in); got != tt.want {
			t.Errorf("geminiAPIError(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzGeminiAPIError(f *testing.F) {
	f.Add(`[API Error: {"error":{"code":400,"message":"a bad request","status":"INVALID_ARGUMENT"}}]`)
	f.Add(`[API Error: {}]`)
	f.Fuzz(func(t *testing.T, s string) {
		if got := geminiAPIError(s); !strings.HasPrefix(s, "[API Error: ") && got != s {
			t.Errorf("geminiAPIError(%q) = %q: changed a message that is no API error", s, got)
		}
	})
}
