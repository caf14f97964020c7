package install

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Packs from git: git+URL[#REF] (any URL git fetches, file:// included)
// and github:OWNER/REPO[@REF]; REF is a branch, a tag or a commit, the
// remote's default branch when absent. The repository is cloned into a
// temporary directory and REF checked out; hooks never run (a clone has
// none), git never prompts, and the caller's GIT_DIR and the like are not
// passed on.

// ParseGitSource returns the URL and ref of a git source; ok is false
// for a source that is not one.
func ParseGitSource(source string) (url, ref string, ok bool) {
	switch {
	case strings.HasPrefix(source, "git+"):
		url, ref, _ = strings.Cut(strings.TrimPrefix(source, "git+"), "#")
	case strings.HasPrefix(source, "github:"):
		repo, r, _ := strings.Cut(strings.TrimPrefix(source, "github:"), "@")
		owner, name, found := strings.Cut(repo, "/")
		if !found || owner == "" || name == "" || strings.Contains(name, "/") {
			return "", "", false
		}
		url, ref = "https://github.com/"+owner+"/"+strings.TrimSuffix(name, ".git")+".git", r
	default:
		return "", "", false
	}
	if url == "" || strings.HasPrefix(url, "-") || strings.HasPrefix(ref, "-") {
		return "", "", false
	}
	return url, ref, true
}

// gitEnv is the environment git runs with: the caller's, without the
// variables that would point it at another repository, never prompting.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_TERMINAL_PROMPT=0")
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("git %s: %s", args[0], strings.TrimSpace(stderr.String()))
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(out.String()), nil
}

// gitCheckout clones url into dir, checks out ref and returns the commit.
func gitCheckout(ctx context.Context, url, ref, dir string) (string, error) {
	if _, err := git(ctx, "", "clone", "--quiet", "--no-checkout", "--", url, dir); err != nil {
		return "", err
	}
	target := "HEAD"
	if ref != "" {
		target = ""
		for _, c := range []string{ref, "origin/" + ref} {
			if commit, err := git(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", c+"^{commit}"); err == nil {
				target = commit
				break
			}
		}
		if target == "" {
			return "", fmt.Errorf("no branch, tag or commit %q in %s", ref, url)
		}
	}
	if _, err := git(ctx, dir, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", target); err != nil {
		return "", err
	}
	return git(ctx, dir, "rev-parse", "HEAD")
}

// RemoteCommit returns the commit ref names in the repository at url now
// (the default branch when ref is empty; a commit names itself).
func RemoteCommit(ctx context.Context, url, ref string) (string, error) {
	if isCommit(ref) {
		return ref, nil
	}
	pattern := ref
	if ref == "" {
		pattern = "HEAD"
	}
	out, err := git(ctx, "", "ls-remote", "--", url, pattern, "refs/heads/"+pattern, "refs/tags/"+pattern, "refs/tags/"+pattern+"^{}")
	if err != nil {
		return "", err
	}
	found := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		sha, name, ok := strings.Cut(line, "\t")
		if ok {
			found[name] = sha
		}
	}
	for _, name := range []string{"refs/tags/" + pattern + "^{}", "refs/tags/" + pattern, "refs/heads/" + pattern, pattern} {
		if sha, ok := found[name]; ok {
			return sha, nil
		}
	}
	return "", fmt.Errorf("no branch or tag %q in %s", pattern, url)
}

// isCommit reports whether ref is a full commit name.
func isCommit(ref string) bool {
	if len(ref) != 40 && len(ref) != 64 {
		return false
	}
	for _, c := range ref {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}
