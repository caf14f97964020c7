package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "install a persona pack into the project or user layer",
		ArgsUsage: "SOURCE",
		Description: `SOURCE is a pack directory, a .tgz made by workforce pack or npm pack, or an
npm spec (fetched with npm pack --ignore-scripts); or a Claude Code plugin,
a directory or a .tgz without a package.json, whose agents are imported as
personas (workforce import) with the plugin's skills and MCP servers. Each persona lands as
<target>/<id>.json with its sidecars in <target>/<id>__assets/ and its local
skills in <target>/<id>__assets/skills/<name>/. The target is
the project layer (.agentworkforce/workforce/personas at the nearest
directory with .git, or the working directory), --user for the user layer,
or --dir. An existing persona is a conflict (exit 3) unless --overwrite.
A persona lands as an override: where a lower layer (the user layer, the
built-in catalog) has a persona of the same id, the installed one inherits
what it does not set, unless its file says "inherit": false (the agents of
a plugin do); a note names that persona and the fields inherited from it,
and --json carries them (overrides, inherits, shadows).
The install lands whole or not at all. --persona takes ids or doublestar
patterns of ids; an unknown id or a pattern matching no persona fails before
anything is written.

SOURCE may also be a git repository: git+URL[#REF] (any URL git clones,
file:// included) or github:OWNER/REPO[@REF], REF a branch, tag or commit.
Each install records in the layer's workforce.lock the source, what it
resolved to (the commit, the npm name@version) and a hash of every file it
wrote; --frozen installs only when the source still matches that record
(and replaces the personas it holds), and workforce outdated lists the
sources that moved.

Example:

   workforce install ./team-personas --user
   workforce install git+https://github.com/acme/personas.git#v2
   workforce install github:acme/personas@main --frozen
   workforce install @acme/review-personas --persona reviewer --overwrite
   workforce install ./team-personas --persona 'review-*'`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "persona", Usage: "install only this persona id, or the ids a doublestar pattern such as 'review-*' matches (repeatable)"},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace personas already installed"},
			&cli.BoolFlag{Name: "user", Usage: "install into the user layer, <home>/personas"},
			&cli.StringFlag{Name: "dir", Usage: "install into this directory"},
			&cli.BoolFlag{Name: "frozen", Usage: "install only what the layer's lock file records for SOURCE: the same commit or version and the same files"},
			jsonFlag(),
		},
		Action: installAction,
	}
}

// installOptions are what `workforce install` installs: the pack at
// Source (its Personas only, when set), into the layer Dir, User or the
// project's (layerTarget).
type installOptions struct {
	Source                  string
	Personas                []string
	Dir                     string
	User, Overwrite, Frozen bool
	JSON                    bool
	Env                     procEnv
}

func installAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("install takes one source: a directory, a .tgz or an npm spec")
	}
	if err := checkFlags(c, userDirRule); err != nil {
		return err
	}
	opts := installOptions{
		Source: c.Args().First(), Personas: c.StringSlice("persona"), Dir: c.String("dir"), User: c.Bool("user"),
		Overwrite: c.Bool("overwrite"), Frozen: c.Bool("frozen"), JSON: c.Bool("json"), Env: newProcEnv(),
	}
	return runInstall(c.Context, newStreams(c), opts)
}

func runInstall(ctx context.Context, ios *iostreams, opts installOptions) error {
	target, err := layerTarget(opts.Env, opts.Dir, opts.User)
	if err != nil {
		return err
	}
	source := opts.Source
	if _, err := os.Stat(source); err != nil && ios.ErrTTY {
		// Progress, on terminals only: npm may take a while.
		fmt.Fprintf(ios.Err, "workforce: fetching %s with npm pack\n", source)
	}
	p, cleanup, err := install.Open(ctx, source, install.OpenOptions{ReadPlugin: native.ReadPlugin})
	defer cleanup()
	if err != nil {
		return err
	}
	res, err := install.Pack(p, install.Options{
		Target: target, Personas: opts.Personas, Overwrite: opts.Overwrite,
		Source: install.LockSource(opts.Env.Dir, source), Resolved: p.Resolved, Frozen: opts.Frozen,
		Layers: installLayers(opts.Env, target, opts.Dir, opts.User),
	})
	var fe *install.FrozenError
	if errors.As(err, &fe) {
		return withCode(exitFailure, fmt.Errorf("nothing installed: %w", err), "install without --frozen to take the source as it is now and update the lock file")
	}
	if err != nil {
		return installConflict(ios.Err, err, "installed")
	}
	if opts.JSON {
		return writeJSON(ios.Out, toreport.Install(*res))
	}
	outsideNote(ios.Err, res)
	overrideNotes(ios.Err, res.Installed)
	toreport.Install(*res).WriteText(ios.Out)
	return nil
}
