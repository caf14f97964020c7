package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
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
	})
}

func packAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("pack takes one directory")
	}
	p, err := pack.CollectWith(c.Args().First(), pack.Options{Include: c.StringSlice("include"), Exclude: c.StringSlice("exclude")})
	if err != nil {
		return err
	}
	if err := addPlugin(c, p); err != nil {
		return err
	}
	out := c.String("output")
	if out == "" {
		out = p.FileName()
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	f, err := renameio.NewPendingFile(out, renameio.WithPermissions(0o644), renameio.WithTempDir(filepath.Dir(out)))
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", out, err)
	}
	defer f.Cleanup()
	if err := p.Write(f); err != nil {
		return err
	}
	if err := f.CloseAtomicallyReplace(); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(c.App.Writer, "%s\t%d personas\t%d files\n", abs, len(p.Personas), len(p.Files))
	fmt.Fprintf(c.App.Writer, "plugin %s\t%d files\n", p.Plugin, len(p.Generated))
	return nil
}

// addPlugin adds the pack's plugin layout (native.PluginFiles) to p.
func addPlugin(c *cli.Context, p *pack.Pack) error {
	paths := make([]string, len(p.Personas))
	for i, ps := range p.Personas {
		paths[i] = filepath.Join(p.Dir, filepath.FromSlash(ps.File))
	}
	cat := persona.LoadLayers([]persona.Layer{persona.FilesLayer("pack", paths), persona.BuiltinLayer(personas.Files)})
	var list []*persona.Persona
	for _, ps := range p.Personas {
		pp, ok := cat.Get(ps.ID)
		if !ok {
			if len(cat.Errors) > 0 {
				return cat.Errors[0]
			}
			return fmt.Errorf("%s: persona %s does not load", ps.File, ps.ID)
		}
		list = append(list, pp)
	}
	name := native.PluginName(p.Name)
	if name == "" {
		name = filepath.Base(p.Dir)
	}
	files, notes, err := native.PluginFiles(native.Plugin{Name: name, Version: p.Version, Description: p.Description}, list)
	if err != nil {
		return fmt.Errorf("the pack's plugin: %w", err)
	}
	for _, n := range notes {
		warnf(c.App.ErrWriter, "plugin: %s", n)
	}
	p.Generated, p.Plugin = map[string]pack.Content{}, name
	for n, f := range files {
		p.Generated[n] = pack.Content{Data: f.Data, Exec: f.Exec}
	}
	return nil
}
