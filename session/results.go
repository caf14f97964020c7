package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/mount"
)

// Results. A one-shot run leaves its result (ResultFile, written by the
// command layer, which owns its format) and the harness's raw output in
// <home>/results/<id>/ (ResultDir), named by the session id, so that they
// outlive the sandbox. They are bounded: PruneResults removes those older
// than a maximum age and those beyond a maximum count, newest kept, after
// each one-shot run and on demand (sessions prune-results), by the bounds
// of "results" in <home>/config.json (ConfiguredResultLimits), 30 days and
// 500 by default. The raw output is written there as it comes, whole
// (runOneShot): the size of its files is bounded only by the run's time
// limit.
//
// The age of a result is that of its session: the time in its id, when
// the directory's name is a session id (no system call), else the
// directory's modification time. Pruning never removes the results of a
// session whose directory still exists (a kept, held, running or stale
// session: they are removed with it, or stay while it does, and do not
// count toward the maximum), nor the result the caller just wrote, and
// it removes only real directories of results/: a symlink or a file
// planted there is left alone, and nothing is followed out of results/.

// ResultFile is the name of the result in a results directory.
const ResultFile = "result.json"

// NetworkLogFile is the record of a confined run's connections in its
// results directory, one JSON object a line (report.NetworkRecord),
// written by the network proxy; it outlives the session.
const NetworkLogFile = "network.jsonl"

// The default bounds of the results directory.
const (
	DefaultResultsMaxAge   = 30 * 24 * time.Hour
	DefaultResultsMaxCount = 500
)

// ResultLimits bound the results directory: results older than MaxAge,
// and those beyond the newest MaxCount, are removed. Zero is no limit.
type ResultLimits struct {
	MaxAge   time.Duration
	MaxCount int
}

// ConfiguredResultLimits returns the bounds of the results directory of
// the workforce home dir: those of "results" in its config.json, the
// defaults for what it does not set. A config.json that cannot be read is
// an error that names the file and the key.
func ConfiguredResultLimits(dir string) (ResultLimits, error) {
	lim := ResultLimits{MaxAge: DefaultResultsMaxAge, MaxCount: DefaultResultsMaxCount}
	cfg, err := home.ReadConfig(dir)
	if err != nil {
		return lim, err
	}
	if a := cfg.Results.MaxAge; a != nil {
		lim.MaxAge = *a
	}
	if n := cfg.Results.MaxCount; n != nil {
		lim.MaxCount = *n
	}
	return lim, nil
}

// ResultDir returns the results directory of the session id of the
// workforce home dir.
func ResultDir(dir, id string) string { return filepath.Join(dir, ResultsDir, id) }

// Located is what a session id names: the session, while its directory
// exists, and its results directory, when a one-shot run left one.
type Located struct {
	// ID is the whole session id.
	ID string
	// Session is the session, its record not read; nil when its directory
	// is gone.
	Session *Session
	// ResultDir is the session's results directory; empty when there is
	// none.
	ResultDir string
}

// Locate resolves id as Find does, the whole id or a prefix of exactly
// one, over the sessions and the results of the workforce home dir: a
// one-shot run's result is found after its sandbox is gone. A prefix is
// matched against the sessions on disk first, and against the results
// only when it matches none of them: results pile up (up to their
// bounds), and a prefix that names one session on disk means it.
func Locate(dir, id string) (*Located, error) {
	if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
		return nil, fmt.Errorf("%q is not a session id", id)
	}
	name := id
	if !sessionExists(dir, id) && !isResultDir(ResultDir(dir, id)) {
		var matches []string
		for _, d := range []string{Dir(dir), filepath.Join(dir, ResultsDir)} {
			entries, _ := os.ReadDir(d)
			for _, e := range entries {
				if e.IsDir() && strings.HasPrefix(e.Name(), id) {
					matches = append(matches, e.Name())
				}
			}
			if len(matches) > 0 {
				break
			}
		}
		sort.Strings(matches)
		switch len(matches) {
		case 0:
			return nil, fmt.Errorf("no session %s in %s, and no result of one in %s", id, Dir(dir), filepath.Join(dir, ResultsDir))
		case 1:
			name = matches[0]
		default:
			return nil, fmt.Errorf("%s names %d sessions: %s", id, len(matches), strings.Join(matches, ", "))
		}
	}
	l := &Located{ID: name}
	if sessionExists(dir, name) {
		l.Session = &Session{Dir: filepath.Join(Dir(dir), name)}
	}
	if rd := ResultDir(dir, name); isResultDir(rd) {
		l.ResultDir = rd
	}
	return l, nil
}

// sessionExists reports whether the session id of the workforce home dir
// still has its directory.
func sessionExists(dir, id string) bool {
	fi, err := os.Stat(filepath.Join(Dir(dir), id))
	return err == nil && fi.IsDir()
}

// isResultDir reports whether path is a real directory, not a symlink.
func isResultDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}

// PruneResults removes the results of the workforce home dir beyond lim
// at the time now (see Results above): it returns the ids of those it
// removed, and the errors of those it could not remove, joined. keep is
// the id of a result never to remove (the one just written; "" for
// none). It reads the results and the sessions directories once each,
// and stats each result directory.
func PruneResults(dir string, lim ResultLimits, keep string, now time.Time) ([]string, error) {
	rdir := filepath.Join(dir, ResultsDir)
	entries, err := os.ReadDir(rdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type result struct {
		name string
		t    time.Time
	}
	var all []result
	for _, e := range entries {
		if !e.Type().IsDir() {
			continue // a file or a symlink: not a result, left alone
		}
		// A result is as old as its last write (a run that took longer
		// than MaxAge, a resumed session): the directory's time, which a
		// new file in it sets, unless the id's is later.
		fi, err := e.Info()
		if err != nil {
			continue // gone meanwhile
		}
		t := fi.ModTime()
		if it, ok := idTime(e.Name()); ok && it.After(t) {
			t = it
		}
		all = append(all, result{e.Name(), t})
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].t.Equal(all[j].t) {
			return all[i].t.After(all[j].t)
		}
		return all[i].name > all[j].name
	})
	var removed []string
	var errs []error
	// The sessions that still exist, by name: any entry of the sessions
	// directory (Find follows a symlink there) keeps its result.
	sessions := map[string]bool{}
	if entries, err := os.ReadDir(Dir(dir)); err == nil {
		for _, e := range entries {
			sessions[e.Name()] = true
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err // which results are a session's is unknown
	}
	// The result kept counts first: with it, at most MaxCount remain.
	n := 0
	if slices.ContainsFunc(all, func(r result) bool { return r.name == keep }) {
		n = 1
	}
	for _, r := range all {
		if r.name == keep || sessions[r.name] {
			continue // sessions: removed with them, or kept while they are
		}
		n++
		old := lim.MaxAge > 0 && now.Sub(r.t) > lim.MaxAge
		over := lim.MaxCount > 0 && n > lim.MaxCount
		if !old && !over {
			continue
		}
		if err := removeResult(filepath.Join(rdir, r.name)); err != nil {
			errs = append(errs, fmt.Errorf("cannot remove the result %s: %w", r.name, err))
			continue
		}
		removed = append(removed, r.name)
	}
	return removed, errors.Join(errs...)
}

// removeResult removes the results directory path, which must still be a
// real directory (removing follows no symlink in it); directories below
// it whose mode forbids listing or writing them are made so first
// (mount.RemoveDir), as a user who is not root needs.
func removeResult(path string) error {
	if !isResultDir(path) {
		return nil // gone, or replaced by something that is no result
	}
	return mount.RemoveDir(path)
}

// idTime returns the time in the session id name (NewDir:
// <persona>-<yyyymmdd>-<hhmmss>-<8 hex digits>), in the local time zone
// NewDir writes it in.
func idTime(name string) (time.Time, bool) {
	const stamp, random = len("20060102-150405"), 8
	n := len(name)
	if n < stamp+random+3 || name[n-random-1] != '-' || name[n-random-stamp-2] != '-' {
		return time.Time{}, false
	}
	for _, c := range name[n-random:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return time.Time{}, false
		}
	}
	t, err := time.ParseInLocation("20060102-150405", name[n-random-stamp-1:n-random-1], time.Local)
	return t, err == nil
}
