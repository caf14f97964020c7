package gitwork

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// hardening is given on the command line of every git command run in a
// Trusted repository, in front of the command: no hook, no fsmonitor, no
// automatic gc (a clone borrows the cache's objects).
var hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
}

// trusted is the repository dir, where git runs with the user's
// configuration and credentials.
func trusted(dir string) git.Repo { return git.Repo{Dir: dir, Trust: git.Trusted} }

// untrusted is the repository dir whose files the agent wrote.
func untrusted(dir string) git.Repo { return git.Repo{Dir: dir} }

// run runs git with args in r and returns its output; a Trusted
// repository gets the hardening. Its error names the command and carries
// git's message with urls redacted and control characters escaped.
func run(ctx context.Context, r git.Repo, stdin []byte, args ...string) ([]byte, error) {
	full := args
	if r.Trust == git.Trusted {
		full = append(append([]string(nil), hardening...), args...)
	}
	out, err := r.Run(ctx, stdin, full...)
	if err != nil {
		return nil, gitError(args[0], err)
	}
	return out, nil
}

// runError is a git command that failed, its message cleaned.
type runError struct {
	cmd    string
	stderr string // redacted and quoted
	err    error
	code   int
}

func (e *runError) Error() string {
	if e.stderr == "" {
		return fmt.Sprintf("git %s: %v", e.cmd, e.err)
	}
	return fmt.Sprintf("git %s: %v: %s", e.cmd, e.err, e.stderr)
}

func (e *runError) Unwrap() error { return e.err }

// gitError turns the error of internal/git into a runError.
func gitError(cmd string, err error) error {
	var ge *git.Error
	if !errors.As(err, &ge) {
		return &runError{cmd: cmd, err: err, code: -1}
	}
	return &runError{cmd: cmd, stderr: quote.Text(redactText(ge.Stderr)), err: ge.Err, code: ge.ExitCode()}
}

// exitCode returns git's exit status from an error of run; -1 when git
// did not exit.
func exitCode(err error) int {
	var re *runError
	if errors.As(err, &re) {
		return re.code
	}
	return -1
}

// Redact returns url with the credentials it may hold replaced by "***":
// the userinfo (what comes before the last "@" of the part after "://",
// up to its first "/"). A login name alone (no ":" in the userinfo) of an
// ssh url or of the scp-like form (git@host:path) is no credential and
// stays. Anything else is kept as it is.
func Redact(url string) string {
	pre, user, rest, ok := splitUserinfo(url)
	if !ok || loginOnly(pre, user) {
		return url
	}
	return pre + "***@" + rest
}

// HasCredentials reports whether url holds a credential: what Redact
// hides (a password, or a token given as the user of an http(s) url).
func HasCredentials(url string) bool { return withoutCredentials(url) != url }

// withoutCredentials returns url without the userinfo that Redact
// would hide: the url the clone's configuration may hold.
func withoutCredentials(url string) string {
	pre, user, rest, ok := splitUserinfo(url)
	if !ok || loginOnly(pre, user) {
		return url
	}
	return pre + rest
}

// splitUserinfo splits url around its userinfo: url is pre + user + "@"
// + rest. ok is false when url has no userinfo.
func splitUserinfo(url string) (pre, user, rest string, ok bool) {
	start := 0
	if i := strings.Index(url, "://"); i >= 0 {
		start = i + len("://")
	}
	auth := url[start:]
	if i := strings.IndexByte(auth, '/'); i >= 0 {
		auth = auth[:i]
	}
	at := strings.LastIndexByte(auth, '@')
	if at < 0 {
		return "", "", "", false
	}
	return url[:start], url[start : start+at], url[start+at+1:], true
}

// loginOnly reports whether user, the userinfo after pre, is an ssh
// login name without a password.
func loginOnly(pre, user string) bool {
	if strings.Contains(user, ":") {
		return false
	}
	switch strings.ToLower(pre) {
	case "", "ssh://", "git+ssh://", "ssh+git://":
		return true
	}
	return false
}

// urlPattern finds the urls in a message of git.
var urlPattern = lazyre.New(`[A-Za-z][A-Za-z0-9+.-]*://[^\s'"<>]*`)

// redactText returns git's message s with every url in it redacted.
func redactText(s string) string {
	return urlPattern().ReplaceAllStringFunc(s, Redact)
}

// checkURL refuses a url git would read as an option, an empty one, and
// one of the transports ext:: (git runs the command the url holds) and
// fd:: (git talks on file descriptors of its own, and waits on them
// forever): whatever the user's configuration or $GIT_ALLOW_PROTOCOL
// allows, a url that came in a message never makes git run a command or
// hang.
func checkURL(url string) error {
	switch {
	case url == "":
		return errors.New("no repository url")
	case strings.HasPrefix(url, "-"):
		return fmt.Errorf("repository url %s starts with \"-\"", quote.Name(Redact(url)))
	}
	switch h := strings.ToLower(remoteHelper(url)); h {
	case "ext", "fd":
		return fmt.Errorf("repository url %s: the transport %s:: is refused (it runs a command, or reads file descriptors)", quote.Name(Redact(url)), h)
	}
	return nil
}

// CheckURL is the check every function of the package makes of a
// repository url first: not empty, not an option, not of the ext:: or
// fd:: transport.
func CheckURL(url string) error { return checkURL(url) }

// remoteHelper is the transport a url <transport>::<address> names, as
// git reads it (a letter, then letters, digits, '+', '-' and '.', then
// "::"); "" for any other url.
func remoteHelper(url string) string {
	for i := 0; i < len(url); i++ {
		c := url[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if i == 0 && !letter {
			return ""
		}
		if letter || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.' {
			continue
		}
		if strings.HasPrefix(url[i:], "::") {
			return url[:i]
		}
		return ""
	}
	return ""
}

// checkCommit refuses what is not a full object name.
func checkCommit(what, commit string) error {
	if !git.IsObjectName(commit) {
		return fmt.Errorf("%s %s is not a full commit id (40 or 64 lowercase hex digits)", what, quote.Name(commit))
	}
	return nil
}
