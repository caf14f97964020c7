package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/personas"
	"github.com/urfave/cli/v2"
)

func packCommand() *cli.Command {
	return &cli.Command{
		Name:      "pack",
		Usage:     "write a persona pack as an npm-style tarball",
		ArgsUsage: "DIR",
		Description: `Collects every persona JSON below the pack's persona directory (package.json
agentworkforce.personas, default personas/), every sidecar each references
and the files of its local skills, validates them, and writes a reproducible
.tgz that npm publish accepts: the same input gives the same bytes. Missing
or unsafe sidecars and skills, and invalid SKILL.md files, are errors.

--include keeps only the persona files whose path relative to the persona
directory matches one of its doublestar patterns (review/*.json,
'**/lint-*'); --exclude then leaves out those matching one of its patterns.
Files left out are not read. A pattern matching no persona file is an error.

Example:

   workforce pack ./my-personas
   workforce pack ./my-personas -o dist/my-personas.tgz
   workforce pack ./my-personas --exclude 'drafts/**'`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "tarball to write (default: <name>-<version>.tgz in the working directory)"},
			&cli.StringSliceFlag{Name: "include", Usage: "pack only the persona files matching this doublestar pattern, relative to the persona directory (repeatable)"},
			&cli.StringSliceFlag{Name: "exclude", Usage: "leave out the persona files matching this doublestar pattern, relative to the persona directory (repeatable)"},
		},
		Action: packAction,
	}
}

// packOptions are what `workforce pack` packs: the pack directory Dir,
// its persona files that Include and Exclude select, into the tarball
// Output (<name>-<version>.tgz in the working directory when empty).
type packOptions struct {
	Dir, Output      string
	Include, Exclude []string
}

func packAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("pack takes one directory")
	}
	opts := packOptions{Dir: c.Args().First(), Output: c.String("output"), Include: c.StringSlice("include"), Exclude: c.StringSlice("exclude")}
	return runPack(c.Context, newStreams(c), opts)
}

func runPack(_ context.Context, ios *iostreams, opts packOptions) error {
	p, err := pack.CollectWith(opts.Dir, pack.Options{Include: opts.Include, Exclude: opts.Exclude})
	if err != nil {
		return err
	}
	notes, err := native.AddPlugin(p, personas.Files)
	if err != nil {
		return err
	}
	for _, n := range notes {
		warnf(ios.Err, "plugin: %s", n)
	}
	out := opts.Output
	if out == "" {
		out = p.FileName()
	}
	if err := p.WriteFile(out); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(ios.Out, "%s\t%d personas\t%d files\n", abs, len(p.Personas), len(p.Files))
	fmt.Fprintf(ios.Out, "plugin %s\t%d files\n", p.Plugin, len(p.Generated))
	return nil
}
