package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/history"
	"github.com/seed-3bc194a6/workforce/history/sessions"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

func usageCommand() *cli.Command {
	return &cli.Command{
		Name:      "usage",
		Usage:     "tokens and cost of the runs, by persona, harness, model or project",
		ArgsUsage: " ",
		Description: `Sums what the models consumed in the runs of the history (<home>/history.jsonl,
docs/history.md), grouped by persona (the default), harness, model or project
(the project root). A one-shot run's usage is the one its result carries (a
resumed run's own, not the conversation's so far); an interactive run's was
read from the harness's own record of the conversation (Claude Code's
projects/*.jsonl, codex's rollout files, opencode's database, gemini's
tmp/*/chats/*.jsonl) when it ended,
before its session was removed, found by the harness's session id, or else
by the sandbox directory it ran in. A run that kept its state in your home
(--install-in-repo) is matched to your own records when usage runs.

A cost the harness did not record (codex and gemini record none) is unknown, never 0:
the table shows "unknown", or "+?" after the sum of the known costs, and a
"~" before a cost the harness estimated for a model it has no price for;
UNKNOWN counts the runs whose usage is unknown. --json prints one object
(docs/usage.md). --since keeps the runs started within the duration before
now (90m, 24h, 7d).

Example:

   workforce usage
   workforce usage --since 7d --by model
   workforce usage --by project --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "since", Usage: "only the runs started within `DURATION` before now: 90m, 24h, 7d"},
			&cli.StringFlag{Name: "by", Value: "persona", Usage: "group by `KEY`: persona, harness, model or project"},
			jsonFlag(),
		},
		Action: usageAction,
	}
}

// usageOptions are what workforce usage reports: the runs started since
// Since before Now (all when 0), grouped by By.
type usageOptions struct {
	Since time.Duration
	By    string
	JSON  bool
	Now   time.Time
	Env   procEnv
}

func usageAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("usage takes no arguments")
	}
	opts := usageOptions{By: c.String("by"), JSON: c.Bool("json"), Now: time.Now(), Env: newProcEnv()}
	if !slices.Contains(history.UsageKeys, opts.By) {
		return usagef("--by %s: want one of %s", quote.Name(opts.By), strings.Join(history.UsageKeys, ", "))
	}
	if given(c, "since") {
		d, err := history.ParseSince(c.String("since"))
		if err != nil {
			return usagef("--since %s: %v", quote.Name(c.String("since")), err)
		}
		opts.Since = d
	}
	return runUsage(c.Context, newStreams(c), opts)
}

func runUsage(ctx context.Context, ios *iostreams, opts usageOptions) error {
	home, recs, err := readHistory(ios.Err, opts.Env)
	if err != nil {
		return err
	}
	var since time.Time
	if opts.Since > 0 {
		since = opts.Now.Add(-opts.Since)
		recs = history.Since(recs, since)
	}
	runs := history.RunsUsage(recs)
	found := readHarnessRecords(ios.Err, runs, opts.Env)
	history.MatchSessionRecords(runs, found)
	rep := history.UsageTotals(runs, opts.By, since)
	if opts.JSON {
		return writeJSON(ios.Out, rep)
	}
	if len(rep.Groups) == 0 {
		// Nothing to sum: say so and where the history is, not a bare header.
		if since.IsZero() {
			fmt.Fprintf(ios.Out, "no runs in the history yet (%s): workforce run and batch record each run there\n", quote.Name(history.Path(home)))
		} else {
			fmt.Fprintf(ios.Out, "no runs since %s in the history (%s)\n", since.UTC().Format(time.RFC3339), quote.Name(history.Path(home)))
		}
		return nil
	}
	printUsage(ios.Out, rep)
	return nil
}

// readHarnessRecords reads the harnesses' records of the conversations
// of the runs whose usage the history does not carry
// (history.ReadSessionRecords), and warns on stderr of those it could not
// read.
func readHarnessRecords(stderr io.Writer, runs []history.RunUsage, env procEnv) []sessions.Record {
	res := history.ReadSessionRecords(runs, history.SessionStores{
		State: func(sandbox string) ([]sessions.Store, bool) {
			state := session.StateDir(sandbox)
			if fi, err := os.Stat(state); err != nil || !fi.IsDir() {
				return nil, false
			}
			return run.StateStores(state), true
		},
		User: func() []sessions.Store { return sessions.Stores(env.getenv) },
	})
	for _, err := range res.Errors {
		warnf(stderr, "%s", quote.Text(err.Error()))
	}
	if res.Skipped > 0 {
		warnf(stderr, "%d damaged lines of the harnesses' session records skipped", res.Skipped)
	}
	return res.Records
}

// printUsage prints rep as a table.
func printUsage(w io.Writer, rep report.UsageReport) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tRUNS\tINPUT\tOUTPUT\tCACHED\tCOST\tUNKNOWN\n", strings.ToUpper(rep.By))
	row := func(key string, g report.UsageSums) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%d\n", key, g.Runs, g.InputTokens, g.OutputTokens, g.CachedTokens, costText(g), g.Unknown)
	}
	for _, g := range rep.Groups {
		key := "-"
		if g.Key != "" {
			key = quote.Name(g.Key)
		}
		row(key, g.UsageSums)
	}
	if len(rep.Groups) > 1 {
		row("total", rep.Total)
	}
	tw.Flush()
}

// costText is a group's cost in the table: the known sum ("~" before it
// when a harness estimated a part), "+?" after it when some runs' cost is
// unknown, "unknown" when none is known.
func costText(g report.UsageSums) string {
	if g.CostUSD == nil {
		if g.Runs == 0 {
			return "-"
		}
		return "unknown"
	}
	s := fmt.Sprintf("$%.4f", *g.CostUSD)
	if g.CostEstimated {
		s = "~" + s
	}
	if g.CostUnknown > 0 {
		s += "+?"
	}
	return s
}
