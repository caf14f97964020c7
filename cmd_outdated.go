package main

import (
	"context"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func outdatedCommand() *cli.Command {
	return &cli.Command{
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
			jsonFlag(),
		},
		Action: outdatedAction,
	}
}

// outdatedOptions are the layer `workforce outdated` checks: Dir, User or
// the project's (layerTarget).
type outdatedOptions struct {
	Dir  string
	User bool
	JSON bool
	Env  procEnv
}

func outdatedAction(c *cli.Context) error {
	if c.NArg() != 0 {
		return usagef("outdated takes no arguments")
	}
	if err := checkFlags(c, flagRule{flag: "user", conflicts: []string{"dir"}, err: "--user and --dir conflict"}); err != nil {
		return err
	}
	opts := outdatedOptions{Dir: c.String("dir"), User: c.Bool("user"), JSON: c.Bool("json"), Env: newProcEnv()}
	return runOutdated(c.Context, newStreams(c), opts)
}

func runOutdated(ctx context.Context, ios *iostreams, opts outdatedOptions) error {
	target, err := layerTarget(opts.Env, opts.Dir, opts.User)
	if err != nil {
		return err
	}
	st, err := install.Outdated(ctx, target, install.OpenOptions{ReadPlugin: native.ReadPlugin})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(ios.Out, toreport.Each(st, toreport.Outdated))
	}
	report.OutdatedSources(toreport.Each(st, toreport.Outdated)).WriteText(ios.Out)
	return nil
}
