package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "harness",
		Usage: "inspect the harnesses workforce runs",
		Subcommands: []*cli.Command{{
			Name:  "check",
			Usage: "list which harnesses are installed, where, and their versions",
			Description: `Looks for claude, opencode and codex on PATH and asks each for its version.
It is a report: the exit status is 0 even when some are missing; the npm
package that provides each missing one is named.

Example:

   workforce harness check
   workforce harness check --json`,
			Flags:  []cli.Flag{jsonFlag},
			Action: harnessCheckAction,
		}},
	})
}

func harnessCheckAction(c *cli.Context) error {
	statuses := harness.Check(c.Context, os.Environ())
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"harnesses": statuses})
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HARNESS\tINSTALLED\tVERSION\tPATH")
	for _, s := range statuses {
		if s.Installed {
			fmt.Fprintf(tw, "%s\tyes\t%s\t%s\n", s.Harness, s.Version, s.Path)
		} else {
			fmt.Fprintf(tw, "%s\tno\t\tnpm install -g %s\n", s.Harness, s.Package)
		}
	}
	return tw.Flush()
}
