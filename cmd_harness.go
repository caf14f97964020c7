package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func harnessCommand() *cli.Command {
	return &cli.Command{
		Name:  "harness",
		Usage: "inspect the harnesses workforce runs",
		Subcommands: []*cli.Command{{
			Name:  "check",
			Usage: "list which harnesses are installed, where, and their versions",
			Description: `Looks for claude, opencode and codex on PATH and asks each for its version,
and names the instruction discovery profile that version maps to (context
and run use it; a warning says when the version was not measured). It is a report: the exit status is 0 even when some are missing; the npm
package that provides each missing one is named.

Example:

   workforce harness check
   workforce harness check --json`,
			Flags:  []cli.Flag{jsonFlag()},
			Action: harnessCheckAction,
		}},
	}
}

// harnessCheckOptions are how `workforce harness check` looks for the
// harnesses: on the PATH of Env.
type harnessCheckOptions struct {
	JSON bool
	Env  procEnv
}

func harnessCheckAction(c *cli.Context) error {
	return runHarnessCheck(c.Context, newStreams(c), harnessCheckOptions{JSON: c.Bool("json"), Env: newProcEnv()})
}

func runHarnessCheck(ctx context.Context, ios *iostreams, opts harnessCheckOptions) error {
	var out report.Harnesses
	for _, st := range versionCache(opts.Env).Check(ctx, opts.Env.Environ) {
		hs := toreport.HarnessStatus(st)
		if st.Installed {
			p, note := discover.ForVersion(st.Harness, st.Version)
			hs.Profile, hs.ProfileNote = p.Name, note
		}
		out.Harnesses = append(out.Harnesses, hs)
	}
	if opts.JSON {
		return writeJSON(ios.Out, out)
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HARNESS\tINSTALLED\tVERSION\tPROFILE\tPATH")
	for _, s := range out.Harnesses {
		if s.Installed {
			fmt.Fprintf(tw, "%s\tyes\t%s\t%s\t%s\n", s.Harness, s.Version, s.Profile, s.Path)
		} else {
			fmt.Fprintf(tw, "%s\tno\t\t\tnpm install -g %s\n", s.Harness, s.Package)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range out.Harnesses {
		if s.ProfileNote != "" {
			warnf(ios.Err, "%s", s.ProfileNote)
		}
	}
	return nil
}
