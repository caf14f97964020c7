package report

// An attempt is one run of a persona on a case of `workforce eval`: a
// one-shot run (run --attempt) that runs the case's setup in the sandbox
// before the agent and its check after it, restores the protected files
// before the check, keeps the agent's work as a patch and syncs nothing
// back. AttemptSpec is what the evaluation asks of the run; Attempt is what
// the run says it did, in its result (Result.Attempt).

// AttemptSpec is what an attempt's run does besides the agent's run: the
// JSON value of run --attempt, and of a batch task's attempt (which only
// workforce eval sets).
type AttemptSpec struct {
	// Setup is a shell command (sh -c) run in the sandbox, confined as the
	// agent is, before the agent starts; its failure ends the attempt as
	// an error, before the agent runs.
	Setup string `json:"setup,omitempty"`
	// Check is a shell command (sh -c) run in the sandbox, confined as
	// the agent is, after the agent and every process it left ended;
	// exit status 0 passes.
	Check string `json:"check,omitempty"`
	// Protect are globs (doublestar, slash-separated, relative to the
	// project) of files restored to their state after setup before the
	// check runs: the agent cannot make the check pass by editing them.
	Protect []string `json:"protect,omitempty"`
	// SetupTimeoutMS and CheckTimeoutMS limit the setup and the check;
	// 0: DefaultStepTimeoutMS.
	SetupTimeoutMS int64 `json:"setupTimeoutMs,omitempty"`
	CheckTimeoutMS int64 `json:"checkTimeoutMs,omitempty"`
}

// DefaultStepTimeoutMS is the time limit of a setup or a check that sets
// none: ten minutes.
const DefaultStepTimeoutMS = 10 * 60 * 1000

// StepOutputMax is how much of a setup's or a check's output (stdout and
// stderr, interleaved as written) a result keeps: the first and the last
// half of it, with a line saying how much was cut between.
const StepOutputMax = 64 << 10

// Attempt is what an attempt's run did besides the agent's run.
type Attempt struct {
	// Setup is how the setup command ended; absent when there was none.
	Setup *Step `json:"setup,omitempty"`
	// AgentStarted says the harness was started (the setup passed and
	// the run could start it).
	AgentStarted bool `json:"agentStarted"`
	// Check is how the check command ended; absent when there was none
	// or the agent never started.
	Check *Step `json:"check,omitempty"`
	// Changes are the files the agent changed, against the tree as it was
	// after setup (before the protected files were restored): paths
	// relative to the project, slash-separated, sorted.
	Changes AttemptChanges `json:"changes"`
	// Restored are the protected files the agent had changed, restored
	// before the check.
	Restored []string `json:"restored,omitempty"`
}

// AttemptChanges are the files an attempt's agent created, updated and
// deleted. The lists are [] when empty, never null.
type AttemptChanges struct {
	Created []string `json:"created"`
	Updated []string `json:"updated"`
	Deleted []string `json:"deleted"`
}

// Step is how a setup or a check command ended.
type Step struct {
	Command string `json:"command"`
	// ExitCode is the command's exit status (128+n when signal n killed
	// it); -1 when it could not be started.
	ExitCode int `json:"exitCode"`
	// TimedOut says its time limit stopped it.
	TimedOut bool `json:"timedOut,omitempty"`
	// Output is its output, cut to StepOutputMax (Truncated says so);
	// OutputBytes is how long it was.
	Output      string `json:"output"`
	OutputBytes int64  `json:"outputBytes"`
	Truncated   bool   `json:"truncated,omitempty"`
	DurationMS  int64  `json:"durationMs"`
}

// Passed reports whether the step exited 0 in its time.
func (s *Step) Passed() bool { return s != nil && s.ExitCode == 0 && !s.TimedOut }
