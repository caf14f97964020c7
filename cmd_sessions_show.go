package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

// sessionsShowCommand is sessions show.
func sessionsShowCommand() *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "show a session's record and the changes a sync-back would apply, or the result of its one-shot run",
		ArgsUsage: "ID",
		Description: `Shows the session's record and what a sync-back would do now: files created,
updated and deleted, deletions left unapplied without --sync-deletes, files
that are not synced, and conflicts (files changed in the real tree too).
Nothing is written.

A one-shot run (run PERSONA TASK) leaves its result in
<home>/results/<id>/result.json. Once its session is gone (the sandbox is
removed after the run unless kept), show prints the run's summary from the
result, as run printed it, and with --json the result object; a kept
session shows its record and the summary of its result
(workforce sessions prune-results tells how long results stay).

Example:

   workforce sessions show code-reviewer-20261123-101500-1a2b3c4d --json`,
		Flags:  []cli.Flag{jsonFlag(), &cli.BoolFlag{Name: "sync-deletes", Usage: "show deletions as a sync with --sync-deletes would apply them"}},
		Action: sessionsShowAction,
	}
}

// sessionsShowOptions are what `workforce sessions show` shows: session
// ID, with deletions as SyncDeletes would apply them.
type sessionsShowOptions struct {
	ID          string
	SyncDeletes bool
	JSON        bool
	Env         procEnv
}

func sessionsShowAction(c *cli.Context) error {
	id, err := oneID(c)
	if err != nil {
		return err
	}
	opts := sessionsShowOptions{ID: id, SyncDeletes: c.Bool("sync-deletes"), JSON: c.Bool("json"), Env: newProcEnv()}
	return runSessionsShow(c.Context, newStreams(c), opts)
}

func runSessionsShow(_ context.Context, ios *iostreams, opts sessionsShowOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	l, err := session.Locate(home, opts.ID)
	if err != nil {
		return err
	}
	if l.Session == nil {
		// The sandbox is gone; the result of its one-shot run stays.
		r, err := run.ReadResult(l.ResultDir)
		if err != nil {
			return fmt.Errorf("session %s is gone, and its result cannot be read: %w", l.ID, err)
		}
		if opts.JSON {
			return writeJSON(ios.Out, r)
		}
		printOneShot(ios.Out, ios.Err, *r, nil)
		if r.Network == nil {
			run.ReadNetworkLog(l.ResultDir).WriteDenied(ios.Out)
		}
		fmt.Fprintf(ios.Out, "result: %s\n", filepath.Join(l.ResultDir, session.ResultFile))
		return nil
	}
	s := l.Session
	if err := s.ReadRecord(); err != nil {
		return err
	}
	rep, err := s.Changes(opts.SyncDeletes)
	if err != nil {
		return err
	}
	var result *report.Result
	if l.ResultDir != "" {
		// A run under way (or killed) has written its output there, and
		// no result yet.
		if result, err = run.ReadResult(l.ResultDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			warnf(ios.Err, "the result of session %s cannot be read: %v", l.ID, err)
		}
	}
	if opts.JSON {
		return writeJSON(ios.Out, report.SessionShow{Record: toreport.Record(s.Record), Changes: toreport.Ptr(rep, toreport.SyncReport), Result: result})
	}
	w := ios.Out
	r := s.Record
	fmt.Fprintf(w, "session: %s\npersona: %s@%s on %s\nroot: %s\ncwd: %s\nphase: %s\nstarted: %s by process %d\n",
		r.ID, r.Persona, r.Tier, r.Harness, quote.Name(r.Root), quote.Name(r.Cwd), r.Phase, r.Started.Local().Format(time.RFC3339), r.PID)
	if r.Tree != "" {
		fmt.Fprintf(w, "tree: %s\n", r.Tree)
	}
	if r.ExitCode != nil {
		fmt.Fprintf(w, "harness exit status: %d\n", *r.ExitCode)
	}
	if r.Branch != "" {
		fmt.Fprintf(w, "branch: %s (%s of the agent)\n", r.Branch, report.Plural(r.Commits, "commit"))
	}
	if err := s.HarnessRunning(); err != nil {
		warnf(ios.Err, "%v", err)
	}
	printSyncReport(w, io.Discard, rep)
	if result != nil {
		fmt.Fprintf(w, "result: %s\n", filepath.Join(l.ResultDir, session.ResultFile))
		printOneShot(&indented{w: w}, io.Discard, *result, nil)
	}
	if (result == nil || result.Network == nil) && l.ResultDir != "" {
		// A run under way, killed, or whose result predates the record.
		run.ReadNetworkLog(l.ResultDir).WriteDenied(w)
	}
	return nil
}

// indented writes to w with each line indented by two spaces.
type indented struct {
	w   io.Writer
	mid bool // within a line
}

func (in *indented) Write(p []byte) (int, error) {
	var b []byte
	for _, c := range p {
		if !in.mid {
			b = append(b, ' ', ' ')
		}
		b = append(b, c)
		in.mid = c != '\n'
	}
	if _, err := in.w.Write(b); err != nil {
		return 0, err
	}
	return len(p), nil
}
