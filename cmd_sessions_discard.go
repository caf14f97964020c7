package main

import (
	"context"

	"github.com/urfave/cli/v2"
)

// sessionsDiscardCommand is sessions discard.
func sessionsDiscardCommand() *cli.Command {
	return &cli.Command{
		Name:      "discard",
		Usage:     "drop a session's work: its sandbox and its branch",
		ArgsUsage: "ID",
		Description: `Removes the session, with the agent's work that was not applied, and deletes
its branch workforce/<id> from your repository while the branch is as the
session made it (a branch you moved or checked out stays).

Example:

   workforce sessions discard code-reviewer-20261123-101500-1a2b3c4d`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "discard even while the session's harness, left by a workforce process that died, still runs"},
		},
		Action: sessionsDiscardAction,
	}
}

// sessionsDiscardOptions are the session `workforce sessions discard`
// drops, forced with Force while its harness runs.
type sessionsDiscardOptions struct {
	ID    string
	Force bool
	Env   procEnv
}

func sessionsDiscardAction(c *cli.Context) error {
	id, err := oneID(c)
	if err != nil {
		return err
	}
	return runSessionsDiscard(c.Context, newStreams(c), sessionsDiscardOptions{ID: id, Force: c.Bool("force"), Env: newProcEnv()})
}

func runSessionsDiscard(_ context.Context, ios *iostreams, opts sessionsDiscardOptions) error {
	s, err := openSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	return discard(ios, s, opts.Force)
}
