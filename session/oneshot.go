package session

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/mount"
)

// ResultsDir is the directory, under the workforce home, where each
// one-shot run leaves its result and the harness's raw output, by session
// id: they stay after the sandbox is removed.
const ResultsDir = "results"

// OneShotResult is what a one-shot run adds to its Result.
type OneShotResult struct {
	// Outcome is what the harness's output says; never nil.
	Outcome *harness.Outcome
	// Parsed says the output held a result (harness.ParseOutput did not
	// return harness.ErrNoResult).
	Parsed bool
	// Stdout and Stderr are the harness's raw output.
	Stdout, Stderr []byte
	// Dir is the session's results directory (Home/results/ID), holding
	// the raw output (stdout.jsonl, stderr.txt); the caller writes
	// result.json there. Empty when it could not be written (a warning
	// said why).
	Dir string
}

// runOneShot runs a one-shot plan: the harness gets inv.Stdin, never the
// terminal; its standard output is captured, not shown, and read line by
// line as it comes (harness.OutputWriter); its standard error is shown and
// captured. Everything else is as in run.
//
// Events. With RunOptions.Events, the harness's events are passed on as
// their lines arrive, then sync-back's: a sync event for each file as
// sync-back writes it back or deletes it (from the sync progress; created
// or updated as the repository has the file or not then, deleted), and
// after sync-back one for each conflict and each file it failed to write.
// The last sync event of a path says what became of it; the result's
// files are the authority. The harness's output is read to its end (a
// last line without its newline) before the first sync event. Progress
// is not reported after SIGHUP, and so neither are the sync events.
func (p *Plan) runOneShot(o RunOptions) (*Result, error) {
	emit := o.Events
	if emit == nil {
		emit = func(harness.Event) {}
	}
	stdout, err := harness.NewOutputWriter(p.Harness, emit)
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	o.Stdin = strings.NewReader(p.inv.Stdin)
	o.Stdout = stdout
	if o.Stderr != nil {
		o.Stderr = io.MultiWriter(o.Stderr, &stderr)
	} else {
		o.Stderr = &stderr
	}
	progress := o.Progress
	o.Progress = func(event, detail string) {
		if event == "sync" && o.Events != nil {
			stdout.Finish() // the harness has exited: its events first
			emit(harness.Event{Type: harness.EventSync, Path: detail, Action: p.syncAction(detail)})
		}
		if progress != nil {
			progress(event, detail)
		}
	}
	o.HarnessSession = func() string {
		// Called once the harness has exited: its output is complete.
		if out, _ := stdout.Finish(); out != nil {
			return out.SessionID
		}
		return ""
	}
	res, err := p.run(o)
	if res == nil {
		return nil, err
	}
	out, perr := stdout.Finish()
	if rep := res.Report; rep != nil && !res.Held {
		for _, c := range rep.Conflicts {
			emit(harness.Event{Type: harness.EventSync, Path: c.Path, Action: harness.SyncConflict})
		}
		for _, f := range rep.Failed {
			emit(harness.Event{Type: harness.EventSync, Path: f.Path, Action: harness.SyncFailed})
		}
	}
	one := &OneShotResult{Stdout: stdout.Bytes(), Stderr: []byte(stderr.String())}
	if out == nil {
		out = &harness.Outcome{}
	}
	one.Outcome, one.Parsed = out, perr == nil
	if perr != nil && !errors.Is(perr, harness.ErrNoResult) {
		return res, perr
	}
	dir := filepath.Join(p.mount.Home, ResultsDir, filepath.Base(p.Sandbox))
	if werr := saveOutput(dir, one); werr != nil {
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("cannot keep the harness's output: %v", werr))
		}
	} else {
		one.Dir = dir
	}
	res.OneShot = one
	return res, err
}

// syncAction is what sync-back is about to do with rel, as its progress
// reports it before it writes or deletes the real file: deleted when the
// sandbox no longer has it, else updated or created as the repository
// has the file or not.
func (p *Plan) syncAction(rel string) string {
	if _, err := os.Lstat(filepath.Join(p.Sandbox, mount.TreeDir, rel)); errors.Is(err, fs.ErrNotExist) {
		return harness.SyncDeleted
	}
	if _, err := os.Lstat(filepath.Join(p.Root, rel)); err == nil {
		return harness.SyncUpdated
	}
	return harness.SyncCreated
}

// outputFiles are the files of a run in its results directory.
var outputFiles = []string{"result.json", "stdout.jsonl", "stderr.txt"}

// saveOutput writes the harness's raw output into dir. Every harness's
// one-shot output is JSONL (claude's stream-json too). The files of an
// earlier run of the session (a resumed session's) move first into the
// next free numbered directory in dir, 1, 2, ...: the newest run's are
// always at the top.
func saveOutput(dir string, one *OneShotResult) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := archiveOutput(dir); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "stdout.jsonl"), one.Stdout, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "stderr.txt"), one.Stderr, 0o600)
}

// archiveOutput moves the files of an earlier run in dir, if any, into
// dir/N, the first number not taken.
func archiveOutput(dir string) error {
	var have []string
	for _, name := range outputFiles {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			have = append(have, name)
		}
	}
	if len(have) == 0 {
		return nil
	}
	for n := 1; ; n++ {
		prev := filepath.Join(dir, strconv.Itoa(n))
		if err := os.Mkdir(prev, 0o700); errors.Is(err, fs.ErrExist) {
			continue
		} else if err != nil {
			return err
		}
		for _, name := range have {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(prev, name)); err != nil {
				return err
			}
		}
		return nil
	}
}
