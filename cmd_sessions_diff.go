package main

import (
	"context"
	"errors"

	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// sessionsDiffCommand is sessions diff.
func sessionsDiffCommand() *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "show a session's work as a git diff against the tree it started from",
		ArgsUsage: "ID [PATH|GLOB...]",
		Description: `Shows the agent's changes, committed and uncommitted, against the files the
session started from, as a unified git diff (coloured on a terminal): the
work a sync-back or apply would bring now, deletions included. A file that
changed in your tree too is a conflict: it is marked with a "# conflict:"
line and shown against your version. PATH and GLOB arguments (doublestar
globs: *, ?, **, [a-z], {a,b}; quote them) pick files or directories,
relative to your working directory. Nothing is written. Needs git.

Example:

   workforce sessions diff code-reviewer-20261123-101500-1a2b3c4d --stat
   workforce sessions diff code-reviewer src/ '**/*_test.go'`,
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "stat", Usage: "show a summary of the changed files instead of the patch"}},
		Action: sessionsDiffAction,
	}
}

// sessionsDiffOptions are what `workforce sessions diff` shows: the work
// of session ID, the files Paths name (all without), as a summary with
// Stat.
type sessionsDiffOptions struct {
	ID    string
	Paths []string
	Stat  bool
	Env   procEnv
}

func sessionsDiffAction(c *cli.Context) error {
	if c.NArg() < 1 {
		return usagef("sessions diff takes a session id (workforce sessions lists them), then optionally paths or globs")
	}
	opts := sessionsDiffOptions{ID: c.Args().First(), Paths: c.Args().Tail(), Stat: c.Bool("stat"), Env: newProcEnv()}
	return runSessionsDiff(c.Context, newStreams(c), opts)
}

func runSessionsDiff(_ context.Context, ios *iostreams, opts sessionsDiffOptions) error {
	s, sel, err := openSelected(opts.Env, opts.ID, opts.Paths)
	if err != nil {
		return err
	}
	err = s.Diff(ios.Out, session.DiffOptions{Only: sel.Match, Stat: opts.Stat, Color: useColor(ios, opts.Env)})
	if errors.Is(err, session.ErrNoGit) {
		return withCode(exitFailure, err, "workforce sessions show "+s.ID()+" lists the changed files")
	}
	return err
}
