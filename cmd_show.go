package main

import (
	"context"
	"fmt"

	"github.com/seed-3bc194a6/workforce/harness"
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
		return out.WriteText(ios.Out)
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
		if err := out.WriteText(ios.Out); err != nil {
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
