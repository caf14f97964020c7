package queue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/batch"
)

// Status is how a batch that runs on a queue stands.
type Status struct {
	// File is the batch file, as the batch's state on this machine has
	// it, or a note saying that the states are the queue's.
	File   string
	IDs    []string
	States map[string]batch.TaskState
}

// NoBatchError is a batch neither this machine's states nor the queue
// know.
type NoBatchError struct{ ID string }

func (e *NoBatchError) Error() string { return fmt.Sprintf("no batch %s here or on the queue", e.ID) }

// ReadStatus is how batch id stands (`batch status --queue`): the
// batch's state in home, with each queued task's result when it has come
// (recorded in the state, unless the submitter that follows the batch
// holds its lock); without a state here, what the queue has of the
// batch: the results and the tasks waiting (NoBatchError when it has
// nothing). It sweeps the queue first.
func ReadStatus(ctx context.Context, o Options, home, id string) (Status, error) {
	conn, err := Connect(ctx, o)
	if err != nil {
		return Status{}, err
	}
	defer conn.Close()
	conn.Sweep(ctx)
	st, err := batch.Existing(home, id)
	switch {
	case err == nil:
		info, err := st.ReadInfo()
		if err != nil {
			return Status{}, err
		}
		s := Status{File: info.File, IDs: info.Tasks}
		if s.States, err = st.ReadTasks(s.IDs); err != nil {
			return Status{}, err
		}
		mine := st.Lock() == nil // not while a submitter follows it
		if mine {
			defer st.Unlock()
		}
		if _, err := recordResults(ctx, conn, st, mine, s.IDs, s.States); err != nil {
			return Status{}, err
		}
		return s, nil
	case errors.Is(err, fs.ErrNotExist) || strings.HasPrefix(err.Error(), "no batch "):
		s := Status{File: "(no state on this machine: from the queue)"}
		if s.IDs, s.States, err = queueStates(ctx, conn, id); err != nil {
			return Status{}, err
		}
		if len(s.IDs) == 0 {
			return Status{}, &NoBatchError{ID: id}
		}
		return s, nil
	}
	return Status{}, err
}

// queuedResults reports whether a task of ids is queued in the batch's
// state: its result may have come meanwhile.
func queuedResults(st *batch.State, ids []string, states map[string]batch.TaskState) bool {
	for _, tid := range ids {
		if ts, ok := states[tid]; ok && ts.Phase == PhaseQueued {
			if _, ok := ReadRecord(st, tid); ok {
				return true
			}
		}
	}
	return false
}

// recordResults puts in states the result of each queued task of ids
// whose result has come, and with write records it in the batch's state
// st (who holds the batch's lock writes). came are the tasks whose result
// it put in states.
func recordResults(ctx context.Context, conn *Conn, st *batch.State, write bool, ids []string, states map[string]batch.TaskState) (came map[string]bool, err error) {
	came = map[string]bool{}
	for _, tid := range ids {
		ts, ok := states[tid]
		if !ok || ts.Phase != PhaseQueued {
			continue
		}
		rec, ok := ReadRecord(st, tid)
		if !ok {
			continue
		}
		r, ok, err := conn.LookupResult(ctx, Key{Batch: st.ID, Submission: rec.Submission, Task: tid}, rec.Seal)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		states[tid] = r.State(ts.Entry)
		if write {
			if err := st.WriteTask(states[tid]); err != nil {
				return nil, err
			}
		}
		came[tid] = true
	}
	return came, nil
}

// queueStates are the states of batch id as the queue has them: a task
// with a result is done (the latest result, when it ran several times);
// one waiting for a worker or running is queued. Without the batch's
// state there is no seal to check a result with (seal.go): they are
// shown as they came, and the status says they are from the queue.
func queueStates(ctx context.Context, conn *Conn, id string) ([]string, map[string]batch.TaskState, error) {
	results, err := conn.Results(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	pending, err := conn.Pending(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	states := map[string]batch.TaskState{}
	for _, r := range results {
		if prev, ok := states[r.Task]; ok && prev.Finished != nil && prev.Finished.After(r.Finished) {
			continue
		}
		states[r.Task] = r.State(batch.Task{ID: r.Task})
	}
	for _, k := range pending {
		states[k.Task] = batch.TaskState{ID: k.Task, Phase: PhaseQueued}
	}
	ids := make([]string, 0, len(states))
	for tid := range states {
		ids = append(ids, tid)
	}
	slices.Sort(ids)
	return ids, states, nil
}
