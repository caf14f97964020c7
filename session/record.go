package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/internal/git"
	"github.com/seed-3bc194a6/workforce/mount"
)

// RecordFile is the name of a session's record in its directory.
const RecordFile = "session.json"

// recordFormat is the version of the record's format; a record of a higher
// format was written by a newer workforce and is refused. Format 2 adds
// harnessStart, the phase review and the agent's branch (branch, commits,
// head); a format 1 record reads as one whose harness is known by its
// process id alone. Format 3 adds harnessSessionId; a record of format 1
// or 2 reads as one that does not know it.
const recordFormat = 3

// Phase is where a session is in its life.
type Phase string

// The phases, in order. A session whose process is gone before it reached
// Synced is stale: `workforce sessions sync` finishes it.
const (
	// Creating: the sandbox is being made; nothing of the agent's yet.
	Creating Phase = "creating"
	// Running: the harness runs in the sandbox.
	Running Phase = "running"
	// Syncing: the harness has exited; sync-back is under way, or was
	// interrupted.
	Syncing Phase = "syncing"
	// Synced: the agent's work is back in the real tree (conflicts
	// aside); the sandbox is kept only when asked or for conflicts.
	Synced Phase = "synced"
	// Failed: the session could not be made or the harness not started.
	Failed Phase = "failed"
	// Review: the harness has exited and its work is held for the user's
	// review (run --review): nothing was synced back, or only the part
	// the user applied; sessions apply or sessions discard ends it.
	Review Phase = "review"
)

// Record is a session's durable record, written atomically to RecordFile
// at each change of phase.
type Record struct {
	Format  int    `json:"format"`
	ID      string `json:"id"`
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// Root is the real project root, Cwd the real working directory.
	Root string `json:"root"`
	Cwd  string `json:"cwd"`
	// Tree is how the sandbox shows the project (tree.go): overlay, or
	// empty for the copy (a session of before issue 44 was a copy).
	Tree TreeMode `json:"tree,omitempty"`
	// PID and Started are the workforce process that owns the session
	// and when the session started.
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// HarnessPID is the harness's process, once started; HarnessStart
	// tells it from a later process given the same id, where the system
	// says when a process started.
	HarnessPID   int        `json:"harnessPid,omitempty"`
	HarnessStart *ProcStart `json:"harnessStart,omitempty"`
	Phase        Phase      `json:"phase"`
	// ExitCode is the harness's exit status, once it exited.
	ExitCode *int `json:"exitCode,omitempty"`
	// Error says why a Failed session failed.
	Error string `json:"error,omitempty"`
	// Report is what the last sync-back did.
	Report *mount.Report `json:"report,omitempty"`
	// Branch is the branch of the real repository the agent's commits
	// were brought to (BranchName: refs/heads/workforce/<id>), Commits
	// their number and Head the commit the branch was made to name; empty
	// while the agent has committed nothing, or before the harness exits.
	Branch  string `json:"branch,omitempty"`
	Commits int    `json:"commits,omitempty"`
	Head    string `json:"head,omitempty"`
	// HarnessSessionID is the harness's own id of the conversation that
	// ran in the sandbox, which `sessions resume` continues: fixed before
	// the start where the harness takes one (claude), else what a
	// one-shot run's output said, else read from the harness's session
	// store once it exited (harness.FindSession); empty while not known.
	HarnessSessionID string `json:"harnessSessionId,omitempty"`
	// Attempt says the session is an attempt's (Options.Attempt): its
	// work is never synced back (Sync and resume refuse it).
	Attempt bool      `json:"attempt,omitempty"`
	Updated time.Time `json:"updated"`
}

// ProcStart tells a process from a later one given the same id: when it
// started, in clock ticks after boot, and which boot.
type ProcStart struct {
	Boot  string `json:"boot"`
	Ticks uint64 `json:"ticks"`
}

// RecordError reports a record that cannot be read.
type RecordError struct {
	Path string
	Err  error
}

func (e *RecordError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *RecordError) Unwrap() error { return e.Err }

// readRecord reads and checks the record of the session directory dir.
func readRecord(dir string) (*Record, error) {
	path := filepath.Join(dir, RecordFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &RecordError{path, err}
	}
	r, err := parseRecord(data)
	if err != nil {
		return nil, &RecordError{path, err}
	}
	if r.ID != filepath.Base(dir) {
		return nil, &RecordError{path, fmt.Errorf("the record is of session %q, not of its directory %q", r.ID, filepath.Base(dir))}
	}
	return r, nil
}

// parseRecord decodes a record and checks what the rest relies on.
func parseRecord(data []byte) (*Record, error) {
	var probe struct {
		Format int `json:"format"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("not a session record (truncated or corrupt?): %v", err)
	}
	if probe.Format > recordFormat {
		return nil, fmt.Errorf("written by a newer workforce (format %d; this one reads format %d)", probe.Format, recordFormat)
	}
	if probe.Format < 1 {
		return nil, errors.New("not a session record: no format")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	r := &Record{}
	if err := dec.Decode(r); err != nil {
		return nil, fmt.Errorf("not a session record: %v", err)
	}
	switch {
	case r.ID == "" || r.ID != filepath.Base(r.ID) || r.ID == "." || r.ID == "..":
		return nil, fmt.Errorf("the session id %q is not a directory name", r.ID)
	case !filepath.IsAbs(r.Root) || !filepath.IsAbs(r.Cwd):
		return nil, fmt.Errorf("the project root %q or working directory %q is not absolute", r.Root, r.Cwd)
	}
	switch r.Phase {
	case Creating, Running, Syncing, Synced, Failed, Review:
	default:
		return nil, fmt.Errorf("unknown phase %q", r.Phase)
	}
	// A record names no branch but its session's: sessions rm --branch
	// and sessions discard delete the branch it names.
	switch {
	case r.Branch != "" && r.Branch != BranchName(r.ID):
		return nil, fmt.Errorf("the branch %q is not the session's (%s)", r.Branch, BranchName(r.ID))
	case r.Branch != "" && !git.IsObjectName(r.Head):
		return nil, fmt.Errorf("the branch's commit %q is not an object name", r.Head)
	case r.Commits < 0:
		return nil, fmt.Errorf("a negative number of commits (%d)", r.Commits)
	case r.Branch == "" && (r.Head != "" || r.Commits != 0):
		return nil, fmt.Errorf("commits (%d, %q) without a branch", r.Commits, r.Head)
	case !ValidHarnessSessionID(r.HarnessSessionID):
		return nil, fmt.Errorf("the harness session id %q is not one (it becomes an argument of the harness)", r.HarnessSessionID)
	}
	return r, nil
}

// writeRecord writes r to the session directory dir durably.
func writeRecord(dir string, r *Record) error {
	r.Format = recordFormat
	r.Updated = time.Now().UTC()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, RecordFile)
	if err := renameio.WriteFile(path, append(data, '\n'), 0o600, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		return fmt.Errorf("cannot write the session record %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// maxHarnessSessionID bounds a harness's session id (claude's and codex's
// are UUIDs, opencode's ses_ and 26 characters).
const maxHarnessSessionID = 128

// ValidHarnessSessionID reports whether id can be a harness's session id:
// empty (not known), or letters, digits, '-' and '_', not starting with
// '-', so that given to the harness it never reads as a flag.
func ValidHarnessSessionID(id string) bool {
	if len(id) > maxHarnessSessionID || strings.HasPrefix(id, "-") {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
