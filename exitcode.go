package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// Exit statuses of the workforce command. They are part of the
// command-line contract: never renumber them. This file is the one place
// they are decided: the packages below report outcomes (a typed error, a
// session.Result), and printError and runStatus turn them into these.
//
//	0      the command did what was asked
//	1      it failed; the error says why
//	2      the command line was wrong: an unknown command or flag, a value
//	       a flag does not take, a missing or extra argument, flags that
//	       conflict; run: the project's own harness configuration would
//	       change the persona (harness.ProjectConfigError)
//	3      install, import or export found files in the way, or a
//	       sync-back (run, sessions sync, sessions apply) found conflicts:
//	       the conflicting files were left as they were
//	124    run: the time limit (--timeout, harnessSettings.timeoutSeconds)
//	       stopped the harness; its work was synced back
//	127    run: the harness is not installed (not found on PATH)
//	128+n  run: signal n killed the harness, or stopped the run while the
//	       sandbox was made or during sync-back (the session is kept)
//	130    sessions sync and apply: a signal stopped the sync (the session
//	       is kept to finish); run, sessions sync and apply: a second
//	       Ctrl-C during sync-back ended workforce at once (128+2)
//
// pick keeps the original tool's statuses, its own (a usage error of pick
// still exits 2, with the usage error on stderr):
//
//	0      a persona matched, with confidence high or medium (with --run,
//	       the run's status instead)
//	2      no persona matched, or only with low confidence
//	3      no harness could answer: not installed, failed or timed out
//
// An interactive run otherwise exits with the harness's own status when
// it is not 0 (runStatus). A one-shot run exits by its status alone
// (oneShotStatus), never with the harness's own code, which only its JSON
// result reports; the statuses, first that applies:
//
//	interrupted  130, or 128+n for another signal n
//	timed_out    124
//	conflict     3
//	denied       1
//	failed       1
//	succeeded    0
//
// A batch (batchStatus) exits 128+n when signal n stopped it (the local
// pool, or the queue's submitter while tasks were left to follow); else
// 1 when any task failed, was denied, timed out or never started; else 3
// when any had conflicts; else 0.
//
// An evaluation (evalStatus) exits 128+n when signal n stopped it; else 1
// when an attempt could not run (or has not run) or a persona's pass rate
// is below --min-pass-rate; else 0, whatever the attempts' outcomes.
const (
	exitOK             = 0
	exitFailure        = 1
	exitUsage          = 2
	exitConflict       = 3
	exitTimeout        = 124
	exitHarnessMissing = 127
	// exitSignal plus the signal's number is the status of a stop by a
	// signal.
	exitSignal      = 128
	exitInterrupted = 130

	// pick's own (see above).
	exitPickNoMatch     = 2
	exitPickUnavailable = 3
)

// signalStatus is the exit status of a stop by sig: 128+n, or 130 when
// the signal is not known.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return exitSignal + int(s)
	}
	return exitInterrupted
}

// harnessStatus is the exit status of a harness that ended as e: its own
// code, or 128+n when signal n killed it.
func harnessStatus(e harness.Exit) int {
	if e.Signal != 0 {
		return signalStatus(e.Signal)
	}
	return e.Code
}

// runStatus is the exit status of a run that ended as res: a stop by a
// signal before the harness started, the time limit, the harness's own
// status, a sync-back stopped by a signal, conflicts, or success.
func runStatus(res *session.Result) int {
	switch rep := res.Report; {
	case res.Stopped:
		return signalStatus(res.Signal)
	case res.TimedOut:
		return exitTimeout
	case !res.Harness.Success():
		return harnessStatus(res.Harness)
	case rep != nil && rep.Interrupted:
		return signalStatus(res.Signal)
	case rep != nil && len(rep.Conflicts) > 0:
		return exitConflict
	}
	return exitOK
}

// oneShotStatus is the exit status of a one-shot run that ended with
// status st (report.DecideStatus), from the status alone: the harness's
// own code is no part of it (a harness that exits 144 after an HTTP 400
// is not "killed by signal 16"). sig is the signal that stopped an
// interrupted run; nil gives 130. A status this table does not know is a
// failure.
func oneShotStatus(st report.Status, sig os.Signal) int {
	switch st {
	case report.StatusInterrupted:
		if sig == nil {
			return exitInterrupted
		}
		return signalStatus(sig)
	case report.StatusTimedOut:
		return exitTimeout
	case report.StatusConflict:
		return exitConflict
	case report.StatusDenied, report.StatusFailed:
		return exitFailure
	case report.StatusSucceeded:
		return exitOK
	}
	return exitFailure
}

// exitError carries an exit status with the error that caused it, and the
// hints to print after it.
type exitError struct {
	code  int
	err   error
	hints []string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode returns err annotated with the exit status the process should
// use.
func withCode(code int, err error, hints ...string) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err, hints: hints}
}

// usageError reports a wrong command line (exit 2).
func usageError(err error, hints ...string) error {
	return withCode(exitUsage, err, hints...)
}

// usagef is usageError with formatting.
func usagef(format string, args ...any) error {
	return usageError(fmt.Errorf(format, args...))
}

// silentExit ends the process with a status without printing anything
// more; the command has already reported what happened.
type silentExit int

func (s silentExit) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// printError prints err to stderr in the workforce format, with its
// hints, and returns the exit status for it (exitStatus).
func printError(stderr io.Writer, err error) int {
	code, hints := statusOf(err)
	if err == nil || errors.As(err, new(silentExit)) {
		return code
	}
	errorf(stderr, "%v", err)
	for _, h := range hints {
		hintf(stderr, "%s", h)
	}
	return code
}

// errorStatus is the exit status of a command that ended with err, as
// printError gives it, without printing anything.
func errorStatus(err error) int {
	code, _ := statusOf(err)
	return code
}

// statusOf is the exit status of a command that ended with err, with
// the hints to print after it: the status it carries, 2 for a run
// refused for its command line (run.Usage) and 1 for one refused
// otherwise, 127 for a harness that is not installed, 1 for any other.
func statusOf(err error) (int, []string) {
	if err == nil {
		return exitOK, nil
	}
	var s silentExit
	if errors.As(err, &s) {
		return int(s), nil
	}
	var ee *exitError
	var re *run.Error
	var nf *harness.NotFoundError
	var pc *harness.ProjectConfigError
	var se *session.StoppedError
	var ce cli.ExitCoder
	switch {
	case errors.As(err, &se):
		return signalStatus(se.Signal), nil
	case errors.As(err, &ee):
		return ee.code, ee.hints
	case errors.As(err, &re) && re.Kind == run.Usage:
		return exitUsage, re.Hints
	case errors.As(err, &re):
		return exitFailure, re.Hints
	case errors.As(err, &nf):
		return exitHarnessMissing, []string{nf.Hint()}
	case errors.As(err, &pc):
		return exitUsage, []string{pc.Hint()}
	case errors.As(err, &ce):
		return ce.ExitCode(), nil
	}
	return exitFailure, nil
}

// failure is err when it is an error to report, nil when it only carries
// an exit status (silentExit): what a run's history record counts as a
// failure besides the run's outcome.
func failure(err error) error {
	if errors.As(err, new(silentExit)) {
		return nil
	}
	return err
}

// batchStatus is the exit status of a batch whose tasks ended as states:
// 1 when any failed (or denied, timed out, never ran to a result), else 3
// when any had conflicts, else 0. A task not done (interrupted by
// something else than the batch's own stop) counts as failed.
func batchStatus(ids []string, states map[string]batch.TaskState) int {
	code := exitOK
	for _, id := range ids {
		ts, ok := states[id]
		switch {
		case !ok || ts.Phase != batch.PhaseDone:
			return exitFailure
		case ts.Status == report.StatusConflict:
			code = exitConflict
		case ts.Status != report.StatusSucceeded:
			return exitFailure
		}
	}
	return code
}

// evalStatus is the exit status of an evaluation that ended as rep,
// stopped by sig (nil when not), with below personas under
// --min-pass-rate: 128+n for signal n; 1 when an attempt could not run or
// did not run, or a persona is below; else 0.
func evalStatus(rep report.Eval, sig os.Signal, below int) int {
	if sig != nil {
		return signalStatus(sig)
	}
	for _, a := range rep.Attempts {
		if a.Outcome == "" || a.Outcome == report.OutcomeError {
			return exitFailure
		}
	}
	if below > 0 {
		return exitFailure
	}
	return exitOK
}
