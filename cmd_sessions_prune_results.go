package main

import (
	"context"
	"fmt"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/session"
	"github.com/urfave/cli/v2"
)

// sessionsPruneResultsCommand is sessions prune-results.
func sessionsPruneResultsCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune-results",
		Usage: "remove the results of one-shot runs past their age or count limit",
		Description: `A one-shot run (run PERSONA TASK) leaves its result and the harness's raw
output in <home>/results/<id>/, where sessions show ID finds them after the
sandbox is gone. They are pruned after each one-shot run, and by this
command: results older than maxAge, and those beyond the newest maxCount,
are removed, by "results" in <home>/config.json
({"results": {"maxAge": "720h", "maxCount": 500}} is the default; 0 is no
limit). The age of a result is its session's, from the time in its id.
The results of a session that still exists (kept, held for review, stale)
stay while it does and do not count. --max-age and --max-count override the
configuration.

Example:

   workforce sessions prune-results
   workforce sessions prune-results --max-age 168h --max-count 50`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "max-age", Action: notNegative("max-age"), Usage: "remove results older than this (e.g. 168h); 0 for no limit", DefaultText: "\"results\" in <home>/config.json, else 720h"},
			&cli.IntFlag{Name: "max-count", Action: atLeast("max-count", 0), Usage: "keep at most this many results, the newest; 0 for no limit", DefaultText: "\"results\" in <home>/config.json, else 500"},
		},
		Action: sessionsPruneResultsAction,
	}
}

// sessionsPruneResultsOptions are the bounds `workforce sessions
// prune-results` prunes by: those of config.json, but for MaxAge and
// MaxCount when set.
type sessionsPruneResultsOptions struct {
	MaxAge   *time.Duration
	MaxCount *int
	Env      procEnv
}

func sessionsPruneResultsAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("sessions prune-results takes no arguments")
	}
	opts := sessionsPruneResultsOptions{Env: newProcEnv()}
	if c.IsSet("max-age") {
		d := c.Duration("max-age")
		opts.MaxAge = &d
	}
	if c.IsSet("max-count") {
		n := c.Int("max-count")
		opts.MaxCount = &n
	}
	return runSessionsPruneResults(c.Context, newStreams(c), opts)
}

func runSessionsPruneResults(_ context.Context, ios *iostreams, opts sessionsPruneResultsOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	lim, err := session.ConfiguredResultLimits(home)
	if err != nil && (opts.MaxAge == nil || opts.MaxCount == nil) {
		return err
	}
	if opts.MaxAge != nil {
		lim.MaxAge = *opts.MaxAge
	}
	if opts.MaxCount != nil {
		lim.MaxCount = *opts.MaxCount
	}
	removed, err := session.PruneResults(home, lim, "", time.Now())
	for _, id := range removed {
		fmt.Fprintf(ios.Out, "removed result: %s\n", quote.Name(id))
	}
	if len(removed) == 0 && err == nil {
		fmt.Fprintln(ios.Out, "no results to prune")
	}
	return err
}
