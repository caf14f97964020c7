package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/persona"
)

func ptr[T any](v T) *T { return &v }

func TestPlan(t *testing.T) {
	env := []string{"PATH=/bin", "GH_TOKEN=secret", "HOME=/home/u"}
	tests := []struct {
		name     string
		r        persona.Resolved
		extra    []string
		wantArgs string
		wantEnv  []string
		wantFile string // substring of the only config file
		wantErr  string
	}{
		{
			name:     "claude with prompt, permissions and MCP",
			r:        persona.Resolved{ID: "rev", Harness: "claude", Model: "opus", SystemPrompt: "Review.", Permissions: persona.Permissions{Allow: []string{"Read", "Bash(git *)"}, Deny: []string{"WebFetch"}, Mode: "plan"}, MCPServers: map[string]persona.MCPServer{"gh": {Type: "http", URL: "https://x/mcp", Headers: map[string]string{"Authorization": "Bearer $GH_TOKEN"}}}},
			extra:    []string{"--verbose"},
			wantArgs: `--model opus --append-system-prompt Review. --permission-mode plan --allowedTools Read,Bash(git *) --disallowedTools WebFetch --mcp-config {"mcpServers":{"gh":{"type":"http","url":"https://x/mcp","headers":{"Authorization":"Bearer secret"}}}} --strict-mcp-config --verbose`,
		},
		{
			name:     "claude without a prompt",
			r:        persona.Resolved{ID: "rev", Harness: "claude", Model: "sonnet"},
			wantArgs: "--model sonnet",
		},
		{
			name: "codex strips the provider, prompt last after extra arguments",
			r: persona.Resolved{ID: "rev", Harness: "codex", Model: "openai/gpt-5", SystemPrompt: "Fix it.",
				HarnessSettings: persona.HarnessSettings{Reasoning: "high", SandboxMode: "workspace-write", ApprovalPolicy: "never", WorkspaceWriteNetworkAccess: ptr(true), WebSearch: ptr(false)},
				MCPServers:      map[string]persona.MCPServer{"fs": {Type: "stdio", Command: "npx", Args: []string{"-y", "server"}, Env: map[string]string{"TOKEN": "$GH_TOKEN"}}}},
			extra:    []string{"--full-auto"},
			wantArgs: `-m gpt-5 --sandbox workspace-write --ask-for-approval never -c model_reasoning_effort="high" -c sandbox_workspace_write.network_access=true -c web_search="disabled" -c mcp_servers.fs.command="npx" -c mcp_servers.fs.args=["-y", "server"] -c mcp_servers.fs.env={TOKEN = "secret"} --full-auto Fix it.`,
		},
		{
			name:     "codex bypass",
			r:        persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5", HarnessSettings: persona.HarnessSettings{DangerouslyBypassApprovalsAndSandbox: ptr(true)}},
			wantArgs: "-m gpt-5 --dangerously-bypass-approvals-and-sandbox",
		},
		{
			name:    "codex bypass with a sandbox mode",
			r:       persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5", HarnessSettings: persona.HarnessSettings{DangerouslyBypassApprovalsAndSandbox: ptr(true), SandboxMode: "read-only"}},
			wantErr: "dangerouslyBypassApprovalsAndSandbox excludes sandboxMode",
		},
		{
			name:    "codex refuses a rule it cannot express",
			r:       persona.Resolved{ID: "rev", Harness: "codex", Model: "gpt-5", Permissions: persona.Permissions{Deny: []string{"x"}}},
			wantErr: `codex cannot apply permissions.deny "x": codex has no counterpart of Claude Code's x tool`,
		},
		{
			name:     "opencode applies permissions and reasoning to its agent",
			r:        persona.Resolved{ID: "rev", Harness: "opencode", Model: "openai/gpt-5-mini", Permissions: persona.Permissions{Deny: []string{"WebFetch", "Bash(git push:*)"}}, HarnessSettings: persona.HarnessSettings{Reasoning: "medium"}},
			wantArgs: "--agent rev",
			wantFile: `"permission": {
        "webfetch": "deny",
        "bash": {
          "git push *": "deny"
        }
      },
      "reasoningEffort": "medium"`,
		},
		{
			name:     "opencode agent in a session config file",
			r:        persona.Resolved{ID: "rev", Harness: "opencode", Model: "openai/gpt-5-mini", SystemPrompt: "Review.", Env: map[string]string{"TEAM": "core-$GH_TOKEN"}},
			extra:    []string{"--print-logs"},
			wantArgs: "--agent rev --print-logs",
			wantEnv: []string{"TEAM=core-secret", "OPENCODE_CONFIG=/cfg/opencode.json",
				`OPENCODE_CONFIG_CONTENT={"agent":{"rev":{"mode":"primary","model":"openai/gpt-5-mini","prompt":"Review."}}}`},
			wantFile: `"rev": {
      "mode": "primary",
      "model": "openai/gpt-5-mini",
      "prompt": "Review."
    }`,
		},
		{
			name:    "unknown harness",
			r:       persona.Resolved{ID: "rev", Harness: "vim", Model: "m"},
			wantErr: `unknown harness "vim"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := Plan(&tt.r, Options{Extra: tt.extra, ConfigDir: "/cfg", Env: env})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Plan() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(inv.Args, " "); got != tt.wantArgs {
				t.Errorf("args:\n got %s\nwant %s", got, tt.wantArgs)
			}
			if tt.wantEnv != nil && strings.Join(inv.SetEnv, " ") != strings.Join(tt.wantEnv, " ") {
				t.Errorf("env = %v, want %v", inv.SetEnv, tt.wantEnv)
			}
			if tt.wantFile != "" {
				if len(inv.Files) != 1 || !strings.Contains(inv.Files["/cfg/opencode.json"], tt.wantFile) {
					t.Errorf("config files = %v, want opencode.json containing %s", inv.Files, tt.wantFile)
				}
			}
			if got := inv.Env(); !contains(got, "HOME=/home/u") {
				t.Errorf("the caller's environment was dropped: %v", got)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPlanKeepsUserOpencodeConfig checks that a user's OPENCODE_CONFIG is
// the base of the session file, not dropped.
func TestPlanKeepsUserOpencodeConfig(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(user, []byte(`{"theme": "dark", "agent": {"mine": {"model": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &persona.Resolved{ID: "rev", Harness: "opencode", Model: "m"}
	inv, err := Plan(r, Options{ConfigDir: filepath.Join(dir, "cfg"), Env: []string{"OPENCODE_CONFIG=" + user}})
	if err != nil {
		t.Fatal(err)
	}
	content := inv.Files[filepath.Join(dir, "cfg", "opencode.json")]
	for _, want := range []string{`"theme": "dark"`, `"mine": {`, `"rev": {`} {
		if !strings.Contains(content, want) {
			t.Errorf("session config lacks %s:\n%s", want, content)
		}
	}
	if !contains(inv.Env(), "OPENCODE_CONFIG="+filepath.Join(dir, "cfg", "opencode.json")) {
		t.Error("OPENCODE_CONFIG does not name the session file")
	}
	if err := os.WriteFile(user, []byte(`{// comments`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Plan(r, Options{ConfigDir: dir, Env: []string{"OPENCODE_CONFIG=" + user}}); err == nil || !strings.Contains(err.Error(), "not plain JSON") {
		t.Errorf("unparsable user config: error = %v", err)
	}
}

// standIn writes an executable shell script named name into a new
// directory and returns an environment whose PATH holds only it.
// standIn writes a shell script as harness name: for the tests of what a
// harness answers to --version, where a shell changes nothing; the run
// tests use compiledStandIn.
func standIn(t *testing.T, name, script string) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{"PATH=" + dir + ":/usr/bin:/bin"}
}

func TestRunExitStatus(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want Exit
	}{
		{"success", []string{"HARNESS_TEST_STANDIN=exit", "HARNESS_TEST_EXIT=0"}, Exit{}},
		{"the harness's code", []string{"HARNESS_TEST_STANDIN=exit", "HARNESS_TEST_EXIT=7"}, Exit{Code: 7}},
		{"killed by a signal", []string{"HARNESS_TEST_STANDIN=kill"}, Exit{Signal: syscall.SIGTERM}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(compiledStandIn(t, "claude", "exit"), tt.env...)
			inv, err := Plan(&persona.Resolved{ID: "p", Harness: "claude", Model: "m"}, Options{Env: env})
			if err != nil {
				t.Fatal(err)
			}
			exit, err := Run(context.Background(), inv, t.TempDir(), nil, &bytes.Buffer{}, &bytes.Buffer{})
			if err != nil || exit != tt.want {
				t.Errorf("Run() = %+v, %v; want %+v", exit, err, tt.want)
			}
		})
	}
}

// TestRunStopsAtDeadline: the end of Run's context (a timeout) sends the
// harness SIGTERM, and its exit status is what it exits with, 0 included;
// one that ignores SIGTERM is killed StopGrace later.
func TestRunStopsAtDeadline(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		want Exit
	}{
		{"exits 0 on SIGTERM", []string{"HARNESS_TEST_STANDIN=term", "HARNESS_TEST_EXIT=0"}, Exit{}},
		{"exits 3 on SIGTERM", []string{"HARNESS_TEST_STANDIN=term", "HARNESS_TEST_EXIT=3"}, Exit{Code: 3}},
		{"dies of SIGTERM", []string{"HARNESS_TEST_STANDIN=wait"}, Exit{Signal: syscall.SIGTERM}},
		{"ignores SIGTERM", []string{"HARNESS_TEST_STANDIN=ignore"}, Exit{Signal: syscall.SIGKILL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := append(compiledStandIn(t, "claude", "exit"), tt.env...)
			inv, err := Plan(&persona.Resolved{ID: "p", Harness: "claude", Model: "m"}, Options{Env: env})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer cancel()
			exit, err := Run(ctx, inv, dir, nil, &bytes.Buffer{}, &bytes.Buffer{})
			if err != nil || exit != tt.want {
				t.Errorf("Run() = %+v, %v; want %+v", exit, err, tt.want)
			}
			if tt.name != "dies of SIGTERM" && tt.name != "ignores SIGTERM" {
				if got, _ := os.ReadFile(filepath.Join(dir, "signal")); string(got) != "terminated\n" {
					t.Errorf("the harness got %q, want SIGTERM", got)
				}
			}
		})
	}
}

// TestStartInNamespaces: a harness started in its namespaces
// (confine.Policy.Net) is reported as it ended, not as its launcher,
// process 1 there, did: killed by a signal included; the time limit's
// SIGTERM reaches it through the launcher; the listeners the launcher
// made are the Process's.
func TestStartInNamespaces(t *testing.T) {
	if err := confine.NamespacesAvailable(""); err != nil {
		t.Skip(err)
	}
	tests := []struct {
		name    string
		env     []string
		timeout time.Duration
		want    Exit
	}{
		{"the harness's code", []string{"HARNESS_TEST_STANDIN=exit", "HARNESS_TEST_EXIT=7"}, 0, Exit{Code: 7}},
		{"killed by a signal", []string{"HARNESS_TEST_STANDIN=kill"}, 0, Exit{Signal: syscall.SIGTERM}},
		{"stopped by the time limit", []string{"HARNESS_TEST_STANDIN=term", "HARNESS_TEST_EXIT=3"}, 500 * time.Millisecond, Exit{Code: 3}},
	}
	// Started at once, and by a launcher started before the sandbox
	// (Spawn), whose time limit is tied to the run's context only at
	// Start.
	starts := []struct {
		how   string
		start func(ctx context.Context, inv *Invocation, dir string) (*Process, error)
	}{
		{"Start", func(ctx context.Context, inv *Invocation, dir string) (*Process, error) {
			return Start(ctx, inv, dir, nil, &bytes.Buffer{}, &bytes.Buffer{})
		}},
		{"Spawn", func(ctx context.Context, inv *Invocation, dir string) (*Process, error) {
			sp, err := Spawn(inv, inv.Confine.Shape(), nil, &bytes.Buffer{}, &bytes.Buffer{})
			if err != nil {
				return nil, err
			}
			return sp.Start(ctx, dir)
		}},
	}
	for _, tt := range tests {
		for _, st := range starts {
			t.Run(st.how+"/"+tt.name, func(t *testing.T) {
				env := append(compiledStandIn(t, "claude", "exit"), tt.env...)
				inv, err := Plan(&persona.Resolved{ID: "p", Harness: "claude", Model: "m"}, Options{Env: env})
				if err != nil {
					t.Fatal(err)
				}
				dir, tmp := t.TempDir(), t.TempDir()
				inv.Confine = &confine.Policy{Dirs: []string{dir, tmp}, Net: &confine.Namespaces{ProxyPort: 3128, Tmp: tmp}}
				ctx := context.Background()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				p, err := st.start(ctx, inv, dir)
				if err != nil {
					t.Fatal(err)
				}
				if ls := p.Listeners(); len(ls) != 1 || ls[3128] == nil {
					t.Errorf("Listeners() = %v, want port 3128's", ls)
				}
				exit, err := p.Wait()
				if err != nil || exit != tt.want {
					t.Errorf("Wait() = %+v, %v; want %+v", exit, err, tt.want)
				}
				if tt.timeout > 0 {
					if got, _ := os.ReadFile(filepath.Join(dir, "signal")); string(got) != "terminated\n" {
						t.Errorf("the harness got %q, want SIGTERM", got)
					}
				}
			})
		}
	}
}

func TestRunPassesArgvDirAndEnv(t *testing.T) {
	env := compiledStandIn(t, "codex", "args")
	inv, err := Plan(&persona.Resolved{ID: "p", Harness: "codex", Model: "openai/o3", SystemPrompt: "do it", Env: map[string]string{"TEAM": "core"}}, Options{Env: env, Extra: []string{"--x"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	var out bytes.Buffer
	if exit, err := Run(context.Background(), inv, dir, nil, &out, &bytes.Buffer{}); !exit.Success() || err != nil {
		t.Fatalf("Run() = %+v, %v", exit, err)
	}
	if want := dir + "\n-m o3 --x do it\ncore\n"; out.String() != want {
		t.Errorf("stand-in saw %q, want %q", out.String(), want)
	}
}

func TestNotFound(t *testing.T) {
	inv, err := Plan(&persona.Resolved{ID: "p", Harness: "opencode", Model: "m"}, Options{ConfigDir: t.TempDir(), Env: []string{"PATH=" + t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), inv, t.TempDir(), nil, &bytes.Buffer{}, &bytes.Buffer{})
	var nf *NotFoundError
	if !errors.As(err, &nf) || nf.Package != "opencode-ai" {
		t.Fatalf("Run() = %v; want a NotFoundError naming opencode-ai (workforce exits 127 for it)", err)
	}
	if !strings.Contains(nf.Hint(), "npm install -g opencode-ai") {
		t.Errorf("Hint() = %q", nf.Hint())
	}
}

func TestCheck(t *testing.T) {
	env := standIn(t, "codex", `echo "codex-cli 1.2.3"`)
	got := Check(context.Background(), env)
	if len(got) != len(persona.Harnesses) {
		t.Fatalf("Check() = %v", got)
	}
	for _, s := range got {
		switch s.Harness {
		case "codex":
			if !s.Installed || s.Version != "codex-cli 1.2.3" {
				t.Errorf("codex: %+v", s)
			}
		default:
			if s.Installed || s.Package == "" {
				t.Errorf("%s: %+v", s.Harness, s)
			}
		}
	}
}

// TestMain lets the test binary stand in for a harness: started as
// claude, codex or opencode with HARNESS_TEST_STANDIN set, it prints its
// getcwd, $PWD and $OLDPWD and exits. It is a compiled program started
// without a shell, so it sees PWD exactly as Run passed it.
func TestMain(m *testing.M) {
	if confine.IsLauncher(os.Args) {
		os.Exit(confine.Main(os.Args[2:]))
	}
	switch os.Getenv("HARNESS_TEST_STANDIN") {
	case "":
	case "args":
		// Its working directory, arguments and $TEAM, a line each.
		cwd, _ := syscall.Getwd()
		fmt.Printf("%s\n%s\n%s\n", cwd, strings.Join(os.Args[1:], " "), os.Getenv("TEAM"))
		os.Exit(0)
	case "exit":
		code, _ := strconv.Atoi(os.Getenv("HARNESS_TEST_EXIT"))
		os.Exit(code)
	case "kill":
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		select {}
	case "wait":
		time.Sleep(time.Minute)
		os.Exit(0)
	case "term":
		// On SIGTERM, write its name to ./signal and exit $HARNESS_TEST_EXIT.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		sig := <-c
		os.WriteFile("signal", []byte(sig.String()+"\n"), 0o644)
		code, _ := strconv.Atoi(os.Getenv("HARNESS_TEST_EXIT"))
		os.Exit(code)
	case "ignore":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Minute)
		os.Exit(0)
	default:
		cwd, err := syscall.Getwd()
		if err != nil {
			os.Exit(2)
		}
		pwd, ok := os.LookupEnv("PWD")
		if !ok {
			pwd = "<unset>"
		}
		old, ok := os.LookupEnv("OLDPWD")
		if !ok {
			old = "<unset>"
		}
		fmt.Printf("%s\n%s\n%s\n", cwd, pwd, old)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// compiledStandIn links the test binary as harness name into a new
// directory and returns an environment whose PATH holds it, with the
// stand-in mode set: a compiled program, started without a shell.
func compiledStandIn(t *testing.T, name, mode string, env ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
	return append([]string{"PATH=" + dir, "HARNESS_TEST_STANDIN=" + mode}, env...)
}

// TestRunSetsPWD starts each harness with a stale PWD and OLDPWD, as a
// shell that cd'ed elsewhere leaves them: the harness must find PWD naming
// the directory it starts in, and no OLDPWD.
func TestRunSetsPWD(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, h := range persona.Harnesses {
		if err := os.Symlink(self, filepath.Join(bin, h)); err != nil {
			t.Fatal(err)
		}
	}
	stale := t.TempDir()
	for _, h := range persona.Harnesses {
		t.Run(h, func(t *testing.T) {
			env := []string{"PATH=" + bin, "HARNESS_TEST_STANDIN=1", "PWD=" + stale, "OLDPWD=" + stale}
			inv, err := Plan(&persona.Resolved{ID: "p", Harness: h, Model: "m"}, Options{Env: env, ConfigDir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			var out bytes.Buffer
			if exit, err := Run(context.Background(), inv, dir, nil, &out, os.Stderr); !exit.Success() || err != nil {
				t.Fatalf("Run() = %+v, %v", exit, err)
			}
			if want := dir + "\n" + dir + "\n<unset>\n"; out.String() != want {
				t.Errorf("the harness saw cwd, PWD, OLDPWD %q, want %q", out.String(), want)
			}
		})
	}
}

func TestProcessEnv(t *testing.T) {
	got := ProcessEnv([]string{"A=1", "PWD=/real", "OLDPWD=/before", "B=2"}, "/box/tree")
	want := []string{"A=1", "B=2", "PWD=/box/tree"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ProcessEnv() = %q, want %q", got, want)
	}
}
