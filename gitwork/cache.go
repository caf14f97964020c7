package gitwork

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// Cache is a worker's clone cache: one bare repository per url under Dir (named by a hash of the url),
// shared by the worker's concurrent tasks (a file lock per repository around fetches).
type Cache struct{ Dir string }

// Checkout makes dest (which must not exist) a fresh clone of url at commit, detached HEAD, fetching commit
// into the cache first when the cache lacks it; the clone borrows the cache's objects (alternates or a
// local clone) so a task costs little. dest's origin is url. The caller removes dest when done.
//
// The clone borrows through alternates (git clone --shared). Its origin
// is url without the credentials it may hold (see the package doc). On
// an error nothing is left at dest.
func (c *Cache) Checkout(ctx context.Context, url, commit, dest string) (err error) {
	if err := checkURL(url); err != nil {
		return err
	}
	if err := checkCommit("commit", commit); err != nil {
		return err
	}
	dest, err = filepath.Abs(dest)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("cannot check out into %s: it exists", quote.Name(dest))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("cannot check out %s of %s: %w", commit, Redact(url), err)
	}
	if err := c.clone(ctx, url, commit, dest); err != nil {
		return fail(err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dest)
		}
	}()
	if _, err := run(ctx, trusted(dest), nil, "config", "remote.origin.url", withoutCredentials(url)); err != nil {
		return fail(err)
	}
	if _, err := run(ctx, trusted(dest), nil, "checkout", "--quiet", "--detach", commit, "--"); err != nil {
		return fail(err)
	}
	return nil
}

// repo returns the path of url's bare repository in the cache.
func (c *Cache) repo(url string) string {
	sum := sha256.Sum256([]byte(url))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".git")
}

// clone makes dest a clone of the cache's repository of url, without a
// checkout, after fetching commit into the cache when it lacks it: all
// under the repository's lock.
func (c *Cache) clone(ctx context.Context, url, commit, dest string) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	repo := c.repo(url)
	unlock, err := lockFile(ctx, repo+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	if err := initBare(ctx, repo); err != nil {
		return err
	}
	if err := fetch(ctx, repo, url, commit); err != nil {
		return err
	}
	// Cloned from the directory, with the cache's directory as the
	// working directory: no repository's configuration but the user's
	// and the cache's applies.
	if _, err := run(ctx, trusted(c.Dir), nil, "clone", "--quiet", "--shared", "--no-checkout", "--", repo, dest); err != nil {
		os.RemoveAll(dest)
		return err
	}
	return nil
}

// initBare makes repo a bare repository unless it is one: made aside and
// renamed, so that a crash leaves none half made.
func initBare(ctx context.Context, repo string) error {
	if _, err := os.Stat(filepath.Join(repo, "HEAD")); err == nil {
		return nil
	}
	tmp := repo + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if _, err := run(ctx, trusted(filepath.Dir(repo)), nil, "init", "--quiet", "--bare", "--", tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(repo); err != nil {
		return err
	}
	return os.Rename(tmp, repo)
}

// fetch fetches commit from url into the bare repository repo, unless it
// has it: the commit alone first, kept by a ref of its own, and when the
// server refuses that (an unadvertised object), every branch and tag.
func fetch(ctx context.Context, repo, url, commit string) error {
	has := func() (bool, error) {
		_, err := run(ctx, untrusted(repo), nil, "cat-file", "-e", commit+"^{commit}")
		if err != nil && exitCode(err) < 0 {
			return false, err
		}
		return err == nil, nil
	}
	if ok, err := has(); ok || err != nil {
		return err
	}
	_, err := run(ctx, trusted(repo), nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--",
		url, commit+":refs/workforce/"+commit)
	if ok, herr := has(); ok || herr != nil {
		return herr
	}
	_, err2 := run(ctx, trusted(repo), nil, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--",
		url, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
	if ok, herr := has(); ok || herr != nil {
		return herr
	}
	if err2 != nil {
		return err2
	}
	if err != nil {
		return err
	}
	return fmt.Errorf("the repository has no commit %s in its branches and tags", commit)
}
