package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// ReadResult reads the result a one-shot run kept in its results
// directory dir (session.ResultFile, as Start keeps it); a result that
// cannot be read is an error naming the file, one that is not there
// os.ErrNotExist.
func ReadResult(dir string) (*report.Result, error) {
	path := filepath.Join(dir, session.ResultFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r report.Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, diag.JSONError(path, data, err)
	}
	if !slices.Contains(report.Statuses, r.Status) {
		return nil, &diag.Diagnostic{File: path, Field: "status", Message: fmt.Sprintf("%q is not a status of a run", r.Status)}
	}
	if r.SessionID == "" {
		return nil, &diag.Diagnostic{File: path, Field: "sessionId", Message: "missing"}
	}
	return &r, nil
}

// ReadNetworkLog summarizes the network record a confined run left in
// its results directory dir (session.NetworkLogFile); nil when there is
// none. Lines that do not read as a record are skipped: the record is
// appended while the run goes, and a killed run may leave half a line.
func ReadNetworkLog(dir string) *report.Network {
	data, err := os.ReadFile(filepath.Join(dir, session.NetworkLogFile))
	if err != nil {
		return nil
	}
	var recs []report.NetworkRecord
	for _, line := range bytes.Split(data, []byte("\n")) {
		var r report.NetworkRecord
		if json.Unmarshal(line, &r) == nil && r.Host != "" {
			recs = append(recs, r)
		}
	}
	return report.SummarizeNetwork("", recs)
}
