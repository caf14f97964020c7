package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/report"
	"golang.org/x/sys/unix"
)

// Dir is the directory of the batches in the workforce home.
const Dir = "batches"

// Phase is where a task is in a batch.
type Phase string

const (
	// PhasePending: not run yet, or to run again (an interrupted run, a
	// run cut short when the pool died).
	PhasePending Phase = "pending"
	// PhaseRunning: its run was started; a batch that died leaves it so,
	// and the next run of the batch runs it again.
	PhaseRunning Phase = "running"
	// PhaseDone: its run ended with a status other than interrupted.
	PhaseDone Phase = "done"
)

// TaskState is what a batch's state holds of one task:
// <home>/batches/<id>/tasks/<task-id>/state.json.
type TaskState struct {
	ID string `json:"id"`
	// Digest is the digest of Entry (Task.Digest): an entry edited since
	// runs again.
	Digest string `json:"digest"`
	Entry  Task   `json:"entry"`
	Phase  Phase  `json:"phase"`
	// Status is how its last run ended; empty before one ended.
	Status   report.Status `json:"status,omitempty"`
	Started  *time.Time    `json:"started,omitempty"`
	Finished *time.Time    `json:"finished,omitempty"`
	// DurationMS is the last run's wall time, the child process's.
	DurationMS int64 `json:"durationMs,omitempty"`
	// ExitCode is the exit status of the last run's process.
	ExitCode *int `json:"exitCode,omitempty"`
	// Error says why a run printed no result (it never started).
	Error string `json:"error,omitempty"`
	// Result is the last run's result, with its TaskID.
	Result *report.Result `json:"result,omitempty"`
}

// Info is a batch's own record: <home>/batches/<id>/batch.json.
type Info struct {
	ID string `json:"id"`
	// File is the batch file's absolute path.
	File string `json:"file"`
	// Tasks are the ids of the file's tasks as last run, in its order.
	Tasks   []string  `json:"tasks"`
	Updated time.Time `json:"updated"`
}

// State is a batch's directory.
type State struct {
	Dir string
	ID  string
	// lock is the open lock file while this process holds the batch.
	lock *os.File
}

// IDFor is the id of the batch file at the absolute path abs: its base
// name without the extension, made a safe name, a dash and 8 hex digits of
// the path's SHA-256; the same file always gets the same id.
func IDFor(abs string) string {
	base := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	base = unsafeRun().ReplaceAllString(base, "_")
	base = strings.TrimLeft(base, "._-")
	if len(base) > 60 {
		base = base[:60]
	}
	if base == "" {
		base = "batch"
	}
	sum := sha256.Sum256([]byte(abs))
	return base + "-" + hex.EncodeToString(sum[:4])
}

var unsafeRun = lazyre.New(`[^A-Za-z0-9._-]+`)

// Open returns the state of batch id under home, creating its directory.
func Open(home, id string) (*State, error) {
	return openDir(filepath.Join(home, Dir, id), id)
}

// openDir returns the state of batch id in the directory dir, creating
// it.
func openDir(dir, id string) (*State, error) {
	if !SafeName(id) {
		return nil, fmt.Errorf("batch id %q: want letters, digits, '.', '_' and '-', starting with a letter or digit", id)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tasks"), 0o700); err != nil {
		return nil, err
	}
	return &State{Dir: dir, ID: id}, nil
}

// IDOf is the id of the batch arg names (batch status ID|FILE): the id
// of the batch file arg (IDFor its absolute path) when arg is a file,
// else arg itself.
func IDOf(arg string) (string, error) {
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		abs, err := filepath.Abs(arg)
		if err != nil {
			return "", err
		}
		return IDFor(abs), nil
	}
	return arg, nil
}

// Existing returns the state of batch id under home, which must exist.
func Existing(home, id string) (*State, error) {
	if !SafeName(id) {
		return nil, fmt.Errorf("batch id %q is not a batch id", id)
	}
	dir := filepath.Join(home, Dir, id)
	if _, err := os.Stat(filepath.Join(dir, "batch.json")); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no batch %s", id)
		}
		return nil, err
	}
	return &State{Dir: dir, ID: id}, nil
}

// ErrBusy is the error of Lock when another process runs the batch.
var ErrBusy = errors.New("another workforce runs this batch")

// Lock takes the batch for this process (until Unlock, or its end) and
// writes its process id into the lock file; ErrBusy, with the other's id,
// when another process has it.
func (s *State) Lock() error {
	f, err := os.OpenFile(filepath.Join(s.Dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		data, _ := os.ReadFile(f.Name())
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("%w (process %s)", ErrBusy, strings.TrimSpace(string(data)))
		}
		return err
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			f.Close()
			return err
		}
	}
	s.lock = f
	return nil
}

// Unlock lets the batch go.
func (s *State) Unlock() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// TaskDir is the directory of task id's files: its state, the child's
// stderr and its events.
func (s *State) TaskDir(id string) string { return filepath.Join(s.Dir, "tasks", id) }

// WriteInfo writes the batch's record.
func (s *State) WriteInfo(info Info) error {
	return writeJSON(filepath.Join(s.Dir, "batch.json"), info)
}

// ReadInfo reads the batch's record.
func (s *State) ReadInfo() (Info, error) {
	var info Info
	err := readJSON(filepath.Join(s.Dir, "batch.json"), &info)
	return info, err
}

// WriteTask writes the state of one task, atomically.
func (s *State) WriteTask(ts TaskState) error {
	if err := os.MkdirAll(s.TaskDir(ts.ID), 0o700); err != nil {
		return err
	}
	return writeJSON(filepath.Join(s.TaskDir(ts.ID), "state.json"), ts)
}

// ReadTask reads the state of task id; ok false when it has none.
func (s *State) ReadTask(id string) (ts TaskState, ok bool, err error) {
	err = readJSON(filepath.Join(s.TaskDir(id), "state.json"), &ts)
	if errors.Is(err, fs.ErrNotExist) {
		return TaskState{}, false, nil
	}
	return ts, err == nil, err
}

// ReadTasks reads the states of the tasks ids, those that have one.
func (s *State) ReadTasks(ids []string) (map[string]TaskState, error) {
	out := map[string]TaskState{}
	for _, id := range ids {
		ts, ok, err := s.ReadTask(id)
		if err != nil {
			return nil, err
		}
		if ok {
			out[id] = ts
		}
	}
	return out, nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(data, '\n'), 0o600)
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// Retry says which done tasks run again.
type Retry int

const (
	// RetryNone runs again only what is not done or was edited.
	RetryNone Retry = iota
	// RetryFailed also runs again the done tasks that did not succeed.
	RetryFailed
	// RetryNotStarted also runs again the done tasks whose agent never
	// started (NotStarted): workforce eval's --retry errors, which
	// reruns the attempts that could not run and never those that ran
	// and failed (that would inflate a pass rate).
	RetryNotStarted
)

// NotStarted reports whether the done task ts ran no agent: its run
// printed no result (it never started), or its result is an attempt's
// whose agent did not start (its setup failed).
func NotStarted(ts TaskState) bool {
	r := ts.Result
	return r == nil || (r.Attempt != nil && !r.Attempt.AgentStarted)
}

// Decision is what a run of a batch does with one task.
type Decision struct {
	Task Task
	Run  bool
	// Reason says why: new, edited, not done (interrupted, or its
	// batch died), retry (--retry failed, or eval's --retry errors), or
	// done (skipped).
	Reason string
	// Prev is the task's state before, when it had one.
	Prev *TaskState
}

// Plan decides, for each task of the file, whether this run runs it: a
// task whose entry is unchanged (same digest) and done is skipped, unless
// retry is RetryFailed and its status is not succeeded, or RetryNotStarted
// and its agent never started (NotStarted).
func Plan(tasks []Task, states map[string]TaskState, retry Retry) []Decision {
	out := make([]Decision, 0, len(tasks))
	for _, t := range tasks {
		d := Decision{Task: t, Run: true}
		prev, ok := states[t.ID]
		switch {
		case !ok:
			d.Reason = "new"
		case prev.Digest != t.Digest():
			d.Reason = "edited"
		case prev.Phase != PhaseDone:
			d.Reason = "not done"
		case retry == RetryFailed && prev.Status != report.StatusSucceeded,
			retry == RetryNotStarted && NotStarted(prev):
			d.Reason = "retry"
		default:
			d.Run, d.Reason = false, "done"
		}
		if ok {
			p := prev
			d.Prev = &p
		}
		out = append(out, d)
	}
	return out
}

// ResultOf is the result a task's state gives for --json: its run's, or,
// for a run that printed none, one saying why, with the task's id, the
// persona and tier of its entry (split splits PERSONA[@TIER]), the tier
// and harness it was to run on (pt, the task as checked) and no session
// id (it started none).
func ResultOf(ts TaskState, pt Prepared, split func(ref string) (id, tier string)) report.Result {
	if ts.Result != nil {
		return *ts.Result
	}
	id, tier := split(ts.Entry.Persona)
	harness := ts.Entry.Harness
	if pt.Tier != "" {
		tier = pt.Tier
	}
	if pt.Harness != "" {
		harness = pt.Harness
	}
	r := report.Result{TaskID: ts.ID, Persona: id, Tier: tier, Harness: harness, Status: ts.Status,
		DurationMS: ts.DurationMS, Message: ts.Error}
	if r.Status == "" {
		r.Status = report.StatusFailed
	}
	return r
}
