package main

// This file is the flag-parsing layer's: what turns a command line into
// a command's options and streams, and the usage errors (exit 2) of a
// command line that does not parse or breaks a rule.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/internal/suggest"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// iostreams are a command's standard streams, and what is known of them:
// the run functions of the commands read and write these only, so that a
// test gives them buffers.
type iostreams struct {
	In       io.Reader
	Out, Err io.Writer
	// InTTY, OutTTY and ErrTTY say which streams are terminals: progress
	// goes to a terminal only, colour too, and a question is asked only
	// of someone at one.
	InTTY, OutTTY, ErrTTY bool
	// TTY opens the controlling terminal to ask a question; nil, or
	// returning nil, when there is none.
	TTY func() io.ReadWriteCloser
}

// newStreams returns the streams of the command c runs: the process's
// standard input, and the application's writers.
func newStreams(c *cli.Context) *iostreams {
	ios := &iostreams{In: os.Stdin, Out: c.App.Writer, Err: c.App.ErrWriter}
	ios.InTTY, ios.OutTTY, ios.ErrTTY = isTerminal(os.Stdin), isTerminal(ios.Out), isTerminal(ios.Err)
	if ios.InTTY {
		ios.TTY = openTerminal
	}
	return ios
}

// openTerminal opens the controlling terminal; nil when it cannot.
func openTerminal() io.ReadWriteCloser {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return tty
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// procEnv is what a command knows of its process: the working directory,
// the workforce home and the environment. The flag layer fills it
// (newProcEnv); a test sets it. An error finding the directory or the
// home is the command's error only when it needs them.
type procEnv struct {
	// Dir is the working directory, as os.Getwd gives it.
	Dir    string
	dirErr error
	// Home is the workforce home (home.Dir).
	Home    string
	homeErr error
	// Environ is the environment, as os.Environ gives it.
	Environ []string
}

// newProcEnv returns the process's working directory, workforce home and
// environment.
func newProcEnv() procEnv {
	var e procEnv
	e.Dir, e.dirErr = os.Getwd()
	e.Home, e.homeErr = home.Dir()
	e.Environ = os.Environ()
	return e
}

// dir returns the working directory, or why there is none.
func (e procEnv) dir() (string, error) { return e.Dir, e.dirErr }

// home returns the workforce home, or why there is none.
func (e procEnv) home() (string, error) { return e.Home, e.homeErr }

// getenv is os.Getenv of the environment (the first of a name wins, as
// there): run.Env.Getenv.
func (e procEnv) getenv(name string) string { return runEnv(e).Getenv(name) }

// flagRule is a rule of a command's flags that parsing does not check: a
// flag that conflicts with others, or that goes with another only.
type flagRule struct {
	flag string
	// conflicts are the flags that cannot be given with flag; needs is
	// the one it cannot go without.
	conflicts []string
	needs     string
	// err and hint are the usage error of a command line that breaks the
	// rule.
	err, hint string
}

// userDirRule is the rule of the --user and --dir flags of install and
// import.
var userDirRule = flagRule{flag: "user", conflicts: []string{"dir"}, err: "--user and --dir conflict",
	hint: "use --user for the user layer or --dir DIR for another directory, not both"}

// checkFlags returns the usage error of the first of rules the command
// line of c breaks, in their order.
func checkFlags(c *cli.Context, rules ...flagRule) error {
	for _, r := range rules {
		if !given(c, r.flag) {
			continue
		}
		broken := r.needs != "" && !given(c, r.needs)
		for _, o := range r.conflicts {
			broken = broken || given(c, o)
		}
		if !broken {
			continue
		}
		var hints []string
		if r.hint != "" {
			hints = append(hints, r.hint)
		}
		return usageError(errors.New(r.err), hints...)
	}
	return nil
}

// given reports whether the flag name of c is given: a boolean one true,
// a string one not empty, any other set.
func given(c *cli.Context, name string) bool {
	switch v := c.Value(name).(type) {
	case bool:
		return v
	case string:
		return v != ""
	}
	return c.IsSet(name)
}

// optionalBool is the value of the boolean flag name, nil when the
// command line does not set it.
func optionalBool(c *cli.Context, name string) *bool {
	if !c.IsSet(name) {
		return nil
	}
	v := c.Bool(name)
	return &v
}

// setUsageErrors makes every command below cmds report a command line it
// cannot parse (an unknown flag, a bad value) as a usage error: urfave/cli
// gives each command its own handler, and one left unset exits 1.
//
// A flag marked Required is checked by the command's action instead, for
// the same reason: urfave/cli reports a missing one with exit status 1.
//
// urfave/cli's help command is one value shared by every application,
// and lists itself among its subcommands once it has run: seen holds the
// commands done, so that the walk ends.
func setUsageErrors(cmds []*cli.Command) {
	setUsageErrorsSeen(cmds, map[*cli.Command]bool{}, map[*cli.StringFlag]bool{})
}

// setUsageErrorsSeen is setUsageErrors for the commands not in seen; a
// flag in required was marked Required, and is checked by every command
// that shares it (resolve and resume share --state).
func setUsageErrorsSeen(cmds []*cli.Command, seen map[*cli.Command]bool, required map[*cli.StringFlag]bool) {
	for _, c := range cmds {
		if seen[c] {
			continue
		}
		seen[c] = true
		if c.OnUsageError == nil {
			c.OnUsageError = onUsageError
		}
		var names []string
		for _, f := range c.Flags {
			sf, ok := f.(*cli.StringFlag)
			if !ok || !sf.Required && !required[sf] {
				continue
			}
			sf.Required = false
			required[sf] = true
			names = append(names, sf.Name)
		}
		if act := c.Action; len(names) > 0 && act != nil {
			c.Action = func(ctx *cli.Context) error {
				for _, n := range names {
					if !ctx.IsSet(n) {
						return usagef("%s needs --%s", commandPath(ctx), n)
					}
				}
				return act(ctx)
			}
		}
		if act := c.Action; c.ArgsUsage == "" && act != nil {
			// A command that names no arguments takes none; a command
			// with subcommands reads its first argument as one.
			subs := len(c.Subcommands) > 0
			c.Action = func(ctx *cli.Context) error {
				if ctx.Args().Present() {
					if subs {
						return unknownCommand(ctx, ctx.Args().First())
					}
					return usagef("%s takes no arguments, not %q", commandPath(ctx), ctx.Args().First())
				}
				return act(ctx)
			}
		}
		setUsageErrorsSeen(c.Subcommands, seen, required)
	}
}

// onUsageError turns the flag package's parse errors into usage errors
// that name the flag as it is written and the command's help.
func onUsageError(c *cli.Context, err error, _ bool) error {
	name := commandPath(c)
	help := "`" + name + " --help` lists its flags"
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return usageError(fmt.Errorf("unknown flag %s for %s", flagName(f), name), append(similarFlags(c, f), help)...)
	}
	if f, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return usageError(fmt.Errorf("%s %s needs a value", name, flagName(f)), help)
	}
	if m := badValue().FindStringSubmatch(msg); m != nil {
		why := m[3]
		if k := flagKind(c, m[2]); k != "" {
			why = "not " + k
		}
		return usageError(fmt.Errorf("%s %s: invalid value %s: %s", name, flagName(m[2]), m[1], why), help)
	}
	return usageError(fmt.Errorf("%s: %s", name, msg), help)
}

// badValue is the flag package's error for a value it cannot parse.
var badValue = lazyre.New(`^invalid (?:boolean )?value (".*") for (?:flag )?(-\S+): (.*)$`)

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

// similarFlags is the "did you mean" hint of the unknown flag f ("-josn")
// given to c's command, naming the flags of at least two letters it was
// likely meant to be; none when nothing is close.
func similarFlags(c *cli.Context, f string) []string {
	var names []string
	if c != nil && c.Command != nil && len(c.Command.Flags) > 0 {
		for _, fl := range c.Command.Flags {
			names = append(names, fl.Names()...)
		}
	} else if c != nil && c.App != nil {
		for _, fl := range c.App.Flags {
			names = append(names, fl.Names()...)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool { return len(n) < 2 })
	similar := suggest.Closest(strings.TrimLeft(f, "-"), names)
	if len(similar) == 0 {
		return nil
	}
	return []string{suggest.Hint("--", similar)}
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
//
// A parent with a show subcommand (sessions) is given a hint to it: the
// argument is most likely what to show.
func unknownCommand(c *cli.Context, name string) error {
	parent := commandPath(c)
	hints := []string{fmt.Sprintf("`%s --help` lists its commands", parent)}
	if c != nil && c.Command != nil && c.Command.Command("show") != nil {
		hints = append(hints, fmt.Sprintf("to see one: %s show %s", parent, shellJoin([]string{name})))
	}
	return usageError(fmt.Errorf("unknown command %q for %s", name, parent), hints...)
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
