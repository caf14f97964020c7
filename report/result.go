package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
)

// ResultSchema is the JSON Schema of Result, as published in the
// repository at ResultSchemaPath.
//
//go:embed schema/result.schema.json
var ResultSchema []byte

// ResultSchemaPath is where the JSON Schema of Result lives in the
// repository; ResultSchemaURL is its $id.
const (
	ResultSchemaPath = "report/schema/result.schema.json"
	ResultSchemaURL  = "https://github.com/seed-3bc194a6/workforce/report/schema/result.schema.json"
)

// Result is what an unattended (one-shot) run ended with: what
// `workforce run PERSONA TASK --json` prints, what the last event of
// --events carries, what stays in the results directory after the sandbox
// is gone, and what batch, the queue and the history carry for a task.
// The package documentation says what each field means and when it is
// absent.
//
// Its lists (Denials, Warnings, and those of Files) are printed as []
// when empty, never as null, whatever the caller left in them.
type Result struct {
	// TaskID is the id of the task in a batch or a queue; absent for a
	// single run.
	TaskID string `json:"taskId,omitempty"`
	// SessionID is workforce's session id (sessions show, resume);
	// absent when the task never started a session (a batch's task whose
	// run printed no result).
	SessionID string `json:"sessionId,omitempty"`
	Persona   string `json:"persona"`
	Tier      string `json:"tier"`
	Harness   string `json:"harness"`
	// HarnessVersion is the installed harness's version; absent when it
	// could not be read.
	HarnessVersion string `json:"harnessVersion,omitempty"`
	// HarnessVersionMeasured says whether the harness's version is of a
	// release family workforce was measured on (its major.minor); absent
	// when the version could not be read. A field, not a warning: a
	// patch release of a measured family is measured.
	HarnessVersionMeasured *bool `json:"harnessVersionMeasured,omitempty"`
	// Model is the model the harness ran: the one the persona names, or
	// the one the harness reported using when the persona names none;
	// absent when neither is known.
	Model string `json:"model,omitempty"`
	// HarnessSessionID is the harness's own id of the conversation
	// (claude's session_id, codex's thread_id, opencode's sessionID),
	// which resume continues; absent when the harness printed none.
	HarnessSessionID string `json:"harnessSessionId,omitempty"`
	// Status is how the run ended (DecideStatus).
	Status Status `json:"status"`
	// ExitCode is the code the harness exited with, as it gave it; absent
	// when the harness never started or a signal killed it. It is not
	// workforce's own exit status, which comes from Status alone.
	ExitCode *int `json:"exitCode,omitempty"`
	// Message is the agent's final message; absent when the harness
	// printed none.
	Message string `json:"message,omitempty"`
	// Usage is what the model consumed; absent when the harness reported
	// nothing of it.
	Usage *Usage `json:"usage,omitempty"`
	// Denials are the permission requests refused during the run.
	Denials []Denial `json:"denials"`
	// Files is what sync-back brought back into the real tree; absent
	// when no sync-back ran (the run stopped before the sandbox was
	// made, or the work was held for review).
	Files *Files `json:"files,omitempty"`
	// Held is the agent's work held for review (run --review), what
	// sessions apply would bring: present only when the work was held.
	Held *Files `json:"held,omitempty"`
	// Branch is the branch the agent's commits were brought to; absent
	// when it made none.
	Branch *Branch `json:"branch,omitempty"`
	// DurationMS is the run's wall time in milliseconds, from the start
	// of the sandbox to the end of sync-back.
	DurationMS int64 `json:"durationMs"`
	// Warnings are the warnings of the run, as sentences.
	Warnings []string `json:"warnings"`
	// Published is the agent's work as a queue worker pushed it to the
	// task's repository; present only for a task a queue worker ran.
	Published *Published `json:"published,omitempty"`
	// Patch is the agent's work as a patch (git diff --binary from
	// Published.Base to Published.Commit, which git apply takes); absent
	// when nothing changed, or when the patch was too large for the
	// queue's messages (a warning says so; the branch holds the work).
	Patch string `json:"patch,omitempty"`
	// Worker is the name of the queue worker that ran the task; absent
	// for a task run on this machine.
	Worker string `json:"worker,omitempty"`
	// Network is what the confined harness's network did (network.go);
	// absent when the run had no network policy (not confined).
	Network *Network `json:"network,omitempty"`
	// PersonaHash is the content hash of the persona the run resolved
	// (its version: run.PersonaHash), as the history records it.
	PersonaHash string `json:"personaHash,omitempty"`
	// Attempt is what an attempt's run (run --attempt, workforce eval)
	// did besides the agent's run; absent for any other run. Its Patch
	// is the agent's work against the tree after setup.
	Attempt *Attempt `json:"attempt,omitempty"`
	// Cause is the likely cause of a run that failed or timed out, from
	// the harness's measured error lines and the proxy's denials; absent
	// when nothing known explains it (or the run did not fail).
	Cause *Cause `json:"cause,omitempty"`
}

// Cause is the likely cause of a failed run: its kind, a sentence that
// says it and what to do, and the line of the harness's output or log
// that says so.
type Cause struct {
	// Kind is credentials (missing or refused), model (a model the
	// harness does not know) or network (the sandbox's network policy
	// denied a connection).
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Evidence is the harness's line that tells (cut to 400 bytes);
	// absent when the cause comes from the proxy's record alone.
	Evidence string `json:"evidence,omitempty"`
}

// Published is where a queue worker put the agent's work: the branch it
// pushed to the task's repository, the commit it started from and the
// branch's commit.
type Published struct {
	// Repo is the repository's URL, as the task gave it.
	Repo string `json:"repo"`
	// Branch is the branch pushed to Repo, workforce/<sessionId>; absent
	// when there was nothing to publish.
	Branch string `json:"branch,omitempty"`
	// Base is the commit the task started from (its ref, resolved).
	Base string `json:"base"`
	// Commit is the branch's commit; absent when nothing was published.
	Commit string `json:"commit,omitempty"`
	// Files counts the files changed between Base and Commit.
	Files int `json:"files"`
}

// Usage is what the model consumed during a run, summed over its turns.
// A figure the harness does not report is nil (absent), never 0.
type Usage struct {
	// InputTokens counts every input token, those read from the cache
	// included; CachedTokens is the part of them read from the cache.
	InputTokens  *int64 `json:"inputTokens,omitempty"`
	OutputTokens *int64 `json:"outputTokens,omitempty"`
	CachedTokens *int64 `json:"cachedTokens,omitempty"`
	// CostUSD is the cost the harness computed, in US dollars (claude,
	// opencode; codex reports none).
	CostUSD *float64 `json:"costUsd,omitempty"`
	// Turns is the number of turns the harness counted (claude).
	Turns *int `json:"turns,omitempty"`
}

// Denial is a permission the run refused: the tool, and what it was
// asked for when the harness says (a path, a command).
type Denial struct {
	Tool   string `json:"tool"`
	Detail string `json:"detail,omitempty"`
}

// Files is what a sync-back did: the paths of the files it created,
// updated and deleted in the real tree, and those it left as they were
// because they changed there too (Conflicts, with the agent's version
// saved in the session).
type Files struct {
	Created   []string   `json:"created"`
	Updated   []string   `json:"updated"`
	Deleted   []string   `json:"deleted"`
	Conflicts []Conflict `json:"conflicts"`
	// What sync-back did not apply, each absent when empty: the agent's
	// deletions left undone (without --sync-deletes), files that never
	// cross (read-only, ignored or hidden paths, symlinks, FIFOs), files
	// it could not write (the agent's version stays in the kept
	// session), files in the place of a removal left undone, and changes
	// left to the agent's branch.
	Unapplied []string  `json:"unappliedDeletions,omitempty"`
	NotSynced []string  `json:"notSynced,omitempty"`
	Failed    []Failure `json:"failed,omitempty"`
	Blocked   []string  `json:"blocked,omitempty"`
	OnBranch  []string  `json:"onBranch,omitempty"`
	// Refused are the policy files the agent created, changed or
	// deleted (.agentignore, .agentreadonly, .<persona>.agentignore,
	// anything under .agentworkforce/): never synced back, the agent's
	// versions kept in the session. Held is the executable
	// configuration (hooks, MCP servers, plugins, tasks: docs/run.md)
	// the agent changed, kept in the session for review until sessions
	// apply brings it (or the run's --sync-config lets it cross). Both
	// absent when empty. Files.Held is part of a sync-back that ran;
	// Result.Held, of run --review, is the whole work held instead of
	// one.
	Refused []string `json:"refused,omitempty"`
	Held    []string `json:"held,omitempty"`
}

// Branch is the branch the agent's commits were brought to: its name,
// the commit it names, and the number of commits the agent made.
type Branch struct {
	Name    string `json:"name"`
	Head    string `json:"head"`
	Commits int    `json:"commits"`
}

// MarshalJSON prints r with its nil lists as [].
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	p := plain(r)
	p.Denials = orEmpty(p.Denials)
	p.Warnings = orEmpty(p.Warnings)
	return marshal(p)
}

// MarshalJSON prints f with its nil lists as [].
func (f Files) MarshalJSON() ([]byte, error) {
	type plain Files
	p := plain(f)
	p.Created = orEmpty(p.Created)
	p.Updated = orEmpty(p.Updated)
	p.Deleted = orEmpty(p.Deleted)
	p.Conflicts = orEmpty(p.Conflicts)
	return marshal(p)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// marshal is json.Marshal without the escaping of <, > and &, as the
// commands print.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Status is how a one-shot run ended. The command's exit status comes
// from it alone.
type Status string

// The statuses of a one-shot run, in the order of their precedence (the
// first that applies is the run's).
const (
	// StatusInterrupted: a signal stopped the run; the work done was synced
	// back.
	StatusInterrupted Status = "interrupted"
	// StatusTimedOut: the time limit stopped the harness; the work done was
	// synced back.
	StatusTimedOut Status = "timed_out"
	// StatusConflict: sync-back left files that changed in the real tree too
	// as they were (Files.Conflicts).
	StatusConflict Status = "conflict"
	// StatusDenied: a permission was refused (Denials), whatever the harness
	// exited with.
	StatusDenied Status = "denied"
	// StatusFailed: the harness failed, by its exit code, a signal, an error
	// it reported, or a result that could not be read.
	StatusFailed Status = "failed"
	// StatusSucceeded: the harness exited 0 with a result that reports no
	// error.
	StatusSucceeded Status = "succeeded"
)

// Statuses are the statuses, in the order of their precedence.
var Statuses = []Status{StatusInterrupted, StatusTimedOut, StatusConflict, StatusDenied, StatusFailed, StatusSucceeded}

// Outcome is what DecideStatus decides from: how the harness process
// ended, what its output said, and what the run around it saw.
type Outcome struct {
	// ExitCode is the harness's exit code; Signal, when not 0, the
	// number of the signal that killed it (ExitCode is then ignored).
	ExitCode int
	Signal   int
	// Started says the harness process started.
	Started bool
	// Interrupted says a signal stopped the run (workforce received it,
	// and stopped the harness if it was running).
	Interrupted bool
	// TimedOut says the time limit stopped the harness.
	TimedOut bool
	// Parsed says the harness printed a result that could be read: the
	// result object of claude, a completed or failed turn of codex, the
	// events of opencode.
	Parsed bool
	// HarnessError says the harness's output reported an error (claude's
	// is_error, codex's turn.failed or error, opencode's error event).
	HarnessError bool
	// Denials says a permission was refused (claude's
	// permission_denials, a tool of opencode rejected, ...).
	Denials bool
	// Conflicts says sync-back (or live sync) left conflicting files as
	// they were.
	Conflicts bool
	// WorkFailed says workforce could not finish the run around the
	// harness: sync-back could not write some files, or an error after
	// the harness ran kept the session for sessions sync.
	WorkFailed bool
}

// DecideStatus is the status of a one-shot run that ended as o: the
// first of these that holds, so that what the user must look at comes
// first.
//
//	interrupted  a signal stopped the run
//	timed_out    the time limit stopped the harness
//	conflict     sync-back left conflicting files
//	denied       a permission was refused, whatever the exit code
//	failed       the harness did not start, a signal killed it, it exited
//	             non-zero (even with a result that says success), its
//	             result could not be read, the result reports an error,
//	             or the agent's work could not all be brought back
//	succeeded    otherwise
//
// The exit code alone is not enough: claude exits 0 when a Write was
// denied and 1 with subtype "success" after an HTTP 400; opencode exits 0
// when a permission was rejected; claude killed by a signal prints no
// result.
func DecideStatus(o Outcome) Status {
	switch {
	case o.Interrupted:
		return StatusInterrupted
	case o.TimedOut:
		return StatusTimedOut
	case o.Conflicts:
		return StatusConflict
	case o.Denials:
		return StatusDenied
	case !o.Started, o.Signal != 0, o.ExitCode != 0, !o.Parsed, o.HarnessError, o.WorkFailed:
		return StatusFailed
	}
	return StatusSucceeded
}
