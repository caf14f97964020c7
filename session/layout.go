package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"
)

// The session directory is session's: where it is (Dir), its name (NewDir),
// and the files of the session in it (RecordFile, the lock, the harness's
// configuration). It is also the sandbox directory of package mount,
// which keeps its own parts there (mount.TreeDir, mount.ConflictsDir,
// mount.ManifestFile); see the package documentation for the whole
// layout.

// lockFile is the name of the lock in a session directory.
const lockFile = "lock"

// configDir is the directory, in a session directory, of the harness's
// configuration files: never inside the sandbox's tree.
const configDir = "config"

// tmpDir is the session's temporary directory, in a session directory:
// TMPDIR of the harness, writable in the write sandbox (confine.go), and
// removed with the session.
const tmpDir = "tmp"

// Dir returns the sessions directory of a workforce home.
func Dir(home string) string { return filepath.Join(home, "sessions") }

// NewDir returns a fresh session directory name in the sessions directory
// of home: <persona>-<time>-<random>.
func NewDir(home, persona string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("%s-%s-%s", persona, time.Now().Format("20060102-150405"), hex.EncodeToString(b[:]))
	return filepath.Join(Dir(home), name)
}

// stateDir is the directory, in a session directory, of the harness's
// per-session state (state.go): its configuration directories, seeded
// from the user's, and the package caches of the agent's commands. The
// record, the manifest, the conflicts and config/ stay outside it.
const stateDir = "state"

// StateDir returns the per-session state directory of the session
// directory dir, where a sandboxed harness keeps its conversations
// (state.go): what workforce usage reads of a kept session.
func StateDir(dir string) string { return filepath.Join(dir, stateDir) }
