package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func exportCommand() *cli.Command {
	return &cli.Command{
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
			jsonFlag(),
		},
		Action: exportAction,
	}
}

// exportOptions are what `workforce export` writes: the persona Ref
// names, as PERSONA[@TIER], as agent files of Harness, in Out (the
// project's agents directory of the harness when empty).
type exportOptions struct {
	Ref, Harness, Out       string
	Overwrite, DryRun, JSON bool
	Env                     procEnv
}

func exportAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("export takes one persona, as PERSONA or PERSONA@TIER")
	}
	opts := exportOptions{
		Ref: c.Args().First(), Harness: c.String("harness"), Out: c.String("out"),
		Overwrite: c.Bool("overwrite"), DryRun: c.Bool("dry-run"), JSON: c.Bool("json"), Env: newProcEnv(),
	}
	if !slices.Contains(native.Formats, opts.Harness) {
		if persona.IsKnownHarness(opts.Harness) {
			return usageError(fmt.Errorf("workforce writes no agent file of %s", opts.Harness), "--harness takes one of "+strings.Join(native.Formats, ", "))
		}
		return unknownHarness(opts.Harness, native.Formats)
	}
	return runExport(c.Context, newStreams(c), opts)
}

func runExport(_ context.Context, ios *iostreams, opts exportOptions) error {
	cat, err := loadCatalog(opts.Env)
	if err != nil {
		return err
	}
	p, _, err := cat.Lookup(opts.Ref)
	if err != nil {
		printDiagnostics(ios.Err, cat)
		return lookupError(err)
	}
	printPersonaWarnings(ios.Err, cat, p)
	_, tier := persona.SplitRef(opts.Ref)
	out := opts.Out
	if out == "" {
		wd, err := opts.Env.dir()
		if err != nil {
			return err
		}
		if out, err = native.ProjectAgentDir(wd, opts.Harness); err != nil {
			return err
		}
	}
	plan, err := native.PlanExport(p, native.ExportOptions{Tier: tier, Harness: opts.Harness, Dir: out, Check: !opts.DryRun, Overwrite: opts.Overwrite})
	if err != nil {
		return err
	}
	for _, f := range plan.Files {
		for _, d := range f.Dropped {
			warnf(ios.Err, "%s: %s's agent file cannot say %s", f.Agent, opts.Harness, d)
		}
	}
	files := toreport.Exported(plan.Files)
	if opts.DryRun {
		if opts.JSON {
			return writeJSON(ios.Out, files)
		}
		report.Exports(files).WriteFilesText(ios.Out)
		return nil
	}
	if len(plan.Conflicts) > 0 {
		for _, f := range plan.Conflicts {
			errorf(ios.Err, "conflict: %s already exists", f)
		}
		return withCode(exitConflict, errors.New("nothing exported"), "use --overwrite to replace them")
	}
	if err := plan.Write(out); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(ios.Out, report.Exports(files).WithoutContent())
	}
	report.Exports(files).WriteText(ios.Out)
	return nil
}
