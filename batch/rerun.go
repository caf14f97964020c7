package batch

import (
	"fmt"
	"os"
	"path/filepath"
)

// PreviousDir is the directory, in a batch's directory, where a rerun
// (OpenOptions.Rerun) sets the tasks' states of the run before aside.
const PreviousDir = "previous"

// SetAside moves the tasks' states of the batch (tasks/: each task's
// state.json with its result, its events and stderr) to previous/,
// replacing what an earlier rerun set there, and leaves tasks/ empty: the
// next run runs every task as new, under the same id. The caller holds
// the batch's lock. The tasks' results in <home>/results/ stay as they
// are (pruned as any).
func (s *State) SetAside() error {
	prev := filepath.Join(s.Dir, PreviousDir)
	if err := os.RemoveAll(prev); err != nil {
		return fmt.Errorf("cannot remove the batch's previous run %s: %w", prev, err)
	}
	tasks := filepath.Join(s.Dir, "tasks")
	if err := os.Rename(tasks, prev); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("cannot set the batch's last run aside in %s: %w", prev, err)
	}
	return os.MkdirAll(tasks, 0o700)
}
