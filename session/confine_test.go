package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/testtmp"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
)

// TestMain makes the test binary the launcher when confine.Start starts
// it so (as main does for workforce): a confined harness of these tests
// starts through it.
func TestMain(m *testing.M) {
	if confine.IsLauncher(os.Args) {
		os.Exit(confine.Main(os.Args[2:]))
	}
	done := testtmp.Outside()
	code := m.Run()
	done()
	os.Exit(code)
}

// TestPlanSandbox checks the write sandbox of planned runs: whether the
// harness is confined, and to what; never the session directory.
func TestPlanSandbox(t *testing.T) {
	canConfine := confine.Available() == nil
	// Running as root, a confined run warns of what root may do.
	rootWarning := ""
	if canConfine && os.Geteuid() == 0 {
		rootWarning = "workforce runs as root: the write sandbox keeps the harness from writing files outside it"
		if confine.NamespacesAvailable("") == nil {
			rootWarning = "workforce runs as root: in its namespaces the harness is user 1000 with no capability"
		}
	}
	tests := []struct {
		name     string
		mode     confine.Mode
		abi0     bool // the test hook plays a kernel without Landlock
		inRepo   bool
		harness  string
		perm     string // permissions.mode
		allow    bool   // allow a directory and a file
		confined bool
		readOnly bool
		err      string
		warning  string
		note     string
		root     bool // warn of a run as root, as this process may be
	}{
		{name: "on", mode: confine.On, harness: "claude", confined: canConfine},
		{name: "strict", mode: confine.Strict, harness: "opencode", confined: canConfine},
		{name: "off", mode: confine.Off, harness: "claude"},
		{name: "on without Landlock", mode: confine.On, abi0: true, harness: "claude", warning: "the harness runs without the write sandbox"},
		{name: "strict without Landlock", mode: confine.Strict, abi0: true, harness: "claude", err: "sandbox mode strict: cannot confine the harness"},
		{name: "on in the repository", mode: confine.On, inRepo: true, harness: "claude", note: "there is no sandbox"},
		{name: "strict in the repository", mode: confine.Strict, inRepo: true, harness: "claude", err: "cannot be confined"},
		{name: "off in the repository", mode: confine.Off, inRepo: true, harness: "claude"},
		{name: "codex read-only", mode: confine.On, harness: "codex", perm: "default", confined: canConfine, readOnly: true},
		{name: "codex workspace-write", mode: confine.On, harness: "codex", perm: "acceptEdits", confined: canConfine},
		{name: "allowed paths", mode: confine.On, harness: "claude", allow: true, confined: canConfine},
		{name: "as root", mode: confine.On, harness: "claude", root: true, confined: canConfine, warning: rootWarning},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.abi0 {
				t.Setenv(confine.ABIEnv, "0")
			}
			quiet := "off"
			if tt.root {
				quiet = ""
			}
			t.Setenv(confine.RootWarningEnv, quiet)
			home, root := t.TempDir(), t.TempDir()
			extra := t.TempDir()
			file := filepath.Join(extra, "cache.db")
			must(t, os.WriteFile(file, nil, 0o644))
			sb := Sandbox{Mode: tt.mode}
			if tt.allow {
				sb.Allow = []string{extra, file}
			}
			r := &persona.Resolved{ID: "p", Tier: "best", Harness: tt.harness, Model: "m", Permissions: persona.Permissions{Mode: tt.perm}}
			p, err := NewPlan(PlanOptions{Home: home, Persona: "p", Resolved: r, Root: root, Cwd: root, InRepo: tt.inRepo,
				Env: []string{"PATH=/nowhere", "TMPDIR=/tmp"}, Sandbox: sb})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("NewPlan() = %v, want an error saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := p.Confine
			if c == nil || c.Mode != tt.mode || c.Confined != tt.confined {
				t.Fatalf("Confine = %+v, want mode %v, confined %v", c, tt.mode, tt.confined)
			}
			if inv := p.Invocation(); (inv.Confine != nil) != tt.confined || inv.Confine != nil && !slices.Equal(inv.Confine.Dirs, c.Policy.Dirs) {
				t.Errorf("the invocation's policy %+v, want one (%v) equal to the plan's %+v", inv.Confine, tt.confined, c.Policy)
			}
			if got := strings.Join(p.Warnings, "\n"); tt.warning == "" && got != "" || !strings.Contains(got, tt.warning) {
				t.Errorf("warnings %q, want %q", got, tt.warning)
			}
			if got := strings.Join(p.Notes, "\n"); tt.note != "" && !strings.Contains(got, tt.note) {
				t.Errorf("notes %q, want %q", got, tt.note)
			}
			tmp := filepath.Join(p.Sandbox, tmpDir)
			if tt.inRepo {
				if len(c.Policy.Dirs) > 0 || slices.Contains(p.Env, "TMPDIR="+tmp) {
					t.Errorf("a run in the repository: policy %+v, env %q", c.Policy, p.Env)
				}
				return
			}
			if !slices.Contains(p.Env, "TMPDIR="+tmp) || !slices.Contains(p.Invocation().Env(), "TMPDIR="+tmp) {
				t.Errorf("the plan's env %q: want TMPDIR=%s, in the harness's too", p.Env, tmp)
			}
			want := []string{filepath.Join(p.Sandbox, mount.TreeDir), tmp}
			if tt.readOnly {
				want = want[1:]
			}
			// The harness's per-session state and the caches of its
			// commands (state.go), never the state directory above them.
			want = append(want, filepath.Join(p.Sandbox, stateDir, tt.harness), filepath.Join(p.Sandbox, stateDir, "cache"))
			var wantFiles []string
			if tt.allow {
				want, wantFiles = append(want, extra), []string{file}
			}
			if !slices.Equal(c.Policy.Dirs, want) || !slices.Equal(c.Policy.Files, wantFiles) {
				t.Errorf("writable %q and files %q, want %q and %q", c.Policy.Dirs, c.Policy.Files, want, wantFiles)
			}
			for _, d := range c.Policy.Dirs {
				if d == p.Sandbox || strings.HasPrefix(p.Sandbox, d+"/") || d == home {
					t.Errorf("the session directory (or above) %s is writable", d)
				}
			}
			if len(c.Policy.Devices) == 0 || c.Policy.Devices[0] != "/dev/null" {
				t.Errorf("devices %q, want /dev/null first", c.Policy.Devices)
			}
		})
	}
}

// TestSandboxFor checks where the sandbox mode comes from (asked, else
// $WORKFORCE_SANDBOX, else config.json, else on) and the paths config.json
// allows.
func TestSandboxFor(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == SandboxEnv {
				return v
			}
			return ""
		}
	}
	strict, off := confine.Strict, confine.Off
	sb, err := SandboxFor(dir, nil, env(""))
	if err != nil || sb.Mode != confine.On || len(sb.Allow) > 0 {
		t.Errorf("without anything: %+v, %v, want on", sb, err)
	}
	must(t, os.WriteFile(home.ConfigPath(dir), []byte(`{"sandbox": {"mode": "strict", "allow": ["`+cache+`"]}}`), 0o644))
	for _, tt := range []struct {
		asked *confine.Mode
		env   string
		want  confine.Mode
	}{{nil, "", confine.Strict}, {nil, "off", confine.Off}, {&off, "on", confine.Off}, {&strict, "off", confine.Strict}} {
		sb, err := SandboxFor(dir, tt.asked, env(tt.env))
		wantAllow := []string{cache}
		if tt.want == confine.Off {
			wantAllow = nil // not used, not checked
		}
		if err != nil || sb.Mode != tt.want || !slices.Equal(sb.Allow, wantAllow) {
			t.Errorf("asked %v, $%s=%q: %+v, %v; want %v allowing %q", tt.asked, SandboxEnv, tt.env, sb, err, tt.want, wantAllow)
		}
	}
	if _, err := SandboxFor(dir, nil, env("sometimes")); err == nil || !strings.Contains(err.Error(), "$WORKFORCE_SANDBOX: unknown sandbox mode \"sometimes\"") {
		t.Errorf("a bad $%s: %v", SandboxEnv, err)
	}
	must(t, os.WriteFile(home.ConfigPath(dir), []byte(`{"sandbox": {"allow": ["`+cache+`", "/no/such/dir"]}}`), 0o644))
	if _, err := SandboxFor(dir, nil, env("")); err == nil || !strings.Contains(err.Error(), "config.json: sandbox.allow[1]: /no/such/dir does not exist") {
		t.Errorf("a missing path in config.json: %v", err)
	}
	if sb, err := SandboxFor(dir, &off, env("")); err != nil || sb.Allow != nil {
		t.Errorf("off, with a missing path in config.json: %+v, %v, want no error: nothing is allowed", sb, err)
	}
}

// TestCheckAllow checks the paths a user may allow besides the sandbox.
func TestCheckAllow(t *testing.T) {
	u := t.TempDir()
	t.Setenv("HOME", u)
	cache := filepath.Join(u, ".cache", "go-build")
	must(t, os.MkdirAll(cache, 0o755))
	for _, tt := range []struct{ path, err string }{
		{cache, ""},
		{"/dev/null", ""},
		{filepath.Join(u, "missing"), "does not exist"},
		{u, "the home directory"},
		{filepath.Dir(u), "the home directory"},
		{"/", "the root directory"},
		{cache + "/../go-build", "not a clean path"},
	} {
		err := CheckAllow(tt.path)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("CheckAllow(%s) = %v, want %q", tt.path, err, tt.err)
		}
	}
}

// TestConfinedRun runs a harness confined: it writes its tree, its TMPDIR
// and an allowed directory, and nothing else: not the real project, not
// the session directory, not the home; sync-back brings its file back.
func TestConfinedRun(t *testing.T) {
	if err := confine.Available(); err != nil {
		t.Skipf("this system cannot confine: %v", err)
	}
	home, root := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "outside")
	env := fakeHarness(t, "claude", "ACTION="+strings.Join([]string{
		"echo inside > in.txt",
		"echo tmp > $TMPDIR/t.txt && echo tmp ok",
		"echo gone > /dev/null && echo null ok",
		"echo escaped > $(cat $ROOTFILE)/escaped.txt",
		"echo escaped > " + outside,
		"echo forged >> ../" + RecordFile,
		"echo forged >> ../" + mount.ManifestFile,
		"echo planted > ../planted",
		"echo planted > $HOME/.bashrc",
	}, "; "))
	var argvDir string
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "ARGV="); ok {
			argvDir = filepath.Dir(p) // the fake harness records its argv there
		}
	}
	// The real root by a file: the harness's environment names no path of
	// the project (mount.Sealer rewrites them to the sandbox's). In the
	// allowed directory: strict reads nothing else outside the sandbox.
	rootFile := filepath.Join(argvDir, "root")
	must(t, os.WriteFile(rootFile, []byte(root), 0o644))
	env = append(env, "ROOTFILE="+rootFile)
	p, err := NewPlan(PlanOptions{Home: home, Persona: "p", Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m"},
		Root: root, Cwd: root, Env: env, Sandbox: Sandbox{Mode: confine.Strict, Allow: []string{argvDir}}})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	res, err := p.Run(RunOptions{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(argvLines(t, env)) != 1 {
		t.Errorf("the harness could not write the allowed directory")
	}
	if got, _ := os.ReadFile(filepath.Join(root, "in.txt")); string(got) != "inside\n" {
		t.Errorf("in.txt synced back = %q, want the harness's", got)
	}
	for _, want := range []string{"tmp ok", "null ok"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout %q: want %q", stdout.String(), want)
		}
	}
	if n := strings.Count(stderr.String(), "Permission denied"); n != 6 {
		t.Errorf("stderr %q: want 6 writes denied", stderr.String())
	}
	for _, path := range []string{filepath.Join(root, "escaped.txt"), outside, filepath.Join(res.Session.Dir, "planted")} {
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written", path)
		}
	}
	if s, err := Open(home, res.Session.ID()); err != nil || s.Record.Phase != Synced {
		t.Errorf("the record after the run: %v, %+v", err, s)
	}
	if _, err := mount.Open(res.Session.Dir); err != nil {
		t.Errorf("the manifest after the run: %v", err)
	}
	var _ harness.Exit = res.Harness
}

// TestConfinedRunAbortsLauncher: a confined run starts its launcher
// before it makes the session (spawnHarness); when the session cannot be
// made, the launcher is ended and reaped, says nothing, and runs
// nothing.
func TestConfinedRunAbortsLauncher(t *testing.T) {
	if err := confine.Available(); err != nil {
		t.Skipf("this system cannot confine: %v", err)
	}
	home, root := t.TempDir(), t.TempDir()
	env := fakeHarness(t, "claude", "ACTION=echo ran > ran.txt")
	p, err := NewPlan(PlanOptions{Home: home, Persona: "p", Resolved: &persona.Resolved{ID: "p", Tier: "best", Harness: "claude", Model: "m"},
		Root: root, Cwd: root, Env: env, Sandbox: Sandbox{Mode: confine.Strict}})
	if err != nil {
		t.Fatal(err)
	}
	// The session's directory taken: creating the session fails.
	must(t, os.MkdirAll(p.Sandbox, 0o700))
	before := children(t)
	var stdout, stderr bytes.Buffer
	if _, err := p.Run(RunOptions{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}); err == nil {
		t.Fatal("the run succeeded in a session directory that exists")
	}
	if after := children(t); len(after) > len(before) {
		t.Errorf("children of the test after the failed run: %v, before it %v: the launcher was left", after, before)
	}
	if stdout.Len()+stderr.Len() > 0 {
		t.Errorf("the launcher said %q %q", stdout.String(), stderr.String())
	}
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "ARGV="); ok {
			if data, _ := os.ReadFile(path); len(data) > 0 {
				t.Errorf("the harness ran: %q", data)
			}
		}
	}
}

// children returns the process ids of the test process's children,
// zombies included: an unreaped launcher is left too, which
// proctree.Children, the living ones only, would not show.
func children(t *testing.T) []string {
	t.Helper()
	var out []string
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, task := range tasks {
		data, _ := os.ReadFile("/proc/self/task/" + task.Name() + "/children")
		out = append(out, strings.Fields(string(data))...)
	}
	return out
}

// FuzzCheckAllow: a path CheckAllow accepts is absolute, clean, exists,
// and is neither "/" nor the home nor above it.
func FuzzCheckAllow(f *testing.F) {
	u := f.TempDir()
	f.Setenv("HOME", filepath.Join(u, "home"))
	if err := os.MkdirAll(filepath.Join(u, "home", "cache"), 0o755); err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{u, u + "/home", u + "/home/cache", u + "/home/cache/", "/", "/dev/null", "relative", "", u + "/../" + filepath.Base(u), "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if CheckAllow(path) != nil {
			return
		}
		fi, err := os.Stat(path)
		home := filepath.Join(u, "home")
		switch {
		case err != nil:
			t.Errorf("CheckAllow(%q) accepted a path that does not exist", path)
		case !filepath.IsAbs(path) || filepath.Clean(path) != path:
			t.Errorf("CheckAllow(%q) accepted a path not absolute and clean", path)
		case fi.IsDir() && (path == "/" || path == home || strings.HasPrefix(home, path+"/")):
			t.Errorf("CheckAllow(%q) accepted the root, the home or above", path)
		}
	})
}
