package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/personas"
)

// loadOptions are the persona load options of a command: the working
// directory, the workforce home and the built-in catalog.
func loadOptions() persona.Options {
	return persona.Options{Builtin: personas.Files}
}

// loadCatalogQuiet loads every layer without printing anything; the caller
// reports the catalog's diagnostics.
func loadCatalogQuiet() (*persona.Catalog, error) {
	return persona.Load(loadOptions())
}

func printDiagnostics(w io.Writer, cat *persona.Catalog) {
	for _, d := range cat.Errors {
		warnf(w, "%s", d)
	}
	for _, d := range cat.Warnings {
		warnf(w, "%s", d)
	}
}

// diagnosticStrings formats the errors and warnings of a catalog, errors
// first.
func diagnosticStrings(cat *persona.Catalog) []string {
	out := []string{}
	for _, d := range cat.Errors {
		out = append(out, d.Error())
	}
	for _, d := range cat.Warnings {
		out = append(out, d.Error())
	}
	return out
}

// overrideNotes prints a note for each persona an install or an import
// landed that lies over a persona of its id in a lower layer: the one it
// overrides and the fields it inherits from it, or the one it shadows,
// taking nothing from it.
func overrideNotes(w io.Writer, installed []install.Installed) {
	for _, in := range installed {
		switch {
		case in.Overrides != nil:
			inherits := "nothing from it"
			if len(in.Inherits) > 0 {
				inherits = strings.Join(in.Inherits, ", ")
			}
			notef(w, "%s overrides the %s %s (%s); it inherits %s", in.ID, in.Overrides.Layer, in.ID, in.Overrides.File, inherits)
		case in.Shadows != nil:
			notef(w, "%s shadows the %s %s (%s) and takes nothing from it", in.ID, in.Shadows.Layer, in.ID, in.Shadows.File)
		}
	}
}

// notef prints a note: something the user may not expect, not a problem.
func notef(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "workforce: note: "+format+"\n", args...)
}

// cascadeLayers returns the layers of the cascade, for install.Options;
// nil when they cannot be read (the notes they give are then left out).
func cascadeLayers() []persona.Layer {
	layers, err := persona.Layers(loadOptions())
	if err != nil {
		return nil
	}
	return layers
}

// importedPersona is the pack persona an imported agent makes, checked as
// the loader checks a standalone persona file (its local skills are read
// when it is installed). import and install (of a plugin) share it.
func importedPersona(in native.Imported) (pack.Persona, error) {
	data, err := native.MarshalPersona(in.Spec)
	if err != nil {
		return pack.Persona{}, err
	}
	s := *in.Spec
	s.Skills = nil
	check, err := native.MarshalPersona(&s)
	if err != nil {
		return pack.Persona{}, err
	}
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer([]persona.File{{Name: s.ID + ".json", Data: check}})})
	if len(cat.Errors) > 0 {
		d := *cat.Errors[0]
		d.File = s.ID + ".json"
		return pack.Persona{}, fmt.Errorf("%s: the persona it makes is not valid: %w", in.Source, &d)
	}
	return pack.Persona{ID: s.ID, File: in.Source, Spec: in.Spec, Data: data}, nil
}

// installConflict turns install's conflict into its report (a line per
// persona, exit 3); other errors pass through. verb says what did not
// happen: "installed", "imported".
func installConflict(w io.Writer, err error, verb string) error {
	var ce *install.ConflictError
	if !errors.As(err, &ce) {
		return err
	}
	for _, id := range ce.IDs {
		errorf(w, "conflict: %s/%s.json already exists", ce.Target, id)
	}
	return withCode(exitConflict, fmt.Errorf("nothing %s: %w", verb, err), "use --overwrite to replace them")
}
