package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/discover"
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
			Description: `Looks for claude, opencode and codex on PATH and asks each for its version,
and names the instruction discovery profile that version maps to (context
and run use it; a warning says when the version was not measured). It is a report: the exit status is 0 even when some are missing; the npm
package that provides each missing one is named.

Example:

   workforce harness check
   workforce harness check --json`,
			Flags:  []cli.Flag{jsonFlag},
			Action: harnessCheckAction,
		}},
	})
}

// harnessStatus is one harness in `harness check --json`.
type harnessStatus struct {
	harness.Status
	// Profile is the discovery profile of the installed version;
	// ProfileNote says when that version was not measured.
	Profile     string `json:"profile,omitempty"`
	ProfileNote string `json:"profileNote,omitempty"`
}

func harnessCheckAction(c *cli.Context) error {
	var statuses []harnessStatus
	for _, st := range versionCache().Check(c.Context, os.Environ()) {
		hs := harnessStatus{Status: st}
		if st.Installed {
			p, note := discover.ForVersion(st.Harness, st.Version)
			hs.Profile, hs.ProfileNote = p.Name, note
		}
		statuses = append(statuses, hs)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"harnesses": statuses})
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HARNESS\tINSTALLED\tVERSION\tPROFILE\tPATH")
	for _, s := range statuses {
		if s.Installed {
			fmt.Fprintf(tw, "%s\tyes\t%s\t%s\t%s\n", s.Harness, s.Version, s.Profile, s.Path)
		} else {
			fmt.Fprintf(tw, "%s\tno\t\t\tnpm install -g %s\n", s.Harness, s.Package)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range statuses {
		if s.ProfileNote != "" {
			warnf(c.App.ErrWriter, "%s", s.ProfileNote)
		}
	}
	return nil
}
