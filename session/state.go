package session

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// Per-session harness state. A sandboxed run gives its harness a state
// directory of its own, <session>/state/ (stateDir), in place of the
// user's ~/.claude, ~/.codex or opencode's XDG directories
// (harness.State says which variables move what), seeded from the user's
// configuration when the session is made, and discarded with the
// session. The harness, and the agent through it, may write there
// (harnessState.Writable: the directories a confined harness must be
// able to write); the user's own configuration, which holds what runs
// unconfined in the user's next session (hooks, MCP servers, notify
// commands, plugins), is only read.
//
//	state/claude/            CLAUDE_CONFIG_DIR
//	state/codex/             CODEX_HOME
//	state/opencode/config/   XDG_CONFIG_HOME (opencode/, git/, gh/, go/env)
//	state/opencode/data/     XDG_DATA_HOME (opencode/auth.json, ...)
//	state/opencode/state/    XDG_STATE_HOME
//	state/gemini/            GEMINI_CLI_HOME (its .gemini/, .agents/skills,
//	                         .env)
//	state/cache/             XDG_CACHE_HOME, and the package caches of the
//	                         agent's commands (cacheVars)
//
// It is used whenever the run has a sandbox copy (not with
// --install-in-repo, and not for a kept session made without one), confined
// or not: the agent's runs are then the same whether or not the kernel can
// confine them, the conversations stay with the session (sessions resume
// finds them there: claude's projects/, codex's sessions/, opencode's
// database), and the user's configuration is not rewritten by the
// harness's own bookkeeping. Unconfined, it protects the user's
// configuration only from the harness's own writes: an agent can still
// write ~/.codex by its path. PlanOptions.SharedState turns it off.
//
// Seeding copies regular files (never hard links: a link would make the
// user's file writable from the state) with mode 0600, or 0700 when the
// user's is executable (hooks, plugin scripts), and directories with mode
// 0700. A symbolic link is copied as what it leads to, file or directory,
// wherever it points: the state holds no link, so nothing written there
// reaches the user's file (a link inside the user's directory costs a
// second copy). Links that lead nowhere, loops, sockets and devices are
// skipped; a file over maxSeedFile is skipped with a warning (a
// configuration file is small; such a file is data). A source the user
// cannot read is skipped with a warning.
//
// Credentials. The login files (claude's .credentials.json, codex's
// auth.json, opencode's auth.json and mcp-auth.json; harness.StateSeed
// says which) are the only files that go back. Their bytes are kept in
// memory at seeding; after the harness exits, workforce (unconfined, not
// the agent) compares the session's copy with them, and when it changed,
// writes it over the user's file, only when:
//
//   - the session's copy is a regular file reached without following a
//     link (a link the agent planted there is never followed), and a
//     refresh of the seeded login (harness.StateSeed.CheckRefresh): a
//     JSON object with the same entries, of the same types, naming the
//     same accounts, where only the token fields harness/state.go lists
//     per file changed; a new or different login (an entry added, an
//     opencode wellknown URL, an api key, an account) is the agent's
//     choice, and is never written back;
//   - the user's file still holds the bytes it had at seeding: a login
//     refreshed elsewhere meanwhile (another session, the user's own
//     harness) wins, and a warning says the session's copy is dropped.
//
// The new file is written beside the user's, then exchanged with it in
// one step (renameat2 RENAME_EXCHANGE), and what came out is compared with
// the seeded bytes: a write made after the check is seen, and put back.
// Where the file system cannot exchange, the file is compared again just
// before a rename over it, and a write between the two is lost. A user's
// credential that is a link the user made is followed at seeding, and
// written back to where it led then, if it still leads there. A
// credential the user did not have at seeding is never created (the
// account it names would be the agent's choice), and the one a session
// removed is left to the user. The limit that stays: an agent that
// writes a valid token of another account into a token field of a file
// that names no account (claude's, an opencode oauth entry) has it
// written back; docs/sandbox.md says so.
//
// The state's directories are made one at a time below the state
// directory, each opened without following a link (makeStateDir): on
// sessions resume, a link the agent left in place of one of them is
// refused, and nothing is made where it leads.
//
// A resumed session keeps its state (its conversations are there); only
// its credentials are seeded again from the user's, which may have been
// refreshed since.
//
// Package caches. The agent's commands keep caches in the user's home
// that hold code the user later runs (the Go build cache, module and
// package caches): the variables of cacheVars point them into
// state/cache/, whatever the user's environment says, so that the agent
// cannot write them; a cache inside a directory the caller keeps
// (PlanOptions.KeepCaches: the paths the sandbox allows) stays the
// user's, named explicitly when the user's environment does not name it
// (its default may lie below a moved XDG_CACHE_HOME). Go's module cache is read through GOPROXY instead:
// file://<the user's GOMODCACHE>/cache/download comes first in the
// proxy list, so a module the user has is found without the network.

// maxSeedFile is the largest file seeded into a session's state (a
// variable for the tests).
var maxSeedFile int64 = 64 << 20

// maxSeedTotal bounds what seeding copies in all: past it, the rest is
// skipped with a warning (a plugin directory grown past reason, a link to
// a large tree).
const maxSeedTotal = 512 << 20

// maxCredential is the largest credential file read.
const maxCredential = 1 << 20

// harnessState is the per-session state of a run's harness.
type harnessState struct {
	// Dir is the state directory, <session>/state.
	Dir string
	// Env are the variables that point the harness and the agent's
	// commands at it, NAME=VALUE.
	Env []string
	// Writable are the directories of the state the harness must be able
	// to write.
	Writable []string

	layout *harness.StateLayout
	creds  []*credential
	// rewrites are the placeholders the seeds' copies get in place of
	// the user's API keys, by the seed's To (planBrokers).
	rewrites map[string]harness.SeedRewrite
}

// credential is a login file seeded into the state.
type credential struct {
	seed harness.StateSeed
	// user is the user's file as it was at seeding, its links resolved;
	// seeded its bytes then.
	user   string
	seeded []byte
	// written is what the state got: seeded, or seeded with the run's
	// placeholders in place of its API keys (rewrite).
	written []byte
	rewrite *harness.SeedRewrite
}

// cacheVar is a package cache of the agent's commands: the variable that
// moves it, where it goes below state/cache, and where the user's is.
type cacheVar struct {
	name, rel string
	user      func(get func(string) string, home string) string
}

// cacheVars are the package caches moved into the session.
var cacheVars = []cacheVar{
	{"XDG_CACHE_HOME", "", func(get func(string) string, home string) string { return xdgCache(get, home) }},
	{"GOCACHE", "go-build", func(get func(string) string, home string) string {
		return first(get("GOCACHE"), goEnv(get, home)["GOCACHE"], join(xdgCache(get, home), "go-build"))
	}},
	{"GOMODCACHE", "go-mod", goModCache},
	{"npm_config_cache", "npm", func(get func(string) string, home string) string {
		return first(get("npm_config_cache"), get("NPM_CONFIG_CACHE"), join(home, ".npm"))
	}},
	{"YARN_CACHE_FOLDER", "yarn", func(get func(string) string, home string) string {
		return first(get("YARN_CACHE_FOLDER"), join(xdgCache(get, home), "yarn"))
	}},
	{"PIP_CACHE_DIR", "pip", func(get func(string) string, home string) string {
		return first(get("PIP_CACHE_DIR"), join(xdgCache(get, home), "pip"))
	}},
	{"UV_CACHE_DIR", "uv", func(get func(string) string, home string) string {
		return first(get("UV_CACHE_DIR"), join(xdgCache(get, home), "uv"))
	}},
}

// goDefaultProxy is the go command's GOPROXY when nothing sets it.
const goDefaultProxy = "https://proxy.golang.org,direct"

// planState returns the per-session state of harness h for the session
// directory dir, the caller's environment env and the directories whose
// caches stay the user's (keep): its variables and writable directories.
// Nothing is made: seed does that.
func planState(dir, h string, env, keep []string) (*harnessState, error) {
	layout, err := harness.State(h, env)
	if err != nil {
		return nil, err
	}
	st := &harnessState{Dir: filepath.Join(dir, stateDir), layout: layout}
	get := envLookup(env)
	home := get("HOME")
	if !filepath.IsAbs(home) {
		home = ""
	}
	set := map[string]bool{}
	writable := map[string]bool{}
	for _, v := range layout.Vars {
		st.Env = append(st.Env, v.Name+"="+filepath.Join(st.Dir, v.Rel))
		set[v.Name] = true
		writable[strings.SplitN(v.Rel, string(filepath.Separator), 2)[0]] = true
	}
	writable["cache"] = true
	cache := filepath.Join(st.Dir, "cache")
	for _, c := range cacheVars {
		if set[c.name] {
			continue
		}
		user := c.user(get, home)
		if kept(user, keep) {
			if get(c.name) == "" && user != "" {
				// Named, since the default may move with XDG_CACHE_HOME.
				st.Env = append(st.Env, c.name+"="+user)
				set[c.name] = true
			}
			continue
		}
		st.Env = append(st.Env, c.name+"="+filepath.Join(cache, c.rel))
		set[c.name] = true
		switch c.name {
		case "npm_config_cache":
			if get("NPM_CONFIG_CACHE") != "" {
				st.Env = append(st.Env, "NPM_CONFIG_CACHE="+filepath.Join(cache, c.rel))
			}
		case "GOMODCACHE":
			if proxy := goProxy(get, home, user); proxy != "" {
				st.Env = append(st.Env, "GOPROXY="+proxy)
			}
		}
	}
	for _, rel := range []string{"claude", "codex", "opencode", "gemini", "cache"} {
		if writable[rel] {
			st.Writable = append(st.Writable, filepath.Join(st.Dir, rel))
		}
	}
	return st, nil
}

// kept reports whether the user's cache path lies in one of the
// directories keep.
func kept(path string, keep []string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	for _, k := range keep {
		if filepath.IsAbs(k) && pathutil.Within(filepath.Clean(k), path) {
			return true
		}
	}
	return false
}

// first returns the first of vs that is an absolute path, "" if none is.
func first(vs ...string) string {
	for _, v := range vs {
		if filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
	}
	return ""
}

// join is filepath.Join, "" when dir is "".
func join(dir string, elem ...string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}

func xdgCache(get func(string) string, home string) string {
	return first(get("XDG_CACHE_HOME"), join(home, ".cache"))
}

// goEnv returns the settings of the user's go env file (`go env -w`):
// $GOENV, else go/env in the user's configuration directory.
func goEnv(get func(string) string, home string) map[string]string {
	path := get("GOENV")
	switch {
	case path == "off":
		return nil
	case path == "":
		path = join(first(get("XDG_CONFIG_HOME"), join(home, ".config")), "go", "env")
	}
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "="); ok && !strings.HasPrefix(k, "#") {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// goModCache returns the user's Go module cache: $GOMODCACHE, else the
// go env file's, else the first GOPATH entry's pkg/mod.
func goModCache(get func(string) string, home string) string {
	ge := goEnv(get, home)
	if c := first(get("GOMODCACHE"), ge["GOMODCACHE"]); c != "" {
		return c
	}
	gopath := get("GOPATH")
	if gopath == "" {
		gopath = ge["GOPATH"]
	}
	if gopath == "" {
		return join(home, "go", "pkg", "mod")
	}
	return join(first(filepath.SplitList(gopath)...), "pkg", "mod")
}

// goProxy returns the GOPROXY that reads the user's module cache modcache
// first, then the user's own proxies; "" when that cache has nothing to
// serve.
func goProxy(get func(string) string, home, modcache string) string {
	dl := join(modcache, "cache", "download")
	if fi, err := os.Stat(dl); err != nil || !fi.IsDir() {
		return ""
	}
	proxy := get("GOPROXY")
	if proxy == "" {
		proxy = goEnv(get, home)["GOPROXY"]
	}
	if proxy == "" {
		proxy = goDefaultProxy
	}
	return "file://" + filepath.ToSlash(dl) + "," + proxy
}

// seed makes the state directory and copies the user's configuration
// into it, as the layout says, keeping the credentials' bytes. A source
// that cannot be read is skipped with a warning; a state that cannot be
// written is an error.
func (st *harnessState) seed(warn func(string)) error {
	if err := os.Mkdir(st.Dir, 0o700); err != nil {
		return fmt.Errorf("cannot create the harness's state directory: %w", err)
	}
	for _, rel := range append(append([]string{}, st.layout.Dirs...), "cache") {
		fd, err := makeStateDir(st.Dir, rel)
		if err != nil {
			return fmt.Errorf("cannot create the harness's state directory: %w", err)
		}
		unix.Close(fd)
	}
	c := &seeder{warn: warn}
	for _, s := range st.layout.Seeds {
		if s.From == "" {
			continue
		}
		if s.Credential {
			if err := st.seedCredential(s, warn); err != nil {
				return err
			}
			continue
		}
		if err := c.copy(s.From, filepath.Join(st.Dir, s.To)); err != nil {
			return err
		}
		if err := st.applyRewrite(s.To); err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes the files the harness's invocation keeps in its state
// (harness.Invocation.StateFiles: gemini's settings.json and GEMINI.md),
// by path relative to the state directory, after seeding: over the
// seeded copies, following no link below the state directory (on
// resume, the agent could have left one there).
func (st *harnessState) writeFiles(files map[string]string) error {
	for _, rel := range slices.Sorted(maps.Keys(files)) {
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("the harness's state file %s is not inside its state", rel)
		}
		if err := writeStateFile(st.Dir, rel, []byte(files[rel])); err != nil {
			return fmt.Errorf("cannot write the harness's %s into its state: %w", rel, err)
		}
	}
	return nil
}

// refresh prepares the state of a resumed session: the state stays, and
// the credentials are seeded again from the user's, which may have been
// refreshed since.
func (st *harnessState) refresh(warn func(string)) error {
	st.creds = nil
	for _, s := range st.layout.Seeds {
		if s.Credential && s.From != "" {
			if err := st.seedCredential(s, warn); err != nil {
				return err
			}
		} else if err := st.applyRewrite(s.To); err != nil {
			// This run's placeholders, over the last run's.
			return err
		}
	}
	return nil
}

// seedCredential copies the user's credential s into the state and keeps
// its bytes for WriteBack.
func (st *harnessState) seedCredential(s harness.StateSeed, warn func(string)) error {
	user, err := filepath.EvalSymlinks(s.From)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		warn(fmt.Sprintf("cannot read your %s (%v): the session starts without it", s.From, err))
		return nil
	}
	data, _, err := readRegular(unix.AT_FDCWD, user, maxCredential)
	if err != nil {
		warn(fmt.Sprintf("cannot read your %s (%v): the session starts without it", s.From, err))
		return nil
	}
	c := &credential{seed: s, user: user, seeded: data, written: data}
	if r, ok := st.rewrites[filepath.ToSlash(s.To)]; ok {
		if c.written, err = r.Apply(data); err != nil {
			return fmt.Errorf("cannot put the placeholders into the session's copy of %s: %w", s.From, err)
		}
		c.rewrite = &r
	}
	if err := writeStateFile(st.Dir, s.To, c.written); err != nil {
		return fmt.Errorf("cannot seed the harness's state with %s: %w", s.From, err)
	}
	st.creds = append(st.creds, c)
	return nil
}

// beforeSwap is called between the check of the user's credential and
// its replacement: the tests write there.
var beforeSwap = func() {}

// errConflict says the user's credential changed since it was seeded.
var errConflict = errors.New("changed since the session started")

// WriteBack writes each credential the harness changed in the session's
// state back over the user's, as the package documentation says; what
// it does not write back it says through warn. Nothing else of the state
// is ever written back.
func (st *harnessState) WriteBack(warn func(string)) {
	for _, c := range st.creds {
		now, err := readStateFile(st.Dir, c.seed.To)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // removed in the session (a logout): the user's stays
		case err != nil:
			warn(fmt.Sprintf("the session's copy of your %s is not written back: %v", c.seed.From, err))
			continue
		case bytes.Equal(now, c.written):
			continue
		}
		if c.rewrite != nil {
			// The user's keys back where the placeholders are.
			if now, err = c.rewrite.Restore(c.seeded, now); err != nil {
				warn(fmt.Sprintf("the session's copy of your %s is not written back: %v; yours is kept", c.seed.From, err))
				continue
			}
			if sameJSON(now, c.seeded) {
				continue
			}
		}
		if err := c.seed.CheckRefresh(c.seeded, now); err != nil {
			warn(fmt.Sprintf("the session's copy of your %s is not written back: %v; yours is kept", c.seed.From, err))
			continue
		}
		if err := c.writeBack(now); errors.Is(err, errConflict) {
			warn(fmt.Sprintf("your %s changed while the session ran (refreshed elsewhere): yours is kept, the session's is dropped", c.seed.From))
		} else if err != nil {
			warn(fmt.Sprintf("cannot write the refreshed %s back: %v", c.seed.From, err))
		}
	}
}

// writeBack replaces the user's credential with data if it still holds
// the bytes seeded: errConflict otherwise.
func (c *credential) writeBack(data []byte) error {
	if now, err := filepath.EvalSymlinks(c.seed.From); err != nil || now != c.user {
		return errConflict // gone, or a link that leads elsewhere now
	}
	dir, name := filepath.Split(c.user)
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dirfd)
	cur, mode, err := readRegular(dirfd, name, maxCredential)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errConflict
		}
		return err
	}
	if !bytes.Equal(cur, c.seeded) {
		return errConflict
	}
	tmp, err := writeTemp(dirfd, name, data, mode)
	if err != nil {
		return &fs.PathError{Op: "write", Path: filepath.Join(dir, name), Err: err}
	}
	beforeSwap()
	err = exchangeAt(dirfd, tmp, name)
	switch {
	case err == nil:
		// What came out must be what was checked; else it goes back.
		was, _, rerr := readRegular(dirfd, tmp, maxCredential)
		if rerr == nil && bytes.Equal(was, c.seeded) {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			_ = unix.Fsync(dirfd)
			return nil
		}
		if err := exchangeAt(dirfd, tmp, name); err != nil {
			return fmt.Errorf("cannot put your %s back: it is at %s: %w", c.user, filepath.Join(dir, tmp), err)
		}
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return errConflict
	case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP):
		// The file system cannot exchange: check again, then rename over.
		cur, _, rerr := readRegular(dirfd, name, maxCredential)
		if rerr != nil || !bytes.Equal(cur, c.seeded) {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return errConflict
		}
		if err := unix.Renameat(dirfd, tmp, dirfd, name); err != nil {
			_ = unix.Unlinkat(dirfd, tmp, 0)
			return &fs.PathError{Op: "rename", Path: filepath.Join(dir, name), Err: err}
		}
		_ = unix.Fsync(dirfd)
		return nil
	default:
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return &fs.PathError{Op: "exchange", Path: filepath.Join(dir, name), Err: err}
	}
}

// writeTemp writes data to a new file beside name in dirfd, with mode,
// synced, and returns its name.
func writeTemp(dirfd int, name string, data []byte, mode uint32) (string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tmp := "." + name + ".workforce-" + hex.EncodeToString(b[:])
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return "", err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = unix.Fchmod(fd, mode) // whatever the umask says
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return "", err
	}
	return tmp, nil
}

// readRegular reads the regular file name of dirfd, following no link at
// name and never blocking on a FIFO, at most limit bytes; it also
// returns the file's permission bits.
func readRegular(dirfd int, name string, limit int64) ([]byte, uint32, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, 0, fmt.Errorf("%s is a symbolic link", name)
		}
		return nil, 0, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, 0, fmt.Errorf("%s is not a regular file", name)
	}
	if st.Size > limit {
		return nil, 0, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, 0, err
	}
	return data, uint32(st.Mode) & 0o777, nil
}

// openStateDir opens the directory rel of the state directory root,
// following no link below root.
func openStateDir(root, rel string) (int, error) {
	return walkStateDir(root, rel, false)
}

// makeStateDir makes the directory rel of the state directory root and
// those above it (mode 0700), following no link below root: a link the
// agent left in their place is refused, and nothing is made where it
// leads. It returns the directory open.
func makeStateDir(root, rel string) (int, error) {
	return walkStateDir(root, rel, true)
}

// walkStateDir opens rel below root one directory at a time, each opened
// with O_NOFOLLOW, making each first with create.
func walkStateDir(root, rel string, create bool) (int, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	if rel == "." || rel == "" {
		return fd, nil
	}
	for _, name := range strings.Split(filepath.Clean(rel), string(filepath.Separator)) {
		if name == ".." {
			unix.Close(fd)
			return -1, &fs.PathError{Op: "open", Path: filepath.Join(root, rel), Err: errors.New("outside the state directory")}
		}
		if create {
			if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, &fs.PathError{Op: "mkdir", Path: filepath.Join(root, rel), Err: err}
			}
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
				err = fmt.Errorf("%s is not a directory (a symbolic link?)", name)
			}
			return -1, &fs.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
		}
		fd = next
	}
	return fd, nil
}

// readStateFile reads the file rel of the state directory root, following
// no link below root.
func readStateFile(root, rel string) ([]byte, error) {
	fd, err := openStateDir(root, filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	data, _, err := readRegular(fd, filepath.Base(rel), maxCredential)
	return data, err
}

// writeStateFile writes data to the file rel of the state directory root
// (mode 0600), replacing what is there, following no link below root.
func writeStateFile(root, rel string, data []byte) error {
	fd, err := makeStateDir(root, filepath.Dir(rel))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tmp, err := writeTemp(fd, filepath.Base(rel), data, 0o600)
	if err != nil {
		return err
	}
	if err := unix.Renameat(fd, tmp, fd, filepath.Base(rel)); err != nil {
		_ = unix.Unlinkat(fd, tmp, 0)
		return err
	}
	return nil
}

// seeder copies the user's configuration into the state.
type seeder struct {
	warn func(string)
	// open are the directories being copied, by device and inode: a link
	// back to one of them is a loop.
	open []fileID
	// copied counts the bytes copied; full says maxSeedTotal was reached.
	copied int64
	full   bool
}

type fileID struct{ dev, ino uint64 }

// copy copies from, following links, to dst: a regular file, or a
// directory with everything in it. A from that does not exist is
// nothing to copy.
func (c *seeder) copy(from, dst string) error {
	fi, err := os.Stat(from)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		c.warn(fmt.Sprintf("cannot read %s (%v): not copied into the session's harness state", from, err))
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return fmt.Errorf("cannot seed the harness's state: %w", err)
	}
	return c.entry(from, dst, fi)
}

func (c *seeder) entry(from, dst string, fi fs.FileInfo) error {
	switch {
	case fi.IsDir():
		return c.dir(from, dst, fi)
	case fi.Mode().IsRegular():
		return c.file(from, dst)
	}
	return nil // a socket, a device, a FIFO: not configuration
}

func (c *seeder) dir(from, dst string, fi fs.FileInfo) error {
	id := idOf(fi)
	for _, o := range c.open {
		if o == id {
			return nil // a link back to a directory being copied
		}
	}
	c.open = append(c.open, id)
	defer func() { c.open = c.open[:len(c.open)-1] }()
	entries, err := os.ReadDir(from)
	if err != nil {
		c.warn(fmt.Sprintf("cannot read %s (%v): not copied into the session's harness state", from, err))
		return nil
	}
	if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cannot seed the harness's state: %w", err)
	}
	for _, e := range entries {
		src := filepath.Join(from, e.Name())
		fi, err := os.Stat(src) // a link: what it leads to
		if err != nil {
			continue // a link that leads nowhere, or a loop
		}
		if err := c.entry(src, filepath.Join(dst, e.Name()), fi); err != nil {
			return err
		}
	}
	return nil
}

func (c *seeder) file(from, dst string) error {
	in, err := os.OpenFile(from, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		c.warn(fmt.Sprintf("cannot read %s (%v): not copied into the session's harness state", from, err))
		return nil
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil // replaced meanwhile
	}
	if fi.Size() > maxSeedFile {
		c.warn(fmt.Sprintf("%s is larger than %d MiB: not copied into the session's harness state", from, maxSeedFile>>20))
		return nil
	}
	if c.copied+fi.Size() > maxSeedTotal {
		if !c.full {
			c.warn(fmt.Sprintf("your harness configuration is larger than %d MiB: %s and what follows it are not copied into the session's harness state", maxSeedTotal>>20, from))
			c.full = true
		}
		return nil
	}
	c.copied += fi.Size()
	mode := os.FileMode(0o600)
	if fi.Mode()&0o111 != 0 {
		mode = 0o700
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, mode)
	if err != nil {
		return fmt.Errorf("cannot seed the harness's state: %w", err)
	}
	_, err = io.Copy(out, io.LimitReader(in, maxSeedFile))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot seed the harness's state with %s: %w", from, err)
	}
	return nil
}

// idOf returns the device and inode of fi.
func idOf(fi fs.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}
