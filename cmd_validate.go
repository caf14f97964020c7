package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
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
	})
}

func validateAction(c *cli.Context) error {
	var files []string
	for _, arg := range c.Args().Slice() {
		found, err := personaFiles(arg)
		if err != nil {
			return err
		}
		files = append(files, found...)
	}
	if c.NArg() > 0 && len(files) == 0 {
		return fmt.Errorf("no *.json persona files in %s", strings.Join(c.Args().Slice(), ", "))
	}
	layers, err := persona.Layers(loadOptions())
	if err != nil {
		return err
	}
	checked := map[string]bool{}
	if c.NArg() > 0 {
		layers = append([]persona.Layer{persona.FilesLayer("validate", files)}, layers...)
		for _, f := range files {
			checked[f] = true
		}
	}
	cat := persona.LoadLayers(layers)
	if c.NArg() == 0 {
		// Every file of every layer.
		files = cat.Files()
		for _, f := range files {
			checked[f] = true
		}
		for _, ds := range [][]*persona.Diagnostic{cat.Errors, cat.Warnings} {
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
			errorf(c.App.ErrWriter, "%s", d)
			bad[d.File] = true
		}
	}
	for _, d := range cat.Warnings {
		if checked[d.File] {
			warnf(c.App.ErrWriter, "%s", d)
		}
	}
	for _, f := range files {
		if !bad[f] {
			fmt.Fprintf(c.App.Writer, "ok %s\n", f)
		}
	}
	if len(bad) > 0 {
		errorf(c.App.ErrWriter, "%d of %d files have errors", len(bad), len(files))
		return silentExit(exitFailure)
	}
	return nil
}

// personaFiles returns arg as an absolute path when it is a file, or the
// *.json files directly in it, sorted, when it is a directory.
func personaFiles(arg string) ([]string, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) && persona.IsPattern(arg) {
		if err := persona.CheckPattern(filepath.ToSlash(abs)); err != nil {
			return nil, usageError(err)
		}
		matches, err := doublestar.FilepathGlob(abs, doublestar.WithFilesOnly())
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("pattern %q matches no file", arg)
		}
		sort.Strings(matches)
		return matches, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file or directory", arg)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{abs}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, filepath.Join(abs, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}
