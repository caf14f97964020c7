package session

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRecordErrors(t *testing.T) {
	good := `{"format": 1, "id": "s-1", "persona": "p", "tier": "best", "harness": "codex", "root": "/r", "cwd": "/r/a",
 "pid": 7, "started": "2026-11-23T10:00:00Z", "phase": "running", "updated": "2026-11-23T10:00:00Z"}`
	tests := []struct {
		name, data, want string
	}{
		{"good", good, ""},
		{"empty", "", "not a session record (truncated or corrupt?)"},
		{"truncated", good[:40], "not a session record (truncated or corrupt?)"},
		{"a newer format", strings.Replace(good, `"format": 1`, `"format": 4`, 1), "written by a newer workforce (format 4; this one reads format 3)"},
		{"no format", strings.Replace(good, `"format": 1,`, ``, 1), "no format"},
		{"an unknown field", strings.Replace(good, `"tier"`, `"flavour": 1, "tier"`, 1), "unknown field"},
		{"an unknown phase", strings.Replace(good, `"running"`, `"dancing"`, 1), `unknown phase "dancing"`},
		{"a relative root", strings.Replace(good, `"root": "/r"`, `"root": "r"`, 1), "not absolute"},
		{"an id with a slash", strings.Replace(good, `"s-1"`, `"../s-1"`, 1), "not a directory name"},
		{"format 2", strings.Replace(good, `"format": 1,`, `"format": 2, "harnessPid": 9, "harnessStart": {"boot": "b", "ticks": 5},`, 1), ""},
		{"a harness start that is not one", strings.Replace(good, `"format": 1,`, `"format": 2, "harnessStart": 5,`, 1), "not a session record"},
		{"the session's branch", strings.Replace(good, `"format": 1,`, `"format": 2, "branch": "workforce/s-1", "commits": 2, "head": "`+strings.Repeat("a", 40)+`",`, 1), ""},
		{"a branch not the session's", strings.Replace(good, `"format": 1,`, `"format": 2, "branch": "main", "commits": 2, "head": "`+strings.Repeat("a", 40)+`",`, 1), `the branch "main" is not the session's`},
		{"a branch without its commit", strings.Replace(good, `"format": 1,`, `"format": 2, "branch": "workforce/s-1", "commits": 2, "head": "HEAD",`, 1), "is not an object name"},
		{"commits without a branch", strings.Replace(good, `"format": 1,`, `"format": 2, "commits": 2,`, 1), "without a branch"},
		{"format 3 with the harness's session", strings.Replace(good, `"format": 1,`, `"format": 3, "harnessSessionId": "ses_df00d0943ffeimayS1jjmpINLN",`, 1), ""},
		{"a harness session that reads as a flag", strings.Replace(good, `"format": 1,`, `"format": 3, "harnessSessionId": "--dangerously-skip-permissions",`, 1), "is not one"},
		{"a harness session with a space", strings.Replace(good, `"format": 1,`, `"format": 3, "harnessSessionId": "a b",`, 1), "is not one"},
		{"a harness session too long", strings.Replace(good, `"format": 1,`, `"format": 3, "harnessSessionId": "`+strings.Repeat("a", 129)+`",`, 1), "is not one"},
		{"negative commits", strings.Replace(good, `"format": 1,`, `"format": 2, "branch": "workforce/s-1", "commits": -1, "head": "`+strings.Repeat("a", 40)+`",`, 1), "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s-1")
			os.Mkdir(dir, 0o700)
			os.WriteFile(filepath.Join(dir, RecordFile), []byte(tt.data), 0o600)
			r, err := readRecord(dir)
			switch {
			case tt.want == "" && (err != nil || r.Phase != Running || r.PID != 7):
				t.Errorf("readRecord() = %+v, %v", r, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), RecordFile)):
				t.Errorf("readRecord() = %v, want an error naming %s and saying %q", err, RecordFile, tt.want)
			}
		})
	}
}

// TestRecordRoundTrip: what writeRecord writes, readRecord reads back,
// the harness's start included; a format 1 record, which has none, reads
// as one whose harness is known by its id alone.
func TestRecordRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s-1")
	must(t, os.Mkdir(dir, 0o700))
	in := Record{ID: "s-1", Root: "/r", Cwd: "/r", PID: 7, HarnessPID: 9, HarnessStart: &ProcStart{Boot: "b", Ticks: 5}, Phase: Running}
	must(t, writeRecord(dir, &in))
	r, err := readRecord(dir)
	if err != nil || r.Format != recordFormat || r.HarnessStart == nil || *r.HarnessStart != *in.HarnessStart || r.HarnessPID != 9 {
		t.Fatalf("readRecord() = %+v, %v; want format %d and the harness's start %+v", r, err, recordFormat, *in.HarnessStart)
	}
	held := Record{ID: "s-1", Root: "/r", Cwd: "/r", Phase: Review, Branch: BranchName("s-1"), Commits: 2, Head: strings.Repeat("b", 40)}
	must(t, writeRecord(dir, &held))
	if r, err := readRecord(dir); err != nil || r.Phase != Review || r.Branch != held.Branch || r.Commits != 2 || r.Head != held.Head {
		t.Fatalf("readRecord() = %+v, %v; want %+v", r, err, held)
	}
	resumable := Record{ID: "s-1", Root: "/r", Cwd: "/r", Phase: Synced, HarnessSessionID: "01a20fd4-efb4-7e21-b57e-874ab689a026"}
	must(t, writeRecord(dir, &resumable))
	if r, err := readRecord(dir); err != nil || r.HarnessSessionID != resumable.HarnessSessionID {
		t.Fatalf("readRecord() = %+v, %v; want the harness's session %s", r, err, resumable.HarnessSessionID)
	}
	two := `{"format": 2, "id": "s-1", "root": "/r", "cwd": "/r", "pid": 7, "phase": "synced"}`
	must(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(two), 0o600))
	if r, err := readRecord(dir); err != nil || r.HarnessSessionID != "" || r.Format != 2 {
		t.Errorf("readRecord(format 2) = %+v, %v; want no harness session, format 2", r, err)
	}
	old := `{"format": 1, "id": "s-1", "root": "/r", "cwd": "/r", "pid": 7, "harnessPid": 9, "phase": "running"}`
	must(t, os.WriteFile(filepath.Join(dir, RecordFile), []byte(old), 0o600))
	if r, err := readRecord(dir); err != nil || r.HarnessPID != 9 || r.HarnessStart != nil {
		t.Errorf("readRecord(format 1) = %+v, %v; want harness 9, start unknown", r, err)
	}
}

// FuzzRecord: the record reader never panics, what it accepts has an id
// that is a directory name, absolute paths and a known phase, and reads
// back the same once written.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(`{"format":1,"id":"s","root":"/r","cwd":"/r","phase":"synced"}`))
	f.Add([]byte(`{"format":2,"id":"s","root":"/r","cwd":"/r","phase":"running","harnessPid":3,"harnessStart":{"boot":"b","ticks":9}}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":2,"id":"s","root":"/r","cwd":"/r","phase":"review","branch":"workforce/s","commits":1,"head":"0123456789012345678901234567890123456789"}`))
	f.Add([]byte(`{"format":1,"id":"..","root":"/r","cwd":"/r","phase":"running"}`))
	f.Add([]byte(`{"format":3,"id":"s","root":"/r","cwd":"/r","phase":"synced","harnessSessionId":"5f1f3c52-7a3e-4d59-9a57-2f0a4f2c9e11"}`))
	f.Add([]byte(`{"format":3,"id":"s","root":"/r","cwd":"/r","phase":"synced","harnessSessionId":"-x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseRecord(data)
		if err != nil {
			return
		}
		if r.ID == "" || r.ID != filepath.Base(r.ID) || r.ID == ".." || !filepath.IsAbs(r.Root) || !filepath.IsAbs(r.Cwd) {
			t.Fatalf("accepted %+v", r)
		}
		switch r.Phase {
		case Creating, Running, Syncing, Synced, Failed, Review:
		default:
			t.Fatalf("accepted phase %q", r.Phase)
		}
		if r.Branch != "" && r.Branch != BranchName(r.ID) {
			t.Fatalf("accepted the branch %q of session %q", r.Branch, r.ID)
		}
		if id := r.HarnessSessionID; strings.HasPrefix(id, "-") || strings.ContainsAny(id, " \t\n=/") {
			t.Fatalf("accepted the harness session %q, which the harness would not read as an id", id)
		}
		once, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseRecord(once)
		if err != nil {
			t.Fatalf("parseRecord(%s) = %v; it accepted it before it was written", once, err)
		}
		if twice, _ := json.Marshal(again); !bytes.Equal(once, twice) {
			t.Fatalf("written %s, read back as %s", once, twice)
		}
	})
}
