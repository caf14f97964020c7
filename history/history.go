// Package history keeps the record of the runs of workforce:
// <home>/history.jsonl, one JSON object a line (Record), appended at the
// end of every run, read by the picker (Recent) and by the usage totals.
//
// Writing. Append takes a lock (<home>/history.lock, a file lock, so
// that the many `workforce run` children of a batch take turns), rotates
// the file when it has grown past MaxSize (history.jsonl becomes
// history.1.jsonl, replacing the one before: the history holds at most
// twice MaxSize), and adds the record with a single write of one whole
// line opened with O_APPEND. A line left without its newline by a process
// that died writing it is ended first, so that it cannot swallow the next
// record. A record longer than MaxLine is refused.
//
// Reading. The history is a convenience, never a reason for a run to
// fail: Read skips every line that is not a record (damaged, cut short,
// written by another program or by a newer workforce of another format,
// longer than MaxLine) and reports each as a Warning naming the file and
// the line. The last line, when it has no newline yet, is being written:
// it is read when it parses and skipped without a warning when it does
// not.
//
// The format is documented in docs/history.md; a field added later is
// optional, and a change that is not additive changes Format.
//
// Listing (list.go): what `workforce history` prints. List filters the
// records (persona, since, a limit) into report.HistoryRun, newest first,
// asking the caller whether each run's session is still kept and can be
// resumed; WhyGone says, from a session's last record, why it is gone.
//
// Usage totals (usage.go): what `workforce usage` reports. RunsUsage takes
// the usage the records carry, ReadSessionRecords and MatchSessionRecords
// find the others in the harnesses' own records (history/sessions; where
// those are, a session's state directory or the user's stores, the caller
// says, since history knows nothing of sessions or harnesses), and
// UsageTotals sums them by persona, harness, model or project into
// report.UsageReport. They return values: warnings and printing are the
// command's. Still in the command layer: a resumed run's own usage (the
// harnesses' cumulative figures less the earlier run's), which reads the
// harness's one-shot output.
package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/rogpeppe/go-internal/lockedfile"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

const (
	// FileName is the history's file in the workforce home, and
	// RotatedName the one it is rotated to.
	FileName    = "history.jsonl"
	RotatedName = "history.1.jsonl"
	// lockName is the lock file Append holds.
	lockName = "history.lock"
	// Format is the format of the records written, their "v".
	Format = 1
	// MaxSize is the size past which Append rotates the file: 1 MiB,
	// some 2,500 records.
	MaxSize = 1 << 20
	// MaxLine bounds a record's line, its newline included.
	MaxLine = 64 << 10
	// Env is the environment variable that turns the history off when
	// false ("0").
	Env = "WORKFORCE_HISTORY"
)

// Modes of a run.
const (
	ModeInteractive = "interactive"
	ModeOneShot     = "oneshot"
)

// Record is one run: what docs/history.md documents, field by field.
type Record struct {
	// Format is the record's format: Format.
	Format int `json:"v"`
	// Time is when the run started.
	Time time.Time `json:"time"`
	// Persona is the persona's id, Source the layer it came from (as
	// list names layers: project, user, dir:N, built-in), PersonaHash the
	// hex SHA-256 of the resolved persona (its version: it changes when
	// any file of the persona changes what the run gets).
	Persona     string `json:"persona"`
	PersonaHash string `json:"personaHash,omitempty"`
	Source      string `json:"source,omitempty"`
	// Tier, Harness, HarnessVersion (when known) and Model (when the
	// persona names one or the harness reported it) are what ran.
	Tier           string `json:"tier"`
	Harness        string `json:"harness"`
	HarnessVersion string `json:"harnessVersion,omitempty"`
	Model          string `json:"model,omitempty"`
	// Mode is ModeInteractive or ModeOneShot.
	Mode string `json:"mode"`
	// Root is the project root and Cwd the working directory the run
	// was started in.
	Root string `json:"root"`
	Cwd  string `json:"cwd,omitempty"`
	// SessionID is workforce's session id; Sandbox the session's
	// directory and Workdir the directory the harness ran in (both gone
	// after the run, but they name the harness's own session records);
	// both absent for a run in the repository itself.
	SessionID string `json:"sessionId,omitempty"`
	Sandbox   string `json:"sandbox,omitempty"`
	Workdir   string `json:"workdir,omitempty"`
	// HarnessSessionID is the harness's own id of the conversation, when
	// known.
	HarnessSessionID string `json:"harnessSessionId,omitempty"`
	// Status is how the run ended, as a one-shot result's status
	// (succeeded, failed, denied, conflict, timed_out, interrupted);
	// ExitStatus workforce's exit status.
	Status     string `json:"status"`
	ExitStatus int    `json:"exitStatus"`
	// DurationMS is the run's wall time in milliseconds.
	DurationMS int64 `json:"durationMs"`
	// Usage is what the model consumed (tokens, cost in US dollars),
	// when known: a one-shot run's, as the harness reported it; an
	// interactive run's, as the harness's own records of the
	// conversation say (UsageFrom UsageFromSessionRecords); absent
	// otherwise, never zero for unknown.
	Usage *report.Usage `json:"usage,omitempty"`
	// UsageFrom says where Usage came from when not from the harness's
	// report: UsageFromSessionRecords.
	UsageFrom string `json:"usageFrom,omitempty"`
	// CostEstimated says the harness priced a model it had no price for
	// at a default one (claude's records say so).
	CostEstimated bool `json:"costEstimated,omitzero"`
	// DeniedHosts are the destinations the network proxy denied the
	// harness (HOST:PORT, each once), from the one-shot result's network;
	// absent when none was or the run had no network policy.
	DeniedHosts []string `json:"deniedHosts,omitempty"`
	// SessionKept says whether the session outlived the run (--keep,
	// --review, conflicts, a resumed session): workforce history and
	// sessions resume read it to say why a session is gone. Absent in
	// the records of an older workforce and of a run without a sandbox.
	SessionKept *bool `json:"sessionKept,omitempty"`
}

// UsageFromSessionRecords is Record.UsageFrom of a usage read from the
// harness's own records of the conversation.
const UsageFromSessionRecords = "sessionRecords"

// Path is the history file of the workforce home.
func Path(home string) string { return filepath.Join(home, FileName) }

// RotatedPath is the file the history of home is rotated to.
func RotatedPath(home string) string { return filepath.Join(home, RotatedName) }

// Enabled reports whether the environment, read by getenv, leaves the
// history on: Env unset, or not a false value ("0", "false").
func Enabled(getenv func(string) string) bool {
	v := strings.TrimSpace(getenv(Env))
	if v == "" {
		return true
	}
	on, err := strconv.ParseBool(v)
	return err != nil || on
}

// check returns why r is not a record a reader can use, nil when it is.
func (r *Record) check() error {
	switch {
	case r.Format == 0:
		return errors.New(`not a history record (no "v")`)
	case r.Format != Format:
		return fmt.Errorf("a record of format %d, which this workforce does not read (it reads %d)", r.Format, Format)
	case r.Persona == "":
		return errors.New("a record without a persona")
	case r.Time.IsZero():
		return errors.New("a record without a time")
	}
	return nil
}

// line is r as one line of JSON, its newline included.
func (r Record) line() ([]byte, error) {
	b, err := jsonv2.Marshal(r)
	if err != nil {
		return nil, err
	}
	b = append(b, '\n')
	if len(b) > MaxLine {
		return nil, fmt.Errorf("the record of %s is %d bytes, more than a history line holds (%d)", r.Persona, len(b), MaxLine)
	}
	return b, nil
}

// beforeRotate, when set (by tests), is called between the decision to
// rotate and the rotation: the window the lock closes.
var beforeRotate func()

// Append adds r to the history of home, rotating the file first when it
// has grown past MaxSize. r.Format is set to Format. Append is safe from
// concurrent processes.
func Append(home string, r Record) error {
	r.Format = Format
	if err := r.check(); err != nil {
		return err
	}
	line, err := r.line()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	unlock, err := lockedfile.MutexAt(filepath.Join(home, lockName)).Lock()
	if err != nil {
		return fmt.Errorf("cannot lock the history: %w", err)
	}
	defer unlock()
	path := Path(home)
	if fi, err := os.Stat(path); err == nil && fi.Size() >= MaxSize {
		if beforeRotate != nil {
			beforeRotate()
		}
		if err := os.Rename(path, RotatedPath(home)); err != nil {
			return fmt.Errorf("cannot rotate the history: %w", err)
		}
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		// A line cut short by a process that died writing it gets its
		// newline: it stays one damaged line, and this record is whole.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cannot write the history: %w", err)
	}
	return nil
}

// Warning is a line of a history file that Read skipped.
type Warning struct {
	File string
	Line int
	Err  string
}

func (w Warning) Error() string { return fmt.Sprintf("%s:%d: %s; skipped", w.File, w.Line, w.Err) }

// Read returns the records of the history file path, oldest first, and
// a warning for each line it skipped. A file that does not exist holds no
// records; an error is returned only when the file cannot be read.
func Read(path string) ([]Record, []Warning, error) {
	var recs []Record
	warns, err := scan(path, func(r Record) bool {
		recs = append(recs, r)
		return true
	})
	return recs, warns, err
}

// scan calls fn with each record of the file path in order, until fn
// returns false, and returns the warnings of the lines it skipped.
func scan(path string, fn func(Record) bool) ([]Warning, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scanReader(path, f, fn)
}

func scanReader(name string, in io.Reader, fn func(Record) bool) ([]Warning, error) {
	var warns []Warning
	br := bufio.NewReaderSize(in, MaxLine)
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Longer than any record: skip to its end.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return warns, err
			}
			warns = append(warns, Warning{name, n, fmt.Sprintf("a line longer than %d bytes", MaxLine)})
			if err != nil {
				return warns, nil
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return warns, err
		}
		eof := err != nil
		if eof && len(line) == 0 {
			return warns, nil
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var r Record
			perr := jsonv2.Unmarshal(line, &r)
			if perr == nil {
				perr = r.check()
			}
			switch {
			case perr == nil:
				if !fn(r) {
					return warns, nil
				}
			case eof:
				// The last line, without its newline: being written.
			default:
				warns = append(warns, Warning{name, n, damage(perr)})
			}
		}
		if eof {
			return warns, nil
		}
	}
}

// damage says what is wrong with a line whose parse failed with err,
// its control bytes escaped: the line is anyone's text.
func damage(err error) string {
	var syn *jsontext.SyntacticError
	var sem *jsonv2.SemanticError
	switch {
	case errors.As(err, &syn):
		return "a damaged line: " + quote.Text(err.Error())
	case errors.As(err, &sem):
		return "not a history record: " + quote.Text(err.Error())
	}
	return quote.Text(err.Error())
}

// ReadAll returns the records of the history of home, oldest first: the
// rotated file's, then the current file's.
func ReadAll(home string) ([]Record, []Warning, error) {
	old, w1, err := Read(RotatedPath(home))
	if err != nil {
		return nil, w1, err
	}
	cur, w2, err := Read(Path(home))
	return append(old, cur...), append(w1, w2...), err
}

// Recent returns the ids of the last n distinct personas run, newest
// first, by the order of the records in the history of home (the rotated
// file is read only when the current one names fewer than n).
func Recent(home string, n int) ([]string, []Warning, error) {
	var ids []string
	var warns []Warning
	for _, path := range []string{Path(home), RotatedPath(home)} {
		recs, w, err := Read(path)
		warns = append(warns, w...)
		if err != nil {
			return ids, warns, err
		}
		for i := len(recs) - 1; i >= 0 && len(ids) < n; i-- {
			if id := recs[i].Persona; !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		if len(ids) >= n {
			break
		}
	}
	return ids, warns, nil
}
