package harness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/internal/convstore"
	"github.com/seed-3bc194a6/workforce/persona"
)

// The harnesses' own session stores: where each keeps its conversations
// (the directories are internal/convstore's table, which history/sessions
// reads too), and how to tell which one ran in a directory, for a run
// whose harness did not say its session id (an interactive run of codex
// or opencode, or a one-shot run that printed nothing). Measured on codex
// 0.169.0 and 0.171.0 and opencode 1.18.33 against the scripted model of
// make e2e, with one-shot runs and with interactive ones on a
// pseudo-terminal:
//
//   - codex writes each conversation to
//     $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time>-<id>.jsonl
//     ($CODEX_HOME defaults to ~/.codex), from its first turn on. The first
//     line is {"type":"session_meta","payload":{"id":ID,"cwd":DIR,...}},
//     with cwd the directory codex ran in (source "exec" and originator
//     "codex_exec" for codex exec, "vscode" and "codex-tui" for the
//     interactive codex); the line holds codex's base instructions too,
//     some 20 KB. ID is what `codex exec resume ID` takes.
//   - opencode keeps its sessions in a SQLite database,
//     $XDG_DATA_HOME/opencode/opencode.db (table session, column
//     directory), interactive and `opencode run` alike. `opencode session
//     list --format json` prints them as [{"id", "title", "updated",
//     "created", "projectId", "directory"}], most recent first: the
//     sessions of the project of its working directory (all sessions
//     outside a repository with commits, projectId "global"), so the
//     directory must be checked. It takes about 0.9 s; reading the
//     database directly would need a SQLite reader, and its WAL, for no
//     gain in what is known.
//   - claude takes the id before the run (--session-id), so its store is
//     not read.
//
// The store is read through the invocation's environment: in a sandboxed
// run that is the session's per-session state (State: CODEX_HOME,
// XDG_DATA_HOME), where the harness kept the conversation.

// NoSessionError reports that the harness's session store holds no
// conversation that ran in a directory.
type NoSessionError struct {
	Harness, Dir string
	// Store says where the harness keeps its sessions.
	Store string
}

func (e *NoSessionError) Error() string {
	return fmt.Sprintf("%s's session store (%s) has no conversation that ran in %s", e.Harness, e.Store, e.Dir)
}

// storeTimeout bounds a harness command that lists its sessions.
const storeTimeout = 30 * time.Second

// FindSession returns the id of the most recent conversation of inv's
// harness that ran in dir, read from the harness's own session store
// (as measured above); since is no later than the conversation's
// start: older conversations are not looked at, where the store tells
// their age. It returns a *NoSessionError when the store holds none, and
// ErrNoSessionID for claude, whose id is fixed before the run
// (Options.SessionID).
func FindSession(inv *Invocation, dir string, since time.Time) (string, error) {
	switch inv.Harness {
	case persona.HarnessCodex:
		return findCodexSession(codexHome(inv.env), dir, since, time.Now())
	case persona.HarnessOpencode:
		return findOpencodeSession(inv, dir)
	}
	return "", ErrNoSessionID
}

// codexHome is codex's home in env, where internal/convstore's table
// says: $CODEX_HOME, else ~/.codex. A relative $CODEX_HOME is taken as it
// is, as codex takes it (history/sessions leaves it out).
func codexHome(env []string) string {
	get := envLookup(env)
	loc, _ := convstore.Of(persona.HarnessCodex)
	if h := get(loc.Var); h != "" {
		return filepath.Join(h, loc.Sub)
	}
	return filepath.Join(append([]string{get("HOME")}, loc.Home...)...)
}

// maxMetaLine bounds the first line of a codex rollout file.
const maxMetaLine = 4 << 20

// findCodexSession looks for the rollout files of codex home whose
// session_meta says they ran in dir, in the day directories from a day
// before since to a day after now (codex names them in local time), and
// returns the id of the one written last.
func findCodexSession(home, dir string, since, now time.Time) (string, error) {
	root := filepath.Join(home, "sessions")
	want := sameDir(dir)
	var best string
	var bestTime time.Time
	for day := since.AddDate(0, 0, -1); !day.After(now.AddDate(0, 0, 1)); day = day.AddDate(0, 0, 1) {
		d := filepath.Join(root, day.Format("2006"), day.Format("01"), day.Format("02"))
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") || !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info()
			if err != nil || fi.ModTime().Before(since.Add(-time.Minute)) {
				continue
			}
			id, cwd, err := codexMeta(filepath.Join(d, name))
			if err != nil || id == "" || !want(cwd) {
				continue
			}
			if best == "" || fi.ModTime().After(bestTime) {
				best, bestTime = id, fi.ModTime()
			}
		}
	}
	if best == "" {
		return "", &NoSessionError{Harness: persona.HarnessCodex, Dir: dir, Store: root}
	}
	return best, nil
}

// codexMeta reads the id and working directory of a rollout file's first
// line, its session_meta.
func codexMeta(path string) (id, cwd string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, maxMetaLine)).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", "", err
	}
	return parseCodexMeta(line)
}

// parseCodexMeta reads the id and cwd of a codex session_meta line.
func parseCodexMeta(line []byte) (id, cwd string, err error) {
	var meta struct {
		Type    string `json:"type"`
		Payload struct {
			ID  string `json:"id"`
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(line), &meta); err != nil {
		return "", "", err
	}
	if meta.Type != "session_meta" {
		return "", "", fmt.Errorf("the first line is %q, not session_meta", meta.Type)
	}
	return meta.Payload.ID, meta.Payload.Cwd, nil
}

// findOpencodeSession runs `opencode session list --format json` in dir
// with the harness's environment and returns the most recent session
// whose directory is dir.
func findOpencodeSession(inv *Invocation, dir string) (string, error) {
	bin := inv.Path
	var err error
	if bin == "" {
		if bin, err = LookPath(inv.Binary, inv.env); err != nil {
			return "", err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "session", "list", "--format", "json")
	cmd.Dir = dir
	cmd.Env = ProcessEnv(inv.env, dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// opencode loads plugins from its configuration and the project's,
	// which the agent could write: it lists its sessions confined as the
	// run was, never with more than the agent had. The caller hands inv
	// the run's policy (a resumed session's lookup too, package session)
	// and ends what it leaves running.
	var launched *confine.Launched
	if inv.Confine != nil {
		pol := *inv.Confine
		if pol.Net != nil {
			// In namespaces, no listener: the lookup needs no network,
			// and a connection it tries fails at once instead of
			// waiting on a listener nobody serves.
			n := *pol.Net
			n.ProxyPort, n.LoopbackPorts = 0, nil
			pol.Net = &n
		}
		launched, err = confine.Start(cmd, pol)
	} else {
		err = cmd.Start()
	}
	if err == nil {
		err = cmd.Wait()
		_ = launched.Close()
	}
	if err != nil {
		return "", fmt.Errorf("opencode session list: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	id, err := parseOpencodeSessions(stdout.Bytes(), dir)
	if err != nil {
		return "", fmt.Errorf("opencode session list: %w", err)
	}
	if id == "" {
		return "", &NoSessionError{Harness: persona.HarnessOpencode, Dir: dir, Store: "opencode session list"}
	}
	return id, nil
}

// parseOpencodeSessions returns, from the output of opencode session list
// --format json, the most recently updated session whose directory is
// dir; "" when none is.
func parseOpencodeSessions(out []byte, dir string) (string, error) {
	var sessions []struct {
		ID        string `json:"id"`
		Updated   int64  `json:"updated"`
		Directory string `json:"directory"`
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "", nil // no sessions at all
	}
	if err := json.Unmarshal(out, &sessions); err != nil {
		return "", fmt.Errorf("not a session list: %v", err)
	}
	want := sameDir(dir)
	best, bestTime := "", int64(0)
	for _, s := range sessions {
		if s.ID != "" && want(s.Directory) && (best == "" || s.Updated > bestTime) {
			best, bestTime = s.ID, s.Updated
		}
	}
	return best, nil
}

// sameDir returns a test for a directory a harness names being dir: the
// same path, or the same once symbolic links are resolved (a harness
// reports getcwd, workforce may name it through a link).
func sameDir(dir string) func(string) bool {
	dir = filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	return func(d string) bool {
		if d == "" || !filepath.IsAbs(d) {
			return false
		}
		d = filepath.Clean(d)
		return d == dir || d == real
	}
}
