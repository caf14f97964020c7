package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:      "validate",
		Usage:     "check persona files and list every problem",
		ArgsUsage: "[PATH...]",
		Description: `Checks persona files: JSON syntax, the schema, sidecar paths and the files
they name, and the persona each file makes once laid over your layers (an
override must find its base; extends must not form a cycle). A directory
stands for the *.json files directly in it; a PATH may be a doublestar glob
(personas/**/*.json), and one that matches no file is an error. Without a
PATH, every file of every layer is checked (project, configured
directories, built-in). Every error is listed with file:line:column where it
applies; warnings (missing sidecars, ignored cloud fields) too; the exit
status is 1 when there is any error.

Example:

   workforce validate
   workforce validate .agentworkforce/workforce/personas
   workforce validate reviewer.json 'packs/**/*.json'`,
		Action: validateAction,
	}
}

// validateOptions are what `workforce validate` checks: the persona files
// Paths name (files, directories, patterns), or without any every file of
// every layer.
type validateOptions struct {
	Paths []string
	Env   procEnv
}

func validateAction(c *cli.Context) error {
	return runValidate(c.Context, newStreams(c), validateOptions{Paths: c.Args().Slice(), Env: newProcEnv()})
}

func runValidate(_ context.Context, ios *iostreams, opts validateOptions) error {
	var files []string
	for _, arg := range opts.Paths {
		found, err := personaFiles(opts.Env.Dir, arg)
		if err != nil {
			return err
		}
		files = append(files, found...)
	}
	if len(opts.Paths) > 0 && len(files) == 0 {
		return fmt.Errorf("no *.json persona files in %s", strings.Join(opts.Paths, ", "))
	}
	lo, err := loadOptions(opts.Env)
	if err != nil {
		return err
	}
	layers, err := persona.Layers(lo)
	if err != nil {
		return err
	}
	checked := map[string]bool{}
	if len(opts.Paths) > 0 {
		layers = append([]persona.Layer{persona.FilesLayer("validate", files)}, layers...)
		for _, f := range files {
			checked[f] = true
		}
	}
	cat := persona.LoadLayers(layers)
	if len(opts.Paths) == 0 {
		// Every file of every layer.
		files = cat.Files()
		for _, f := range files {
			checked[f] = true
		}
		for _, ds := range [][]*diag.Diagnostic{cat.Errors, cat.Warnings} {
			for _, d := range ds {
				if !checked[d.File] {
					checked[d.File] = true
					files = append(files, d.File)
				}
			}
		}
		sort.Strings(files)
	}
	bad := map[string]bool{}
	for _, d := range cat.Errors {
		if checked[d.File] {
			errorf(ios.Err, "%s", d)
			bad[d.File] = true
		}
	}
	for _, d := range cat.Warnings {
		if checked[d.File] {
			warnf(ios.Err, "%s", d)
		}
	}
	for _, f := range files {
		if !bad[f] {
			fmt.Fprintf(ios.Out, "ok %s\n", f)
		}
	}
	if len(bad) > 0 {
		errorf(ios.Err, "%d of %d files have errors", len(bad), len(files))
		return silentExit(exitFailure)
	}
	return nil
}
