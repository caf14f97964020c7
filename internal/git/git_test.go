package git

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needGit(t *testing.T) {
	t.Helper()
	if !Installed() {
		t.Skip("git is not installed")
	}
}

// caller is the environment of a caller that sets everything a user, a
// git hook or a CI system might.
var caller = []string{
	"PATH=/usr/bin",
	"HOME=/home/u",
	"LANG=C.UTF-8",
	"SSH_AUTH_SOCK=/run/agent.sock",
	"PAGER=less",
	"GIT_DIR=/elsewhere/.git",
	"GIT_WORK_TREE=/elsewhere",
	"GIT_INDEX_FILE=/elsewhere/.git/index",
	"GIT_OBJECT_DIRECTORY=/elsewhere/.git/objects",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES=/elsewhere/.git/objects",
	"GIT_COMMON_DIR=/elsewhere/.git",
	"GIT_CEILING_DIRECTORIES=/",
	"GIT_NAMESPACE=ns",
	"GIT_CONFIG=/elsewhere/config",
	"GIT_CONFIG_GLOBAL=/home/u/.gitconfig-work",
	"GIT_CONFIG_NOSYSTEM=0",
	"GIT_CONFIG_PARAMETERS='http.extraheader'='Authorization: x'",
	"GIT_CONFIG_COUNT=1",
	"GIT_CONFIG_KEY_0=credential.helper",
	"GIT_CONFIG_VALUE_0=store",
	"GIT_SSH_COMMAND=ssh -i key",
	"GIT_ASKPASS=/usr/bin/askpass",
	"GIT_TERMINAL_PROMPT=1",
	"GIT_EXTERNAL_DIFF=/usr/bin/meld",
	"GIT_PAGER=less",
	"GIT_EDITOR=vi",
	"GIT_LITERAL_PATHSPECS=0",
	"GIT_GLOB_PATHSPECS=1",
	"GIT_TRACE=1",
}

// TestEnv: which of the caller's variables reach git under each policy,
// and which the runner sets.
func TestEnv(t *testing.T) {
	tests := []struct {
		name     string
		repo     Repo
		want     []string // present, exactly
		dropped  []string // names absent
		absentKV []string // name=value pairs absent
	}{
		{
			name: "untrusted",
			repo: Repo{},
			want: []string{
				"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "SSH_AUTH_SOCK=/run/agent.sock",
				"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
				"GIT_NO_REPLACE_OBJECTS=1", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0",
				"GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1",
			},
			dropped: []string{
				"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
				"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
				"GIT_NAMESPACE", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
				"GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "GIT_SSH_COMMAND", "GIT_ASKPASS",
				"GIT_EXTERNAL_DIFF", "GIT_EDITOR", "GIT_GLOB_PATHSPECS", "GIT_TRACE",
			},
			absentKV: []string{
				"GIT_CONFIG_GLOBAL=/home/u/.gitconfig-work", "GIT_CONFIG_NOSYSTEM=0",
				"GIT_TERMINAL_PROMPT=1", "GIT_PAGER=less", "GIT_LITERAL_PATHSPECS=0",
			},
		},
		{
			name: "untrusted temporary repository",
			repo: Repo{GitDir: "/tmp/x/git", IndexFile: "/tmp/x/i"},
			want: []string{"GIT_DIR=/tmp/x/git", "GIT_INDEX_FILE=/tmp/x/i", "GIT_CONFIG_GLOBAL=/dev/null"},
			absentKV: []string{
				"GIT_DIR=/elsewhere/.git", "GIT_INDEX_FILE=/elsewhere/.git/index",
			},
		},
		{
			name: "trusted",
			repo: Repo{Trust: Trusted},
			want: []string{
				"PATH=/usr/bin", "HOME=/home/u", "SSH_AUTH_SOCK=/run/agent.sock", "PAGER=less",
				"GIT_CONFIG_GLOBAL=/home/u/.gitconfig-work", "GIT_CONFIG_NOSYSTEM=0",
				"GIT_CONFIG_PARAMETERS='http.extraheader'='Authorization: x'",
				"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=credential.helper", "GIT_CONFIG_VALUE_0=store",
				"GIT_SSH_COMMAND=ssh -i key", "GIT_ASKPASS=/usr/bin/askpass", "GIT_TRACE=1",
				"GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1",
			},
			dropped: []string{
				"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
				"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
				"GIT_NAMESPACE", "GIT_CONFIG", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR",
				"GIT_GLOB_PATHSPECS", "GIT_ATTR_NOSYSTEM", "GIT_NO_REPLACE_OBJECTS",
			},
			absentKV: []string{"GIT_TERMINAL_PROMPT=1", "GIT_LITERAL_PATHSPECS=0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := tt.repo.Env(caller)
			names := map[string]int{}
			for _, kv := range env {
				k, _, _ := strings.Cut(kv, "=")
				names[k]++
			}
			for k, n := range names {
				if n > 1 {
					t.Errorf("Env has %s %d times: %q", k, n, env)
				}
			}
			for _, kv := range tt.want {
				if !slices.Contains(env, kv) {
					t.Errorf("Env lacks %s", kv)
				}
			}
			for _, k := range tt.dropped {
				if names[k] > 0 {
					t.Errorf("Env passes %s", k)
				}
			}
			for _, kv := range tt.absentKV {
				if slices.Contains(env, kv) {
					t.Errorf("Env passes %s", kv)
				}
			}
		})
	}
}

// TestArgs: the policy's configuration comes before the command, where
// git takes it as the command line's.
func TestArgs(t *testing.T) {
	got := Repo{}.Args("rev-parse", "HEAD")
	want := []string{"--no-pager"}
	for _, kv := range UntrustedConfig {
		want = append(want, "-c", kv)
	}
	want = append(want, "rev-parse", "HEAD")
	if !slices.Equal(got, want) {
		t.Errorf("untrusted Args = %q, want %q", got, want)
	}
	for _, key := range []string{"core.fsmonitor=false", "core.hooksPath=/dev/null", "protocol.allow=never", "credential.helper="} {
		if !slices.Contains(UntrustedConfig, key) {
			t.Errorf("UntrustedConfig lacks %s", key)
		}
	}
	got = Repo{Trust: Trusted}.Args("fetch", "x")
	if want := []string{"-c", "protocol.ext.allow=never", "fetch", "x"}; !slices.Equal(got, want) {
		t.Errorf("trusted Args = %q, want %q", got, want)
	}
}

// TestCheck: in an untrusted repository only the commands that keep away
// from filters and diff drivers run.
func TestCheck(t *testing.T) {
	tests := []struct {
		args []string
		ok   bool
	}{
		{[]string{"rev-parse", "HEAD"}, true},
		{[]string{"rev-list", "a", "^b", "--"}, true},
		{[]string{"status", "--porcelain"}, false},
		{[]string{"add", "-A"}, false},
		{[]string{"checkout", "x"}, false},
		{[]string{"fetch", "x"}, false},
		{[]string{"log", "--no-ext-diff", "--no-textconv"}, false},
		{[]string{"hash-object", "-w", "--stdin"}, false},
		{[]string{"hash-object", "-w", "--no-filters", "--stdin"}, true},
		{[]string{"diff", "--no-ext-diff", "--no-textconv", "a", "b", "--", "p"}, true},
		{[]string{"diff", "--no-ext-diff", "a", "b"}, false},
		{[]string{"diff", "--no-textconv", "a", "b"}, false},
		{[]string{"diff", "--no-ext-diff", "--no-textconv", "a", "--", "p"}, false},
		{[]string{"diff", "--no-ext-diff", "--no-textconv", "--cached", "a"}, true},
		{[]string{"diff", "--no-ext-diff", "--", "--no-textconv", "a", "b"}, false},
		{[]string{"cat-file", "-p", "HEAD"}, true},
		{[]string{"cat-file", "--textconv", "HEAD:a"}, false},
		{[]string{"cat-file", "--filters", "HEAD:a"}, false},
		{[]string{"ls-files", "-z"}, true},
		{[]string{"ls-files", "-m"}, false},
		{[]string{"update-index", "-z", "--add", "--index-info"}, true},
		{[]string{"update-index", "--skip-worktree", "-z", "--stdin"}, true},
		{[]string{"update-index", "--refresh"}, false},
		{[]string{"update-index", "--really-refresh"}, false},
		{[]string{"update-index", "a.txt"}, false},
		{[]string{"update-index", "--add", "a.txt"}, false},
		{[]string{"update-index", "--skip-worktree", "--add", "a.txt"}, false},
		{[]string{"config", "--file", "c", "--get", "core.worktree"}, true},
		{[]string{"filter-branch"}, false},
	}
	for _, tt := range tests {
		err := Repo{}.check(tt.args)
		if (err == nil) != tt.ok {
			t.Errorf("check(%q) = %v, want ok %v", tt.args, err, tt.ok)
		}
		if err := (Repo{Trust: Trusted}).check(tt.args); err != nil {
			t.Errorf("trusted check(%q) = %v", tt.args, err)
		}
	}
}

// hostile is a repository configuration that names, for every key
// through which git runs a command, a command that leaves a marker in
// marks: the repository's own, an included file's and a conditionally
// included file's.
func hostile(t *testing.T, repo, marks string) {
	t.Helper()
	cmd := func(name string) string { return "touch " + filepath.Join(marks, name) }
	cfg := `[core]
	fsmonitor = ` + cmd("fsmonitor") + `
	hooksPath = ` + filepath.Join(marks, "hooks") + `
	pager = ` + cmd("pager") + `
	editor = ` + cmd("editor") + `
	askPass = ` + cmd("askpass") + `
	sshCommand = ` + cmd("ssh") + `
[sequence]
	editor = ` + cmd("sequence-editor") + `
[credential]
	helper = !` + cmd("credential") + `
[diff]
	external = ` + cmd("external-diff") + `
[diff "tc"]
	textconv = ` + cmd("textconv") + `
[filter "f"]
	clean = ` + cmd("clean") + `
	smudge = ` + cmd("smudge") + `
[pager]
	diff = ` + cmd("pager-diff") + `
[log]
	showSignature = true
[gpg]
	program = ` + cmd("gpg") + `
[include]
	path = included
[includeIf "gitdir:/"]
	path = included-if
`
	gitDir := filepath.Join(repo, ".git")
	appendFile(t, filepath.Join(gitDir, "config"), cfg)
	appendFile(t, filepath.Join(gitDir, "included"), "[filter \"g\"]\n\tprocess = "+cmd("process")+"\n")
	appendFile(t, filepath.Join(gitDir, "included-if"), "[core]\n\tfsmonitor = "+cmd("fsmonitor-included")+"\n")
	appendFile(t, filepath.Join(repo, ".gitattributes"), "* diff=tc\n*.txt filter=f\n*.go filter=g\n")
	hooks := filepath.Join(marks, "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"pre-commit", "post-commit", "reference-transaction", "post-index-change", "post-checkout"} {
		if err := os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\n"+cmd("hook-"+h)+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// markers returns the markers in marks (the hooks directory aside).
func markers(t *testing.T, marks string) []string {
	t.Helper()
	ents, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if e.Name() != "hooks" {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestUntrustedRunsNothing: in a repository whose configuration names a
// command for every key that can run one, the commands workforce runs
// there start none of them; plain git, on the same repository, does.
func TestUntrustedRunsNothing(t *testing.T) {
	needGit(t)
	repo, marks := t.TempDir(), t.TempDir()
	run(t, repo, "init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(repo, "b.go"), []byte("package b\n"), 0o644))
	run(t, repo, "add", "-A")
	run(t, repo, "commit", "-q", "-m", "one")
	must(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a, changed\n"), 0o644))
	run(t, repo, "commit", "-q", "-am", "two")
	hostile(t, repo, marks)
	must(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a, loose\n"), 0o644))
	t.Setenv("MARKS", marks)

	r := Repo{Dir: repo}
	ctx := context.Background()
	for _, args := range [][]string{
		{"rev-parse", "--verify", "HEAD^{commit}"},
		{"rev-list", "HEAD", "^HEAD~1", "--"},
		{"merge-base", "--is-ancestor", "HEAD~1", "HEAD"},
		{"diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", "HEAD~1", "HEAD", "--"},
		{"diff", "--no-ext-diff", "--no-textconv", "HEAD~1", "HEAD", "--"},
		{"diff", "--no-ext-diff", "--no-textconv", "--stat", "HEAD~1", "HEAD", "--"},
		{"ls-files", "-z"},
		{"hash-object", "--no-filters", "a.txt"},
		{"cat-file", "-p", "HEAD:a.txt"},
		{"config", "--file", filepath.Join(repo, ".git", "config"), "--get", "core.worktree"},
	} {
		_, err := r.Run(ctx, nil, args...)
		if err != nil && ExitCode(err) != 1 { // config --get: 1 when not set
			t.Errorf("Run(%q): %v", args, err)
		}
	}
	if _, err := r.Run(ctx, []byte("b.go\x00"), "update-index", "--skip-worktree", "-z", "--stdin"); err != nil {
		t.Errorf("update-index --skip-worktree: %v", err)
	}
	ran := markers(t, marks)
	if len(ran) > 0 {
		t.Errorf("git under the untrusted policy ran %q", ran)
	}
	// Refused, and not started.
	if _, err := r.Run(ctx, nil, "status", "--porcelain"); err == nil {
		t.Error("status ran in an untrusted repository")
	}
	if m := markers(t, marks); len(m) > len(ran) {
		t.Errorf("a refused command ran %q", m)
	}

	// The planted configuration does run commands for git as it comes.
	plain := exec.Command("git", "status", "--porcelain")
	plain.Dir = repo
	plain.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
	plain.Run()
	if m := markers(t, marks); len(m) == 0 {
		t.Error("plain git status ran nothing: the planted configuration tests nothing")
	}
}

// TestTrustedKeepsTheUsersCredentials: under the trusted policy the
// user's global configuration applies (its credential helper answers),
// and a GIT_DIR of the caller does not lead git elsewhere.
func TestTrustedKeepsTheUsersCredentials(t *testing.T) {
	needGit(t)
	home := t.TempDir()
	global := filepath.Join(home, "gitconfig")
	must(t, os.WriteFile(global, []byte("[credential]\n\thelper = \"!f() { echo username=u; echo password=from-the-users-helper; }; f\"\n"), 0o644))
	repo := t.TempDir()
	run(t, repo, "init", "-q")
	other := t.TempDir()
	run(t, other, "init", "-q", "--bare")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_DIR", other)

	in := []byte("protocol=https\nhost=example.com\n\n")
	out, err := Repo{Dir: repo, Trust: Trusted}.Run(context.Background(), in, "credential", "fill")
	if err != nil || !strings.Contains(string(out), "password=from-the-users-helper") {
		t.Errorf("trusted credential fill = %q, %v; want the user's helper's answer", out, err)
	}
	dir, err := Repo{Dir: repo, Trust: Trusted}.Run(context.Background(), nil, "rev-parse", "--absolute-git-dir")
	if err != nil || strings.TrimSpace(string(dir)) != filepath.Join(repo, ".git") {
		t.Errorf("trusted rev-parse --absolute-git-dir = %q, %v; want %s", dir, err, filepath.Join(repo, ".git"))
	}
	// The untrusted policy reads no global configuration.
	if _, err := (Repo{Dir: repo}).Run(context.Background(), nil, "config", "--global", "--get", "credential.helper"); ExitCode(err) != 1 {
		t.Errorf("untrusted config --global --get credential.helper: %v, want exit 1 (not set)", err)
	}
}

// TestError: a failing git carries its exit status and standard error.
func TestError(t *testing.T) {
	needGit(t)
	_, err := Repo{Dir: t.TempDir()}.Run(context.Background(), nil, "rev-parse", "--verify", "HEAD")
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode() != 128 || !strings.Contains(ge.Stderr, "not a git repository") {
		t.Fatalf("Run outside a repository = %#v", err)
	}
	if !strings.HasPrefix(err.Error(), "git rev-parse: exit status 128: ") {
		t.Errorf("Error() = %q", err.Error())
	}
	if ExitCode(errors.New("x")) != -1 {
		t.Error("ExitCode of a non-git error is not -1")
	}
}

func TestIsObjectName(t *testing.T) {
	for s, want := range map[string]bool{
		strings.Repeat("a", 40):       true,
		strings.Repeat("0", 64):       true,
		strings.Repeat("a", 39):       false,
		strings.Repeat("a", 41):       false,
		strings.Repeat("A", 40):       false,
		strings.Repeat("g", 40):       false,
		"":                            false,
		"-" + strings.Repeat("a", 39): false,
	} {
		if got := IsObjectName(s); got != want {
			t.Errorf("IsObjectName(%q) = %v, want %v", s, got, want)
		}
	}
}

// run runs git in dir as a user with no configuration of their own, for
// a test, and returns its combined output.
func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestUntrustedTimeLimit: git in an Untrusted repository whose
// configuration includes a FIFO, or whose branch is a FIFO, blocks on its
// read; it is killed at its time limit and the error says so. A Trusted
// run has no limit but where one is given.
func TestUntrustedTimeLimit(t *testing.T) {
	needGit(t)
	old := UntrustedLimit
	UntrustedLimit = time.Second
	t.Cleanup(func() { UntrustedLimit = old })
	tests := []struct {
		name string
		fifo func(gitDir string) string // makes the FIFO's place ready, returns it
		repo Repo
	}{
		{"include.path names a FIFO", func(g string) string {
			appendLine(t, filepath.Join(g, "config"), "[include]\n\tpath = "+filepath.Join(g, "fifo"))
			return filepath.Join(g, "fifo")
		}, Repo{}},
		{"the branch a FIFO", func(g string) string {
			p := filepath.Join(g, "refs", "heads", "main")
			os.Remove(p)
			return p
		}, Repo{}},
		{"a fetch's limit in a Trusted repository", func(g string) string {
			p := filepath.Join(g, "refs", "heads", "main")
			os.Remove(p)
			return p
		}, Repo{Trust: Trusted, Limit: time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			gitIn(t, dir, nil, "init", "-q", "-b", "main")
			gitIn(t, dir, nil, "-c", "user.name=T", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "c")
			if err := syscall.Mkfifo(tt.fifo(filepath.Join(dir, ".git")), 0o644); err != nil {
				t.Fatal(err)
			}
			r := tt.repo
			r.Dir = dir
			start := time.Now()
			_, err := r.Run(context.Background(), nil, "rev-parse", "HEAD")
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("git returned after %v", took)
			}
			if !errors.Is(err, ErrTimeLimit) || !strings.Contains(err.Error(), "killed after 1s") {
				t.Errorf("err = %v, want the time limit's", err)
			}
		})
	}
}

func appendLine(t *testing.T, path, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Fatal(err)
	}
}
