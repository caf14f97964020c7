package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

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
default tier when none is given) follows: harness, model and the effective
CLAUDE.md / AGENTS.md sidecars.

Example:

   workforce show code-reviewer
   workforce show code-reviewer@best-value --json`,
		Flags:  []cli.Flag{jsonFlag},
		Action: showAction,
	})
}

// showOutput is what `workforce show --json` prints.
type showOutput struct {
	ID         string             `json:"id"`
	Source     string             `json:"source"`
	Path       string             `json:"path"`
	Chain      []persona.Origin   `json:"chain"`
	Spec       *persona.Spec      `json:"spec"`
	Provenance persona.Provenance `json:"provenance"`
	Resolved   *persona.Resolved  `json:"resolved"`
	Warnings   []string           `json:"warnings"`
}

func showAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("show takes one persona, as ID or ID@TIER")
	}
	cat, err := loadCatalogQuiet()
	if err != nil {
		return err
	}
	p, r, err := lookup(cat, c.Args().First())
	if err != nil {
		printDiagnostics(c.App.ErrWriter, cat)
		return err
	}
	out := showOutput{
		ID: p.ID, Source: p.Layer, Path: p.Path, Chain: p.Chain,
		Spec: p.Spec, Provenance: p.Provenance(), Resolved: r,
		Warnings: personaDiagnostics(cat, p),
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, out)
	}
	for _, w := range out.Warnings {
		warnf(c.App.ErrWriter, "%s", w)
	}
	return printShow(c, out)
}

// lookup finds the persona and tier named by ref ("id" or "id@tier").
func lookup(cat *persona.Catalog, ref string) (*persona.Persona, *persona.Resolved, error) {
	id, tier := persona.SplitRef(ref)
	p, ok := cat.Get(id)
	if !ok {
		return nil, nil, withCode(exitFailure, fmt.Errorf("unknown persona %q", id),
			"`workforce list` shows the personas of every layer")
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
	fmt.Fprintf(w, "merged from: %s\n\n", strings.Join(chain, " <- "))

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
	fmt.Fprintf(w, "\ntier %s: harness %s, model %s\n", r.Tier, r.Harness, r.Model)
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
