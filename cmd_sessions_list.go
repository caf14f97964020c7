package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

// sessionsListCommand is sessions list, also what sessions alone does.
func sessionsListCommand() *cli.Command {
	return &cli.Command{
		Name:  "list",
		Usage: "list the sessions, with their phase and the files the agent changed",
		Description: `Lists the sessions of <home>/sessions, oldest first: id, persona, phase, age,
the number of files a sync-back would bring back, and the project root. A
session whose process is gone before its work was synced back is marked
stale: workforce sessions sync ID finishes it. A one-shot run removes its
session when it ends unless run with --keep (or --review): workforce
history lists the past runs, and whether their session is still kept.

Example:

   workforce sessions
   workforce sessions list --json`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: sessionsListAction,
	}
}

// sessionsListOptions are the workforce home `workforce sessions list`
// lists the sessions of.
type sessionsListOptions struct {
	JSON bool
	Env  procEnv
}

func sessionsListAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions list takes no arguments; to see one session: workforce sessions show ID")
	}
	return runSessionsList(c.Context, newStreams(c), sessionsListOptions{JSON: c.Bool("json"), Env: newProcEnv()})
}

func runSessionsList(_ context.Context, ios *iostreams, opts sessionsListOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	infos, err := session.List(home)
	if err != nil {
		return err
	}
	rows := []report.SessionRow{}
	now := time.Now()
	for _, in := range infos {
		row := report.SessionRow{ID: in.ID(), Changed: -1}
		if in.Err != nil {
			row.Error = in.Err.Error()
			rows = append(rows, row)
			continue
		}
		r := in.Session.Record
		row.Persona, row.Tier, row.Harness, row.Root, row.Phase = r.Persona, r.Tier, r.Harness, r.Root, string(r.Phase)
		row.Stale, row.Live, row.Started = in.Stale, in.Live, r.Started
		row.Age = int64(now.Sub(r.Started).Seconds())
		if r.Phase != session.Creating && r.Phase != session.Failed {
			if rep, err := in.Session.Changes(true); err == nil {
				row.Changed = changedCount(rep)
			}
		}
		rows = append(rows, row)
	}
	warm := toreport.Each(session.WarmList(home), toreport.Warm)
	if opts.JSON {
		if warm == nil {
			warm = []report.Warm{}
		}
		return writeJSON(ios.Out, report.Sessions{Sessions: rows, Warm: warm})
	}
	for _, w := range warm {
		defer fmt.Fprintf(ios.Out, "warm sandbox of %s: %s (%s old)\n", quote.Name(w.Root), quote.Name(w.Dir), report.Age(now.Sub(w.Time)))
	}
	if len(rows) == 0 {
		fmt.Fprintln(ios.Out, "no sessions")
		if recs, _, _ := history.ReadAll(home); len(recs) > 0 {
			notef(ios.Err, "one-shot runs remove their session when they end unless run with --keep (or --review); the %d runs of the history: workforce history", len(recs))
		}
		return nil
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPERSONA\tPHASE\tAGE\tCHANGED\tROOT")
	for _, r := range rows {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t\tunreadable\t\t\t%s\n", quote.Name(r.ID), quote.Text(r.Error))
			continue
		}
		phase := r.Phase
		if r.Stale {
			phase += " (stale)"
		}
		changed := "?"
		if r.Changed >= 0 {
			changed = fmt.Sprint(r.Changed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Persona, phase, report.Age(time.Duration(r.Age)*time.Second), changed, quote.Name(r.Root))
	}
	return tw.Flush()
}
