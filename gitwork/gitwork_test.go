package gitwork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/gittest"
)

// TestMain gives git an empty configuration of the user's: the tests see
// git as a user with none.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gitwork-test-")
	if err != nil {
		panic(err)
	}
	global := filepath.Join(dir, "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		panic(err)
	}
	os.Setenv("GIT_CONFIG_GLOBAL", global)
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// origin is a bare repository made for a test, and the commits in it.
type origin struct {
	url string
	// c0 is main's first commit (no ref names it), c1 main's tip (also
	// tag light and tag both), c2 the tip of feature (also the annotated
	// tag ann and branch both).
	c0, c1, c2 string
}

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(gittest.Run(t, dir, args...))
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func newOrigin(t *testing.T) origin {
	t.Helper()
	root := t.TempDir()
	bare := filepath.Join(root, "origin.git")
	gitT(t, root, "init", "-q", "--bare", "-b", "main", bare)
	w := filepath.Join(root, "w")
	gitT(t, root, "init", "-q", "-b", "main", w)
	write(t, filepath.Join(w, "README"), "zero\n")
	gitT(t, w, "add", "-A")
	gitT(t, w, "commit", "-q", "-m", "c0")
	c0 := gitT(t, w, "rev-parse", "HEAD")
	write(t, filepath.Join(w, "README"), "one\n")
	write(t, filepath.Join(w, "sub/f.txt"), "f\n")
	write(t, filepath.Join(w, "run.sh"), "#!/bin/sh\n")
	os.Chmod(filepath.Join(w, "run.sh"), 0o755)
	write(t, filepath.Join(w, ".gitignore"), "*.log\n")
	gitT(t, w, "add", "-A")
	gitT(t, w, "commit", "-q", "-m", "c1")
	c1 := gitT(t, w, "rev-parse", "HEAD")
	gitT(t, w, "checkout", "-q", "-b", "feature")
	write(t, filepath.Join(w, "README"), "two\n")
	gitT(t, w, "commit", "-q", "-am", "c2")
	c2 := gitT(t, w, "rev-parse", "HEAD")
	gitT(t, w, "tag", "light", c1)
	gitT(t, w, "tag", "both", c1)
	gitT(t, w, "tag", "-a", "-m", "annotated", "ann", c2)
	gitT(t, w, "branch", "both", c2)
	gitT(t, w, "push", "-q", bare, "main", "feature", "refs/heads/both", "light", "ann", "refs/tags/both")
	return origin{url: bare, c0: c0, c1: c1, c2: c2}
}

func TestResolveRef(t *testing.T) {
	o := newOrigin(t)
	ctx := context.Background()
	tests := []struct {
		name, url, ref string
		want           string
		wantErr        []string // in the error
		notInErr       string
	}{
		{name: "branch", url: o.url, ref: "feature", want: o.c2},
		{name: "default branch", url: o.url, ref: "main", want: o.c1},
		{name: "HEAD", url: o.url, ref: "HEAD", want: o.c1},
		{name: "tag", url: o.url, ref: "light", want: o.c1},
		{name: "annotated tag peeled", url: o.url, ref: "ann", want: o.c2},
		{name: "tag wins over branch", url: o.url, ref: "both", want: o.c1},
		{name: "full ref name", url: o.url, ref: "refs/heads/both", want: o.c2},
		{name: "ref below refs", url: o.url, ref: "heads/feature", want: o.c2},
		{name: "full hash", url: o.url, ref: o.c0, want: o.c0},
		{name: "full hash in capitals", url: o.url, ref: strings.ToUpper(o.c0), want: o.c0},
		{name: "unknown ref", url: o.url, ref: "nope", wantErr: []string{`nope`, o.url, "no such branch or tag"}},
		{name: "short hash", url: o.url, ref: o.c0[:12], wantErr: []string{o.c0[:12], "no such branch or tag"}},
		{name: "ref as option", url: o.url, ref: "--upload-pack=touch", wantErr: []string{"cannot start with"}},
		{name: "url as option", url: "--upload-pack=touch x", ref: "main", wantErr: []string{`starts with "-"`}},
		{name: "missing repository", url: filepath.Join(t.TempDir(), "none.git"), ref: "main", wantErr: []string{"none.git", "main", "git ls-remote"}},
		{name: "unreachable url", url: "https://user:s3cret@127.0.0.1:1/r.git", ref: "main",
			wantErr: []string{"https://***@127.0.0.1:1/r.git", "main"}, notInErr: "s3cret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveRef(ctx, tt.url, tt.ref)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Fatalf("ResolveRef(%q) = %q, %v; want %q", tt.ref, got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ResolveRef(%q) = %q, want an error", tt.ref, got)
			}
			for _, s := range tt.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			if tt.notInErr != "" && strings.Contains(err.Error(), tt.notInErr) {
				t.Errorf("error %q shows %q", err, tt.notInErr)
			}
			if tt.name == "unknown ref" && !errors.Is(err, ErrNoRef) {
				t.Errorf("error %v is not ErrNoRef", err)
			}
		})
	}
}

// checkClone checks that dest is a clone at commit, detached, whose
// origin is url and which borrows the cache's objects.
func checkClone(t *testing.T, dest, url, commit, readme string) {
	t.Helper()
	if got := gitT(t, dest, "rev-parse", "HEAD"); got != commit {
		t.Errorf("HEAD of the clone = %s, want %s", got, commit)
	}
	if out, err := trusted(dest).Run(context.Background(), nil, "symbolic-ref", "-q", "HEAD"); err == nil {
		t.Errorf("HEAD of the clone is on a branch (%s), want detached", out)
	}
	if got := gitT(t, dest, "config", "remote.origin.url"); got != url {
		t.Errorf("origin of the clone = %q, want %q", got, url)
	}
	if data, err := os.ReadFile(filepath.Join(dest, "README")); err != nil || string(data) != readme {
		t.Errorf("README of the clone = %q, %v; want %q", data, err, readme)
	}
	if _, err := os.Stat(filepath.Join(dest, ".git", "objects", "info", "alternates")); err != nil {
		t.Errorf("the clone does not borrow the cache's objects: %v", err)
	}
	if st := gitT(t, dest, "status", "--porcelain"); st != "" {
		t.Errorf("the clone is not clean:\n%s", st)
	}
}

func TestCheckout(t *testing.T) {
	o := newOrigin(t)
	ctx := context.Background()
	c := &Cache{Dir: filepath.Join(t.TempDir(), "repos")}
	dir := t.TempDir()

	// Cold: fetched; a commit no ref names too.
	for i, tt := range []struct{ commit, readme string }{{o.c2, "two\n"}, {o.c0, "zero\n"}, {o.c1, "one\n"}} {
		dest := filepath.Join(dir, "cold", string(rune('a'+i)))
		if err := c.Checkout(ctx, o.url, tt.commit, dest); err != nil {
			t.Fatalf("Checkout(%s): %v", tt.commit, err)
		}
		checkClone(t, dest, o.url, tt.commit, tt.readme)
	}
	if fi, err := os.Stat(filepath.Join(dir, "cold", "c", "run.sh")); err != nil || fi.Mode()&0o100 == 0 {
		t.Errorf("run.sh lost its mode: %v, %v", fi, err)
	}

	// Warm, without the network: the origin is gone.
	if err := os.RemoveAll(o.url); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "warm")
	if err := c.Checkout(ctx, o.url, o.c0, dest); err != nil {
		t.Fatalf("Checkout from the warm cache without its origin: %v", err)
	}
	checkClone(t, dest, o.url, o.c0, "zero\n")

	// Errors leave nothing behind.
	missing := strings.Repeat("ab", 20)
	errTests := []struct {
		name, url, commit, dest, want string
	}{
		{"unknown commit", o.url, missing, filepath.Join(dir, "missing"), missing},
		{"short commit", o.url, o.c0[:10], filepath.Join(dir, "short"), "not a full commit id"},
		{"dest exists", o.url, o.c0, dest, "exists"},
		{"url as option", "--upload-pack=x", o.c0, filepath.Join(dir, "opt"), `starts with "-"`},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			err := c.Checkout(ctx, tt.url, tt.commit, tt.dest)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Checkout = %v, want an error naming %q", err, tt.want)
			}
			if tt.dest != dest {
				if _, err := os.Lstat(tt.dest); err == nil {
					t.Errorf("Checkout left %s", tt.dest)
				}
			}
		})
	}
}

func TestCheckoutConcurrent(t *testing.T) {
	o := newOrigin(t)
	c := &Cache{Dir: filepath.Join(t.TempDir(), "repos")}
	dir := t.TempDir()
	commits := []string{o.c0, o.c1, o.c2, o.c2}
	readmes := []string{"zero\n", "one\n", "two\n", "two\n"}
	var wg sync.WaitGroup
	errs := make([]error, len(commits))
	for i, commit := range commits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Checkout(context.Background(), o.url, commit, filepath.Join(dir, string(rune('a'+i))))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Checkout %d: %v", i, err)
		}
		checkClone(t, filepath.Join(dir, string(rune('a'+i))), o.url, commits[i], readmes[i])
	}
	if m, _ := filepath.Glob(filepath.Join(c.Dir, "*.git")); len(m) != 1 {
		t.Errorf("the cache holds %v, want one repository", m)
	}
}

func TestCheckoutCredentialsNotInClone(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"https://user:tok@example.com/r.git", "https://example.com/r.git"},
		{"https://tok@example.com/r.git", "https://example.com/r.git"},
		{"ssh://git@example.com/r.git", "ssh://git@example.com/r.git"},
		{"git@example.com:r.git", "git@example.com:r.git"},
		{"/srv/r@2.git", "/srv/r@2.git"},
	} {
		if got := withoutCredentials(tt.url); got != tt.want {
			t.Errorf("withoutCredentials(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"https://user:secret@example.com/r.git", "https://***@example.com/r.git"},
		{"https://ghp_token@example.com/r.git", "https://***@example.com/r.git"},
		{"https://x:p@ss@example.com/r.git", "https://***@example.com/r.git"},
		{"http://example.com/r.git", "http://example.com/r.git"},
		{"https://example.com/a@b", "https://example.com/a@b"},
		{"ssh://git@example.com/r.git", "ssh://git@example.com/r.git"},
		{"ssh://git:pw@example.com/r.git", "ssh://***@example.com/r.git"},
		{"git@example.com:r.git", "git@example.com:r.git"},
		{"user:pw@example.com:r.git", "***@example.com:r.git"},
		{"/srv/repos/r.git", "/srv/repos/r.git"},
		{"file:///srv/r.git", "file:///srv/r.git"},
	} {
		if got := Redact(tt.url); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
	msg := "fatal: unable to access 'https://u:secret@example.com/r.git/': Failed"
	if got, want := redactText(msg), "fatal: unable to access 'https://***@example.com/r.git/': Failed"; got != want {
		t.Errorf("redactText(%q) = %q, want %q", msg, got, want)
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("https", "user", "secret", "example.com", "r.git")
	f.Add("http", "", "tok", "h:8080", "a/b@c")
	f.Add("ssh", "git", "pw", "example.com", "r")
	f.Add("https", "x-access-token", "p@ss", "example.com", "")
	f.Fuzz(func(t *testing.T, scheme, user, pass, host, path string) {
		// A url with a password: neither shows, wherever the url is.
		if pass == "" || strings.ContainsAny(user+pass, "/\x00") || strings.ContainsAny(host, "/@") ||
			strings.Contains(scheme, "://") || strings.Contains(host+path, pass) || strings.Contains(scheme, pass) {
			return
		}
		url := scheme + "://" + user + ":" + pass + "@" + host + "/" + path
		got := Redact(url)
		if want := scheme + "://***@" + host + "/" + path; got != want {
			t.Fatalf("Redact(%q) = %q, want %q", url, got, want)
		}
		if Redact(got) != got {
			t.Fatalf("Redact(%q) = %q, not stable", got, Redact(got))
		}
		if strings.ContainsAny(url, " \t\n\r\v\f'\"<>") || !urlPattern().MatchString(scheme+"://") {
			return
		}
		msg := "fatal: unable to access '" + url + "': x"
		if got, want := redactText(msg), "fatal: unable to access '"+got+"': x"; got != want {
			t.Fatalf("redactText(%q) = %q, want %q", msg, got, want)
		}
	})
}

// TestCheckoutFetchesBranchesWhenRefused: a server that refuses a commit
// no ref names (protocol v0 without uploadpack.allowReachableSHA1InWant)
// still gives it through its branches.
func TestCheckoutFetchesBranchesWhenRefused(t *testing.T) {
	o := newOrigin(t)
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[protocol]\n\tversion = 0\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	c := &Cache{Dir: filepath.Join(t.TempDir(), "repos")}
	dest := filepath.Join(t.TempDir(), "c0")
	if err := c.Checkout(context.Background(), o.url, o.c0, dest); err != nil {
		t.Fatalf("Checkout of a commit no ref names: %v", err)
	}
	checkClone(t, dest, o.url, o.c0, "zero\n")
	if got := gitT(t, c.repo(o.url), "for-each-ref", "--format=%(refname)", "refs/heads/feature", "refs/workforce/"); got != "refs/heads/feature" {
		t.Errorf("the cache holds %q, want the branches fetched and no ref of the refused commit", got)
	}
}

// TestExtTransportNeverRuns: a url of git's ext:: transport (a command
// git would run) or fd:: is refused by every function, even for a user
// whose configuration allows every transport and whose environment lists
// ext among the allowed ones (GIT_ALLOW_PROTOCOL overrides the
// configuration on the command line).
func TestExtTransportNeverRuns(t *testing.T) {
	dir := t.TempDir()
	global := filepath.Join(dir, "gitconfig")
	write(t, global, "[protocol]\n\tallow = always\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("GIT_ALLOW_PROTOCOL", "ext:fd:file")
	o := newOrigin(t)
	work := filepath.Join(dir, "work")
	c := &Cache{Dir: filepath.Join(dir, "repos")}
	if err := c.Checkout(context.Background(), o.url, o.c1, work); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(work, "new.txt"), "new\n")
	ctx := context.Background()
	for i, url := range []string{"ext::sh -c touch% MARK", "ext::sh -c touch% MARK >&2", "fd::0", "EXT::sh -c touch% MARK"} {
		mark := filepath.Join(dir, fmt.Sprintf("ran%d", i))
		url = strings.ReplaceAll(url, "MARK", mark)
		_, err1 := ResolveRef(ctx, url, "main")
		err2 := c.Checkout(ctx, url, o.c1, filepath.Join(dir, fmt.Sprintf("d%d", i)))
		_, err3 := Publish(ctx, work, url, o.c1, "workforce/s1")
		for _, err := range []error{err1, err2, err3} {
			if err == nil || !strings.Contains(err.Error(), "transport") {
				t.Errorf("%q: %v, want an error saying the transport is refused", url, err)
			}
		}
		if _, err := os.Stat(mark); err == nil {
			t.Errorf("%q: git ran the command", url)
		}
	}
}

// FuzzRemoteHelper: remoteHelper finds the transport of a url as git's
// <transport>::<address> syntax reads it, and nothing else.
func FuzzRemoteHelper(f *testing.F) {
	for _, s := range []string{"ext::sh -c x", "fd::0", "a+b.c-d::x", "https://h/r.git", "git@h:r.git", "/srv/r.git",
		"::x", "1ext::x", "ext:x", "C:\\r", "ext:::x", ""} {
		f.Add(s)
	}
	re := regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)::`)
	f.Fuzz(func(t *testing.T, url string) {
		want := ""
		if m := re.FindStringSubmatch(url); m != nil {
			want = m[1]
		}
		if got := remoteHelper(url); got != want {
			t.Fatalf("remoteHelper(%q) = %q, want %q", url, got, want)
		}
		if h := strings.ToLower(want); (h == "ext" || h == "fd") && checkURL(url) == nil {
			t.Fatalf("checkURL(%q) accepts the transport %s", url, h)
		}
	})
}
