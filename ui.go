package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// exitError carries an exit code with the error that caused it.
type exitError struct {
	code  int
	err   error
	hints []string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode returns err annotated with the exit code the process should use.
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

// silentExit ends the process with code without printing anything more; the
// command has already reported what happened.
type silentExit int

func (s silentExit) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// report prints err to stderr in the workforce format and returns the exit
// code for it.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var s silentExit
	if errors.As(err, &s) {
		return int(s)
	}
	code := exitFailure
	var hints []string
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		hints = ee.hints
	}
	var ce cli.ExitCoder
	if ee == nil && errors.As(err, &ce) {
		code = ce.ExitCode()
	}
	errorf(stderr, "%v", err)
	for _, h := range hints {
		hintf(stderr, "%s", h)
	}
	return code
}

func errorf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: error: "+format+"\n", args...)
}

func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: warning: "+format+"\n", args...)
}

func hintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: hint: "+format+"\n", args...)
}

// isTerminal reports whether w is a terminal; progress output is shown only
// on terminals, never in pipes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
