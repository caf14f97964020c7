package report

// The text forms of the reports whose text more than a field or two
// decides: the plan of run --dry-run, a harness's mapping, a persona of
// show, the files a run changed (Files.Summary, a batch task's line) or
// holds for review (Files.WriteHeld), the branch a queue worker pushed
// (Published.Text). Each prints what its JSON carries, on the writer
// given; every name the agent or a file may have chosen goes through
// quote.

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// each prints a "label: item" line for each item, quoted.
func each(w io.Writer, label string, items []string) {
	for _, it := range items {
		fmt.Fprintf(w, "%s: %s\n", label, quote.Name(it))
	}
}

// WriteText prints the plan of a run, as run --dry-run does without
// --json.
func (p Plan) WriteText(w io.Writer) {
	fmt.Fprintf(w, "persona: %s@%s on %s\n", p.Persona, p.Tier, p.Harness)
	for _, o := range p.Layers {
		fmt.Fprintf(w, "layer: %s %s\n", o.Layer, quote.Name(o.File))
	}
	fmt.Fprintf(w, "model: %s\nroot: %s\n", p.Resolved.Model, quote.Name(p.Root))
	if p.Profile != "" {
		fmt.Fprintf(w, "profile: %s\n", p.Profile)
	}
	if p.InRepo {
		fmt.Fprintf(w, "runs in: %s (no sandbox)\n", quote.Name(p.Workdir))
	} else {
		fmt.Fprintf(w, "sandbox: %s\nruns in: %s\n", quote.Name(p.Sandbox), quote.Name(p.Workdir))
		if p.Tree != "" {
			fmt.Fprintf(w, "tree: %s\n", p.Tree)
		}
	}
	each(w, "hidden", p.Hidden)
	each(w, "ignored", p.Ignored)
	each(w, "read-only", p.Readonly)
	if e := p.Extend; e != nil {
		each(w, "folded", e.Folded)
		each(w, "loaded by the harness itself", e.LoadedAnyway)
	}
	if m := p.Materialized; m != nil {
		fmt.Fprintf(w, "materialized: %s (%s)\n---\n%s\n---\n", quote.Name(m.Path), m.Mode, quote.Block(m.Text))
	} else {
		fmt.Fprintln(w, "materialized: none")
	}
	if sp := p.Skills; sp != nil {
		for _, it := range sp.Items {
			state := it.Kind
			if it.Cache != state {
				state += ", " + it.Cache
			}
			fmt.Fprintf(w, "skill: %s from %s (%s) -> %s\n", it.Name, it.Source, state, it.Dest)
			for _, rel := range it.Replaces {
				fmt.Fprintf(w, "skill replaces: %s (the repository's %s, hidden in the sandbox)\n", quote.Name(rel), it.Name)
			}
		}
	}
	each(w, "env", p.Env)
	for _, v := range p.Sealed {
		if v.Dropped {
			fmt.Fprintf(w, "env dropped: %s\n", v.Name)
		} else {
			fmt.Fprintf(w, "env rewritten: %s=%s\n", v.Name, v.Value)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(p.ConfigFiles)) {
		fmt.Fprintf(w, "config file: %s\n", quote.Name(path))
	}
	if p.Mapping != nil {
		p.Mapping.WriteText(w)
	}
	if c := p.Confine; c != nil {
		c.writeText(w)
	}
	if n := p.Network; n != nil {
		n.writeText(w)
	}
	fmt.Fprintf(w, "argv: %s\n", quote.Shell(p.Argv...))
}

// WriteText prints what a harness gets for each persona value, and what
// it refuses.
func (m *Mapping) WriteText(w io.Writer) {
	fmt.Fprintf(w, "mapping for %s (measured on %s):\n", m.Harness, m.Measured)
	if len(m.Fields) == 0 {
		fmt.Fprintln(w, "  nothing to map")
	}
	for _, f := range m.Fields {
		if f.Refused != "" {
			fmt.Fprintf(w, "  %s %s: refused: %s\n", f.Field, f.Value, f.Refused)
		} else {
			fmt.Fprintf(w, "  %s %s: %s\n", f.Field, f.Value, f.Applied)
		}
	}
}

// writeText prints the write sandbox of a run: its mode, then what the
// harness may write when it is confined, or why it is not.
func (c Confine) writeText(w io.Writer) {
	switch {
	case c.Confined:
		fmt.Fprintf(w, "write sandbox: %s: the harness may write only\n", c.Mode)
		each(w, "  writable", c.Writable)
		each(w, "  writable file", c.Files)
		each(w, "  device", c.Devices)
		if c.Launcher != "" {
			fmt.Fprintf(w, "  launcher: %s\n", c.Launcher)
		}
		if c.Reads != nil {
			c.Reads.writeText(w, c.Mode)
		}
	case c.Why != "":
		fmt.Fprintf(w, "write sandbox: %s: not confined: %s\n", c.Mode, c.Why)
	default:
		fmt.Fprintf(w, "write sandbox: %s: not confined\n", c.Mode)
	}
}

// writeText prints the read policy of a confined run of mode: the
// default denials below the home directory as one line, every other
// entry with its origin.
func (r Reads) writeText(w io.Writer, mode string) {
	if r.Strict {
		fmt.Fprintf(w, "read sandbox: %s: the harness reads only the system directories and what it may write, and\n", mode)
	} else {
		fmt.Fprintf(w, "read sandbox: %s: the harness may not read\n", mode)
	}
	home := 0
	for _, e := range r.Deny {
		if e.Origin == "default" || strings.HasSuffix(e.Origin, "(the run uses its session's copy)") {
			home++
			continue
		}
		fmt.Fprintf(w, "  unreadable: %s (%s)\n", quote.Name(e.Path), e.Origin)
	}
	if home > 0 {
		fmt.Fprintf(w, "  unreadable: %d credentials and harness configurations in the home directory (~/.ssh, ~/.aws, ~/.claude...: --json lists them)\n", home)
	}
	for _, e := range append(append([]ReadEntry{}, r.Roots...), r.Allow...) {
		fmt.Fprintf(w, "  readable: %s (%s)\n", quote.Name(e.Path), e.Origin)
	}
}

// writeText prints a run's network policies as the plan holds them,
// unresolved: the user's, then each narrowing, with where each came
// from.
func (n NetworkPolicy) writeText(w io.Writer) {
	fmt.Fprintf(w, "network: %s\n", n.User.text())
	for _, s := range n.Narrow {
		fmt.Fprintf(w, "network narrowed: %s\n", s.text())
	}
}

// text is s on one line: its mode, allow list and presets, "the
// default" when it sets none, and its origin.
func (s NetSpec) text() string {
	var parts []string
	if s.Mode != "" {
		parts = append(parts, "mode "+s.Mode)
	}
	if len(s.Allow) > 0 {
		parts = append(parts, "allow "+strings.Join(s.Allow, " "))
	}
	if s.Presets != nil {
		ps := strings.Join(*s.Presets, " ")
		if ps == "" {
			ps = "none"
		}
		parts = append(parts, "presets "+ps)
	}
	if len(parts) == 0 {
		parts = append(parts, "the default")
	}
	return strings.Join(parts, ", ") + " (" + s.Origin + ")"
}

// WriteText prints a persona of show: where it comes from, each field
// with the layers and files that set it, the tier resolved and, with
// --harness, the harness's mapping.
func (s Show) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "persona %s from %s (%s)\n", s.ID, s.Source, quote.Name(s.Path))
	var chain []string
	for _, o := range s.Chain {
		chain = append(chain, o.label(":"))
	}
	fmt.Fprintf(w, "merged from: %s\n", strings.Join(chain, " <- "))
	if o := s.Overrides; o != nil {
		inherits := "nothing"
		if len(s.Inherits) > 0 {
			inherits = strings.Join(s.Inherits, ", ")
		}
		fmt.Fprintf(w, "overrides: the %s %s (%s); inherits %s\n", o.Layer, s.ID, o.File, inherits)
	}
	if o := s.Shadows; o != nil {
		why := `"inherit": false`
		if s.Spec.Inherit == nil || *s.Spec.Inherit {
			why = "it extends another persona"
		}
		fmt.Fprintf(w, "shadows: the %s %s (%s); takes nothing from it: %s\n", o.Layer, s.ID, o.File, why)
	}
	fmt.Fprintln(w)

	values := flatten(s.Spec)
	fields := make([]string, 0, len(s.Provenance))
	for f := range s.Provenance {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELD\tVALUE\tLAYER\tFILE")
	for _, f := range fields {
		v := fieldValue(values, f)
		for i, o := range s.Provenance[f] {
			if i > 0 {
				v = ""
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f, quote.Text(quote.Line(v, 48)), o.Layer, quote.Name(o.File))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	r := s.Resolved
	form := ""
	if s.Form == "flat" {
		form = " (flat: one runtime serves every tier)"
	}
	fmt.Fprintf(w, "\ntier %s%s: harness %s, model %s\n", r.Tier, form, r.Harness, r.Model)
	for _, f := range []string{"harness", "model", "systemPrompt"} {
		if o, ok := r.Origins[f]; ok {
			fmt.Fprintf(w, "%s from %s\n", f, o.label(" "))
		}
	}
	for _, sc := range []Sidecar{r.Claude, r.Agents} {
		switch {
		case sc.Path == "" && sc.Content == "":
			fmt.Fprintf(w, "%s: none\n", sc.Channel)
		case sc.Path != "":
			fmt.Fprintf(w, "%s: %s%s\n", sc.Channel, quote.Name(sc.Path), sc.how())
		default:
			fmt.Fprintf(w, "%s: inline, %d bytes%s\n", sc.Channel, len(sc.Content), sc.how())
		}
	}
	if s.Mapping != nil {
		fmt.Fprintln(w)
		s.Mapping.WriteText(w)
	}
	return nil
}

// label is where o is, for a line of text: the layer, sep and the file
// ("user /home/u/.config/workforce/personas/x.json"), or the file alone
// when its name already says its layer ("built-in:x.json").
func (o Origin) label(sep string) string {
	if strings.HasPrefix(o.File, o.Layer+":") {
		return quote.Name(o.File)
	}
	return o.Layer + sep + quote.Name(o.File)
}

// how is " (MODE, from LAYER)" for a sidecar's line, leaving out what
// is empty, "" when both are.
func (sc Sidecar) how() string {
	var parts []string
	if sc.Mode != "" {
		parts = append(parts, sc.Mode)
	}
	if sc.Origin.Layer != "" {
		parts = append(parts, "from "+sc.Origin.Layer)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// fieldValue is the value of the dotted field f among values (flatten's):
// its JSON, or for an instruction-file channel given inline (claudeMd,
// agentsMd: the JSON has claudeMdContent) its size.
func fieldValue(values map[string]string, f string) string {
	if v, ok := values[f]; ok {
		return v
	}
	var content string
	if err := json.Unmarshal([]byte(values[f+"Content"]), &content); err == nil {
		return fmt.Sprintf("inline, %d bytes", len(content))
	}
	return ""
}

// flatten maps the dotted field names of v's JSON form to compact JSON
// values, objects included (an input's "inputs.BASE" and its
// "inputs.BASE.default" both).
func flatten(v any) map[string]string {
	b, _ := json.Marshal(v)
	var doc any
	_ = json.Unmarshal(b, &doc)
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			if prefix != "" {
				b, _ := json.Marshal(v)
				out[prefix] = string(b)
			}
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

// Summary is the files a sync-back created, updated or deleted, for a
// line of text: their count and the first n of their names, sorted and
// quoted ("2 files changed: a.go, b.go", "5 files changed: a.go, b.go,
// c.go and 2 more"); "" for none or a nil f.
func (f *Files) Summary(n int) string {
	if f == nil {
		return ""
	}
	paths := slices.Concat(f.Created, f.Updated, f.Deleted)
	if len(paths) == 0 {
		return ""
	}
	slices.Sort(paths)
	return fmt.Sprintf("%s changed: %s", Plural(len(paths), "file"), names(paths, n))
}

// WriteHeld prints the work of session id held for review (run
// --review), as Result.Held lists it: a line naming the session and the
// count, then each file with what the agent did to it, indented. A nil
// f (the files could not be listed) prints the first line alone.
func (f *Files) WriteHeld(w io.Writer, id string) {
	if f == nil {
		fmt.Fprintf(w, "held for review: %s\n", quote.Name(id))
		return
	}
	type held struct{ path, kind string }
	var all []held
	for _, g := range []struct {
		kind  string
		paths []string
	}{{"created", f.Created}, {"updated", f.Updated}, {"deleted", f.Deleted}} {
		for _, p := range g.paths {
			all = append(all, held{p, g.kind})
		}
	}
	for _, c := range f.Conflicts {
		all = append(all, held{c.Path, "conflict"})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].path < all[j].path })
	fmt.Fprintf(w, "held for review: %s (%s)\n", quote.Name(id), Plural(len(all), "file"))
	for _, h := range all {
		fmt.Fprintf(w, "  %s: %s\n", h.kind, quote.Name(h.path))
	}
}

// Text is where a queue worker put the agent's work, for a line of
// text: "branch B pushed to REPO, N files changed", or "nothing pushed"
// when there was nothing to publish.
func (p Published) Text() string {
	if p.Branch == "" {
		return "nothing pushed"
	}
	return fmt.Sprintf("branch %s pushed to %s, %s changed", quote.Name(p.Branch), quote.Name(p.Repo), Plural(p.Files, "file"))
}

// Plural is n and the noun, in the plural but for one: "1 file", "2
// files".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Age is a duration as people read an age: seconds under a minute,
// minutes under an hour, hours under two days, then days.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// names is the first n of paths, quoted, comma-separated, and "and K
// more" for the rest.
func names(paths []string, n int) string {
	n = max(n, 1)
	shown := make([]string, 0, n)
	for _, p := range paths[:min(n, len(paths))] {
		shown = append(shown, quote.Name(p))
	}
	s := strings.Join(shown, ", ")
	if rest := len(paths) - len(shown); rest > 0 {
		s += fmt.Sprintf(" and %d more", rest)
	}
	return s
}

// WriteDenied prints the destinations the network proxy denied a run,
// one a line with its count (run's text result, sessions show); nothing
// for a nil n.
func (n *Network) WriteDenied(w io.Writer) {
	if n == nil {
		return
	}
	for _, d := range n.Denied {
		times := "once"
		if d.Count != 1 {
			times = fmt.Sprintf("%d times", d.Count)
		}
		fmt.Fprintf(w, "network denied: %s (%s)\n", quote.Text(d.String()), times)
	}
}

// WriteText prints what a sync-back did, or would do, a line per file:
// created, updated, deleted, the deletions kept, what was not applied,
// not synced, left on the branch, refused or held, each conflict and
// each failure (run's text result, sessions sync and apply).
func (r SyncReport) WriteText(w io.Writer) {
	each(w, "created", r.Created)
	each(w, "updated", r.Updated)
	each(w, "deleted", r.Deleted)
	each(w, "deleted in the sandbox, kept", r.Unapplied)
	each(w, "not applied, in the place of a deletion kept", r.Blocked)
	each(w, "not synced", r.NotSynced)
	each(w, "on the branch", r.OnBranch)
	each(w, "refused, a policy file", r.Refused)
	each(w, "held for review", r.Held)
	for _, cf := range r.Conflicts {
		if cf.Reason != "" {
			fmt.Fprintf(w, "conflict: %s %s; yours: %s", quote.Name(cf.Path), quote.Text(cf.Reason), quote.Name(cf.Real))
			if cf.Saved != "" {
				fmt.Fprintf(w, "; the agent's: %s", quote.Name(cf.Saved))
			}
			fmt.Fprintln(w)
			continue
		}
		if cf.Saved == "" {
			fmt.Fprintf(w, "conflict: %s was deleted by the agent but changed in the repository; kept: %s\n", quote.Name(cf.Path), quote.Name(cf.Real))
			continue
		}
		fmt.Fprintf(w, "conflict: %s changed in the repository too; yours: %s; the agent's: %s\n", quote.Name(cf.Path), quote.Name(cf.Real), quote.Name(cf.Saved))
	}
	for _, f := range r.Failed {
		fmt.Fprintf(w, "failed: %s: %s\n", quote.Name(f.Path), quote.Text(f.Error))
	}
}
