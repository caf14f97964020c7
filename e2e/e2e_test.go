//go:build e2e

// Package e2e checks workforce against the real harnesses: it installs the
// versions pinned in versions.json from the npm registry into a cache
// directory, points each harness at a loopback HTTP server that records
// every model request and answers with an error, and compares the
// instruction text each harness actually sent with what the discover
// profiles predict, and with what `workforce run` promises. Run it with
// `make e2e`; see docs/e2e.md.
package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/internal/testtmp"
)

var (
	binDir    string // the harnesses' bin directory
	cacheDir  string
	workforce string // the workforce binary under test
)

func TestMain(m *testing.M) {
	if os.Getenv(mcpEnv) != "" {
		serveMCP()
		return
	}
	code, err := setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	if code == 0 {
		// The tests' projects, homes and helper programs live outside
		// /tmp, as a user's do: a confined harness sees its session's
		// tmp on /tmp (sandbox.md, namespaces).
		done := testtmp.Outside()
		code = m.Run()
		done()
	}
	os.Exit(code)
}

// setup installs the pinned harnesses (once per set of versions) and
// builds workforce.
func setup() (int, error) {
	data, err := os.ReadFile("versions.json")
	if err != nil {
		return 1, err
	}
	var versions map[string]string
	if err := json.Unmarshal(data, &versions); err != nil {
		return 1, fmt.Errorf("versions.json: %w", err)
	}
	sum := sha256.Sum256(data)
	cacheDir = os.Getenv("WORKFORCE_E2E_CACHE")
	if cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return 1, err
		}
		cacheDir = filepath.Join(base, "workforce-e2e", hex.EncodeToString(sum[:8]))
	}
	binDir = filepath.Join(cacheDir, "node_modules", ".bin")
	if !installed(binDir, versions) {
		if err := os.MkdirAll(cacheDir, 0o755); err != nil {
			return 1, err
		}
		os.WriteFile(filepath.Join(cacheDir, "package.json"), []byte(`{"private": true}`), 0o644)
		args := []string{"install", "--no-audit", "--no-fund", "--prefix", cacheDir}
		var pkgs []string
		for pkg, v := range versions {
			pkgs = append(pkgs, pkg+"@"+v)
		}
		sort.Strings(pkgs)
		cmd := exec.Command("npm", append(args, pkgs...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		fmt.Fprintln(os.Stderr, "e2e: installing", strings.Join(pkgs, " "), "into", cacheDir)
		if err := cmd.Run(); err != nil {
			return 1, fmt.Errorf("npm install: %w", err)
		}
	}
	if err := installOlder(); err != nil {
		return 1, err
	}
	tmp, err := os.MkdirTemp("", "workforce-e2e-bin-")
	if err != nil {
		return 1, err
	}
	// workforce and its launcher beside it, of the same build as make
	// build makes them (stamped with the revision, which the launcher's
	// use needs): the real harnesses run confined by workforce-launcher.
	// Every other test runs workforce as its own launcher.
	workforce = filepath.Join(tmp, "workforce")
	cmd := exec.Command("go", "build", "-buildvcs=true", "-o", tmp+"/", "..", "../cmd/workforce-launcher")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return 1, fmt.Errorf("go build: %w", err)
	}
	return 0, nil
}

// harnessPackages are the npm packages of the harnesses.
var harnessPackages = map[string]string{
	"claude":   "@anthropic-ai/claude-code",
	"codex":    "@openai/codex",
	"opencode": "opencode-ai",
	"gemini":   "@google/gemini-cli",
}

// installed reports whether bin holds the binary of every harness whose
// package versions pins.
func installed(bin string, versions map[string]string) bool {
	for h, pkg := range harnessPackages {
		if _, pinned := versions[pkg]; !pinned {
			continue
		}
		if _, err := os.Stat(filepath.Join(bin, h)); err != nil {
			return false
		}
	}
	return true
}

// harnessBinaries maps "HARNESS@VERSION" to an installed binary.
var harnessBinaries = map[string]string{}

// installOlder installs the older measured versions of older.json, each in
// its own directory of the cache, and fills harnessBinaries with them and
// the pinned versions.
func installOlder() error {
	data, err := os.ReadFile("versions.json")
	if err != nil {
		return err
	}
	var pinned map[string]string
	if err := json.Unmarshal(data, &pinned); err != nil {
		return fmt.Errorf("versions.json: %w", err)
	}
	data, err = os.ReadFile("older.json")
	if err != nil {
		return err
	}
	var older map[string][]string
	if err := json.Unmarshal(data, &older); err != nil {
		return fmt.Errorf("older.json: %w", err)
	}
	for h, pkg := range harnessPackages {
		if v, ok := pinned[pkg]; ok {
			harnessBinaries[h+"@"+v] = filepath.Join(binDir, h)
		}
		for _, v := range older[pkg] {
			dir := filepath.Join(cacheDir, "older", h+"-"+v)
			bin := filepath.Join(dir, "node_modules", ".bin", h)
			if _, err := os.Stat(bin); err != nil {
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private": true}`), 0o644)
				cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, pkg+"@"+v)
				cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
				fmt.Fprintln(os.Stderr, "e2e: installing", pkg+"@"+v, "into", dir)
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("npm install %s@%s: %w", pkg, v, err)
				}
			}
			harnessBinaries[h+"@"+v] = bin
		}
	}
	return nil
}

// recorder is the loopback model server: it keeps every request body and
// answers with an error the harnesses do not retry.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, body)
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"workforce e2e: requests are recorded, not answered"}}`)
}

// strings returns every string value in the recorded JSON bodies.
func (r *recorder) strings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, b := range r.bodies {
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
	}
	return out
}

// env is an isolated environment for one harness run.
type env struct {
	home, url string
	rec       *recorder
	vars      []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	home := t.TempDir()
	e := &env{home: home, url: srv.URL, rec: rec}
	codexHome := filepath.Join(home, ".codex")
	os.MkdirAll(codexHome, 0o755)
	os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(fmt.Sprintf(`model = "mock-model"
model_provider = "mock"
project_doc_fallback_filenames = ["TEAM.md"]

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, srv.URL)), 0o644)
	oc := filepath.Join(home, "opencode-e2e.json")
	os.WriteFile(oc, []byte(fmt.Sprintf(`{
  "$schema": "https://opencode.ai/config.json",
  "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "mock",
    "options": {"baseURL": "%s/v1", "apiKey": "e2e"}, "models": {"m": {"name": "m"}}}},
  "model": "mock/m", "autoupdate": false, "share": "disabled"
}`, srv.URL)), 0o644)
	e.vars = []string{
		"HOME=" + home,
		"PATH=" + binDir + ":" + os.Getenv("PATH"),
		"CODEX_HOME=" + codexHome,
		"OPENAI_API_KEY=e2e",
		"OPENCODE_CONFIG=" + oc,
		"XDG_CACHE_HOME=" + filepath.Join(cacheDir, "xdg-cache"),
		"ANTHROPIC_BASE_URL=" + srv.URL,
		"ANTHROPIC_API_KEY=e2e",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"AGENT_WORKFORCE_HOME=" + filepath.Join(home, ".agentworkforce", "workforce"),
		"TERM=dumb",
	}
	e.vars = append(e.vars, geminiVars(t, home, srv.URL)...)
	return e
}

// harnessArgs starts each harness non-interactively with a one-word prompt.
var harnessArgs = map[string][]string{
	"codex":    {"exec", "--skip-git-repo-check", "hello"},
	"opencode": {"run", "hello"},
	"claude":   {"-p", "hello"},
	"gemini":   geminiHello,
}

// markers start each loaded file's block in the text the harness sends.
var markers = map[string]string{
	"codex":    "# AGENTS.md instructions for ",
	"opencode": "Instructions from: ",
	"claude":   "Contents of ",
	"gemini":   geminiMarker,
}

func (e *env) run(t *testing.T, dir string, argv ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = e.vars
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run() // the harness fails: the server answers with an error
	if ctx.Err() != nil {
		t.Fatalf("%s timed out:\n%s", strings.Join(argv, " "), out.String())
	}
	if len(e.rec.bodies) == 0 {
		t.Fatalf("%s sent no model request:\n%s", strings.Join(argv, " "), out.String())
	}
}

// sent returns the first recorded string holding the harness's
// instruction blocks, or "" when none does.
func (e *env) sent(harness string) string {
	if harness == "gemini" {
		return e.geminiSent() // two places: gemini_test.go
	}
	for _, s := range e.rec.strings() {
		if strings.Contains(s, markers[harness]) {
			return s
		}
	}
	return ""
}

// checkSent compares what a harness sent with the expected rendered text.
func checkSent(harness, sent, want string) error {
	marker := markers[harness]
	if want == "" {
		if strings.Contains(sent, marker) {
			return fmt.Errorf("the harness loaded instruction files where none were expected:\n%s", sent)
		}
		return nil
	}
	if !strings.Contains(sent, want) {
		return fmt.Errorf("the harness sent\n%q\nwhich does not contain the expected\n%q", sent, want)
	}
	if got, n := strings.Count(sent, marker), strings.Count(want, marker); got != n {
		return fmt.Errorf("the harness sent %d instruction blocks, expected %d:\n%q", got, n, sent)
	}
	return nil
}

// trees are the layouts every profile is checked on: tree, then the
// working directory, relative to it.
var trees = []struct{ name, dir, archive string }{
	{"nested files", "repo/a/b", `
-- repo/.git/HEAD --
ref: refs/heads/main
-- repo/AGENTS.md --
root agents
-- repo/CLAUDE.md --
root claude
-- repo/a/AGENTS.md --
a agents

-- repo/a/b/AGENTS.md --
b agents
-- repo/a/b/CLAUDE.md --
b claude
-- repo/a/.claude/CLAUDE.md --
dot claude a
-- repo/a/b/CLAUDE.local.md --
local b
`},
	{"override files", "repo/a", `
-- repo/.git/HEAD --
-- repo/AGENTS.md --
root agents, shadowed
-- repo/AGENTS.override.md --
root override
-- repo/a/AGENTS.md --
a agents
`},
	{"fallback names", "repo/a", `
-- repo/.git/HEAD --
-- repo/TEAM.md --
team fallback
-- repo/a/AGENTS.md --
a agents
`},
	{"whitespace-only files", "repo/a", `
-- repo/.git/HEAD --
-- repo/AGENTS.md --
   

-- repo/CLAUDE.md --
  
-- repo/a/AGENTS.md --
  a agents with spaces  

-- repo/a/CLAUDE.md --

  a claude with spaces

`},
	{"only CLAUDE.md files", "repo/a", `
-- repo/.git/HEAD --
-- repo/CLAUDE.md --
root claude only
-- repo/a/CLAUDE.md --
a claude only
`},
	{"files above the git root", "up/repo/sub", `
-- up/AGENTS.md --
above agents
-- up/CLAUDE.md --
above claude
-- up/repo/.git/HEAD --
-- up/repo/AGENTS.md --
repo agents
-- up/repo/sub/CLAUDE.md --
sub claude
`},
	{"empty files", "repo/a", `
-- repo/.git/HEAD --
-- repo/AGENTS.md --
-- repo/CLAUDE.md --
root claude beside an empty AGENTS.md
-- repo/a/CLAUDE.md --
a claude
-- repo/a/.claude/CLAUDE.md --
`},
	{"an empty AGENTS.md alone with CLAUDE.md files", "repo/a", `
-- repo/.git/HEAD --
-- repo/a/AGENTS.md --
-- repo/a/CLAUDE.md --
a claude beside an empty AGENTS.md
-- repo/CLAUDE.md --
root claude
`},
	{"an empty override", "repo/a", `
-- repo/.git/HEAD --
-- repo/AGENTS.override.md --
-- repo/AGENTS.md --
root agents behind an empty override
-- repo/a/AGENTS.md --
a agents
`},
	{"symlinked instruction files", "repo/a", `
-- repo/.git/HEAD --
-- repo/docs/shared.md --
shared agents through a symlink
-- repo/docs/claude.md --
shared claude through a symlink
-- repo/AGENTS.md -> docs/shared.md --
-- repo/a/CLAUDE.md -> ../docs/claude.md --
-- repo/a/AGENTS.md --
a agents
-- outside.md --
outside the repository
-- repo/CLAUDE.md -> ../outside.md --
`},
	{"a working directory below a nested .git", "repo/sub/x", `
-- repo/.git/HEAD --
-- repo/AGENTS.md --
outer agents
-- repo/CLAUDE.md --
outer claude
-- repo/sub/.git/HEAD --
-- repo/sub/AGENTS.md --
inner agents
-- repo/sub/x/AGENTS.md --
x agents
-- repo/sub/x/CLAUDE.md --
x claude
`},
}

func makeTree(t *testing.T, archive string) string {
	t.Helper()
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for _, f := range txtar.Parse([]byte(archive)).Files {
		p := filepath.Join(root, f.Name)
		if filepath.Base(f.Name) == "HEAD" && filepath.Base(filepath.Dir(f.Name)) == ".git" {
			// A real repository, as the harnesses may ask git where the
			// worktree is.
			repo := filepath.Dir(filepath.Dir(p))
			os.MkdirAll(repo, 0o755)
			if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			continue
		}
		if name, target, ok := strings.Cut(f.Name, " -> "); ok {
			// A symlink: "-- PATH -> TARGET --".
			p = filepath.Join(root, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestProfiles runs every harness on every tree and compares what it sent
// with its discover profile.
func TestProfiles(t *testing.T) {
	for _, tree := range trees {
		for _, f := range families(t) {
			h := f.profile.Harness
			t.Run(tree.name+"/"+f.profile.Name+"@"+f.version, func(t *testing.T) {
				root := makeTree(t, tree.archive)
				dir := filepath.Join(root, tree.dir)
				e := newEnv(t)
				o := discover.Options{Home: e.home, CodexHome: filepath.Join(e.home, ".codex"), Fallbacks: []string{"TEAM.md"}}
				if h != "codex" {
					o.Fallbacks = nil
				}
				if h == "gemini" {
					o = geminiOptions(f.profile, e.vars) // its settings: gemini_test.go
				}
				want, err := discover.Chain(f.profile, dir, o)
				if err != nil {
					t.Fatal(err)
				}
				e.run(t, dir, append([]string{f.binary}, harnessArgs[h]...)...)
				if err := checkSent(h, e.sent(h), want.Text); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

// family is one measured version of a profile and the binary to run.
type family struct {
	profile discover.Profile
	version string
	binary  string
}

// families returns every measured version of every profile, with its
// installed binary: the pinned versions from binDir, the others from
// older.json's installs. A measured version without a binary fails: a
// profile's versions must all be checked.
func families(t *testing.T) []family {
	t.Helper()
	var out []family
	for _, name := range discover.Names() {
		p := discover.Profiles[name]
		for _, v := range p.Measured {
			bin, ok := harnessBinaries[p.Harness+"@"+v]
			if !ok {
				t.Fatalf("profile %s is measured on %s %s, which make e2e does not install (e2e/versions.json, e2e/older.json)", name, p.Harness, v)
			}
			out = append(out, family{p, v, bin})
		}
	}
	return out
}

// TestVersions checks that each installed binary is the version it was
// installed as, and that ForVersion maps it to its profile.
func TestVersions(t *testing.T) {
	for _, f := range families(t) {
		out, err := exec.Command(f.binary, "--version").Output()
		if err != nil {
			t.Fatalf("%s --version: %v", f.binary, err)
		}
		if got := discover.ParseVersion(string(out)); got != f.version {
			t.Errorf("%s --version = %q, want %s", f.binary, out, f.version)
		}
		if p, note := discover.ForVersion(f.profile.Harness, string(out)); p.Name != f.profile.Name || note != "" {
			t.Errorf("ForVersion(%s, %q) = %s %q, want %s", f.profile.Harness, out, p.Name, note, f.profile.Name)
		}
	}
}

// TestCheckCanFail shows that a wrong profile is caught: opencode's blocks
// joined by a blank line instead of a newline, claude's text untrimmed, and
// each claude version family checked against the other's profile.
func TestCheckCanFail(t *testing.T) {
	root := makeTree(t, trees[0].archive)
	dir := filepath.Join(root, trees[0].dir)
	for _, h := range []string{"opencode", "claude"} {
		e := newEnv(t)
		p, _ := discover.ForHarness(h)
		p.Join, p.Trim = "\n\n\n", false
		want, err := discover.Chain(p, dir, discover.Options{Home: e.home})
		if err != nil {
			t.Fatal(err)
		}
		e.run(t, dir, append([]string{filepath.Join(binDir, h)}, harnessArgs[h]...)...)
		if checkSent(h, e.sent(h), want.Text) == nil {
			t.Errorf("%s: a deliberately wrong profile passed the check", h)
		}
	}
	// The two claude families differ where a tree has AGENTS.md files and
	// no CLAUDE.md: each version fails the other's profile there.
	root = makeTree(t, trees[1].archive) // override files
	dir = filepath.Join(root, trees[1].dir)
	for _, c := range []struct{ version, profile string }{{"2.1.197", "claude"}, {"2.1.330", "claude-2.1.197"}} {
		e := newEnv(t)
		want, err := discover.Chain(discover.Profiles[c.profile], dir, discover.Options{Home: e.home})
		if err != nil {
			t.Fatal(err)
		}
		bin, ok := harnessBinaries["claude@"+c.version]
		if !ok {
			t.Fatalf("claude %s is not installed", c.version)
		}
		e.run(t, dir, append([]string{bin}, harnessArgs["claude"]...)...)
		if checkSent("claude", e.sent("claude"), want.Text) == nil {
			t.Errorf("claude %s passed the check of profile %s", c.version, c.profile)
		}
	}
}
