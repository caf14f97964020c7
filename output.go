package main

// This file is what the commands share to print: JSON, the message lines
// of stderr, and the reports and hints more than one command prints (the
// text of a plan, a mapping, a persona is report's: WriteText). Command
// files use these and never one another's helpers.
//
// Output rule: data goes to stdout; everything else goes to stderr, each
// line prefixed with "workforce: error:", "workforce: warning:",
// "workforce: hint:" or "workforce: note:".

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

// jsonFlag is the --json flag of the commands that print data.
func jsonFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"}
}

// writeJSON prints v as indented JSON followed by a newline: the bytes an
// encoding/json Encoder with SetIndent("", "  ") and SetEscapeHTML(false)
// prints (TestWriteJSON compares them), except that invalid UTF-8 in a
// string becomes the character U+FFFD where encoding/json writes the escape
// \ufffd, the same JSON string. It streams the output as it is encoded,
// where encoding/json builds it whole, then indents it in a second copy:
// for `list --json` over a thousand personas, a quarter of the time and no
// garbage. Maps are printed with their keys sorted.
func writeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := jsonv2.MarshalWrite(bw, v, jsonOptions); err != nil {
		return err
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

var jsonOptions = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsontext.WithIndent("  "), jsontext.EscapeForHTML(false))

// writeJSON and writeJSONLine are the only JSON writers of the commands
// (TestOneJSONWriter fails on another): writeJSON for a document,
// writeJSONLine and marshalJSONLine for the lines of a JSON-lines stream
// (the events of run --events, a batch's task states and results, pick's
// answer, the id of a detached batch).

// writeJSONLine prints v as one line of JSON, in one write: the bytes of
// an encoding/json Encoder with SetEscapeHTML(false) (<, > and & as
// themselves; U+2028, U+2029 and invalid UTF-8 escaped). Its callers that
// print from several goroutines hold a lock around it; a line is never
// split between writes.
func writeJSONLine(w io.Writer, v any) error {
	b, err := marshalJSONLine(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// marshalJSONLine is the line writeJSONLine prints, its newline included.
func marshalJSONLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// errorf, warnf and hintf print one line each. What they print may hold
// names or output the agent controls (an error of the file system naming
// a file, git's stderr): anything in it that does not print as itself is
// escaped (quote.Text), so no message can move the cursor, recolour the
// terminal or forge a line of the report. Names themselves are quoted by
// the caller with quote.Name, as report lines quote them.
//
// An error of several lines (errors.Join: every bad file of a pack) is
// printed as several error lines, each with its prefix, so that no line of
// it can pass for a hint or for a line of the report on stdout.
func errorf(w io.Writer, format string, args ...any) {
	msg := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
	for i, line := range strings.Split(msg, "\n") {
		if i > 0 && strings.TrimSpace(line) == "" {
			continue
		}
		fmt.Fprintf(w, "workforce: error: %s\n", quote.Text(line))
	}
}

func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: warning: %s\n", quote.Text(fmt.Sprintf(format, args...)))
}

func hintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: hint: %s\n", quote.Text(fmt.Sprintf(format, args...)))
}

// notef prints a note: something the user may not expect, not a problem.
func notef(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: note: %s\n", quote.Text(fmt.Sprintf(format, args...)))
}

// printDiagnostics prints the errors and warnings of a catalog as
// warnings, errors first.
func printDiagnostics(w io.Writer, cat *persona.Catalog) {
	for _, d := range cat.Diagnostics() {
		warnf(w, "%s", d)
	}
}

// printPersonaWarnings prints, as warnings, the catalog's diagnostics about
// persona p: the files it was merged from, and the files that would have
// been it but do not load (persona.Catalog.DiagnosticsOf).
func printPersonaWarnings(w io.Writer, cat *persona.Catalog, p *persona.Persona) {
	for _, d := range cat.DiagnosticsOf(p) {
		warnf(w, "%s", d)
	}
}

// lookupError adds to an error of persona lookup the hint of what to do.
func lookupError(err error) error {
	var ue *persona.UnknownError
	if errors.As(err, &ue) {
		return withCode(exitFailure, err, ue.Hints()...)
	}
	return err
}

// unknownHarness is the usage error of a --harness value that names no
// harness of names.
func unknownHarness(h string, names []string) error {
	return usageError(fmt.Errorf("unknown harness %q", h), "--harness takes one of "+strings.Join(names, ", "))
}

// overrideNotes prints a note for each persona an install or an import
// landed that lies over a persona of its id in a lower layer: the one it
// overrides and the fields it inherits from it, or the one it shadows,
// taking nothing from it.
func overrideNotes(w io.Writer, installed []install.Installed) {
	for _, in := range installed {
		switch {
		case in.Overrides != nil:
			inherits := "nothing from it"
			if len(in.Inherits) > 0 {
				inherits = strings.Join(in.Inherits, ", ")
			}
			notef(w, "%s overrides the %s %s (%s); it inherits %s", in.ID, in.Overrides.Layer, in.ID, in.Overrides.File, inherits)
		case in.Shadows != nil:
			notef(w, "%s shadows the %s %s (%s) and takes nothing from it", in.ID, in.Shadows.Layer, in.ID, in.Shadows.File)
		}
	}
}

// installConflict turns install's conflict into its report (a line per
// persona, exit 3); other errors pass through. verb says what did not
// happen: "installed", "imported".
func installConflict(w io.Writer, err error, verb string) error {
	var ce *install.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	for _, id := range ce.IDs {
		errorf(w, "conflict: %s/%s.json already exists", ce.Target, id)
	}
	return withCode(exitConflict, fmt.Errorf("nothing %s: %w", verb, err), "use --overwrite to replace them")
}

// shellJoin quotes argv for display as a shell command line.
func shellJoin(argv []string) string { return quote.Shell(argv...) }

// printReport prints what a sync-back did, or would do, a line per file
// (report.SyncReport.WriteText), and the hints and warnings it calls for
// to stderr.
func printReport(w, stderr io.Writer, r report.SyncReport) {
	r.WriteText(w)
	if len(r.Unapplied) > 0 {
		hintf(stderr, "run with --sync-deletes to apply deletions")
	}
	if r.Interrupted {
		warnf(stderr, "sync-back was interrupted; the rest is still in the sandbox")
	}
}

// printSyncReport prints the sync-back report rep (printReport).
func printSyncReport(w, stderr io.Writer, rep *mount.Report) {
	printReport(w, stderr, toreport.SyncReport(*rep))
}

// hintBlocked says how to finish the session id, kept for the files that
// wait for a deletion (mount.Report.Blocked).
func hintBlocked(stderr io.Writer, id string) {
	hintf(stderr, "the session is kept for what the agent put in the place of what it deleted: workforce sessions sync %s --sync-deletes applies it, workforce sessions discard %s drops it", id, id)
}

// printBranch says where the agent's commits are, when it made some.
func printBranch(w, stderr io.Writer, r session.Record) {
	if r.Branch == "" {
		return
	}
	fmt.Fprintf(w, "the agent made %s: branch %s\n", report.Plural(r.Commits, "commit"), r.Branch)
	if r.Report != nil && len(r.Report.OnBranch) > 0 {
		hintf(stderr, "what the agent committed is on the branch, not in your working tree: git merge %s brings it in (or sync with --sync-committed)", r.Branch)
	}
}

// withHarnessHint adds to a *session.HarnessRunningError the hints of
// what to do: wait or stop the harness, then run again, or force.
func withHarnessHint(err error, again, force string) error {
	var he *session.HarnessRunningError
	if !errors.As(err, &he) {
		return err
	}
	stop := fmt.Sprintf("kill %d", he.PID)
	if he.Member != 0 {
		stop = fmt.Sprintf("kill -- -%d", he.PID) // its process group
	}
	return withCode(exitFailure, err, fmt.Sprintf("wait for it to exit, or stop it (%s); then run %s again; %s", stop, again, force))
}

// syncOptions are the options of a sync of sessions sync and apply, and
// of run --review's apply: the flags', with warnings and progress printed
// to ios.Err; done clears the progress line.
func syncOptions(ios *iostreams, deletes, keep, force, committed bool, only func(string) bool) (o session.SyncOptions, done func()) {
	o = session.SyncOptions{
		SyncOptions: mount.SyncOptions{Deletes: deletes}, Keep: keep, Force: force,
		SyncCommitted: committed, Warn: func(msg string) { warnf(ios.Err, "%s", msg) },
		Only: only, Abort: exitOnSignal, Signals: notify,
	}
	done = func() {}
	if ios.ErrTTY {
		o.Progress = func(rel string) { fmt.Fprintf(ios.Err, "\rworkforce: syncing %s\033[K", quote.Name(rel)) }
		done = func() { fmt.Fprint(ios.Err, "\r\033[K") }
	}
	return o, done
}

// printSync prints what the sync of s did (session.Session.Sync's
// results) and returns the command's outcome: conflicts exit 3, a sync a
// signal stopped 130, with the hints of what is left to do.
func printSync(ios *iostreams, s *session.Session, rep *mount.Report, kept bool, err error) error {
	if errors.Is(err, session.ErrGone) {
		// Another sync finished it while this one waited (or it was
		// removed): nothing is left to do.
		warnf(ios.Err, "%v", err)
		return nil
	}
	if err != nil {
		if rep != nil {
			printSyncReport(ios.Out, ios.Err, rep) // what was synced, and what failed
		}
		return withHarnessHint(err, "workforce sessions sync "+s.ID(), "--force syncs what the sandbox holds now")
	}
	printSyncReport(ios.Out, ios.Err, rep)
	printBranch(ios.Out, ios.Err, s.Record)
	if kept {
		fmt.Fprintf(ios.Out, "sandbox kept: %s\n", s.Dir)
		if s.Record.Phase == session.Review {
			hintf(ios.Err, "the rest of the agent's work stays in the session: workforce sessions apply %s applies it, workforce sessions discard %s drops it", s.ID(), s.ID())
		} else if len(rep.Blocked) > 0 && !rep.Interrupted {
			hintBlocked(ios.Err, s.ID())
		}
	}
	switch {
	case rep.Interrupted:
		hintf(ios.Err, "workforce sessions sync %s finishes it", s.Record.ID)
		return silentExit(exitInterrupted)
	case len(rep.Conflicts) > 0:
		return silentExit(exitConflict)
	}
	return nil
}

// discard drops the session s and its branch, and says so: sessions
// discard, and run --review's discard.
func discard(ios *iostreams, s *session.Session, force bool) error {
	if err := s.RemoveIdle(force); err != nil {
		return withHarnessHint(err, "workforce sessions discard "+s.ID(), "--force discards the session anyway")
	}
	fmt.Fprintf(ios.Out, "discarded: %s\n", s.ID())
	removeBranch(ios, s)
	return nil
}

// removeBranch deletes the branch of the removed session s, if it made
// one, and says so; a branch that cannot be deleted is a warning.
func removeBranch(ios *iostreams, s *session.Session) {
	if s.Record.Branch == "" {
		return
	}
	if err := s.RemoveBranch(); err != nil {
		warnf(ios.Err, "%v", err)
		return
	}
	fmt.Fprintf(ios.Out, "deleted branch %s\n", s.Record.Branch)
}

// useColor reports whether output to the terminal ios.Out is coloured:
// unless NO_COLOR is set.
func useColor(ios *iostreams, env procEnv) bool {
	return ios.OutTTY && env.getenv("NO_COLOR") == ""
}
