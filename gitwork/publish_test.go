package gitwork

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const branch = "workforce/s1"

// newWork returns an origin and a clone of it at c1, as Checkout leaves
// it for a task.
func newWork(t *testing.T) (origin, string) {
	t.Helper()
	o := newOrigin(t)
	work := filepath.Join(t.TempDir(), "work")
	c := &Cache{Dir: filepath.Join(t.TempDir(), "repos")}
	if err := c.Checkout(context.Background(), o.url, o.c1, work); err != nil {
		t.Fatal(err)
	}
	return o, work
}

// agentCommit makes what sync-committed leaves of an agent's commit:
// the commit on the local branch, its files in the working tree, HEAD
// and the index where they were.
func agentCommit(t *testing.T, work string, edit func()) string {
	t.Helper()
	base := gitT(t, work, "rev-parse", "HEAD")
	edit()
	gitT(t, work, "add", "-A", "-f")
	gitT(t, work, "commit", "-q", "-m", "agent")
	id := gitT(t, work, "rev-parse", "HEAD")
	gitT(t, work, "update-ref", "refs/heads/"+branch, id)
	gitT(t, work, "reset", "-q", base)
	return id
}

// files returns the files of commit in repo: path to content, "x:" in
// front of an executable's, "l:" in front of a symlink's target.
func files(t *testing.T, repo, commit string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, rec := range strings.Split(strings.TrimSuffix(gitT(t, repo, "ls-tree", "-r", "-z", commit), "\x00"), "\x00") {
		if rec == "" {
			continue
		}
		meta, path, _ := strings.Cut(rec, "\t")
		f := strings.Fields(meta)
		data := catBlob(t, repo, f[2])
		switch f[0] {
		case "100755":
			data = "x:" + data
		case "120000":
			data = "l:" + data
		}
		out[path] = data
	}
	return out
}

func catBlob(t *testing.T, repo, id string) string {
	t.Helper()
	out, err := untrusted(repo).Run(context.Background(), nil, "cat-file", "blob", id)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// c1Files are the files of c1.
var c1Files = map[string]string{
	"README":     "one\n",
	"sub/f.txt":  "f\n",
	"run.sh":     "x:#!/bin/sh\n",
	".gitignore": "*.log\n",
}

func with(changes map[string]string, removed ...string) map[string]string {
	m := maps.Clone(c1Files)
	maps.Copy(m, changes)
	for _, p := range removed {
		delete(m, p)
	}
	return m
}

func TestPublish(t *testing.T) {
	binary := string([]byte{0, 1, 2, 0xff, 0xfe, '\n', 0, 'x'})
	tests := []struct {
		name string
		// agent changes the clone as a run would, and returns the
		// agent's last commit, if any.
		agent func(t *testing.T, work string) string
		// want is the tree published, nil when nothing is.
		want      map[string]string
		wantFiles int
		// ownCommit: Publish makes a commit (else it pushes the agent's).
		ownCommit bool
	}{
		{
			name:  "nothing",
			agent: func(t *testing.T, work string) string { return "" },
		},
		{
			name: "only uncommitted changes",
			agent: func(t *testing.T, work string) string {
				write(t, filepath.Join(work, "README"), "changed\n")
				write(t, filepath.Join(work, "new/deep.txt"), "new\n")
				return ""
			},
			want:      with(map[string]string{"README": "changed\n", "new/deep.txt": "new\n"}),
			wantFiles: 2, ownCommit: true,
		},
		{
			name: "agent commits and uncommitted changes",
			agent: func(t *testing.T, work string) string {
				id := agentCommit(t, work, func() { write(t, filepath.Join(work, "a.txt"), "a\n") })
				write(t, filepath.Join(work, "README"), "after\n")
				return id
			},
			want:      with(map[string]string{"README": "after\n", "a.txt": "a\n"}),
			wantFiles: 2, ownCommit: true,
		},
		{
			name: "agent commits only",
			agent: func(t *testing.T, work string) string {
				return agentCommit(t, work, func() { write(t, filepath.Join(work, "a.txt"), "a\n") })
			},
			want:      with(map[string]string{"a.txt": "a\n"}),
			wantFiles: 1,
		},
		{
			name: "agent commit undone in the working tree",
			agent: func(t *testing.T, work string) string {
				id := agentCommit(t, work, func() { write(t, filepath.Join(work, "README"), "gone\n") })
				write(t, filepath.Join(work, "README"), "one\n")
				return id
			},
			want: c1Files, ownCommit: true,
		},
		{
			name: "deletions",
			agent: func(t *testing.T, work string) string {
				os.RemoveAll(filepath.Join(work, "sub"))
				os.Remove(filepath.Join(work, "run.sh"))
				return ""
			},
			want:      with(nil, "sub/f.txt", "run.sh"),
			wantFiles: 2, ownCommit: true,
		},
		{
			name: "binary file and mode change",
			agent: func(t *testing.T, work string) string {
				write(t, filepath.Join(work, "bin.dat"), binary)
				os.Chmod(filepath.Join(work, "README"), 0o755)
				return ""
			},
			want:      with(map[string]string{"bin.dat": binary, "README": "x:one\n"}),
			wantFiles: 2, ownCommit: true,
		},
		{
			name: "ignored files: the agent's committed one stays, others are left out",
			agent: func(t *testing.T, work string) string {
				id := agentCommit(t, work, func() { write(t, filepath.Join(work, "kept.log"), "kept\n") })
				write(t, filepath.Join(work, "debug.log"), "noise\n")
				write(t, filepath.Join(work, "b.txt"), "b\n")
				return id
			},
			want:      with(map[string]string{"kept.log": "kept\n", "b.txt": "b\n"}),
			wantFiles: 2, ownCommit: true,
		},
		{
			name: "symlinks are committed as links, never followed",
			agent: func(t *testing.T, work string) string {
				outside := t.TempDir()
				write(t, filepath.Join(outside, "f.txt"), "SECRET\n")
				os.RemoveAll(filepath.Join(work, "sub"))
				if err := os.Symlink(outside, filepath.Join(work, "sub")); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("README", filepath.Join(work, "link")); err != nil {
					t.Fatal(err)
				}
				return ""
			},
			wantFiles: 3, ownCommit: true, // sub/f.txt deleted, sub and link added
		},
		{
			name: "names that need quoting",
			agent: func(t *testing.T, work string) string {
				write(t, filepath.Join(work, "a\nb \"q\"\\.txt"), "odd\n")
				write(t, filepath.Join(work, "ü\x01.txt"), "u\n")
				return ""
			},
			want:      with(map[string]string{"a\nb \"q\"\\.txt": "odd\n", "ü\x01.txt": "u\n"}),
			wantFiles: 2, ownCommit: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, work := newWork(t)
			agentTip := tt.agent(t, work)
			want := tt.want
			if tt.name == "symlinks are committed as links, never followed" {
				sub, _ := os.Readlink(filepath.Join(work, "sub"))
				want = with(map[string]string{"sub": "l:" + sub, "link": "l:README"}, "sub/f.txt")
			}
			got, err := Publish(context.Background(), work, o.url, o.c1, branch)
			if err != nil {
				t.Fatalf("Publish: %v", err)
			}
			remote, rerr := untrusted(o.url).Run(context.Background(), nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
			if want == nil {
				if got != (Published{Base: o.c1}) {
					t.Errorf("Publish = %+v, want nothing published", got)
				}
				if rerr == nil {
					t.Errorf("the remote has %s at %s, want none", branch, remote)
				}
				return
			}
			if got.Branch != branch || got.Base != o.c1 || got.Files != tt.wantFiles {
				t.Errorf("Publish = branch %q, base %s, %d files; want %q, %s, %d", got.Branch, got.Base, got.Files, branch, o.c1, tt.wantFiles)
			}
			if r := strings.TrimSpace(string(remote)); r != got.Commit {
				t.Fatalf("the remote's %s = %q (%v), want the published commit %s", branch, r, rerr, got.Commit)
			}
			if local := gitT(t, work, "rev-parse", "refs/heads/"+branch); local != got.Commit {
				t.Errorf("the local branch = %s, want %s", local, got.Commit)
			}
			if f := files(t, o.url, got.Commit); !maps.Equal(f, want) {
				t.Errorf("published files = %q\nwant %q", f, want)
			}
			parent := o.c1
			if agentTip != "" {
				parent = agentTip
			}
			if tt.ownCommit {
				who := gitT(t, o.url, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%P", got.Commit)
				if want := Signature + "|" + Signature + "|" + parent; who != want {
					t.Errorf("the published commit is %q, want %q", who, want)
				}
			} else if got.Commit != agentTip {
				t.Errorf("published %s, want the agent's commit %s", got.Commit, agentTip)
			}
			checkPatch(t, o, got)
		})
	}
}

// checkPatch checks that p.Patch applies to p.Base and gives the tree of
// p.Commit.
func checkPatch(t *testing.T, o origin, p Published) {
	t.Helper()
	if (p.Patch == "") != (p.Files == 0) {
		t.Errorf("patch of %d bytes for %d files", len(p.Patch), p.Files)
	}
	dir := filepath.Join(t.TempDir(), "apply")
	gitT(t, filepath.Dir(dir), "clone", "-q", "--no-checkout", o.url, dir)
	gitT(t, dir, "checkout", "-q", "--detach", p.Base)
	if p.Patch != "" {
		patch := filepath.Join(t.TempDir(), "patch")
		write(t, patch, p.Patch)
		gitT(t, dir, "apply", "--index", patch)
	}
	if got, want := gitT(t, dir, "write-tree"), gitT(t, dir, "rev-parse", p.Commit+"^{tree}"); got != want {
		t.Errorf("the patch applied to the base gives tree %s, want %s", got, want)
	}
}

func TestPublishNeverForces(t *testing.T) {
	o, work := newWork(t)
	ctx := context.Background()
	// The remote already has the branch, elsewhere.
	gitT(t, o.url, "update-ref", "refs/heads/"+branch, o.c2)
	write(t, filepath.Join(work, "README"), "mine\n")
	if _, err := Publish(ctx, work, o.url, o.c1, branch); err == nil || !strings.Contains(err.Error(), "git push") {
		t.Fatalf("Publish over a branch of the remote = %v, want a push error", err)
	}
	if got := gitT(t, o.url, "rev-parse", "refs/heads/"+branch); got != o.c2 {
		t.Errorf("the remote's branch moved to %s", got)
	}

	// Published twice: the second commit goes on the first.
	gitT(t, o.url, "update-ref", "-d", "refs/heads/"+branch)
	gitT(t, work, "update-ref", "-d", "refs/heads/"+branch)
	first, err := Publish(ctx, work, o.url, o.c1, branch)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(work, "more"), "more\n")
	second, err := Publish(ctx, work, o.url, o.c1, branch)
	if err != nil {
		t.Fatal(err)
	}
	if p := gitT(t, o.url, "rev-parse", second.Commit+"^"); p != first.Commit || second.Files != 2 {
		t.Errorf("second publish: parent %s (want %s), %d files (want 2)", p, first.Commit, second.Files)
	}
}

func TestPublishRefusesBadInput(t *testing.T) {
	o, work := newWork(t)
	for _, tt := range []struct{ name, url, base, branch, want string }{
		{"branch as option", o.url, o.c1, "-f", "invalid branch name"},
		{"bad branch", o.url, o.c1, "workforce/a..b", "invalid branch name"},
		{"empty branch", o.url, o.c1, "", "invalid branch name"},
		{"short base", o.url, o.c1[:8], branch, "not a full commit id"},
		{"unknown base", o.url, strings.Repeat("0", 40), branch, "not a commit of the clone"},
		{"url as option", "--receive-pack=x", o.c1, branch, `starts with "-"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			write(t, filepath.Join(work, "README"), "x\n")
			_, err := Publish(context.Background(), work, tt.url, tt.base, tt.branch)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Publish = %v, want an error saying %q", err, tt.want)
			}
		})
	}
	if out := gitT(t, o.url, "for-each-ref", "refs/heads/workforce"); out != "" {
		t.Errorf("the remote got %s", out)
	}
}

// TestPublishRunsNothingOfTheAgent plants hooks and filters in the
// working tree, which the user's configuration names, and checks that
// none runs in Checkout or Publish.
func TestPublishRunsNothingOfTheAgent(t *testing.T) {
	o, work := newWork(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\necho \"$0\" >> " + marker + "\ncat\n"
	for _, h := range []string{"pre-commit", "post-commit", "pre-push", "reference-transaction", "post-checkout", "pre-auto-gc", "fsmonitor-watchman"} {
		write(t, filepath.Join(work, "hooks", h), script)
		os.Chmod(filepath.Join(work, "hooks", h), 0o755)
	}
	write(t, filepath.Join(work, "filter.sh"), script)
	os.Chmod(filepath.Join(work, "filter.sh"), 0o755)
	write(t, filepath.Join(work, ".gitattributes"), "* filter=evil diff=evil\n")
	// The user's configuration: a hooks directory in the work tree (as
	// core.hooksPath=.githooks), an fsmonitor, a clean filter and a diff
	// driver (which name the agent's script here, so that the test sees
	// whether git would start them). Checkout then checks the published
	// commit out, hooks and all: its post-checkout does not run either.
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[core]\n\thooksPath = hooks\n\tfsmonitor = "+filepath.Join(work, "filter.sh")+
		"\n[filter \"evil\"]\n\tclean = "+filepath.Join(work, "filter.sh")+
		"\n[diff \"evil\"]\n\ttextconv = "+filepath.Join(work, "filter.sh")+"\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)

	got, err := Publish(context.Background(), work, o.url, o.c1, branch)
	if err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got.Files != 9 {
		t.Errorf("published %d files, want the 9 planted", got.Files)
	}
	c := &Cache{Dir: filepath.Join(t.TempDir(), "repos")}
	if err := c.Checkout(context.Background(), o.url, got.Commit, filepath.Join(t.TempDir(), "again")); err != nil {
		t.Fatalf("Checkout: %v", err)
	}
	if data, err := os.ReadFile(marker); err == nil {
		t.Errorf("the agent's files ran:\n%s", data)
	}
}
