package native

// This file is where native meets pack: an imported agent as a pack
// persona, a Claude Code plugin read as a pack (the reader install is
// given in install.OpenOptions, so that install knows no harness), and
// the plugin layout added to a pack (workforce pack). native imports pack
// for it; pack knows nothing of native.

import (
	"fmt"
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
)

// PackPersona is the pack persona an imported agent makes, checked as the
// loader checks a standalone persona file (its local skills are read when
// it is installed). workforce import and the install of a plugin share it.
func PackPersona(in Imported) (pack.Persona, error) {
	data, err := MarshalPersona(in.Spec)
	if err != nil {
		return pack.Persona{}, err
	}
	s := *in.Spec
	s.Skills = nil
	check, err := MarshalPersona(&s)
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

// ReadPlugin reads a Claude Code plugin directory as a pack: each of its
// agents a persona (Import, PackPersona), with the plugin's skills and
// MCP servers. It is the plugin reader install is given.
func ReadPlugin(dir string) (*pack.Pack, error) {
	found, err := Import(dir, persona.HarnessClaude)
	if err != nil {
		return nil, err
	}
	p := &pack.Pack{Dir: dir, Files: map[string]string{}}
	for _, in := range found {
		ps, err := PackPersona(in)
		if err != nil {
			return nil, err
		}
		p.Personas = append(p.Personas, ps)
	}
	return p, nil
}

// AddPlugin adds to the pack p its plugin layout (PluginFiles), made from
// its personas as they load over builtin, the built-in catalog; it
// returns the notes on what the plugin leaves out.
func AddPlugin(p *pack.Pack, builtin []persona.File) ([]string, error) {
	paths := make([]string, len(p.Personas))
	for i, ps := range p.Personas {
		paths[i] = filepath.Join(p.Dir, filepath.FromSlash(ps.File))
	}
	cat := persona.LoadLayers([]persona.Layer{persona.FilesLayer("pack", paths), persona.BuiltinLayer(builtin)})
	var list []*persona.Persona
	for _, ps := range p.Personas {
		pp, ok := cat.Get(ps.ID)
		if !ok {
			if len(cat.Errors) > 0 {
				return nil, cat.Errors[0]
			}
			return nil, fmt.Errorf("%s: persona %s does not load", ps.File, ps.ID)
		}
		list = append(list, pp)
	}
	name := PluginName(p.Name)
	if name == "" {
		name = filepath.Base(p.Dir)
	}
	files, notes, err := PluginFiles(Plugin{Name: name, Version: p.Version, Description: p.Description}, list)
	if err != nil {
		return nil, fmt.Errorf("the pack's plugin: %w", err)
	}
	p.Generated, p.Plugin = map[string]pack.Content{}, name
	for n, f := range files {
		p.Generated[n] = pack.Content{Data: f.Data, Exec: f.Exec}
	}
	return notes, nil
}

// ImportPack is one pack of the personas the agent files paths name make
// (Import, of harness when set), in the order found: found[i] is the
// agent p.Personas[i] comes from. Two files that define one agent are an
// error naming both. With inherit, each persona is laid over a lower
// persona of its id instead of shadowing it (its "inherit": false left
// out).
func ImportPack(paths []string, harness string, inherit bool) (p *pack.Pack, found []Imported, err error) {
	p = &pack.Pack{Files: map[string]string{}}
	from := map[string]string{}
	for _, path := range paths {
		agents, err := Import(path, harness)
		if err != nil {
			return nil, nil, err
		}
		for _, in := range agents {
			id := in.Spec.ID
			if other, dup := from[id]; dup {
				return nil, nil, fmt.Errorf("%s and %s both define agent %s", other, in.Source, id)
			}
			from[id] = in.Source
			if inherit {
				in.Spec.Inherit = nil
			}
			ps, err := PackPersona(in)
			if err != nil {
				return nil, nil, err
			}
			found = append(found, in)
			p.Personas = append(p.Personas, ps)
		}
	}
	return p, found, nil
}
