package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
)

// ResultsDir is the directory, under the workforce home, where each
// one-shot run leaves its result and the harness's raw output, by session
// id: they stay after the sandbox is removed.
const ResultsDir = "results"

// OneShotResult is what a one-shot run adds to its Result.
type OneShotResult struct {
	// Outcome is what the harness's output says; never nil. It keeps no
	// events (they were passed on as they came).
	Outcome *harness.Outcome
	// Parsed says the output held a result (harness.ParseOutput did not
	// return harness.ErrNoResult).
	Parsed bool
	// Stderr is the end of the harness's standard error, its last
	// StderrTail bytes; the whole of it is in Dir.
	Stderr []byte
	// Dir is the session's results directory (Home/results/ID), holding
	// the raw output (stdout.jsonl, stderr.txt); the caller writes
	// result.json there. Empty when it could not be written (a warning
	// said why).
	Dir string
}

// StderrEnd is the end of the harness's standard error, its last
// StderrEndSize bytes as kept in Dir's stderr.txt (Stderr when the file
// cannot be read): where its last error and log lines are.
func (r *OneShotResult) StderrEnd() []byte {
	if r.Dir != "" {
		if f, err := os.Open(filepath.Join(r.Dir, errorsFile)); err == nil {
			defer f.Close()
			if st, err := f.Stat(); err == nil {
				off := max(st.Size()-StderrEndSize, 0)
				if b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off)); err == nil {
					return b
				}
			}
		}
	}
	return r.Stderr
}

// StderrEndSize is how much of the end of stderr.txt StderrEnd reads.
const StderrEndSize = 64 << 10

// StderrTail is how much of the end of the harness's standard error a
// OneShotResult holds.
const StderrTail = 4 << 10

// runOneShot runs a one-shot plan: the harness gets inv.Stdin, never the
// terminal; its standard output is captured, not shown, and read line by
// line as it comes (harness.OutputWriter); its standard error is
// captured, and shown escaped a line at a time (escapedLines), unless it
// carries the harness's log (harness.LogsOnStderr: kept, not shown).
// Everything else is as in run.
//
// Output. Neither is held in memory: each goes, as it comes, to its file
// in the results directory (stdout.jsonl.part, stderr.txt.part, renamed
// stdout.jsonl and stderr.txt once the harness has exited and the files
// of an earlier run of the session have moved, saveOutput), stdout whole,
// stderr bounded (StderrFileMax, StderrFileEnd); what
// the outcome needs is kept as the output is read (harness.OutputWriter:
// a line longer than harness.MaxLine is cut, and a warning says so), and
// the last StderrTail bytes of stderr. A file that cannot be written
// holds the harness's output back in nothing: the run goes on, and a
// warning says what was not kept. A run that never starts leaves no
// files.
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
	emit := func(harness.Event) {}
	if o.Events != nil {
		// The harness's output and the network proxy emit from their
		// own goroutines: one event at a time.
		var mu sync.Mutex
		emit = func(ev harness.Event) {
			mu.Lock()
			defer mu.Unlock()
			o.Events(ev)
		}
		o.netDenied = func(d egress.Denial) {
			emit(harness.Event{Type: harness.EventNetwork, Host: d.Host, Port: d.Port, Text: d.Reason})
		}
	}
	stdout, err := harness.NewOutputWriter(p.Harness, emit)
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(p.mount.Home, ResultsDir, filepath.Base(p.Sandbox))
	raw, rawErr := openOutput(dir)
	errTail := &tail{max: StderrTail}
	o.Stdin = strings.NewReader(p.inv.Stdin)
	o.Stdout = io.MultiWriter(raw.stdout, stdout)
	var shown *escapedLines
	if o.Stderr != nil && !harness.LogsOnStderr(p.Harness) {
		// The files first: a terminal that fails stops the writes
		// after it. The harness's text is escaped (it may carry what
		// the agent wrote); its log lines are kept, not shown.
		shown = &escapedLines{w: o.Stderr}
		o.Stderr = io.MultiWriter(raw.stderr, errTail, shown)
	} else {
		o.Stderr = io.MultiWriter(raw.stderr, errTail)
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
	if shown != nil {
		shown.flush()
	}
	if res == nil {
		raw.discard()
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
	one := &OneShotResult{Stderr: errTail.bytes()}
	if out == nil {
		out = &harness.Outcome{}
	}
	one.Outcome, one.Parsed = out, perr == nil
	if o.Warn != nil {
		for _, w := range out.Warnings {
			o.Warn(w)
		}
		if p.Confine.Confined && out.OwnSandbox != nil && *out.OwnSandbox {
			o.Warn(fmt.Sprintf("%s reports its own sandbox on (sandbox_enabled), which workforce turns off where it confines the harness itself: check your %s settings", p.Harness, p.Harness))
		}
	}
	if rawErr == nil {
		rawErr = saveOutput(dir, raw)
	}
	switch {
	case rawErr != nil:
		// What could be written stays where it is.
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("cannot keep the harness's output: %v", rawErr))
		}
	default:
		one.Dir = dir
		if werr := raw.writeErr(); werr != nil && o.Warn != nil {
			o.Warn(fmt.Sprintf("the harness's output kept in %s is incomplete: %v", dir, werr))
		}
	}
	if perr != nil && !errors.Is(perr, harness.ErrNoResult) {
		return res, perr
	}
	res.OneShot = one
	return res, err
}

// syncAction is what sync-back is about to do with rel, as its progress
// reports it before it writes or deletes the real file: deleted when the
// sandbox no longer has it, else updated or created as the repository
// has the file or not.
func (p *Plan) syncAction(rel string) string {
	box := &mount.Sandbox{Root: p.Root, Tree: filepath.Join(p.Sandbox, mount.TreeDir)}
	if p.Tree == TreeOverlay {
		box.Overlay = &mount.OverlayLayers{Upper: filepath.Join(p.Sandbox, mount.UpperDir)}
	}
	if _, ok := box.MergedPath(filepath.ToSlash(rel)); !ok {
		return harness.SyncDeleted
	}
	if _, err := os.Lstat(filepath.Join(p.Root, rel)); err == nil {
		return harness.SyncUpdated
	}
	return harness.SyncCreated
}

// OutputFile is the name of the harness's raw one-shot output (its
// stdout: every harness's one-shot output is JSONL, claude's stream-json
// too) in a results directory; the output of the earlier runs of a
// resumed session is in its numbered directories (EarlierOutputs).
const OutputFile = "stdout.jsonl"

// errorsFile is the name of the harness's stderr in a results directory.
const errorsFile = "stderr.txt"

// ErrorsFile is the name of the harness's stderr, with its log lines
// where harness.OneShotLogArgs sends them there, in a results directory
// (bounded: StderrFileMax).
const ErrorsFile = errorsFile

// outputFiles are the files of a run in its results directory.
var outputFiles = []string{ResultFile, OutputFile, errorsFile}

// partSuffix marks the files the raw output is written to while the
// harness runs.
const partSuffix = ".part"

// rawOutput is where the harness's raw output goes as it comes: the
// files stdout.jsonl.part and stderr.txt.part of the results directory.
// Its writers never fail (the harness's output must flow on): a file
// that cannot be written is let go and its error kept.
type rawOutput struct {
	dir            string
	stdout, stderr *spill
}

// openOutput makes the results directory dir and opens the files the
// harness's raw output goes to. It never returns nil: after an error
// its writers drop what they get.
func openOutput(dir string) (*rawOutput, error) {
	r := &rawOutput{dir: dir, stdout: &spill{}, stderr: &spill{limit: StderrFileMax, end: &tail{max: StderrFileEnd}}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return r, err
	}
	for _, f := range []struct {
		s    *spill
		name string
	}{{r.stdout, OutputFile}, {r.stderr, errorsFile}} {
		file, err := os.OpenFile(filepath.Join(dir, f.name+partSuffix), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			r.discard()
			return r, err
		}
		f.s.f = file
	}
	return r, nil
}

// close closes the files, and returns the first error of their writes
// or closes.
func (r *rawOutput) close() error {
	return errors.Join(r.stdout.close(), r.stderr.close())
}

// writeErr returns the first error of the writes, if any: what the files
// kept is incomplete.
func (r *rawOutput) writeErr() error {
	return errors.Join(r.stdout.err, r.stderr.err)
}

// discard closes the files and removes them, and the results directory
// when that leaves it empty.
func (r *rawOutput) discard() {
	r.close()
	for _, name := range []string{OutputFile, errorsFile} {
		os.Remove(filepath.Join(r.dir, name+partSuffix))
	}
	os.Remove(r.dir) // only when empty
}

// StderrFileMax and StderrFileEnd bound the harness's stderr kept in a
// results directory (stderr.txt): its first StderrFileMax bytes, and
// when it was longer, a line saying how many bytes were left out and its
// last StderrFileEnd bytes (where its last error is), written once the
// harness has exited.
const (
	StderrFileMax = 1 << 20
	StderrFileEnd = 256 << 10
)

// spill is a file that never fails a write: the first error is kept and
// the file let go. With a limit, the file takes the first limit bytes,
// and end the rest (its last bytes), written when it closes after a line
// saying how much was left out.
type spill struct {
	f       *os.File
	err     error
	limit   int64
	written int64
	end     *tail
	over    int64
}

func (s *spill) Write(p []byte) (int, error) {
	n := len(p)
	if s.limit > 0 {
		room := max(s.limit-s.written, 0)
		if int64(len(p)) > room {
			s.end.Write(p[room:])
			s.over += int64(len(p)) - room
			p = p[:room]
		}
		s.written += int64(len(p))
	}
	if s.f != nil && s.err == nil && len(p) > 0 {
		if _, err := s.f.Write(p); err != nil {
			s.err = err
		}
	}
	return n, nil
}

func (s *spill) close() error {
	if s.f == nil {
		return nil
	}
	if s.over > 0 && s.err == nil {
		end := s.end.bytes()
		note := fmt.Sprintf("\n[workforce: %d bytes of the harness's stderr left out here; the last %d follow]\n", s.over-int64(len(end)), len(end))
		if _, err := s.f.WriteString(note); err != nil {
			s.err = err
		} else if _, err := s.f.Write(end); err != nil {
			s.err = err
		}
	}
	err := s.f.Close()
	s.f = nil
	if s.err == nil {
		s.err = err
	}
	return err
}

// escapedLines writes the harness's stderr to the terminal a line at a
// time, escaped (quote.Block): text the agent may have put there prints
// as itself or escaped, never as terminal control. A line longer than
// maxShownLine is written in pieces.
type escapedLines struct {
	w   io.Writer
	buf []byte
}

// maxShownLine is the longest piece of a line escapedLines holds back.
const maxShownLine = 64 << 10

func (e *escapedLines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			e.buf = append(e.buf, p...)
			if len(e.buf) >= maxShownLine {
				e.line(false)
			}
			break
		}
		e.buf = append(e.buf, p[:i]...)
		p = p[i+1:]
		if err := e.line(true); err != nil {
			return n, err
		}
	}
	return n, nil
}

// line writes the held line, escaped, with its newline when nl.
func (e *escapedLines) line(nl bool) error {
	s := quote.Block(string(e.buf))
	e.buf = e.buf[:0]
	if nl {
		s += "\n"
	}
	_, err := io.WriteString(e.w, s)
	return err
}

// flush writes a last line without its newline.
func (e *escapedLines) flush() {
	if len(e.buf) > 0 {
		e.line(true)
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return n, nil
}

// bytes returns the last max bytes written.
func (t *tail) bytes() []byte {
	if len(t.buf) > t.max {
		return t.buf[len(t.buf)-t.max:]
	}
	return t.buf
}

// saveOutput ends the raw output r in dir, once the harness has exited:
// its files are closed, the files of an earlier run of the session (a
// resumed session's) move into the next free numbered directory in dir,
// 1, 2, ..., and the new ones take their names (stdout.jsonl: every
// harness's one-shot output is JSONL, claude's stream-json too): the
// newest run's are always at the top.
func saveOutput(dir string, r *rawOutput) error {
	r.close()
	if err := archiveOutput(dir); err != nil {
		return err
	}
	for _, name := range []string{OutputFile, errorsFile} {
		if err := os.Rename(filepath.Join(dir, name+partSuffix), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// EarlierOutputs are the raw outputs the earlier runs of a resumed
// session kept in its results directory dir, the latest first:
// dir/N/stdout.jsonl for each numbered directory N (archiveOutput moves a
// run's files to the first free number, so the highest is the latest).
// It lists the paths of the numbered directories whatever they hold;
// none when dir cannot be read.
func EarlierOutputs(dir string) []string {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var nums []int
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil && n > 0 && e.IsDir() && strconv.Itoa(n) == e.Name() {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	var out []string
	for _, n := range slices.Backward(nums) {
		out = append(out, filepath.Join(dir, strconv.Itoa(n), OutputFile))
	}
	return out
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
