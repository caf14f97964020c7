package main

import (
	"errors"
	"fmt"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:  "outdated",
		Usage: "list the installed packs whose source moved",
		Description: `Reads the layer's workforce.lock (the project layer, --user or --dir,
as install chooses) and compares each source with what it is now: a git
ref's commit (git ls-remote), an npm spec's version (npm pack), a directory's
or tarball's files. Prints "SOURCE<TAB>LOCKED<TAB>CURRENT<TAB>WHY" for each
that moved, nothing when none did; --json lists every source. The exit
status is 0 either way.

Example:

   workforce outdated
   workforce install git+https://github.com/acme/personas.git#main`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "user", Usage: "the user layer, <home>/personas"},
			&cli.StringFlag{Name: "dir", Usage: "the layer in this directory"},
			jsonFlag,
		},
		Action: outdatedAction,
	})
}

func outdatedAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("outdated takes no arguments")
	}
	if c.Bool("user") && c.String("dir") != "" {
		return usageError(errors.New("--user and --dir conflict"))
	}
	target, err := installTarget(c)
	if err != nil {
		return err
	}
	st, err := install.Outdated(c.Context, target)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, st)
	}
	for _, s := range st {
		if s.Outdated {
			fmt.Fprintf(c.App.Writer, "%s\t%s\t%s\t%s\n", s.Source, dash(s.Locked), dash(s.Current), s.Why)
		}
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
