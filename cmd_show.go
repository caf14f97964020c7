package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func showCommand() *cli.Command {
	return &cli.Command{
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
		Flags: []cli.Flag{jsonFlag(),
			&cli.StringFlag{Name: "harness", Usage: "also show what this harness gets from the persona, field by field, and what it refuses: claude, opencode, codex or gemini"},
		},
		Action: showAction,
	}
}

// showOptions are what `workforce show` shows: the persona (or personas,
// for a pattern) Ref names, as ID[@TIER], and with Harness what that
// harness gets from it.
type showOptions struct {
	Ref     string
	Harness string
	JSON    bool
	Env     procEnv
}

func showAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("show takes one persona, as ID or ID@TIER")
	}
	opts := showOptions{Ref: c.Args().First(), Harness: c.String("harness"), JSON: c.Bool("json"), Env: newProcEnv()}
	return runShow(c.Context, newStreams(c), opts)
}

func runShow(_ context.Context, ios *iostreams, opts showOptions) error {
	cat, err := loadCatalog(opts.Env)
	if err != nil {
		return err
	}
	id, tier := persona.SplitRef(opts.Ref)
	if !persona.IsPattern(id) {
		p, r, err := cat.Lookup(opts.Ref)
		if err != nil {
			printDiagnostics(ios.Err, cat)
			return lookupError(err)
		}
		out, err := showReport(cat, p, r, opts.Harness)
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(ios.Out, out)
		}
		for _, w := range out.Warnings {
			warnf(ios.Err, "%s", w)
		}
		return printShow(ios.Out, out)
	}
	if err := persona.CheckPattern(id); err != nil {
		return usageError(err)
	}
	ps, err := cat.Select(id)
	if err != nil {
		printDiagnostics(ios.Err, cat)
		return err
	}
	outs := make([]report.Show, 0, len(ps))
	for _, p := range ps {
		r, err := p.Resolve(tier)
		if err != nil {
			return err
		}
		out, err := showReport(cat, p, r, opts.Harness)
		if err != nil {
			return err
		}
		outs = append(outs, out)
	}
	if opts.JSON {
		return writeJSON(ios.Out, outs)
	}
	for i, out := range outs {
		for _, w := range out.Warnings {
			warnf(ios.Err, "%s", w)
		}
		if i > 0 {
			fmt.Fprintln(ios.Out)
		}
		if err := printShow(ios.Out, out); err != nil {
			return err
		}
	}
	return nil
}

// showReport is what show prints of persona p resolved as r, with what
// harness h gets from it when h is not empty.
func showReport(cat *persona.Catalog, p *persona.Persona, r *persona.Resolved, h string) (report.Show, error) {
	out := report.Show{
		ID: p.ID, Source: p.Layer, Path: p.Path, Chain: toreport.Each(p.Chain, toreport.Origin), Form: "tiered",
		Overrides: toreport.Ptr(p.Overrides, toreport.Origin), Shadows: toreport.Ptr(p.Shadows, toreport.Origin), Inherits: p.Inherited(),
		Spec: toreport.Ptr(p.Spec, toreport.Persona), Provenance: toreport.Provenance(p.Provenance()), Resolved: toreport.Ptr(r, toreport.Resolved),
		Warnings: cat.DiagnosticsOf(p),
	}
	if p.Spec.Flat() {
		out.Form = "flat"
	}
	if h == "" {
		return out, nil
	}
	if !persona.IsHarness(h) {
		return out, unknownHarness(h, persona.Harnesses)
	}
	rh := *r
	rh.Harness = h
	m, err := harness.Map(&rh, harness.Options{})
	if err != nil {
		return out, fmt.Errorf("%s@%s on %s: %w", p.ID, rh.Tier, h, err)
	}
	out.Mapping = toreport.Ptr(m, toreport.Mapping)
	return out, nil
}

func printShow(w io.Writer, out report.Show) error {
	fmt.Fprintf(w, "persona %s from %s (%s)\n", out.ID, out.Source, quote.Name(out.Path))
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
		if out.Spec.Inherit == nil || *out.Spec.Inherit {
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
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f, quote.Text(v), o.Layer, quote.Name(o.File))
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
			fmt.Fprintf(w, "%s from %s %s\n", f, o.Layer, quote.Name(o.File))
		}
	}
	for _, sc := range []report.Sidecar{r.Claude, r.Agents} {
		switch {
		case sc.Path == "" && sc.Content == "":
			fmt.Fprintf(w, "%s: none\n", sc.Channel)
		case sc.Path != "":
			fmt.Fprintf(w, "%s: %s (%s, from %s)\n", sc.Channel, quote.Name(sc.Path), sc.Mode, sc.Origin.Layer)
		default:
			fmt.Fprintf(w, "%s: inline, %d bytes (%s, from %s)\n", sc.Channel, len(sc.Content), sc.Mode, sc.Origin.Layer)
		}
	}
	if out.Mapping != nil {
		fmt.Fprintln(w)
		printMapping(w, out.Mapping)
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
