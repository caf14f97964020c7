// Package git runs git for workforce: every git process workforce starts
// is started here, under one policy for its environment and its
// configuration, which depends on whether the repository is trusted. It
// also knows object names (IsObjectName, BlobName) and where an object is
// stored (StoredIn).
//
// # Untrusted repositories
//
// A repository the agent could write (the sandbox's, and any copied git
// directory in the sandbox), and a temporary repository workforce makes,
// is Untrusted, the zero Trust. In it git runs nothing that a
// configuration names:
//
//   - No GIT_* variable of the caller reaches git (a GIT_DIR would point
//     it at another repository, a GIT_EXTERNAL_DIFF run a program). The
//     runner sets its own: GIT_CONFIG_NOSYSTEM=1 and
//     GIT_CONFIG_GLOBAL=/dev/null (the system's and the user's
//     configuration are not read: they too may name a pager, an fsmonitor
//     or hooks), GIT_ATTR_NOSYSTEM=1, GIT_NO_REPLACE_OBJECTS=1 (the
//     history is what the commits say) and GIT_PAGER=cat, besides those of
//     both policies below. Other variables (PATH, HOME, the locale) pass.
//   - The keys through which a repository's configuration runs a command
//     are overridden on the command line (UntrustedConfig), which wins
//     over every configuration file, included ones: core.fsmonitor=false,
//     core.hooksPath=/dev/null (no hook runs), core.pager=cat and
//     --no-pager, core.editor and sequence.editor ":" (which git never
//     runs), core.askPass and credential.helper empty,
//     protocol.allow=never (no transport at all, so core.sshCommand,
//     core.gitProxy, ext:: URLs, remote.<name>.uploadpack, credential
//     helpers and core.alternateRefsCommand, which only transports use,
//     are never reached), commit and tag signing and
//     log.showSignature off (gpg.program is never needed), gc.auto=0 and
//     maintenance.auto=false.
//   - What has no such key is never asked for: filters
//     (filter.<driver>.clean, smudge and process) and the textconv and
//     command of diff.<driver>, which attributes the agent writes may name
//     for any file, run when git reads the working tree or prints a
//     patch. So Repo.Run runs only the commands listed in
//     untrustedCommands, none of them on the working tree: no status, add,
//     checkout, merge, or diff against the working tree (workforce
//     compares the sandbox's files itself); hash-object only with
//     --no-filters; diff only of two trees or the index, with
//     --no-ext-diff and --no-textconv; update-index only from an index
//     info or to mark entries, never refreshing. Writing the index
//     re-reads, through their filters, the files that look racily clean
//     (changed in the second the index was written): update-index and
//     write-tree run with an empty directory as their work tree, so that
//     there is no file to re-read. Their paths are relative to the top of
//     the work tree.
//   - Includes (include.path, includeIf) cannot be turned off from the
//     command line. They only make git read more files, whose keys the
//     overrides above beat as they beat the repository's own.
//   - safe.directory is not set: the sandbox is the user's own, and git
//     takes that key from no repository.
//   - Git may block without running anything: on a FIFO the agent put
//     where git reads a ref, its configuration or an included file. Each
//     git process has a time limit (UntrustedLimit, a few minutes, more
//     than any command workforce runs there takes), after which it is
//     killed and Run's error says so (ErrTimeLimit).
//
// The sandbox's commits reach the real repository by a fetch run there
// (Trusted) from the sandbox. Git starts upload-pack in the sandbox
// without the fetch's command-line configuration, so upload-pack reads the
// sandbox's configuration; neither upload-pack nor the pack-objects it
// starts reads a key that runs a command but uploadpack.packObjectsHook,
// which git takes from the system's and the user's configuration only,
// never from a repository's.
//
// # Trusted repositories
//
// The user's real repository (read, and written by the commands workforce
// chooses: a fetch from the sandbox, a branch deleted) and a repository
// fetched from a source the user named (install from git; later a
// worker's clone and push) are Trusted. There the user's configuration
// and credential setup keep working: GIT_SSH_COMMAND, GIT_ASKPASS,
// SSH_AUTH_SOCK, the global credential helper, and the configuration the
// caller gives git in its environment (GIT_CONFIG_GLOBAL,
// GIT_CONFIG_SYSTEM, GIT_CONFIG_NOSYSTEM, GIT_CONFIG_PARAMETERS,
// GIT_CONFIG_COUNT with its keys and values: the user's, like their
// ~/.gitconfig). What would make git work on another repository, or read
// its arguments otherwise, never passes (LocationVariables: GIT_DIR,
// GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_CONFIG and the
// like), and git never runs the ext:: transport (TrustedConfig).
//
// # Both
//
// Git never prompts on the terminal (GIT_TERMINAL_PROMPT=0), takes no
// optional lock (GIT_OPTIONAL_LOCKS=0: reading never writes the index)
// and takes paths literally (GIT_LITERAL_PATHSPECS=1). Repo.GitDir and
// Repo.IndexFile set GIT_DIR and GIT_INDEX_FILE for a temporary
// repository.
package git

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Trust says which policy git runs under; see the package documentation.
type Trust int

const (
	// Untrusted is a repository the agent could write, or a temporary
	// one: nothing its configuration names is run.
	Untrusted Trust = iota
	// Trusted is the user's repository, or one fetched from a source the
	// user named: the user's configuration applies.
	Trusted
)

// String returns the trust's name.
func (t Trust) String() string {
	if t == Trusted {
		return "trusted"
	}
	return "untrusted"
}

// UntrustedConfig is the configuration given on the command line of
// every git run in an Untrusted repository, in front of the command.
var UntrustedConfig = []string{
	"core.fsmonitor=false",
	"core.hooksPath=/dev/null",
	"core.pager=cat",
	"core.editor=:",
	"sequence.editor=:",
	"core.askPass=",
	"credential.helper=",
	"protocol.allow=never",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"log.showSignature=false",
	"gc.auto=0",
	"maintenance.auto=false",
}

// TrustedConfig is the configuration given on the command line of every
// git run in a Trusted repository.
var TrustedConfig = []string{
	"protocol.ext.allow=never",
}

// LocationVariables are the caller's variables never passed to git in a
// Trusted repository: they name another repository or part of one, or
// change how git reads its arguments. Names ending in "_" are prefixes.
var LocationVariables = []string{
	"GIT_DIR",
	"GIT_WORK_TREE",
	"GIT_IMPLICIT_WORK_TREE",
	"GIT_INDEX_FILE",
	"GIT_INDEX_VERSION",
	"GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_COMMON_DIR",
	"GIT_CEILING_DIRECTORIES",
	"GIT_DISCOVERY_ACROSS_FILESYSTEM",
	"GIT_NAMESPACE",
	"GIT_PREFIX",
	"GIT_INTERNAL_SUPER_PREFIX",
	"GIT_SHALLOW_FILE",
	"GIT_GRAFT_FILE",
	"GIT_REPLACE_REF_BASE",
	"GIT_NO_REPLACE_OBJECTS",
	"GIT_QUARANTINE_PATH",
	"GIT_CONFIG", // the file git config reads and writes
	"GIT_LITERAL_PATHSPECS",
	"GIT_GLOB_PATHSPECS",
	"GIT_NOGLOB_PATHSPECS",
	"GIT_ICASE_PATHSPECS",
	"GIT_TERMINAL_PROMPT",
	"GIT_OPTIONAL_LOCKS",
	"GIT_EXTERNAL_DIFF",
	"GIT_DIFF_OPTS",
	"GIT_PAGER",
	"GIT_EDITOR",
	"GIT_SEQUENCE_EDITOR",
	"GIT_REFLOG_ACTION",
}

// A Repo is where git runs, and under which policy.
type Repo struct {
	// Dir is the directory git runs in; empty for the current one.
	Dir string
	// Trust is the policy: Untrusted unless said otherwise.
	Trust Trust
	// GitDir, when set, is the repository's git directory (GIT_DIR):
	// for a temporary bare repository.
	GitDir string
	// IndexFile, when set, is the index git uses (GIT_INDEX_FILE).
	IndexFile string
	// Limit is how long git may run before it is killed: UntrustedLimit
	// when zero in an Untrusted repository, none in a Trusted one but
	// where set (a fetch from a sandbox, whose files the agent wrote).
	Limit time.Duration

	workTree string // GIT_WORK_TREE, when set
}

// indexWriters are the commands of untrustedCommands that write the
// index.
var indexWriters = map[string]bool{"update-index": true, "write-tree": true}

// Error is a git command that failed.
type Error struct {
	// Command is the git command (its first argument).
	Command string
	// Stderr is what git printed on its standard error, trimmed.
	Stderr string
	// Err is the error of the process: an *exec.ExitError when git ran.
	Err error
}

func (e *Error) Error() string {
	if e.Stderr == "" {
		return fmt.Sprintf("git %s: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("git %s: %v: %s", e.Command, e.Err, e.Stderr)
}

func (e *Error) Unwrap() error { return e.Err }

// ExitCode returns git's exit status; -1 when git did not exit (it was
// not found, or was killed).
func (e *Error) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// ExitCode returns the exit status of the git command that failed with
// err; -1 when err is no git exit.
func ExitCode(err error) int {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.ExitCode()
	}
	return -1
}

// Run runs git with args in r, stdin (when not nil) as its standard
// input, and returns its standard output. An error is an *Error that
// carries git's standard error.
func (r Repo) Run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	var out bytes.Buffer
	if err := r.Stream(ctx, &out, stdin, args...); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Stream runs git as Run does, its standard output to w.
func (r Repo) Stream(ctx context.Context, w io.Writer, stdin []byte, args ...string) error {
	if len(args) == 0 {
		return errors.New("git: no command")
	}
	if err := r.check(args); err != nil {
		return &Error{Command: args[0], Err: err}
	}
	if r.Trust == Untrusted && indexWriters[args[0]] {
		// Writing the index re-reads the files that look racily clean,
		// through their filters: git writes it here with an empty work
		// tree, where it finds no file to read.
		if r.GitDir == "" {
			out, err := r.Run(ctx, nil, "rev-parse", "--absolute-git-dir")
			if err != nil {
				return err
			}
			r.GitDir = strings.TrimSpace(string(out))
		}
		empty, err := os.MkdirTemp("", "workforce-git-")
		if err != nil {
			return err
		}
		defer os.Remove(empty)
		r.Dir, r.workTree = empty, empty
	}
	limit := r.Limit
	parent := ctx
	if limit == 0 && r.Trust == Untrusted {
		limit = UntrustedLimit
	}
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "git", r.Args(args...)...)
	cmd.Dir = r.Dir
	cmd.Env = r.Env(os.Environ())
	// Once git is killed, what it started and left holding its output
	// is waited for no longer than this.
	cmd.WaitDelay = 5 * time.Second
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Run(); err != nil {
		// Its own limit, not the caller's: a caller's deadline is the
		// caller's to name.
		if limit > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil {
			err = fmt.Errorf("%w: killed after %v, the time limit of git in a repository whose files workforce does not trust (%v)", ErrTimeLimit, limit, err)
		}
		return &Error{Command: args[0], Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return nil
}

// UntrustedLimit is how long a git process may run in an Untrusted
// repository (or where Repo.Limit says) before it is killed, and Run
// returns an error that wraps ErrTimeLimit. The agent can make git wait
// forever without running anything: a FIFO where git reads a ref, a
// config or a file an include.path names blocks the read. No command
// workforce runs there takes minutes: the commits, trees and files of one
// session (rev-list, diff-tree, cat-file; a fetch of its commits).
var UntrustedLimit = 5 * time.Minute

// ErrTimeLimit is wrapped by the error of a git process killed at its
// time limit (UntrustedLimit, Repo.Limit).
var ErrTimeLimit = errors.New("git took too long")

// Args returns the arguments git is started with to run args in r: the
// policy's configuration, then args.
func (r Repo) Args(args ...string) []string {
	conf := TrustedConfig
	if r.Trust == Untrusted {
		conf = UntrustedConfig
	}
	out := make([]string, 0, 1+2*len(conf)+len(args))
	if r.Trust == Untrusted {
		out = append(out, "--no-pager")
	}
	for _, kv := range conf {
		out = append(out, "-c", kv)
	}
	return append(out, args...)
}

// Env returns the environment git runs with in r, made from environ (the
// caller's, as os.Environ gives it).
func (r Repo) Env(environ []string) []string {
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if r.Trust == Untrusted && strings.HasPrefix(k, "GIT_") || r.Trust == Trusted && isLocation(k) {
			continue
		}
		env = append(env, kv)
	}
	if r.Trust == Untrusted {
		env = append(env,
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_ATTR_NOSYSTEM=1",
			"GIT_NO_REPLACE_OBJECTS=1",
			"GIT_PAGER=cat",
		)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "GIT_LITERAL_PATHSPECS=1")
	if r.GitDir != "" {
		env = append(env, "GIT_DIR="+r.GitDir)
	}
	if r.IndexFile != "" {
		env = append(env, "GIT_INDEX_FILE="+r.IndexFile)
	}
	if r.workTree != "" {
		env = append(env, "GIT_WORK_TREE="+r.workTree)
	}
	return env
}

// isLocation reports whether the variable k is one of LocationVariables.
func isLocation(k string) bool {
	for _, v := range LocationVariables {
		if k == v {
			return true
		}
	}
	return false
}

// untrustedCommands are the git commands run in an Untrusted repository:
// none reads the working tree through a filter or a diff driver, given
// the flags check asks for.
var untrustedCommands = map[string]bool{
	"cat-file": true, "check-ref-format": true, "config": true, "count-objects": true,
	"diff": true, "diff-tree": true, "for-each-ref": true, "hash-object": true, "init": true,
	"ls-files": true, "ls-tree": true, "merge-base": true, "rev-list": true, "rev-parse": true,
	"show-ref": true, "symbolic-ref": true, "update-index": true, "write-tree": true,
}

// check refuses, in an Untrusted repository, the commands that could run
// what the repository's configuration or attributes name: any not in
// untrustedCommands, and those of it without the flags that keep them
// from the working tree's filters and from diff drivers.
func (r Repo) check(args []string) error {
	if r.Trust != Untrusted {
		return nil
	}
	var flags []string // the options, up to "--"
	operands := 0
	for _, a := range args[1:] {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else {
			operands++
		}
	}
	has := func(names ...string) bool {
		for _, f := range flags {
			for _, n := range names {
				if f == n {
					return true
				}
			}
		}
		return false
	}
	cmd := args[0]
	refuse := func(why string) error {
		return fmt.Errorf("%s %s in a repository workforce does not trust", cmd, why)
	}
	switch {
	case !untrustedCommands[cmd]:
		return refuse("is not run")
	case cmd == "hash-object" && !has("--no-filters"):
		return refuse("runs only with --no-filters")
	case cmd == "cat-file" && has("--textconv", "--filters"):
		return refuse("runs without --textconv and --filters")
	case cmd == "diff" && (!has("--no-ext-diff") || !has("--no-textconv")):
		return refuse("runs only with --no-ext-diff and --no-textconv")
	case cmd == "diff" && operands < 2 && !has("--cached", "--staged"):
		return refuse("compares only trees and the index, not the working tree")
	case cmd == "ls-files" && has("-m", "--modified", "-d", "--deleted"):
		return refuse("does not compare the working tree")
	case cmd == "update-index" && has("--refresh", "--really-refresh", "--again", "-g"):
		return refuse("does not refresh from the working tree")
	case cmd == "update-index" && !has("--index-info", "--cacheinfo") &&
		!has("--skip-worktree", "--no-skip-worktree", "--assume-unchanged", "--no-assume-unchanged"):
		return refuse("does not read the working tree")
	case cmd == "update-index" && has("--add", "--replace", "--remove", "--force-remove", "--chmod=+x", "--chmod=-x") && !has("--index-info", "--cacheinfo"):
		return refuse("does not read the working tree")
	}
	return nil
}

// IsObjectName reports whether s is a full object name: 40 (SHA-1) or 64
// (SHA-256) lowercase hexadecimal digits.
func IsObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Installed reports whether git is installed (on PATH).
func Installed() bool {
	_, err := exec.LookPath("git")
	return err == nil
}
