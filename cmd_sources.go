package main

import (
	"context"
	"fmt"
	"os"

	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/personas"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func sourcesCommand() *cli.Command {
	return &cli.Command{
		Name:  "sources",
		Usage: "list, add or remove persona directories",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list the layers personas are read from, highest first",
				Description: `Lists the layers in cascade order: the project layer (when one is found from
the working directory), the personaDirs of <home>/config.json, the built-in
catalog, with the number of personas each holds.

Example:

   workforce sources list --json`,
				Flags:  []cli.Flag{jsonFlag()},
				Action: sourcesListAction,
			},
			{
				Name:      "add",
				Usage:     "add a persona directory to config.json",
				ArgsUsage: "DIR",
				Description: `Adds DIR to personaDirs in <home>/config.json, after the others, or before
them with --first. The default user directory stays listed.

Example:

   workforce sources add ~/team-personas --first`,
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "first", Usage: "put the directory before the others (it wins over them)"},
				},
				Action: sourcesEditAction(runSourcesAdd),
			},
			{
				Name:      "remove",
				Usage:     "remove a persona directory from config.json",
				ArgsUsage: "DIR",
				Description: `Removes DIR from personaDirs in <home>/config.json. The directory itself is
left alone.

Example:

   workforce sources remove ~/team-personas`,
				Action: sourcesEditAction(runSourcesRemove),
			},
		},
	}
}

// sourcesListOptions are the process `workforce sources list` lists the
// layers of.
type sourcesListOptions struct {
	JSON bool
	Env  procEnv
}

func sourcesListAction(c *cli.Context) error {
	return runSourcesList(c.Context, newStreams(c), sourcesListOptions{JSON: c.Bool("json"), Env: newProcEnv()})
}

func runSourcesList(_ context.Context, ios *iostreams, opts sourcesListOptions) error {
	cat, err := loadCatalog(opts.Env)
	if err != nil {
		return err
	}
	out := toreport.Sources(cat.Layers, opts.Env.Dir, len(personas.Files))
	if opts.JSON {
		return writeJSON(ios.Out, out)
	}
	return out.WriteText(ios.Out)
}

// sourcesEditOptions are the persona directory `workforce sources add`
// and `remove` add or remove: Dir, as given, of the workforce home's
// config.json; First puts it before the others.
type sourcesEditOptions struct {
	Dir   string
	First bool
	Env   procEnv
}

func sourcesEditAction(run func(context.Context, *iostreams, sourcesEditOptions) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.NArg() != 1 {
			return usagef("%s takes one directory", c.Command.Name)
		}
		return run(c.Context, newStreams(c), sourcesEditOptions{Dir: c.Args().First(), First: c.Bool("first"), Env: newProcEnv()})
	}
}

// sourcesEdit applies edit to the config of the workforce home with the
// directory of opts, absolute unless it starts with ~ (homedir.EditDirs),
// and writes it back when edit changed it.
func sourcesEdit(opts sourcesEditOptions, edit func(cfg *homedir.Config, home, dir string) (bool, error)) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	return homedir.EditDirs(home, opts.Dir, opts.Env.dir, func(cfg *homedir.Config, dir string) (bool, error) { return edit(cfg, home, dir) })
}

func runSourcesAdd(_ context.Context, ios *iostreams, opts sourcesEditOptions) error {
	return sourcesEdit(opts, func(cfg *homedir.Config, home, dir string) (bool, error) {
		if !cfg.AddDir(home, dir, opts.First) {
			warnf(ios.Err, "%s is already a persona directory", dir)
			return false, nil
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			warnf(ios.Err, "%s does not exist yet; it is read once it does", dir)
		}
		return true, nil
	})
}

func runSourcesRemove(_ context.Context, _ *iostreams, opts sourcesEditOptions) error {
	return sourcesEdit(opts, func(cfg *homedir.Config, home, dir string) (bool, error) {
		if !cfg.RemoveDir(home, dir) {
			return false, fmt.Errorf("%s is not a persona directory; `workforce sources list` shows them", dir)
		}
		return true, nil
	})
}
