package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "show",
		Usage:     "show a persona as the cascade resolved it, with where each field came from",
		ArgsUsage: "ID[@TIER]",
		Description: `Shows the merged persona, the files it was merged from (base first), and for
every field the layer and the file that set it. Sidecar paths are absolute,
anchored to the file that declared them. The persona resolved for TIER (the
default tier when none is given) follows: harness, model and where each came
from (the tier, or the top level), and the effective CLAUDE.md / AGENTS.md
sidecars. A flat persona (no tiers: one runtime for every tier) says so.
A persona laid over a persona of the same id in a lower layer says which
(overrides:) and the fields it inherits from it; one that hides such a
persona and takes nothing from it ("inherit": false, or extends of another
id) says which (shadows:). --json has them as overrides, inherits and
shadows.

ID may be a doublestar glob (review-*): every persona it matches is shown,
and --json prints a JSON array of them; a pattern matching no persona is an
error.

With --harness H, what harness H gets from the persona resolved for the
tier follows, field by field (model, reasoning, permissions, MCP servers),
and what it refuses, which workforce run would refuse to start with.

Example:

   workforce show code-reviewer
   workforce show code-reviewer@best-value --json
   workforce show 'code-*@minimum'
   workforce show code-reviewer@best-value --harness codex`,
		Flags: []cli.Flag{jsonFlag,
			&cli.StringFlag{Name: "harness", Usage: "also show what this harness gets from the persona, field by field, and what it refuses: claude, opencode or codex"},
		},
		Action: showAction,
	})
}

// showOutput is what `workforce show --json` prints.
type showOutput struct {
	ID     string           `json:"id"`
	Source string           `json:"source"`
	Path   string           `json:"path"`
	Chain  []persona.Origin `json:"chain"`
	// Overrides is the persona of the same id in a lower layer this one
	// is laid over, Inherits the fields that come from below; Shadows
	// the one it hides, taking nothing from it.
	Overrides *persona.Origin `json:"overrides,omitempty"`
	Inherits  []string        `json:"inherits,omitempty"`
	Shadows   *persona.Origin `json:"shadows,omitempty"`
	// Form is "flat" (one runtime serves every tier) or "tiered".
	Form       string             `json:"form"`
	Spec       *persona.Spec      `json:"spec"`
	Provenance persona.Provenance `json:"provenance"`
	Resolved   *persona.Resolved  `json:"resolved"`
	Warnings   []string           `json:"warnings"`
	// Mapping is what the harness of --harness gets, field by field.
	Mapping *harness.Mapping `json:"mapping,omitempty"`
}

func showAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("show takes one persona, as ID or ID@TIER")
	}
	cat, err := loadCatalogQuiet()
	if err != nil {
		return err
	}
	ref := c.Args().First()
	id, tier := persona.SplitRef(ref)
	if !persona.IsPattern(id) {
		p, r, err := lookup(cat, ref)
		if err != nil {
			printDiagnostics(c.App.ErrWriter, cat)
			return err
		}
		out := newShowOutput(cat, p, r)
		if err := showMapping(c, &out); err != nil {
			return err
		}
		if c.Bool("json") {
			return writeJSON(c.App.Writer, out)
		}
		for _, w := range out.Warnings {
			warnf(c.App.ErrWriter, "%s", w)
		}
		return printShow(c, out)
	}
	if err := persona.CheckPattern(id); err != nil {
		return usageError(err)
	}
	ps, err := cat.Select(id)
	if err != nil {
		printDiagnostics(c.App.ErrWriter, cat)
		return err
	}
	outs := make([]showOutput, 0, len(ps))
	for _, p := range ps {
		r, err := p.Resolve(tier)
		if err != nil {
			return err
		}
		out := newShowOutput(cat, p, r)
		if err := showMapping(c, &out); err != nil {
			return err
		}
		outs = append(outs, out)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, outs)
	}
	for i, out := range outs {
		for _, w := range out.Warnings {
			warnf(c.App.ErrWriter, "%s", w)
		}
		if i > 0 {
			fmt.Fprintln(c.App.Writer)
		}
		if err := printShow(c, out); err != nil {
			return err
		}
	}
	return nil
}

// showMapping adds what the harness of --harness gets from the persona.
func showMapping(c *cli.Context, out *showOutput) error {
	h := c.String("harness")
	if h == "" {
		return nil
	}
	if !persona.IsHarness(h) {
		return usageError(fmt.Errorf("unknown harness %q", h), "--harness takes one of "+strings.Join(persona.Harnesses, ", "))
	}
	r := *out.Resolved
	r.Harness = h
	m, err := harness.Map(&r, harness.Options{})
	if err != nil {
		return fmt.Errorf("%s@%s on %s: %w", out.ID, r.Tier, h, err)
	}
	out.Mapping = m
	return nil
}

func newShowOutput(cat *persona.Catalog, p *persona.Persona, r *persona.Resolved) showOutput {
	out := showOutput{
		ID: p.ID, Source: p.Layer, Path: p.Path, Chain: p.Chain, Form: "tiered",
		Overrides: p.Overrides, Shadows: p.Shadows, Inherits: p.Inherited(),
		Spec: p.Spec, Provenance: p.Provenance(), Resolved: r,
		Warnings: personaDiagnostics(cat, p),
	}
	if p.Spec.Flat() {
		out.Form = "flat"
	}
	return out
}

// lookup finds the persona and tier named by ref ("id" or "id@tier"). An
// id pattern must match exactly one persona.
func lookup(cat *persona.Catalog, ref string) (*persona.Persona, *persona.Resolved, error) {
	id, tier := persona.SplitRef(ref)
	var p *persona.Persona
	if persona.IsPattern(id) {
		ps, err := cat.Select(id)
		if err != nil {
			return nil, nil, err
		}
		if len(ps) > 1 {
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID
			}
			return nil, nil, fmt.Errorf("pattern %q matches %d personas (%s); name one", id, len(ps), strings.Join(ids, ", "))
		}
		p = ps[0]
	} else {
		var ok bool
		if p, ok = cat.Get(id); !ok {
			return nil, nil, withCode(exitFailure, fmt.Errorf("unknown persona %q", id),
				"`workforce list` shows the personas of every layer")
		}
	}
	r, err := p.Resolve(tier)
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

// personaDiagnostics returns the catalog diagnostics about the files of p.
func personaDiagnostics(cat *persona.Catalog, p *persona.Persona) []string {
	files := map[string]bool{}
	for _, o := range p.Chain {
		files[o.File] = true
	}
	out := []string{}
	for _, ds := range [][]*persona.Diagnostic{cat.Errors, cat.Warnings} {
		for _, d := range ds {
			if files[d.File] {
				out = append(out, d.Error())
			}
		}
	}
	return out
}

func printShow(c *cli.Context, out showOutput) error {
	w := c.App.Writer
	fmt.Fprintf(w, "persona %s from %s (%s)\n", out.ID, out.Source, out.Path)
	var chain []string
	for _, o := range out.Chain {
		chain = append(chain, o.Layer+":"+o.File)
	}
	fmt.Fprintf(w, "merged from: %s\n", strings.Join(chain, " <- "))
	if o := out.Overrides; o != nil {
		inherits := "nothing"
		if len(out.Inherits) > 0 {
			inherits = strings.Join(out.Inherits, ", ")
		}
		fmt.Fprintf(w, "overrides: the %s %s (%s); inherits %s\n", o.Layer, out.ID, o.File, inherits)
	}
	if o := out.Shadows; o != nil {
		why := `"inherit": false`
		if out.Spec.Inherits() {
			why = "it extends another persona"
		}
		fmt.Fprintf(w, "shadows: the %s %s (%s); takes nothing from it: %s\n", o.Layer, out.ID, o.File, why)
	}
	fmt.Fprintln(w)

	values := flatten(out.Spec)
	fields := make([]string, 0, len(out.Provenance))
	for f := range out.Provenance {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELD\tVALUE\tLAYER\tFILE")
	for _, f := range fields {
		for i, o := range out.Provenance[f] {
			v := ""
			if i == 0 {
				v = oneLine(values[f], 48)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f, v, o.Layer, o.File)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r := out.Resolved
	form := ""
	if out.Form == "flat" {
		form = " (flat: one runtime serves every tier)"
	}
	fmt.Fprintf(w, "\ntier %s%s: harness %s, model %s\n", r.Tier, form, r.Harness, r.Model)
	for _, f := range []string{"harness", "model", "systemPrompt"} {
		if o, ok := r.Origins[f]; ok {
			fmt.Fprintf(w, "%s from %s %s\n", f, o.Layer, o.File)
		}
	}
	for _, sc := range []persona.Sidecar{r.Claude, r.Agents} {
		switch {
		case !sc.IsSet():
			fmt.Fprintf(w, "%s: none\n", sc.Channel)
		case sc.Path != "":
			fmt.Fprintf(w, "%s: %s (%s, from %s)\n", sc.Channel, sc.Path, sc.Mode, sc.Origin.Layer)
		default:
			fmt.Fprintf(w, "%s: inline, %d bytes (%s, from %s)\n", sc.Channel, len(sc.Content), sc.Mode, sc.Origin.Layer)
		}
	}
	if out.Mapping != nil {
		fmt.Fprintln(w)
		out.Mapping.WriteText(w)
	}
	return nil
}

// flatten maps the dotted field names of v's JSON form to compact JSON
// values; objects are walked into, arrays and scalars are leaves.
func flatten(v any) map[string]string {
	b, _ := json.Marshal(v)
	var doc any
	_ = json.Unmarshal(b, &doc)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, x := range m {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, x)
			}
			return
		}
		b, _ := json.Marshal(v)
		out[prefix] = string(b)
	}
	walk("", doc)
	return out
}
