package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// sessionsApplyCommand is sessions apply.
func sessionsApplyCommand() *cli.Command {
	return &cli.Command{
		Name:      "apply",
		Usage:     "apply all or part of a session's work to the real tree",
		ArgsUsage: "ID [PATH|GLOB...]",
		Description: `Applies the agent's work held by a session (run --review, or any kept session)
as sync-back does, with the same rules: a file changed in your tree too is a
conflict (yours stays, the agent's is saved under the session's
conflicts/), deletions apply only with --sync-deletes, and what the agent
committed is left to its branch workforce/<id> unless --sync-committed.
PATH and GLOB arguments (doublestar globs, quoted) apply only the files they
name, relative to your working directory; the rest stays in the session for
a later apply or discard. What was applied is yours from then on: a later
edit or deletion of it is no conflict, and a later apply brings it again
only if the agent changed it again. Executable configuration a run held for
review (.claude/, .mcp.json, opencode.json, .vscode/tasks.json, .envrc...:
docs/run.md) is applied too; policy files (.agentignore, .agentreadonly,
.agentworkforce/...) never are. The session is removed once all its work is
applied without conflicts, unless --keep.

Exit status: 0, or 3 when there were conflicts.

Example:

   workforce sessions apply code-reviewer-20261123-101500-1a2b3c4d
   workforce sessions apply code-reviewer src/parser/ 'docs/**/*.md'`,
		Flags: []cli.Flag{
			syncDeletesFlag,
			&cli.BoolFlag{Name: "keep", Usage: "keep the session after the apply"},
			&cli.BoolFlag{Name: "force", Usage: "apply even while the session's harness, left by a workforce process that died, still runs"},
			syncCommittedFlag(),
		},
		Action: sessionsApplyAction,
	}
}

func sessionsApplyAction(c *cli.Context) error {
	if c.NArg() < 1 {
		return usagef("sessions apply takes a session id (workforce sessions lists them), then optionally paths or globs")
	}
	opts := sessionsSyncFlags(c, c.Args().First())
	opts.Paths = c.Args().Tail()
	opts.SyncConfig = true
	return runSessionsApply(c.Context, newStreams(c), opts)
}

func runSessionsApply(ctx context.Context, ios *iostreams, opts sessionsSyncOptions) error {
	s, sel, err := openSelected(opts.Env, opts.ID, opts.Paths)
	if err != nil {
		return err
	}
	return syncSession(ctx, ios, s, sel, opts)
}

// openSelected opens the session id and the selector of the paths or
// globs (nil for none), relative to the working directory: sessions diff
// and apply.
func openSelected(env procEnv, id string, paths []string) (*session.Session, *session.Selector, error) {
	s, err := openSession(env, id)
	if err != nil {
		return nil, nil, err
	}
	sel, err := selectorFor(env, s, paths)
	if err != nil {
		return nil, nil, err
	}
	return s, sel, nil
}

// selectorFor makes the selector of the PATH|GLOB arguments of sessions
// diff and apply for the session s, and checks that each names one of the
// agent's changes.
func selectorFor(env procEnv, s *session.Session, args []string) (*session.Selector, error) {
	if len(args) == 0 {
		return nil, nil
	}
	wd, err := env.dir()
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	sel, err := session.NewSelector(s.Record.Root, wd, args)
	if err != nil {
		return nil, usageError(err)
	}
	changed, err := s.Changed()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, ch := range changed {
		sel.Match(ch.Path)
		names = append(names, ch.Path)
	}
	if un := sel.Unmatched(); len(un) > 0 {
		there := "the agent changed nothing that syncs back"
		if len(names) > 0 {
			there = "the agent's changes: " + strings.Join(names, ", ")
		}
		return nil, withCode(exitFailure, fmt.Errorf("no change of the agent in session %s matches %s", s.ID(), strings.Join(un, ", ")), there)
	}
	return sel, nil
}
