package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// sessionsRmCommand is sessions rm.
func sessionsRmCommand() *cli.Command {
	return &cli.Command{
		Name:      "rm",
		Usage:     "remove sessions and their sandboxes",
		ArgsUsage: "ID... | --stale | --warm",
		Description: `Removes the named sessions, or with --stale every stale session, with the
agent's work that was not synced back; --warm removes the warm sandboxes
that run --reuse keeps. It asks first on a terminal; --yes
answers for you, and is needed when there is no terminal. Sessions synced
back with no change left in their sandboxes (kept by run --keep) lose no
work: they are removed without asking, with a note. A running session
is refused, and so is one whose harness outlived its workforce process and
still runs, unless --force. A session whose record cannot be read is
removed all the same, with a warning. The branch workforce/<id> of the
agent's commits stays in your repository unless --branch.

Example:

   workforce sessions rm --stale --yes
   workforce sessions rm code-reviewer --yes --branch`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "branch", Usage: "also delete each session's branch workforce/<id>, while it is as the session made it"},
			&cli.BoolFlag{Name: "stale", Usage: "remove every stale session"},
			&cli.BoolFlag{Name: "warm", Usage: "remove the warm sandboxes kept by run --reuse"},
			&cli.BoolFlag{Name: "yes", Usage: "do not ask"},
			&cli.BoolFlag{Name: "force", Usage: "remove even while a session's harness, left by a workforce process that died, still runs"},
		},
		Action: sessionsRmAction,
	}
}

// sessionsRmOptions are what `workforce sessions rm` removes: the
// sessions IDs name, or with Stale every stale one, or with Warm the warm
// sandboxes; Yes answers its question, Force removes sessions whose
// harness still runs, Branch deletes their branches too.
type sessionsRmOptions struct {
	IDs                []string
	Stale, Warm        bool
	Yes, Force, Branch bool
	Env                procEnv
}

func sessionsRmAction(c *cli.Context) error {
	opts := sessionsRmOptions{
		IDs: c.Args().Slice(), Stale: c.Bool("stale"), Warm: c.Bool("warm"),
		Yes: c.Bool("yes"), Force: c.Bool("force"), Branch: c.Bool("branch"), Env: newProcEnv(),
	}
	return runSessionsRm(c.Context, newStreams(c), opts)
}

func runSessionsRm(_ context.Context, ios *iostreams, opts sessionsRmOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	if opts.Warm {
		if opts.Stale || len(opts.IDs) > 0 {
			return usagef("sessions rm takes session ids, --stale or --warm")
		}
		// Warm sandboxes hold no work of an agent: no question asked.
		for _, w := range session.WarmList(home) {
			if err := session.RemoveWarm(w); err != nil {
				return err
			}
			fmt.Fprintf(ios.Out, "removed the warm sandbox of %s\n", quote.Name(w.Root))
		}
		return nil
	}
	if opts.Stale == (len(opts.IDs) > 0) {
		return usagef("sessions rm takes session ids, --stale or --warm")
	}
	var targets []*session.Session
	if opts.Stale {
		infos, err := session.List(home)
		if err != nil {
			return err
		}
		for _, in := range infos {
			if in.Stale {
				targets = append(targets, in.Session)
			}
		}
	} else {
		for _, id := range opts.IDs {
			s, err := session.Find(home, id)
			if err != nil {
				return err
			}
			if err := s.ReadRecord(); err != nil {
				warnf(ios.Err, "cannot read the record of session %s (%v); it is removed all the same, without checking for a harness still running in it", s.ID(), err)
			}
			targets = append(targets, s)
		}
	}
	if len(targets) == 0 {
		fmt.Fprintln(ios.Out, "no stale sessions")
		return nil
	}
	if !opts.Yes && !slices.ContainsFunc(targets, func(s *session.Session) bool { return !s.Settled() }) {
		notef(ios.Err, "nothing to ask: %s synced back, with no change left in its sandbox that is not in the repository", sessionIDs(targets))
		opts.Yes = true
	}
	if !opts.Yes {
		if !ios.ErrTTY || !ios.InTTY {
			return usageError(errors.New("sessions rm removes the agent's work that was not synced back"), "add --yes to remove without asking")
		}
		fmt.Fprintf(ios.Err, "workforce: remove %s and the work in them? [y/N] ", sessionIDs(targets))
		answer, _ := bufio.NewReader(ios.In).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return errors.New("nothing removed")
		}
	}
	var failed error
	for _, s := range targets {
		if err := s.RemoveIdle(opts.Force); err != nil {
			printError(ios.Err, withHarnessHint(err, "workforce sessions rm", "--force removes the session anyway"))
			failed = silentExit(exitFailure)
			continue
		}
		fmt.Fprintf(ios.Out, "removed: %s\n", s.ID())
		if opts.Branch {
			removeBranch(ios, s)
		}
	}
	return failed
}

// sessionIDs is the ids of ss, comma-separated.
func sessionIDs(ss []*session.Session) string {
	names := make([]string, len(ss))
	for i, s := range ss {
		names[i] = s.ID()
	}
	return strings.Join(names, ", ")
}
