package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "export",
		Usage:     "write a persona as a harness's own agent file",
		ArgsUsage: "PERSONA[@TIER]",
		Description: `Writes the persona as an agent file of the harness: a Claude Code subagent
(.claude/agents/NAME.md), an opencode agent (.opencode/agents/NAME.md) or a
codex custom agent (.codex/agents/NAME.toml), in those directories of the
project (the nearest directory with .git, or the working directory) unless
--out names another. A persona without tiers gives one file named by its id;
with tiers, one file per tier named ID-TIER, or, for PERSONA@TIER, one named
ID. The prompt carries the sidecar text of the harness's channel after a
marker line (agent files have no sidecars; workforce import splits it off
again), and the persona's "native" block for the harness is written back.
What the file cannot say is named in a warning each (a tier that runs on
another harness gives a file on the target's own default model). An existing
file is a conflict (exit 3) unless --overwrite; every target is checked
before any file is written.

Example:

   workforce export code-reviewer --harness claude
   workforce export code-reviewer@best --harness codex --out ~/.codex/agents
   workforce export debugger --harness opencode --dry-run`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Usage: "the harness whose format to write: claude, opencode or codex", Required: true},
			&cli.StringFlag{Name: "out", Usage: "the directory to write into (default: the project's agents directory of the harness)"},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace existing agent files"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the files instead of writing them"},
			jsonFlag,
		},
		Action: exportAction,
	})
}

// agentDirs are the project directories each harness reads agent files
// from.
var agentDirs = map[string]string{
	persona.HarnessClaude:   ".claude/agents",
	persona.HarnessOpencode: ".opencode/agents",
	persona.HarnessCodex:    ".codex/agents",
}

// exported is one agent file written.
type exported struct {
	Persona string           `json:"persona"`
	Tier    string           `json:"tier"`
	Harness string           `json:"harness"`
	Agent   string           `json:"agent"`
	File    string           `json:"file"`
	Dropped []native.Dropped `json:"dropped"`
	Content string           `json:"content,omitempty"`
}

func exportAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("export takes one persona, as PERSONA or PERSONA@TIER")
	}
	h := c.String("harness")
	if !persona.IsHarness(h) {
		return usageError(fmt.Errorf("unknown harness %q", h), "--harness takes one of "+strings.Join(persona.Harnesses, ", "))
	}
	cat, err := loadCatalogQuiet()
	if err != nil {
		return err
	}
	ref := c.Args().First()
	p, _, err := lookup(cat, ref)
	if err != nil {
		printDiagnostics(c.App.ErrWriter, cat)
		return err
	}
	_, tier := persona.SplitRef(ref)
	type job struct{ tier, name string }
	var jobs []job
	switch {
	case tier != "":
		jobs = []job{{tier, p.ID}}
	case p.Spec.Flat():
		jobs = []job{{p.Spec.EffectiveDefaultTier(), p.ID}}
	default:
		for _, t := range p.Spec.TierNames() {
			jobs = append(jobs, job{t, p.ID + "-" + t})
		}
	}
	out := c.String("out")
	if out == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		if wd, err = filepath.EvalSymlinks(wd); err != nil {
			return err
		}
		out = filepath.Join(mount.ProjectRoot(wd, persona.DefaultRootMarkers), filepath.FromSlash(agentDirs[h]))
	}
	var files []exported
	var conflicts []string
	for _, j := range jobs {
		r, err := p.Resolve(j.tier)
		if err != nil {
			return err
		}
		f, err := native.Export(p.Spec.Description, r, h, j.name)
		if err != nil {
			return fmt.Errorf("%s@%s: %w", p.ID, j.tier, err)
		}
		e := exported{Persona: p.ID, Tier: j.tier, Harness: h, Agent: f.Agent, File: filepath.Join(out, f.Name), Dropped: f.Dropped, Content: string(f.Data)}
		if e.Dropped == nil {
			e.Dropped = []native.Dropped{}
		}
		if fi, err := os.Lstat(e.File); err == nil && !c.Bool("dry-run") {
			if !fi.Mode().IsRegular() {
				// Checked before anything is written: a rename onto it
				// would fail half-way.
				return fmt.Errorf("%s exists and is not a file; nothing exported", e.File)
			}
			if !c.Bool("overwrite") {
				conflicts = append(conflicts, e.File)
			}
		}
		files = append(files, e)
	}
	for _, e := range files {
		for _, d := range e.Dropped {
			warnf(c.App.ErrWriter, "%s: %s's agent file cannot say %s", e.Agent, h, d)
		}
	}
	if c.Bool("dry-run") {
		if c.Bool("json") {
			return writeJSON(c.App.Writer, files)
		}
		for _, e := range files {
			fmt.Fprintf(c.App.Writer, "# %s\n%s", e.File, e.Content)
		}
		return nil
	}
	if len(conflicts) > 0 {
		for _, f := range conflicts {
			errorf(c.App.ErrWriter, "conflict: %s already exists", f)
		}
		return withCode(exitConflict, errors.New("nothing exported"), "use --overwrite to replace them")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Every file is staged before any is renamed into place.
	var pending []*renameio.PendingFile
	defer func() {
		for _, t := range pending {
			t.Cleanup()
		}
	}()
	for _, e := range files {
		t, err := renameio.NewPendingFile(e.File, renameio.WithPermissions(0o644), renameio.WithTempDir(out))
		if err != nil {
			return err
		}
		pending = append(pending, t)
		if _, err := t.WriteString(e.Content); err != nil {
			return err
		}
	}
	for _, t := range pending {
		if err := t.CloseAtomicallyReplace(); err != nil {
			return err
		}
	}
	if c.Bool("json") {
		for i := range files {
			files[i].Content = ""
		}
		return writeJSON(c.App.Writer, files)
	}
	for _, e := range files {
		fmt.Fprintf(c.App.Writer, "exported %s@%s: %s\n", e.Persona, e.Tier, e.File)
	}
	return nil
}
