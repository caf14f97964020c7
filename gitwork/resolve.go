package gitwork

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// ErrNoRef is wrapped by the error of ResolveRef for a ref that names
// nothing in the repository.
var ErrNoRef = errors.New("no such branch or tag")

// ResolveRef returns the full commit id that ref names in the repository at url: a branch, tag (peeled to
// its commit), "HEAD", or a full object name (40 or 64 hex digits, taken as it is). It runs
// `git ls-remote` with the user's own git configuration for credentials (ssh keys, credential helpers),
// never a shell. Errors name the url (credentials in it redacted) and the ref; a ref that names nothing is
// an error saying so.
//
// A name is looked up as git looks up a name it fetches: as it is
// ("HEAD", "refs/heads/main"), then under refs/, refs/tags/ and
// refs/heads/ (a tag wins over a branch of the same name). A full object
// name is lowercased and not checked against the repository.
func ResolveRef(ctx context.Context, url, ref string) (string, error) {
	if err := checkURL(url); err != nil {
		return "", err
	}
	fail := func(err error) error {
		return fmt.Errorf("cannot resolve %s in %s: %w", quote.Name(ref), Redact(url), err)
	}
	switch {
	case ref == "":
		return "", fail(errors.New("no ref"))
	case strings.HasPrefix(ref, "-"):
		return "", fail(errors.New("a ref cannot start with \"-\""))
	case git.IsObjectName(strings.ToLower(ref)):
		return strings.ToLower(ref), nil
	}
	// ls-remote outside any repository, so that no repository's
	// configuration but the user's applies.
	out, err := run(ctx, trusted(os.TempDir()), nil, "ls-remote", "--", url)
	if err != nil {
		return "", fail(err)
	}
	refs := parseLsRemote(string(out))
	for _, name := range []string{ref, "refs/" + ref, "refs/tags/" + ref, "refs/heads/" + ref} {
		if id, ok := refs[name+"^{}"]; ok { // an annotated tag, peeled
			return id, nil
		}
		if id, ok := refs[name]; ok {
			return id, nil
		}
	}
	return "", fail(ErrNoRef)
}

// parseLsRemote returns the refs ls-remote listed, by name.
func parseLsRemote(out string) map[string]string {
	refs := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		id, name, ok := strings.Cut(line, "\t")
		if ok && git.IsObjectName(id) {
			refs[name] = id
		}
	}
	return refs
}
