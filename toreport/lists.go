package toreport

// The conversions of the lists some commands print: the layers of sources
// list, the files of an export, the agents of an import.

import (
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
)

// Sources are the layers of a catalog, highest first, with the number of
// persona files each holds (persona.FindFiles of its directory, a
// relative one under wd; the built-in layer holds builtin) and whether its
// directory exists.
func Sources(layers []persona.Layer, wd string, builtin int) report.Sources {
	out := report.Sources{Sources: []report.Source{}}
	for _, l := range layers {
		r := report.Source{Name: l.Name, Dir: l.Dir, Personas: builtin, Exists: true}
		if l.Dir != "" {
			files, err := persona.FindFiles(wd, l.Dir)
			r.Exists, r.Personas = err == nil, len(files)
		}
		out.Sources = append(out.Sources, r)
	}
	return out
}

// Exported are the agent files of an export (files), in report's terms:
// nil for none, each with its dropped fields (an empty list for none)
// and its content.
func Exported(files []native.ExportFile) []report.Exported {
	if len(files) == 0 {
		return nil
	}
	out := make([]report.Exported, len(files))
	for i, f := range files {
		out[i] = report.Exported{Persona: f.Persona, Tier: f.Tier, Harness: f.Harness, Agent: f.Agent, File: f.Path,
			Dropped: Each(f.Dropped, Dropped), Content: string(f.Data)}
		if out[i].Dropped == nil {
			out[i].Dropped = []report.Dropped{}
		}
	}
	return out
}

// Imports are the agents an import made personas of (found), in
// report's terms: nil for none; with the install's result res (nil for a
// dry run), each with the file it landed in and the persona of its id it
// is laid over or hides.
func Imports(found []native.Imported, res *install.Result) []report.Imported {
	if len(found) == 0 {
		return nil
	}
	out := make([]report.Imported, len(found))
	for i, in := range found {
		out[i] = report.Imported{ID: in.Spec.ID, Harness: in.Spec.Harness, Source: in.Source}
		if res == nil {
			continue
		}
		out[i].File = filepath.Join(res.Target, out[i].ID+".json")
		for _, inst := range res.Installed {
			if inst.ID == out[i].ID {
				out[i].Overrides, out[i].Inherits, out[i].Shadows = Ptr(inst.Overrides, Origin), inst.Inherits, Ptr(inst.Shadows, Origin)
			}
		}
	}
	return out
}
