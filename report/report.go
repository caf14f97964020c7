// Package report defines the JSON that workforce's commands print: the
// plan of run --dry-run, the listings of list, sources and sessions, the
// persona show prints, what install, import and export did, what context
// finds, what harness check finds, what usage sums (UsageReport).
//
// The types here are the command-line contract. They are deliberately not
// the types of the packages that compute the values (persona, session,
// mount, harness, discover, skill, install): the command layer converts
// those into these, so that an internal type can be renamed, reshaped or
// given another JSON tag without changing a byte of what a command prints,
// and a change of what a command prints is a change of this package, seen
// in review. The field names and their order, omitempty and the nil-ness
// of lists and maps are those the commands have always printed; the tests
// of package main compare the bytes with golden files.
//
// The package sits below the command layer and above nothing of
// workforce but internal/quote: the text forms of the plan, of a
// harness's mapping and of a persona of show (text.go, WriteText), and
// of the lists of history, outdated, sources list, install and create
// (listtext.go) print what the JSON carries, names quoted as every report line quotes them.
// Batch results and the history are its types too.
//
// # The one-shot result
//
// Result is what an unattended run ends with, one object whose JSON
// Schema is published in the repository at report/schema/result.schema.json
// (ResultSchemaPath; its $id is ResultSchemaURL, and the package embeds it
// as ResultSchema). A test holds the schema and the type to each other:
// every JSON field of the type is in the schema and every property of the
// schema is a field, and the example results of testdata/report are valid
// under it. Its fields:
//
//   - taskId: the id of the task in a batch or a queue. Absent for a
//     single run.
//   - sessionId: workforce's session id, what sessions show and sessions
//     resume take. Always present.
//   - persona, tier, harness: the persona's id, the tier the run used, the
//     harness that ran. Always present.
//   - harnessVersion: the installed harness's version. Absent when it could
//     not be read.
//   - harnessVersionMeasured: whether that version is of a release family
//     (major.minor) workforce was measured on; false is also said on
//     stderr. Absent when the version could not be read. (Issue 42 wrote
//     it harness.versionMeasured; harness is a string of the result's
//     contract, so the field sits beside harnessVersion.)
//   - model: the model the persona names, or the one the harness reported
//     using when the persona names none. Absent when neither is known.
//   - harnessSessionId: the harness's own id of the conversation (claude's
//     session_id, codex's thread_id, opencode's sessionID), which resume
//     continues. Absent when the harness printed none.
//   - status: how the run ended, one of the six Status values, decided by
//     DecideStatus. Always present. workforce's exit status comes from it
//     alone, never from exitCode.
//   - exitCode: the code the harness exited with, as it gave it. Absent
//     when the harness never started or a signal killed it (a harness
//     that exits 144 is not "killed by signal 16").
//   - message: the agent's final message. Absent when the harness printed
//     none.
//   - usage: inputTokens (every input token, cached ones included),
//     outputTokens, cachedTokens (the part of the input read from the
//     cache), costUsd (claude and opencode report it, codex does not),
//     turns (claude counts them). A figure the harness does not report is
//     absent, never 0; usage itself is absent when the harness reported
//     none of them.
//   - denials: the permissions refused during the run, each a tool and,
//     when the harness says, a detail (the path, the command). Always
//     present, [] when none.
//   - files: created, updated and deleted paths, and conflicts (the path,
//     the user's file left as it was, the agent's version saved in the
//     session), as sync-back left the real tree; its four lists are
//     always present. Absent when no sync-back ran: the run stopped
//     before the sandbox was made, or the work is held for review.
//   - branch: name, head and commits: the branch the agent's commits were
//     brought to, the commit it names, how many the agent made. Absent
//     when the agent committed nothing.
//   - durationMs: the run's wall time in milliseconds. Always present.
//   - warnings: the run's warnings, as sentences. Always present, []
//     when none.
//   - published, patch, worker: a task a queue worker ran (workforce
//     worker): the repository, the branch workforce/<sessionId> the worker
//     pushed there (absent when nothing changed), the commit the task
//     started from (base) and the branch's commit, the number of files
//     changed; the patch from base to that commit (absent when nothing
//     changed or when it did not fit in a message: a warning says so);
//     the worker's name. All three are absent for a run on this machine.
//     (The name branch was taken: it is the agent's own commits.)
//   - cause: kind (credentials, model or network), message (what to do:
//     how to log in, which host to allow) and evidence (the harness's
//     line that tells, cut to 400 bytes): the likely cause of a run that
//     failed or timed out, from the harness's measured error lines
//     (harness.Diagnose) and the proxy's denials. Absent when nothing
//     known explains it, and for a run that did not fail.
//
// The lists that are always present print as [] even when the Go value
// is nil (Result and Files marshal them so).
//
// # Events
//
// Event is a progress event of an unattended run, one JSON object a line
// (run --events), whose JSON Schema is published at
// report/schema/event.schema.json (EventSchemaPath, $id EventSchemaURL,
// embedded as EventSchema); it refers to the result's schema by its $id.
// Every event has type, time (when workforce saw it: RFC 3339, UTC, to
// the millisecond) and sessionId (workforce's, as in the result), and
// taskId in a batch or a queue; the rest belongs to one type each:
//
//   - started, harnessSessionId: the harness started its conversation, as
//     its output says (claude's system init line, codex's thread.started,
//     opencode's first event). First when it comes; absent when the
//     harness printed no session id.
//   - tool_use, tool, detail, status: a tool call of the agent, reported
//     when it ended (claude: when its result came), with how it ended
//     when the harness says: completed, failed or denied.
//   - message, text: a message of the agent.
//   - usage, usage: what a step consumed (a codex turn, an opencode
//     step, claude's whole run, which it reports once at the end). The
//     usage events add up to the result's usage.
//   - error, text: an error the harness reported; the run may go on.
//   - sync, path, action: sync-back created, updated or deleted the file
//     as it came to it, or left it as a conflict, or failed to write it
//     (both said after sync-back). The last sync event of a path says
//     what became of it; the result's files are the authority.
//   - finished, result: the run ended; result is the Result, as --json
//     prints it. Always the last event, also when the run failed.
//
// # Evaluations
//
// Eval is what workforce eval prints with --json and keeps as
// <home>/evals/<id>/report.json: every attempt of an evaluation (case ×
// persona × harness × attempt) with its outcome (pass, fail, error), the
// one-shot Result of its run, and the sums per persona and per case (pass
// rate, pass@k, cost, duration, the persona's hash). Its JSON Schema is
// published at report/schema/eval.schema.json (EvalSchemaPath,
// EvalSchemaURL, embedded as EvalSchema); it refers to the result's schema
// for an attempt's result, and a test walks it with the type as the
// result's. EvalComparison is what eval compare prints with --json.
package report

// Origin is where a persona value came from: the layer and the file.
type Origin struct {
	Layer string `json:"layer"`
	File  string `json:"file"`
}
