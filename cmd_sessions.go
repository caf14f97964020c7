package main

import (
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func sessionsCommand() *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list, show, diff, apply, sync, resume and remove run sessions, those left by a crash included",
		Description: `A session is one workforce run: its sandbox, record and manifest under
<home>/sessions/<id>/. Sessions left by a process that died (closed terminal,
kill -9, reboot) are stale; their work is still in the sandbox. A session of
run --review holds the agent's work until you apply or discard it. The
agent's commits come back as the branch workforce/<id> of your repository.
A kept session's harness conversation continues with sessions resume.

Example:

   workforce sessions
   workforce sessions diff code-reviewer-20261123-101500-1a2b3c4d --stat
   workforce sessions sync code-reviewer-20261123-101500-1a2b3c4d`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: sessionsListAction,
		Subcommands: []*cli.Command{
			sessionsListCommand(),
			sessionsShowCommand(),
			sessionsSyncCommand(),
			sessionsDiffCommand(),
			sessionsApplyCommand(),
			sessionsResumeCommand(),
			sessionsDiscardCommand(),
			sessionsRmCommand(),
			sessionsPruneResultsCommand(),
		},
	}
}

// syncCommittedFlag is --sync-committed of sessions sync and apply.
func syncCommittedFlag() *cli.BoolFlag {
	return &cli.BoolFlag{Name: "sync-committed", Usage: "also sync back, as changes, what the agent committed (it is on its branch workforce/<id> either way)"}
}

func changedCount(r *mount.Report) int {
	return len(r.Created) + len(r.Updated) + len(r.Deleted) + len(r.Unapplied) + len(r.Blocked) + len(r.Conflicts)
}

// oneID returns the session id that is the only argument of c.
func oneID(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("%s takes one session id (workforce sessions lists them)", c.Command.Name)
	}
	return c.Args().First(), nil
}

// openSession opens the session id of the workforce home.
func openSession(env procEnv, id string) (*session.Session, error) {
	home, err := env.home()
	if err != nil {
		return nil, err
	}
	return session.Open(home, id)
}
