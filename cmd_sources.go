package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
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
				Flags:  []cli.Flag{jsonFlag},
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
				Action: sourcesAddAction,
			},
			{
				Name:      "remove",
				Usage:     "remove a persona directory from config.json",
				ArgsUsage: "DIR",
				Description: `Removes DIR from personaDirs in <home>/config.json. The directory itself is
left alone.

Example:

   workforce sources remove ~/team-personas`,
				Action: sourcesRemoveAction,
			},
		},
	})
}

// sourceRow is one layer of `workforce sources list`.
type sourceRow struct {
	Name     string `json:"name"`
	Dir      string `json:"dir,omitempty"`
	Exists   bool   `json:"exists"`
	Personas int    `json:"personas"`
}

func sourcesListAction(c *cli.Context) error {
	cat, err := loadCatalogQuiet()
	if err != nil {
		return err
	}
	rows := []sourceRow{}
	for _, l := range cat.Layers {
		r := sourceRow{Name: l.Name, Dir: l.Dir, Personas: len(personas.Files), Exists: true}
		if l.Dir != "" {
			files, err := personaFiles(l.Dir)
			r.Exists, r.Personas = err == nil, len(files)
		}
		rows = append(rows, r)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"sources": rows})
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tPERSONAS\tDIR")
	for _, r := range rows {
		dir := r.Dir
		if !r.Exists {
			dir += " (missing)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Name, r.Personas, dir)
	}
	return tw.Flush()
}

func sourcesEdit(c *cli.Context, edit func(cfg *persona.Config, home, dir string) (bool, error)) error {
	if c.NArg() != 1 {
		return usagef("%s takes one directory", c.Command.Name)
	}
	home, err := persona.Home()
	if err != nil {
		return err
	}
	cfg, err := persona.ReadConfig(home)
	if err != nil {
		return err
	}
	dir := c.Args().First()
	if dir != "~" && !strings.HasPrefix(dir, "~/") && !filepath.IsAbs(dir) {
		if dir, err = filepath.Abs(dir); err != nil {
			return err
		}
	}
	changed, err := edit(cfg, home, dir)
	if err != nil || !changed {
		return err
	}
	return persona.WriteConfig(home, cfg)
}

func sourcesAddAction(c *cli.Context) error {
	return sourcesEdit(c, func(cfg *persona.Config, home, dir string) (bool, error) {
		if !cfg.AddDir(home, dir, c.Bool("first")) {
			warnf(c.App.ErrWriter, "%s is already a persona directory", dir)
			return false, nil
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			warnf(c.App.ErrWriter, "%s does not exist yet; it is read once it does", dir)
		}
		return true, nil
	})
}

func sourcesRemoveAction(c *cli.Context) error {
	return sourcesEdit(c, func(cfg *persona.Config, home, dir string) (bool, error) {
		if !cfg.RemoveDir(home, dir) {
			return false, fmt.Errorf("%s is not a persona directory; `workforce sources list` shows them", dir)
		}
		return true, nil
	})
}
