package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func listCommand() *cli.Command {
	return &cli.Command{
		Name:      "list",
		Usage:     "list the personas of every layer",
		ArgsUsage: "[ID-PATTERN...]",
		Description: `Lists one row per persona visible through the layer cascade: its id, the
layer it comes from (project, user, dir:N or built-in), its tiers ("flat"
for a persona whose one runtime serves every tier), its default tier, the
harness of the default tier and its description. Problems with persona
files are printed as warnings; the other personas are still listed.

ID-PATTERN selects personas by id, with doublestar globs (review-*,
{debugger,test-*}); a pattern matching no persona is an error. --harness
keeps the personas with a tier that runs the harness; --tag those carrying
the tag (a glob too; a tag pattern no persona carries is an error). Each is
repeatable: a persona is listed when it matches any --harness and any
--tag given.

Example:

   workforce list
   workforce list --harness codex --tag review
   workforce list 'review-*' --json | jq -r '.personas[].id'`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "harness", Aliases: []string{"filter-harness"}, Usage: "only personas with a tier running this harness: " + strings.Join(persona.KnownHarnesses, ", ") + " (repeatable)"},
			&cli.StringSliceFlag{Name: "tag", Aliases: []string{"filter-tag"}, Usage: "only personas carrying this tag, a glob pattern (repeatable)"},
			jsonFlag(),
		},
		Action: listAction,
	}
}

// listOptions are what `workforce list` lists: the personas whose id
// matches one of Patterns (all without), with a tier running one of
// Harnesses (any without), carrying a tag that matches one of Tags (any
// without).
type listOptions struct {
	Patterns  []string
	Harnesses []string
	Tags      []string
	JSON      bool
	Env       procEnv
}

func listAction(c *cli.Context) error {
	opts := listOptions{Patterns: c.Args().Slice(), Harnesses: c.StringSlice("harness"), Tags: c.StringSlice("tag"), JSON: c.Bool("json")}
	for _, h := range opts.Harnesses {
		if !persona.IsKnownHarness(h) {
			return usageError(fmt.Errorf("--harness %q: unknown harness", h), "--harness takes one of "+strings.Join(persona.KnownHarnesses, ", "))
		}
	}
	for _, p := range append(slices.Clone(opts.Patterns), opts.Tags...) {
		if err := persona.CheckPattern(p); err != nil {
			return usageError(err)
		}
	}
	opts.Env = newProcEnv()
	return runList(c.Context, newStreams(c), opts)
}

func runList(_ context.Context, ios *iostreams, opts listOptions) error {
	cat, err := loadCatalog(opts.Env)
	if err != nil {
		return err
	}
	out, err := toreport.List(cat, opts.Patterns, opts.Harnesses, opts.Tags)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(ios.Out, out)
	}
	for _, w := range out.Warnings {
		warnf(ios.Err, "%s", w)
	}
	tw := tabwriter.NewWriter(ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSOURCE\tTIERS\tDEFAULT\tHARNESS\tDESCRIPTION")
	for _, r := range out.Personas {
		tiers := strings.Join(r.Tiers, ",")
		if r.Form == "flat" {
			tiers = "flat"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Source, tiers, r.DefaultTier, r.Harness, quote.Text(quote.Line(r.Description, 72)))
	}
	return tw.Flush()
}
