package report

import "time"

// Record is a session's record, as `sessions show --json` prints it.
type Record struct {
	Format  int    `json:"format"`
	ID      string `json:"id"`
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	Root    string `json:"root"`
	Cwd     string `json:"cwd"`
	// Tree is "overlay" for a sandbox shown through an overlay; absent
	// for a copy.
	Tree         string     `json:"tree,omitempty"`
	PID          int        `json:"pid"`
	Started      time.Time  `json:"started"`
	HarnessPID   int        `json:"harnessPid,omitempty"`
	HarnessStart *ProcStart `json:"harnessStart,omitempty"`
	Phase        string     `json:"phase"`
	// ExitCode is the harness's exit status, once it exited (128+n when
	// signal n killed it, as a shell says).
	ExitCode *int        `json:"exitCode,omitempty"`
	Error    string      `json:"error,omitempty"`
	Report   *SyncReport `json:"report,omitempty"`
	Branch   string      `json:"branch,omitempty"`
	Commits  int         `json:"commits,omitempty"`
	Head     string      `json:"head,omitempty"`
	// HarnessSessionID is the harness's own id of the conversation that
	// ran in the session, which sessions resume continues.
	HarnessSessionID string    `json:"harnessSessionId,omitempty"`
	Updated          time.Time `json:"updated"`
}

// ProcStart tells a process from a later one given the same id.
type ProcStart struct {
	Boot  string `json:"boot"`
	Ticks uint64 `json:"ticks"`
}

// SyncReport is what a sync-back did, or would do.
type SyncReport struct {
	Created   []string   `json:"created"`
	Updated   []string   `json:"updated"`
	Deleted   []string   `json:"deleted"`
	Unapplied []string   `json:"unappliedDeletions"`
	Conflicts []Conflict `json:"conflicts"`
	NotSynced []string   `json:"notSynced"`
	Failed    []Failure  `json:"failed,omitempty"`
	Blocked   []string   `json:"blocked,omitempty"`
	OnBranch  []string   `json:"onBranch,omitempty"`
	// Refused are the policy files the agent changed, never synced
	// back; Held the executable configuration held for review (see
	// Files).
	Refused []string `json:"refused,omitempty"`
	Held    []string `json:"held,omitempty"`
	// Interrupted says a signal stopped the sync-back early.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Conflict is a file changed both by the agent and in the real tree:
// Real is the user's, left alone; Saved the agent's, kept in the session
// (empty for a deletion).
type Conflict struct {
	Path  string `json:"path"`
	Real  string `json:"real"`
	Saved string `json:"saved,omitempty"`
	// Reason, when set, says why, where the usual reading (changed in
	// the repository too; deleted by the agent but changed there) does
	// not: it completes a sentence that begins with the path.
	Reason string `json:"reason,omitempty"`
}

// Failure is a path sync-back could not read or write.
type Failure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// SessionShow is what `sessions show --json` prints.
type SessionShow struct {
	Record  Record      `json:"record"`
	Changes *SyncReport `json:"changes"`
	// Result is the result of the session's one-shot run, when it left
	// one; once the session is gone, sessions show prints the Result
	// alone.
	Result *Result `json:"result,omitempty"`
}

// SessionRow is one session of `sessions list --json`.
type SessionRow struct {
	ID      string `json:"id"`
	Persona string `json:"persona,omitempty"`
	Tier    string `json:"tier,omitempty"`
	Harness string `json:"harness,omitempty"`
	Root    string `json:"root,omitempty"`
	Phase   string `json:"phase,omitempty"`
	Stale   bool   `json:"stale"`
	Live    bool   `json:"live"`
	// Started is when the session started; Age the seconds since.
	Started time.Time `json:"started"`
	Age     int64     `json:"ageSeconds"`
	// Changed is the number of files a sync-back would bring back
	// (created, updated, deleted, conflicts); -1 when the sandbox cannot
	// be read.
	Changed int    `json:"changed"`
	Error   string `json:"error,omitempty"`
}

// Warm is a warm sandbox kept by run --reuse.
type Warm struct {
	Root string    `json:"root"`
	Dir  string    `json:"dir"`
	Time time.Time `json:"time"`
}

// Sessions is what `sessions list --json` prints.
type Sessions struct {
	Sessions []SessionRow `json:"sessions"`
	Warm     []Warm       `json:"warm"`
}
