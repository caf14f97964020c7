package main

// This file is what the commands that read persona layers share: the
// load options, and the layer an install, an import or outdated works on.

import (
	"errors"
	"fmt"
	"io"

	"github.com/seed-3bc194a6/workforce/install"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/run"
)

// loadOptions are the persona load options of a command: its working
// directory, the workforce home and the built-in catalog.
func loadOptions(env procEnv) (persona.Options, error) {
	return run.LoadOptions(runEnv(env))
}

// loadCatalog loads every layer without printing anything; the caller
// reports the catalog's diagnostics.
func loadCatalog(env procEnv) (*persona.Catalog, error) {
	o, err := loadOptions(env)
	if err != nil {
		return nil, err
	}
	return persona.Load(o)
}

// layerTarget returns the layer directory an install, an import or
// outdated works on: dir when given, the user layer with user, else the
// project layer, found from the working directory or, when there is none
// yet, where it goes (persona.ProjectTarget).
func layerTarget(env procEnv, dir string, user bool) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if user {
		home, err := env.home()
		if err != nil {
			return "", err
		}
		return homedir.UserDir(home), nil
	}
	o, err := loadOptions(env)
	if err != nil {
		return "", err
	}
	return persona.ProjectTarget(o)
}

// installLayers is the cascade an install or an import into target is
// read in, for the notes of what each persona overrides: the layers, with
// the project layer target becomes when it is the project's (neither dir
// nor user) and the project has none yet; nil when they cannot be read
// (the notes they give are then left out).
func installLayers(env procEnv, target, dir string, user bool) []persona.Layer {
	o, err := loadOptions(env)
	if err != nil {
		return nil
	}
	layers, err := persona.Layers(o)
	if err != nil {
		return nil
	}
	if dir == "" && !user {
		return persona.WithProjectLayer(layers, target)
	}
	return layers
}

// outsideNote says when an install or an import landed in a directory
// that is not a layer of the cascade: workforce does not read it, and
// what its personas would override depends on where it is added.
func outsideNote(w io.Writer, res *install.Result) {
	if res.Layer == "" && len(res.Installed) > 0 {
		notef(w, "%s is not a persona layer, so workforce does not read the personas there; `workforce sources add %s` makes it one", res.Target, res.Target)
	}
}

// validatePersonas checks the persona files paths name (files,
// directories, patterns), or without any every file of every layer, as
// workforce validate does (and create, the persona its agent wrote): each
// error and warning on ios.Err at file:line:column, "ok FILE" on ios.Out
// for each file without errors, and an *exitError when some have errors.
func validatePersonas(ios *iostreams, env procEnv, paths []string) error {
	files, err := persona.FindAllFiles(env.Dir, paths)
	if errors.As(err, new(*persona.PatternError)) {
		return usageError(err)
	}
	if err != nil {
		return err
	}
	lo, err := loadOptions(env)
	if err != nil {
		return err
	}
	layers, err := persona.Layers(lo)
	if err != nil {
		return err
	}
	v := persona.Validate(layers, files)
	v.Errors = append(v.Errors, run.ModelProblems(v, env.Environ)...)
	bad := map[string]bool{}
	for _, d := range v.Errors {
		errorf(ios.Err, "%s", d)
		bad[d.File] = true
	}
	for _, d := range v.Warnings {
		warnf(ios.Err, "%s", d)
	}
	for _, f := range v.Files {
		if !bad[f] {
			fmt.Fprintf(ios.Out, "ok %s\n", f)
		}
	}
	if len(bad) > 0 {
		errorf(ios.Err, "%d of %d files have errors", len(bad), len(v.Files))
		return silentExit(exitFailure)
	}
	return nil
}
