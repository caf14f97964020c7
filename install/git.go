package install

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/git"
)

// Packs from git: git+URL[#REF] (any URL git fetches, file:// included)
// and github:OWNER/REPO[@REF]; REF is a branch, a tag or a commit, the
// remote's default branch when absent. The repository is cloned into a
// temporary directory and REF checked out; hooks never run (a clone has
// none). Git runs under the policy for a source the user named
// (internal/git): the user's credential setup works, git never prompts,
// never runs the ext:: transport, and the caller's GIT_DIR and the like
// are not passed on.

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

// runGit runs git in dir on a repository of a source the user named
// (Trusted: the user's credentials and configuration apply; see
// internal/git) and returns its standard output, trimmed.
func runGit(ctx context.Context, dir string, args ...string) (string, error) {
	out, err := git.Repo{Dir: dir, Trust: git.Trusted}.Run(ctx, nil, args...)
	if err != nil {
		var ge *git.Error
		if errors.As(err, &ge) && ge.ExitCode() >= 0 {
			return "", fmt.Errorf("git %s: %s", args[0], ge.Stderr)
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// gitCheckout clones url into dir, checks out ref and returns the commit.
func gitCheckout(ctx context.Context, url, ref, dir string) (string, error) {
	if _, err := runGit(ctx, "", "clone", "--quiet", "--no-checkout", "--", url, dir); err != nil {
		return "", err
	}
	target := "HEAD"
	if ref != "" {
		target = ""
		for _, c := range []string{ref, "origin/" + ref} {
			if commit, err := runGit(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", c+"^{commit}"); err == nil {
				target = commit
				break
			}
		}
		if target == "" {
			return "", fmt.Errorf("no branch, tag or commit %q in %s", ref, url)
		}
	}
	if _, err := runGit(ctx, dir, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", target); err != nil {
		return "", err
	}
	return runGit(ctx, dir, "rev-parse", "HEAD")
}

// RemoteCommit returns the commit ref names in the repository at url now
// (the default branch when ref is empty; a commit names itself).
func RemoteCommit(ctx context.Context, url, ref string) (string, error) {
	if git.IsObjectName(ref) {
		return ref, nil
	}
	pattern := ref
	if ref == "" {
		pattern = "HEAD"
	}
	out, err := runGit(ctx, "", "ls-remote", "--", url, pattern, "refs/heads/"+pattern, "refs/tags/"+pattern, "refs/tags/"+pattern+"^{}")
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
