package run

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
)

// TestReadResult: a kept result reads back; one that is not there is
// os.ErrNotExist; a damaged one is an error naming the file and what is
// wrong.
func TestReadResult(t *testing.T) {
	tests := []struct {
		name, text string
		want       string // in the error; "" for none
	}{
		{"a result", `{"sessionId": "s1", "persona": "rev", "status": "succeeded"}`, ""},
		{"not JSON", `{"sessionId": `, "result.json"},
		{"a status of no run", `{"sessionId": "s1", "status": "fine"}`, `"fine" is not a status of a run`},
		{"no session id", `{"status": "failed"}`, "sessionId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, session.ResultFile), []byte(tt.text), 0o600); err != nil {
				t.Fatal(err)
			}
			r, err := ReadResult(dir)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), session.ResultFile) {
					t.Fatalf("ReadResult = %+v, %v; want an error naming %s and %q", r, err, session.ResultFile, tt.want)
				}
				return
			}
			if err != nil || r.SessionID != "s1" || r.Persona != "rev" || r.Status != report.StatusSucceeded {
				t.Fatalf("ReadResult = %+v, %v", r, err)
			}
		})
	}
	if _, err := ReadResult(t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadResult of a directory without a result = %v, want os.ErrNotExist", err)
	}
}

// TestReadNetworkLog: the record summarized, each destination once;
// half a line (a killed run's) and a line without a host skipped; no
// record, nil.
func TestReadNetworkLog(t *testing.T) {
	dir := t.TempDir()
	if n := ReadNetworkLog(dir); n != nil {
		t.Errorf("ReadNetworkLog without a record = %+v, want nil", n)
	}
	log := `{"host": "a.example", "port": 443, "allowed": true, "up": 1, "down": 2}
{"host": "evil.example", "port": 443}
{"port": 80}
{"host": "a.example", "port": 443, "allowed": true, "up": 3, "down": 4}
{"host": "evil.example", "po`
	if err := os.WriteFile(filepath.Join(dir, session.NetworkLogFile), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got := ReadNetworkLog(dir)
	want := report.SummarizeNetwork("", []report.NetworkRecord{
		{Host: "a.example", Port: 443, Allowed: true, Up: 1, Down: 2},
		{Host: "evil.example", Port: 443},
		{Host: "a.example", Port: 443, Allowed: true, Up: 3, Down: 4},
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadNetworkLog = %+v, want %+v", got, want)
	}
	if len(got.Denied) != 1 || got.Denied[0].Count != 1 || len(got.Allowed) != 1 || got.Allowed[0].Count != 2 {
		t.Errorf("ReadNetworkLog = %+v, want a.example twice allowed, evil.example once denied", got)
	}
}
