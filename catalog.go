package main

import (
	"io"

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
