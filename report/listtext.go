package report

// The text forms of the reports that are lists: the runs of history, the
// outdated sources of a lock file, the layers of sources list, the
// personas an install or create landed. Each prints what its JSON
// carries, on the writer given.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// dash is s, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// HistoryRuns are the runs `workforce history` lists, newest first.
type HistoryRuns []HistoryRun

// WriteText prints the runs as a table, as workforce history does
// without --json: an unknown model, cost or session as "-", every name
// quoted; no runs as a line naming the history's file, file.
func (rs HistoryRuns) WriteText(w io.Writer, file string) error {
	if len(rs) == 0 {
		fmt.Fprintf(w, "no runs in the history (%s)\n", quote.Name(file))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PERSONA\tTIER\tHARNESS\tMODEL\tPROJECT\tSTATUS\tDURATION\tCOST\tSESSION\tRESUMABLE")
	for _, r := range rs {
		cost := "-"
		if r.CostUSD != nil {
			cost = fmt.Sprintf("$%.4f", *r.CostUSD)
		}
		resumable := "no"
		if r.Resumable {
			resumable = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", quote.Name(r.Persona), quote.Name(r.Tier), quote.Name(r.Harness), dash(quote.Name(r.Model)),
			quote.Name(r.Project), quote.Name(r.Status), (time.Duration(r.DurationMS) * time.Millisecond).Round(time.Second), cost, dash(quote.Name(r.SessionID)), resumable)
	}
	return tw.Flush()
}

// OutdatedSources are the sources of a layer's lock file, as workforce
// outdated checks them.
type OutdatedSources []Outdated

// WriteText prints "SOURCE<TAB>LOCKED<TAB>CURRENT<TAB>WHY" for each
// source that moved (unknown: "-"), nothing for the others, as workforce
// outdated does without --json.
func (ss OutdatedSources) WriteText(w io.Writer) {
	for _, s := range ss {
		if s.Outdated {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Source, dash(s.Locked), dash(s.Current), s.Why)
		}
	}
}

// WriteText prints the layers as a table, as workforce sources list does
// without --json: a directory that does not exist marked "(missing)".
func (s Sources) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tPERSONAS\tDIR")
	for _, r := range s.Sources {
		dir := r.Dir
		if !r.Exists {
			dir += " (missing)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Name, r.Personas, dir)
	}
	return tw.Flush()
}

// AssetCounts are how many of the persona's assets are sidecars and how
// many are files of its skills (under skills/).
func (in Installed) AssetCounts() (sidecars, skills int) {
	for _, a := range in.Assets {
		if strings.HasPrefix(a, "skills/") {
			skills++
		} else {
			sidecars++
		}
	}
	return sidecars, skills
}

// WriteText prints a line a persona installed, as workforce install does
// without --json: "installed ID: FILE (+2 sidecars, +1 skills)".
func (r Install) WriteText(w io.Writer) {
	for _, in := range r.Installed {
		fmt.Fprintf(w, "installed %s: %s", in.ID, in.File)
		sidecars, skills := in.AssetCounts()
		switch {
		case sidecars > 0 && skills > 0:
			fmt.Fprintf(w, " (+%d sidecars, +%d skills)", sidecars, skills)
		case sidecars > 0:
			fmt.Fprintf(w, " (+%d sidecars)", sidecars)
		case skills > 0:
			fmt.Fprintf(w, " (+%d skills)", skills)
		}
		fmt.Fprintln(w)
	}
}

// WriteCreatedText prints what workforce create installed: a line a
// persona, "created ID: FILE (+1 sidecar) (+2 skills)", then how to run
// each.
func (r Install) WriteCreatedText(w io.Writer) {
	for _, in := range r.Installed {
		sidecars, skills := in.AssetCounts()
		fmt.Fprintf(w, "created %s: %s", in.ID, in.File)
		if sidecars > 0 {
			fmt.Fprintf(w, " (+%s)", Plural(sidecars, "sidecar"))
		}
		if skills > 0 {
			fmt.Fprintf(w, " (+%s)", Plural(skills, "skill"))
		}
		fmt.Fprintln(w)
	}
	for _, in := range r.Installed {
		fmt.Fprintf(w, "run it: workforce run %s\n", in.ID)
	}
}

// Exports are the agent files of an export.
type Exports []Exported

// WithoutContent clears the files' text, in place, and returns es: what
// export --json prints of the files it wrote.
func (es Exports) WithoutContent() Exports {
	for i := range es {
		es[i].Content = ""
	}
	return es
}

// WriteText prints a line a file written, as workforce export does
// without --json: "exported ID@TIER: FILE".
func (es Exports) WriteText(w io.Writer) {
	for _, e := range es {
		fmt.Fprintf(w, "exported %s@%s: %s\n", e.Persona, e.Tier, e.File)
	}
}

// WriteFilesText prints each file after a "# FILE" line, as workforce
// export --dry-run does without --json.
func (es Exports) WriteFilesText(w io.Writer) {
	for _, e := range es {
		fmt.Fprintf(w, "# %s\n%s", e.File, e.Content)
	}
}

// Imports are the agents an import made personas of.
type Imports []Imported

// WriteText prints a line a persona written, as workforce import does
// without --json: "imported ID: FILE (from SOURCE)".
func (is Imports) WriteText(w io.Writer) {
	for _, in := range is {
		fmt.Fprintf(w, "imported %s: %s (from %s)\n", in.ID, in.File, in.Source)
	}
}
