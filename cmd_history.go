package main

import (
	"context"
	"time"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func historyCommand() *cli.Command {
	return &cli.Command{
		Name:      "history",
		Usage:     "list the recent runs, newest first, and whether their session can be resumed",
		ArgsUsage: " ",
		Description: `Lists the runs of the history (<home>/history.jsonl, docs/history.md), the
last recorded first: persona, tier, harness, model, project, status,
duration, cost (unknown: -), session id, and whether the session is still
kept and can be resumed (workforce sessions resume ID TASK). A one-shot run
removes its session when it ends unless it was kept (--keep, --review,
conflicts): its result stays in <home>/results/<session-id>/ until pruned
(workforce sessions show ID).

--json prints one object a run, as JSON lines: persona, tier, harness,
model, project, status, durationMs, costUsd (absent when unknown),
sessionId, resumable.

Example:

   workforce history
   workforce history --persona code-reviewer --since 7d
   workforce history --limit 5 --json`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "limit", Value: 20, Action: atLeast("limit", 0), Usage: "list at most `N` runs, the newest; 0 for all"},
			&cli.StringFlag{Name: "persona", Usage: "only the runs of the persona `ID`"},
			&cli.StringFlag{Name: "since", Usage: "only the runs started within `DURATION` before now: 90m, 24h, 7d"},
			&cli.BoolFlag{Name: "json", Usage: "print one object a run, as JSON lines"},
		},
		Action: historyAction,
	}
}

func historyAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("history takes no arguments")
	}
	q := history.Query{Limit: c.Int("limit"), Persona: c.String("persona")}
	if given(c, "since") {
		d, err := history.ParseSince(c.String("since"))
		if err != nil {
			return usagef("--since %s: %v", quote.Name(c.String("since")), err)
		}
		q.Since = time.Now().Add(-d)
	}
	return runHistory(c.Context, newStreams(c), newProcEnv(), q, c.Bool("json"))
}

func runHistory(_ context.Context, ios *iostreams, env procEnv, q history.Query, asJSON bool) error {
	home, recs, err := readHistory(ios.Err, env)
	if err != nil {
		return err
	}
	q.Resumable = func(id string) bool { return session.CanResume(home, id) }
	runs := history.List(recs, q)
	if asJSON {
		for _, r := range runs {
			if err := writeJSONLine(ios.Out, r); err != nil {
				return err
			}
		}
		return nil
	}
	return report.HistoryRuns(runs).WriteText(ios.Out, history.Path(home))
}
