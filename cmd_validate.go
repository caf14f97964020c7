package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "validate",
		Usage:     "check persona files and list every problem",
		ArgsUsage: "PATH...",
		Description: `Checks persona files: JSON syntax, the schema, sidecar paths and the files
they name, and the persona each file makes once laid over your layers (an
override must find its base; extends must not form a cycle). A directory
stands for the *.json files directly in it. Every error is listed with
file:line:column where it applies; the exit status is 1 when there is any.

Example:

   workforce validate .agentworkforce/workforce/personas
   workforce validate reviewer.json docs-bot.json`,
		Action: validateAction,
	})
}

func validateAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("validate needs at least one file or directory")
	}
	var files []string
	for _, arg := range c.Args().Slice() {
		found, err := personaFiles(arg)
		if err != nil {
			return err
		}
		files = append(files, found...)
	}
	if len(files) == 0 {
		return fmt.Errorf("no *.json persona files in %s", strings.Join(c.Args().Slice(), ", "))
	}
	layers, err := persona.Layers(loadOptions())
	if err != nil {
		return err
	}
	cat := persona.LoadLayers(append([]persona.Layer{persona.FilesLayer("validate", files)}, layers...))
	checked := map[string]bool{}
	for _, f := range files {
		checked[f] = true
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
