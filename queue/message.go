package queue

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// PhaseQueued is the phase, in a batch's state, of a task published to
// the queue whose result has not come yet.
const PhaseQueued batch.Phase = "queued"

// Key names one publication of a task: the batch, the submission (one
// run of `batch FILE --queue` that published it: a task published again,
// edited or retried, is another submission) and the task's id. Each key
// has its own task subject, result subject and message id.
type Key struct {
	Batch      string `json:"batch"`
	Submission string `json:"submission"`
	Task       string `json:"taskId"`
}

func (k Key) tokens() string {
	return Token(k.Batch) + "." + Token(k.Submission) + "." + Token(k.Task)
}

// TaskSubject is the subject of the task's message in TaskStream.
func (k Key) TaskSubject() string { return "workforce.tasks." + k.tokens() }

// ResultSubject is the subject of the task's result in ResultStream.
func (k Key) ResultSubject() string { return "workforce.results." + k.tokens() }

// MsgID is the Nats-Msg-Id of its messages: the server drops a second
// message with the same id (within the stream's duplicate window), so a
// publication retried is published once.
func (k Key) MsgID() string { return k.Batch + "/" + k.Submission + "/" + k.Task }

// batchResults is the subject filter of every result of batch id.
func batchResults(id string) string { return "workforce.results." + Token(id) + ".>" }

// batchTasks is the subject filter of every task of batch id still in
// TaskStream.
func batchTasks(id string) string { return "workforce.tasks." + Token(id) + ".>" }

// KeyOf is the key of a task or result subject.
func KeyOf(subject string) (Key, error) {
	parts := strings.Split(subject, ".")
	if len(parts) != 5 || parts[0] != "workforce" || (parts[1] != "tasks" && parts[1] != "results") {
		return Key{}, fmt.Errorf("subject %q is not a workforce task or result", subject)
	}
	var k Key
	var err error
	for i, p := range []*string{&k.Batch, &k.Submission, &k.Task} {
		if *p, err = ParseToken(parts[2+i]); err != nil {
			return Key{}, err
		}
	}
	return k, nil
}

// Task is the message of one task in TaskStream: what a worker needs to
// run it, and nothing else. It never holds a credential or a variable of
// the submitter's environment: the worker runs the harness with its own.
type Task struct {
	Key
	// Entry is the batch file's entry, with repo and ref as written.
	Entry batch.Task `json:"entry"`
	// Digest is the entry's digest (batch.Task.Digest).
	Digest string `json:"digest"`
	// Commit is the commit Entry.Ref named when the task was published:
	// the worker checks out this commit, not the ref.
	Commit string `json:"commit"`
	// ResultSubject is where the worker reports the result.
	ResultSubject string `json:"resultSubject"`
	// Published is when the submitter published it.
	Published time.Time `json:"published"`
	// Seal is the key its results are signed with (seal.go); empty for
	// a task published without one.
	Seal string `json:"seal,omitempty"`
}

// NewTask is the message of entry t, published as key, to run at commit.
func NewTask(k Key, t batch.Task, commit string) Task {
	return Task{Key: k, Entry: t, Digest: t.Digest(), Commit: commit, ResultSubject: k.ResultSubject(), Published: time.Now().UTC()}
}

// Result is the message of one task's result in ResultStream: how its
// run ended, as the local pool's state records it.
type Result struct {
	Key
	// Digest is the digest of the entry that ran.
	Digest string `json:"digest"`
	// Worker names the worker that ran it; absent when nobody ran it to
	// its end (Sweep's failure).
	Worker string `json:"worker,omitempty"`
	// Delivery is which delivery of the task ran (1 the first).
	Delivery int           `json:"delivery,omitempty"`
	Status   report.Status `json:"status"`
	Started  time.Time     `json:"started"`
	Finished time.Time     `json:"finished"`
	// ExitCode is the exit status of the run's process; absent when none
	// ran.
	ExitCode *int `json:"exitCode,omitempty"`
	// Error says why there is no run result, or what went wrong around
	// it (the checkout, the push).
	Error string `json:"error,omitempty"`
	// Result is the run's result, with published, patch and worker; nil
	// when the run printed none.
	Result *report.Result `json:"result,omitempty"`

	// data and signature are the message's data and its SealHeader, for
	// Sealed, when the result was read from the server.
	data      []byte
	signature string
}

// State is the task's state in its batch, as the local pool would write
// it: done (or pending again when the run was interrupted).
func (r Result) State(entry batch.Task) batch.TaskState {
	started, finished := r.Started.UTC(), r.Finished.UTC()
	ts := batch.TaskState{ID: r.Task, Digest: entry.Digest(), Entry: entry, Phase: batch.PhaseDone, Status: r.Status,
		Started: &started, Finished: &finished, DurationMS: r.Finished.Sub(r.Started).Milliseconds(),
		ExitCode: r.ExitCode, Error: r.Error, Result: r.Result}
	if r.Status == report.StatusInterrupted {
		ts.Phase = batch.PhasePending
	}
	return ts
}

func decode[T any](data []byte, subject string) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("message on %s: %w", subject, err)
	}
	return v, nil
}
