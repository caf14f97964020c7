package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// resultNow is the time the prune tests run at.
var resultNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.Local)

// resultID is a session id of persona p started age before resultNow.
func resultID(p string, age time.Duration, n int) string {
	return fmt.Sprintf("%s-%s-%08x", p, resultNow.Add(-age).Format("20060102-150405"), n)
}

// mkResult makes the results directory of id in home, with a result.
func mkResult(t *testing.T, home, id string) string {
	t.Helper()
	dir := ResultDir(home, id)
	must(t, os.MkdirAll(dir, 0o700))
	must(t, os.WriteFile(filepath.Join(dir, ResultFile), []byte(`{"sessionId": "`+id+`"}`), 0o600))
	if at, ok := idTime(id); ok {
		// Written when its session started.
		must(t, os.Chtimes(dir, at, at))
	}
	return dir
}

// TestPruneResultsWriteTime: a result is as old as its last write, not
// as its session: the result of a run longer than MaxAge (or of a session
// resumed later) is not pruned by the next run.
func TestPruneResultsWriteTime(t *testing.T) {
	home := t.TempDir()
	old := resultID("old", 40*24*time.Hour, 1)
	long := resultID("long", 40*24*time.Hour, 2)
	mkResult(t, home, old)
	dir := mkResult(t, home, long)
	at := resultNow.Add(-time.Hour)
	must(t, os.Chtimes(dir, at, at))
	removed, err := PruneResults(home, ResultLimits{MaxAge: 30 * 24 * time.Hour}, "", resultNow)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(removed, []string{old}) {
		t.Errorf("removed %q, want only %q (%q was written an hour ago)", removed, old, long)
	}
}

// listResults returns the names in the results directory of home.
func listResults(t *testing.T, home string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(home, ResultsDir))
	must(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestPruneResults(t *testing.T) {
	day := 24 * time.Hour
	a := resultID("a", time.Hour, 1)    // newest
	b := resultID("b", 2*day, 2)        //
	c := resultID("c", 10*day, 3)       //
	d := resultID("d", 40*day, 4)       // older than 30 days
	e := resultID("e", 400*day, 5)      // oldest
	odd := "not-a-session-id"           // its age is its mtime
	damaged := resultID("f", 50*day, 6) // no result.json, unreadable
	all := []string{a, b, c, d, e}
	tests := []struct {
		name     string
		lim      ResultLimits
		keep     string
		sessions []string // ids whose session directory exists
		oddAge   time.Duration
		removed  []string
	}{
		{name: "defaults: by age", lim: ResultLimits{MaxAge: 30 * day, MaxCount: 500}, removed: []string{d, e}},
		{name: "by count, oldest first", lim: ResultLimits{MaxCount: 2}, removed: []string{c, d, e}},
		{name: "age and count", lim: ResultLimits{MaxAge: 5 * day, MaxCount: 4}, removed: []string{c, d, e}},
		{name: "no limits", lim: ResultLimits{}},
		{name: "count of one", lim: ResultLimits{MaxCount: 1}, removed: []string{b, c, d, e}},
		{name: "the result just written stays", lim: ResultLimits{MaxAge: time.Minute}, keep: e, removed: []string{a, b, c, d}},
		{name: "the kept one counts", lim: ResultLimits{MaxCount: 1}, keep: c, removed: []string{a, b, d, e}},
		{name: "a session that still exists keeps its result, and does not count",
			lim: ResultLimits{MaxAge: 30 * day, MaxCount: 2}, sessions: []string{a, e}, removed: []string{d}},
		{name: "an id that is no session id ages by its mtime", lim: ResultLimits{MaxAge: 30 * day},
			oddAge: 31 * day, removed: []string{d, e, odd}},
		{name: "an id that is no session id, recent", lim: ResultLimits{MaxAge: 30 * day},
			oddAge: time.Hour, removed: []string{d, e}},
		{name: "ordered by time, not name", lim: ResultLimits{MaxCount: 3}, oddAge: 3 * day, removed: []string{c, d, e}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			for _, id := range all {
				mkResult(t, home, id)
			}
			for _, id := range tt.sessions {
				must(t, os.MkdirAll(filepath.Join(Dir(home), id), 0o700))
			}
			names := all
			if tt.oddAge != 0 {
				dir := mkResult(t, home, odd)
				at := resultNow.Add(-tt.oddAge)
				must(t, os.Chtimes(dir, at, at))
				names = append(slices.Clone(all), odd)
			}
			removed, err := PruneResults(home, tt.lim, tt.keep, resultNow)
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(removed)
			want := slices.Sorted(slices.Values(tt.removed))
			if !slices.Equal(removed, want) {
				t.Errorf("removed %q, want %q", removed, want)
			}
			var left []string
			for _, id := range names {
				if !slices.Contains(tt.removed, id) {
					left = append(left, id)
				}
			}
			slices.Sort(left)
			if got := listResults(t, home); !slices.Equal(got, left) {
				t.Errorf("left %q, want %q", got, left)
			}
		})
	}

	t.Run("a damaged result directory", func(t *testing.T) {
		home := t.TempDir()
		dir := ResultDir(home, damaged)
		must(t, os.MkdirAll(filepath.Join(dir, "sub"), 0o700))
		must(t, os.WriteFile(filepath.Join(dir, "sub", "stdout.json"), []byte("{"), 0o600))
		must(t, os.Chmod(filepath.Join(dir, "sub"), 0))
		at, _ := idTime(damaged)
		must(t, os.Chtimes(dir, at, at))
		must(t, os.Chmod(dir, 0))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
		mkResult(t, home, a)
		// A plain file in results/ is no result: left alone.
		must(t, os.WriteFile(filepath.Join(home, ResultsDir, "notes.txt"), nil, 0o600))
		removed, err := PruneResults(home, ResultLimits{MaxAge: 30 * day}, "", resultNow)
		if err != nil || !slices.Equal(removed, []string{damaged}) {
			t.Errorf("PruneResults = %q, %v, want %q removed", removed, err, damaged)
		}
		if got := listResults(t, home); !slices.Equal(got, []string{a, "notes.txt"}) {
			t.Errorf("left %q", got)
		}
	})

	t.Run("a symlink planted in results/", func(t *testing.T) {
		home := t.TempDir()
		outside := t.TempDir()
		must(t, os.WriteFile(filepath.Join(outside, "precious"), []byte("mine"), 0o600))
		must(t, os.MkdirAll(filepath.Join(home, ResultsDir), 0o700))
		// A link with the name of an old result, to a directory outside.
		link := resultID("evil", 100*day, 7)
		must(t, os.Symlink(outside, filepath.Join(home, ResultsDir, link)))
		// And an old result holding a link to outside.
		dir := mkResult(t, home, e)
		must(t, os.Symlink(outside, filepath.Join(dir, "stdout.json")))
		at, _ := idTime(e)
		must(t, os.Chtimes(dir, at, at))
		removed, err := PruneResults(home, ResultLimits{MaxAge: 30 * day, MaxCount: 1}, "", resultNow)
		if err != nil || !slices.Equal(removed, []string{e}) {
			t.Errorf("PruneResults = %q, %v, want %q removed", removed, err, e)
		}
		if data, err := os.ReadFile(filepath.Join(outside, "precious")); err != nil || string(data) != "mine" {
			t.Errorf("the file outside results/ is %q, %v", data, err)
		}
		if got := listResults(t, home); !slices.Equal(got, []string{link}) {
			t.Errorf("left %q, want the link alone", got)
		}
	})

	t.Run("sessions that cannot be listed: nothing removed", func(t *testing.T) {
		home := t.TempDir()
		mkResult(t, home, e)
		must(t, os.WriteFile(Dir(home), nil, 0o600))
		removed, err := PruneResults(home, ResultLimits{MaxCount: 1, MaxAge: day}, "", resultNow)
		if err == nil || removed != nil {
			t.Errorf("PruneResults = %q, %v, want an error and nothing removed", removed, err)
		}
		if got := listResults(t, home); !slices.Equal(got, []string{e}) {
			t.Errorf("left %q", got)
		}
	})

	t.Run("no results directory", func(t *testing.T) {
		removed, err := PruneResults(t.TempDir(), ResultLimits{MaxCount: 1}, "", resultNow)
		if err != nil || removed != nil {
			t.Errorf("PruneResults = %q, %v, want nothing", removed, err)
		}
	})
}

func TestIDTime(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"code-reviewer-20261123-101500-1a2b3c4d", true},
		{"a-20261123-101500-00000000", true},
		{"-20261123-101500-00000000", false},
		{"a-20261123-101500-1A2B3C4D", false},
		{"a-20261323-101500-1a2b3c4d", false},
		{"a-20261123_101500-1a2b3c4d", false},
		{"a-20261123-101500-1a2b3c4", false},
		{"a-20261123-101500", false},
		{"", false},
	}
	for _, tt := range tests {
		got, ok := idTime(tt.name)
		if ok != tt.ok {
			t.Errorf("idTime(%q) = %v, %v, want ok %v", tt.name, got, ok, tt.ok)
		}
	}
	got, _ := idTime("code-reviewer-20261123-101500-1a2b3c4d")
	if want := time.Date(2026, 11, 23, 10, 15, 0, 0, time.Local); !got.Equal(want) {
		t.Errorf("idTime = %v, want %v", got, want)
	}
	// NewDir's names read back as the time they were made.
	before := time.Now().Truncate(time.Second)
	got, ok := idTime(filepath.Base(NewDir(t.TempDir(), "p")))
	if !ok || got.Before(before) || got.After(time.Now()) {
		t.Errorf("idTime(NewDir) = %v, %v, want about %v", got, ok, before)
	}
}

func FuzzIDTime(f *testing.F) {
	for _, s := range []string{"code-reviewer-20261123-101500-1a2b3c4d", "a-20261123-101500-00000000", "--------", "x-99999999-999999-ffffffff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		tm, ok := idTime(name)
		if !ok {
			return
		}
		// The stamp as a time in UTC (no daylight saving gap to shift it).
		stamp := name[len(name)-24 : len(name)-9]
		utc, err := time.Parse("20060102-150405", stamp)
		if err != nil || name[len(name)-25] != '-' || name[len(name)-9] != '-' || len(name) < 26 {
			t.Fatalf("idTime(%q) = %v, true for a name that is no session id", name, tm)
		}
		if d := tm.Sub(utc); d < -15*time.Hour || d > 15*time.Hour {
			t.Errorf("idTime(%q) = %v, not the stamp %s", name, tm, stamp)
		}
	})
}

func TestLocate(t *testing.T) {
	home := t.TempDir()
	kept := "editor-20261124-100000-aaaaaaaa"  // session and result
	gone := "editor-20261124-110000-bbbbbbbb"  // result only
	alone := "review-20261124-120000-cccccccc" // session only
	other := "reviewer-20261124-130000-dddddddd"
	for _, id := range []string{kept, alone} {
		must(t, os.MkdirAll(filepath.Join(Dir(home), id), 0o700))
	}
	for _, id := range []string{kept, gone, other, "triage-20261124-100000-11111111", "triage-20261124-110000-22222222"} {
		mkResult(t, home, id)
	}
	// A symlink in results/ is not a result.
	must(t, os.Symlink(t.TempDir(), filepath.Join(home, ResultsDir, "linked-20261124-140000-eeeeeeee")))
	tests := []struct {
		id, want        string
		session, result bool
		err             string
	}{
		{id: kept, want: kept, session: true, result: true},
		{id: gone, want: gone, result: true},
		{id: alone, want: alone, session: true},
		{id: "editor-20261124-11", want: gone, result: true},
		{id: "review-", want: alone, session: true},
		{id: "reviewer", want: other, result: true},
		// A prefix that names one session on disk means it, whatever
		// the results; the results are looked at when it names none.
		{id: "editor", want: kept, session: true, result: true},
		{id: "review", want: alone, session: true},
		{id: "editor-20261124-1", want: kept, session: true, result: true},
		{id: "triage", err: "triage names 2 sessions: triage-20261124-100000-11111111, triage-20261124-110000-22222222"},
		{id: "linked", err: "no session linked in "},
		{id: "nosuch", err: "no session nosuch in "},
		{id: "../x", err: `"../x" is not a session id`},
		{id: "", err: `"" is not a session id`},
	}
	for _, tt := range tests {
		l, err := Locate(home, tt.id)
		if tt.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
				t.Errorf("Locate(%q) = %+v, %v, want error %q", tt.id, l, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Locate(%q): %v", tt.id, err)
			continue
		}
		if l.ID != tt.want || (l.Session != nil) != tt.session || (l.ResultDir != "") != tt.result {
			t.Errorf("Locate(%q) = %+v, want %s, session %v, result %v", tt.id, l, tt.want, tt.session, tt.result)
		}
		if l.Session != nil && l.Session.Dir != filepath.Join(Dir(home), tt.want) {
			t.Errorf("Locate(%q).Session.Dir = %s", tt.id, l.Session.Dir)
		}
		if l.ResultDir != "" && l.ResultDir != ResultDir(home, tt.want) {
			t.Errorf("Locate(%q).ResultDir = %s", tt.id, l.ResultDir)
		}
	}
}

func TestConfiguredResultLimits(t *testing.T) {
	home := t.TempDir()
	lim, err := ConfiguredResultLimits(home)
	if err != nil || lim != (ResultLimits{MaxAge: 720 * time.Hour, MaxCount: 500}) {
		t.Errorf("ConfiguredResultLimits without config.json = %+v, %v, want 720h and 500", lim, err)
	}
	must(t, os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"results": {"maxCount": 7}}`), 0o600))
	if lim, err = ConfiguredResultLimits(home); err != nil || lim != (ResultLimits{MaxAge: 720 * time.Hour, MaxCount: 7}) {
		t.Errorf("ConfiguredResultLimits = %+v, %v, want 720h and 7", lim, err)
	}
	must(t, os.WriteFile(filepath.Join(home, "config.json"), []byte(`{"results": {"maxAge": "a month"}}`), 0o600))
	if _, err = ConfiguredResultLimits(home); err == nil || !strings.Contains(err.Error(), "config.json: results.maxAge: ") {
		t.Errorf("ConfiguredResultLimits with a bad maxAge = %v, want an error naming the file and the key", err)
	}
}

// BenchmarkPruneResults prunes a results directory at its default bound,
// 500 results, 20 of them of sessions still on disk, with nothing to
// remove: the cost every one-shot run pays after writing its result.
func BenchmarkPruneResults(b *testing.B) {
	home := b.TempDir()
	for i := range DefaultResultsMaxCount {
		id := resultID("p", time.Duration(i)*time.Minute, i)
		dir := ResultDir(home, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		if i%25 == 0 {
			if err := os.MkdirAll(filepath.Join(Dir(home), id), 0o700); err != nil {
				b.Fatal(err)
			}
		}
	}
	lim := ResultLimits{MaxAge: DefaultResultsMaxAge, MaxCount: DefaultResultsMaxCount}
	for b.Loop() {
		removed, err := PruneResults(home, lim, "", resultNow)
		if err != nil || len(removed) > 0 {
			b.Fatalf("PruneResults = %q, %v", removed, err)
		}
	}
}
