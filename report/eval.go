package report

import _ "embed"

// EvalSchema is the JSON Schema of Eval, as published in the repository
// at EvalSchemaPath.
//
//go:embed schema/eval.schema.json
var EvalSchema []byte

// EvalSchemaPath is where the JSON Schema of Eval lives in the
// repository; EvalSchemaURL is its $id.
const (
	EvalSchemaPath = "report/schema/eval.schema.json"
	EvalSchemaURL  = "https://github.com/seed-3bc194a6/workforce/report/schema/eval.schema.json"
)

// EvalOutcome is how an attempt of an evaluation ended.
type EvalOutcome string

const (
	// OutcomePass: the run ended, the check passed, every assertion held.
	OutcomePass EvalOutcome = "pass"
	// OutcomeFail: the check failed, an assertion failed, or the run
	// failed or timed out.
	OutcomeFail EvalOutcome = "fail"
	// OutcomeError: the attempt could not run: no result (the run did
	// not start), or its setup failed and the agent never started.
	OutcomeError EvalOutcome = "error"
)

// Eval is what `workforce eval FILE --json` and `workforce eval show ID
// --json` print, and what <home>/evals/<id>/report.json holds: the
// attempts of an evaluation and their sums per persona and per case.
// Its lists are [] when empty, never null.
type Eval struct {
	ID string `json:"id"`
	// File is the case file's absolute path.
	File string `json:"file"`
	// K is the k of pass@k.
	K int `json:"k"`
	// Personas are the sums of each persona (on each harness), in the
	// order run.
	Personas []EvalPersona `json:"personas"`
	// Cases are each case's attempts, by persona, in the file's order.
	Cases []EvalCase `json:"cases"`
	// Attempts are every attempt: case, persona, harness, attempt number.
	Attempts []EvalAttempt `json:"attempts"`
	// Warnings are sentences the reader must see: a persona whose
	// workers ran another version than the submitter's, an attempt not
	// run yet.
	Warnings []string `json:"warnings"`
}

// EvalPersona is the sum of one persona's attempts on one harness.
type EvalPersona struct {
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// Hash is the persona's content hash as the submitter resolved it
	// (its version); Layer the layer it came from.
	Hash  string `json:"hash"`
	Layer string `json:"layer,omitempty"`
	// WorkerHashes are the other hashes the runs reported (a queue's
	// workers run their own installed personas); HashMismatch says there
	// were some: the results are not all of the version named by Hash.
	WorkerHashes []string `json:"workerHashes,omitempty"`
	HashMismatch bool     `json:"hashMismatch,omitempty"`
	// Attempts counts every attempt, Passed the passes, Failed the
	// fails, Errors the attempts that could not run, Pending those not
	// run yet (a stopped evaluation).
	Attempts int `json:"attempts"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Errors   int `json:"errors"`
	Pending  int `json:"pending,omitempty"`
	// PassRate is Passed / (Attempts - Errors - Pending); null when no
	// attempt ran.
	PassRate *float64 `json:"passRate"`
	// PassAtK is the mean over the cases of the unbiased pass@k estimate
	// (docs/eval.md); null when no case had an attempt that ran.
	PassAtK *float64 `json:"passAtK"`
	// CasesPassed counts the cases with at least one passing attempt, of
	// Cases.
	CasesPassed int `json:"casesPassed"`
	Cases       int `json:"cases"`
	// CostUSD, DurationMS and Turns are the figures of the attempts
	// whose run reported them; Tokens their sums.
	CostUSD    EvalStat   `json:"costUsd"`
	DurationMS EvalStat   `json:"durationMs"`
	Turns      EvalStat   `json:"turns"`
	Tokens     EvalTokens `json:"tokens"`
}

// EvalStat is the mean and the median of a figure over the attempts that
// reported it (Known of them); both absent when none did.
type EvalStat struct {
	Mean   *float64 `json:"mean,omitempty"`
	Median *float64 `json:"median,omitempty"`
	Known  int      `json:"known"`
}

// EvalTokens are the sums of the tokens the attempts' runs reported.
type EvalTokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cached int64 `json:"cached"`
}

// EvalCase is one case: each persona's attempts on it.
type EvalCase struct {
	Case     string            `json:"case"`
	Personas []EvalCasePersona `json:"personas"`
}

// EvalCasePersona is one persona's attempts on one case: their outcomes
// in order, and the sums.
type EvalCasePersona struct {
	Persona  string        `json:"persona"`
	Tier     string        `json:"tier"`
	Harness  string        `json:"harness"`
	Outcomes []EvalOutcome `json:"outcomes"`
	Passed   int           `json:"passed"`
	Errors   int           `json:"errors"`
	// PassRate is as EvalPersona's, over this case's attempts.
	PassRate *float64 `json:"passRate"`
	// CostUSD and DurationMS are as EvalPersona's, over this case's
	// attempts.
	CostUSD    EvalStat `json:"costUsd"`
	DurationMS EvalStat `json:"durationMs"`
}

// EvalAttempt is one attempt: a run of a persona on a case.
type EvalAttempt struct {
	Case    string `json:"case"`
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// Attempt is its number, from 1.
	Attempt int `json:"attempt"`
	// TaskID is its task's id in the evaluation's batch.
	TaskID string `json:"taskId"`
	// Outcome is absent for an attempt not run yet.
	Outcome EvalOutcome `json:"outcome,omitempty"`
	// Reasons say, as sentences, why the outcome is not pass.
	Reasons []string `json:"reasons"`
	// Setup and Check are how the case's setup and check ended; absent
	// when there was none or it did not run.
	Setup *EvalStep `json:"setup,omitempty"`
	Check *EvalStep `json:"check,omitempty"`
	// Failed names what failed: "check", "status", "changed",
	// "unchanged", "message", "maxCostUsd", "maxDuration", "maxTurns".
	Failed []string `json:"failed"`
	// Unchecked names the assertions the run gave nothing to check
	// against (no cost, no turns reported): neither passed nor failed.
	Unchecked []string `json:"unchecked"`
	// SessionID is the run's session; absent when it started none.
	SessionID string `json:"sessionId,omitempty"`
	// PersonaHash is the hash of the persona the run reported it ran.
	PersonaHash string `json:"personaHash,omitempty"`
	// Result is the one-shot run's result; absent when it printed none.
	Result *Result `json:"result,omitempty"`
}

// EvalStep is how a setup or a check ended (its output is in the
// result's attempt and in the evaluation's directory).
type EvalStep struct {
	ExitCode   int   `json:"exitCode"`
	TimedOut   bool  `json:"timedOut,omitempty"`
	DurationMS int64 `json:"durationMs"`
}

// EvalComparison is what `workforce eval compare A B --json` prints: two
// evaluations' rows side by side, the regressed first.
type EvalComparison struct {
	A string `json:"a"`
	B string `json:"b"`
	// Personas are the personas' sums side by side.
	Personas []EvalPersonaPair `json:"personas"`
	// Cases are each (case, persona) of either, the regressed first
	// (passing in A, not in B), then the improved, then the rest.
	Cases []EvalCasePair `json:"cases"`
}

// EvalPersonaPair is one persona (on one harness) in A and in B; a side
// absent when that evaluation did not run it.
type EvalPersonaPair struct {
	Persona string       `json:"persona"`
	Tier    string       `json:"tier"`
	Harness string       `json:"harness"`
	A       *EvalPersona `json:"a,omitempty"`
	B       *EvalPersona `json:"b,omitempty"`
}

// EvalCasePair is one case of one persona in A and in B.
type EvalCasePair struct {
	Case    string `json:"case"`
	Persona string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	// Change is regressed (a pass rate lower in B), improved (higher),
	// same, or only-a / only-b.
	Change string           `json:"change"`
	A      *EvalCasePersona `json:"a,omitempty"`
	B      *EvalCasePersona `json:"b,omitempty"`
}
