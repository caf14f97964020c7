package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
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

// printError prints err to stderr in the workforce format and returns the exit
// code for it.
func printError(stderr io.Writer, err error) int {
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
	for _, line := range strings.Split(fmt.Sprintf(format, args...), "\n") {
		fmt.Fprintf(w, "workforce: error: %s\n", quote.Text(line))
	}
}

func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: warning: %s\n", quote.Text(fmt.Sprintf(format, args...)))
}

func hintf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: hint: %s\n", quote.Text(fmt.Sprintf(format, args...)))
}

// isTerminal reports whether w is a terminal; progress output is shown only
// on terminals, never in pipes.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// setUsageErrors makes every command below cmds report a command line it
// cannot parse (an unknown flag, a bad value) as a usage error: urfave/cli
// gives each command its own handler, and one left unset exits 1.
//
// A flag marked Required is checked by the command's action instead, for
// the same reason: urfave/cli reports a missing one with exit status 1.
func setUsageErrors(cmds []*cli.Command) {
	for _, c := range cmds {
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
		var required []string
		for _, f := range c.Flags {
			if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
				if sf, ok := f.(*cli.StringFlag); ok {
					sf.Required = false
					required = append(required, sf.Name)
				}
			}
		}
		if act := c.Action; len(required) > 0 && act != nil {
			c.Action = func(ctx *cli.Context) error {
				for _, n := range required {
					if !ctx.IsSet(n) {
						return usagef("%s needs --%s", commandPath(ctx), n)
					}
				}
				return act(ctx)
			}
		}
		setUsageErrors(c.Subcommands)
	}
}

// onUsageError turns the flag package's parse errors into usage errors
// that name the flag as it is written and the command's help.
func onUsageError(c *cli.Context, err error, _ bool) error {
	name := commandPath(c)
	help := "`workforce help " + strings.TrimPrefix(name, "workforce ") + "` lists its flags"
	if name == "workforce" {
		help = "`workforce --help` lists its flags"
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return usageError(fmt.Errorf("unknown flag %s for %s", flagName(f), name), help)
	}
	if f, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return usageError(fmt.Errorf("%s %s needs a value", name, flagName(f)), help)
	}
	if m := badValue.FindStringSubmatch(msg); m != nil {
		why := m[3]
		if k := flagKind(c, m[2]); k != "" {
			why = "not " + k
		}
		return usageError(fmt.Errorf("%s %s: invalid value %s: %s", name, flagName(m[2]), m[1], why), help)
	}
	return usageError(fmt.Errorf("%s: %s", name, msg), help)
}

// badValue is the flag package's error for a value it cannot parse.
var badValue = regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?(-\S+): (.*)$`)

// flagKind says what the flag named f ("-timeout") of c's command takes,
// for the error of a value it cannot parse; empty when it is not known.
func flagKind(c *cli.Context, f string) string {
	if c == nil || c.Command == nil {
		return ""
	}
	n := strings.TrimLeft(f, "-")
	for _, fl := range c.Command.Flags {
		if !slices.Contains(fl.Names(), n) {
			continue
		}
		switch fl.(type) {
		case *cli.DurationFlag:
			return "a duration such as 90s, 30m or 1h30m"
		case *cli.IntFlag, *cli.Int64Flag:
			return "a whole number"
		case *cli.BoolFlag:
			return "true or false"
		}
	}
	return ""
}

// commandPath is the command line's command as the user typed it:
// "workforce sessions rm".
func commandPath(c *cli.Context) string {
	var names []string
	if c != nil {
		for _, l := range c.Lineage() {
			if l.Command != nil && l.Command.Name != "" && l.Command.Name != "workforce" {
				names = append(names, l.Command.Name)
			}
		}
	}
	slices.Reverse(names)
	return strings.Join(append([]string{"workforce"}, names...), " ")
}

// flagName writes the flag package's "-name" as workforce's help does:
// "--name", or "-n" for a one-letter name.
func flagName(f string) string {
	if n := strings.TrimLeft(f, "-"); len(n) > 1 {
		return "--" + n
	}
	return f
}

// unknownCommand is the usage error for a command name that names none.
func unknownCommand(c *cli.Context, name string) error {
	parent := commandPath(c)
	return usageError(fmt.Errorf("unknown command %q for %s", name, parent),
		fmt.Sprintf("`%s --help` lists its commands", parent))
}

// notNegative returns the Action of a duration flag named name that takes
// no negative value.
func notNegative(name string) func(*cli.Context, time.Duration) error {
	return func(c *cli.Context, d time.Duration) error {
		if d < 0 {
			return usagef("%s --%s: invalid duration %v: it cannot be negative (0 for no limit)", commandPath(c), name, d)
		}
		return nil
	}
}

// atLeast returns the Action of an integer flag named name that takes no
// value below least.
func atLeast(name string, least int) func(*cli.Context, int) error {
	return func(c *cli.Context, v int) error {
		if v < least {
			return usagef("%s --%s: invalid value %d: must be %d or more", commandPath(c), name, v, least)
		}
		return nil
	}
}
