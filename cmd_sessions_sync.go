package main

import (
	"context"

	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// sessionsSyncCommand is sessions sync.
func sessionsSyncCommand() *cli.Command {
	return &cli.Command{
		Name:      "sync",
		Usage:     "bring a session's work back into the real tree",
		ArgsUsage: "ID",
		Description: `Runs the sync-back of the run that made the session: new and changed files flow
back, a file changed in the real tree too is a conflict (yours stays, the
agent's is saved under the session's conflicts/), deletions apply only with
--sync-deletes, and so does a file, directory or symlink the agent replaced
by another of them (what takes its place waits in the session). The agent's
commits become the branch workforce/<id>, and what it committed is left to
that branch unless --sync-committed. A sync killed half-way and run again
finishes the job.
Syncs of one session wait for each other; a session whose run is still
going is refused, and so is one whose harness outlived its workforce
process and still runs (it may still write): wait for it to exit or stop
it, or sync what it has written so far with --force (the session is then
kept while the harness runs). Executable configuration the agent changed
(docs/run.md) is held again, for sessions apply, unless --sync-config;
policy files never sync back. The session is removed once synced without
conflicts, unless --keep; what a kept session synced is yours from then on
(a later edit or deletion is no conflict).

Exit status: 0, or 3 when there were conflicts.

Example:

   workforce sessions sync code-reviewer-20261123-101500-1a2b3c4d --sync-deletes`,
		Flags: []cli.Flag{
			syncDeletesFlag,
			&cli.BoolFlag{Name: "keep", Usage: "keep the session after the sync"},
			&cli.BoolFlag{Name: "force", Usage: "sync even while the session's harness, left by a workforce process that died, still runs"},
			syncCommittedFlag(), syncConfigFlag,
		},
		Action: sessionsSyncAction,
	}
}

// sessionsSyncOptions are how `workforce sessions sync` and `apply` bring
// the work of session ID back: the files Paths name (apply only; all
// without), deletions with SyncDeletes, the session kept with Keep,
// forced with Force while its harness runs, and with SyncCommitted what
// the agent committed too.
type sessionsSyncOptions struct {
	ID                                      string
	Paths                                   []string
	SyncDeletes, Keep, Force, SyncCommitted bool
	// SyncConfig syncs executable configuration too: sessions sync
	// --sync-config, and sessions apply always (it is the user's review).
	SyncConfig bool
	Env        procEnv
}

func sessionsSyncFlags(c *cli.Context, id string) sessionsSyncOptions {
	return sessionsSyncOptions{ID: id, SyncDeletes: c.Bool("sync-deletes"), Keep: c.Bool("keep"), Force: c.Bool("force"),
		SyncCommitted: c.Bool("sync-committed"), SyncConfig: c.Bool(syncConfigFlag.Name), Env: newProcEnv()}
}

func sessionsSyncAction(c *cli.Context) error {
	id, err := oneID(c)
	if err != nil {
		return err
	}
	return runSessionsSync(c.Context, newStreams(c), sessionsSyncFlags(c, id))
}

func runSessionsSync(ctx context.Context, ios *iostreams, opts sessionsSyncOptions) error {
	s, err := openSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	return syncSession(ctx, ios, s, nil, opts)
}

// syncSession syncs back the session s, or with sel the part of its work
// that sel selects, and prints what it did.
func syncSession(ctx context.Context, ios *iostreams, s *session.Session, sel *session.Selector, opts sessionsSyncOptions) error {
	var only func(string) bool
	if sel != nil {
		only = sel.Match
	}
	o, done := syncOptions(ios, opts.SyncDeletes, opts.Keep, opts.Force, opts.SyncCommitted, only)
	o.SyncConfig = opts.SyncConfig
	defer done()
	rep, kept, err := s.Sync(ctx, o)
	return printSync(ios, s, rep, kept, err)
}
