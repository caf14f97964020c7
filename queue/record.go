package queue

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/batch"
)

// RecordFile is the file, in a task's directory of a batch's state
// (batch.State.TaskDir), where the submitter records the task's
// publication (Record).
const RecordFile = "queue.json"

// Record is what a batch's state keeps of a task's publication: the
// submission it was published as, the commit its ref named, when, and the
// seal its results are signed with (seal.go: empty in a record of an
// older workforce, whose results are taken as they come).
type Record struct {
	Submission string    `json:"submission"`
	Commit     string    `json:"commit"`
	Published  time.Time `json:"published"`
	Seal       string    `json:"seal,omitempty"`
}

func recordPath(st *batch.State, id string) string {
	return filepath.Join(st.TaskDir(id), RecordFile)
}

// ReadRecord is the record of task id's publication in the batch's state
// st; ok false when it has none (or one without a submission).
func ReadRecord(st *batch.State, id string) (r Record, ok bool) {
	data, err := os.ReadFile(recordPath(st, id))
	if err != nil || json.Unmarshal(data, &r) != nil || r.Submission == "" {
		return r, false
	}
	return r, true
}

// WriteRecord records task id's publication in the batch's state st,
// atomically.
func WriteRecord(st *batch.State, id string, r Record) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.TaskDir(id), 0o700); err != nil {
		return err
	}
	return renameio.WriteFile(recordPath(st, id), append(data, '\n'), 0o600)
}

// newSubmission is the id of a publication: the time and a few random
// digits.
func newSubmission() string {
	b := make([]byte, 3)
	rand.Read(b)
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b)
}
