package main

import (
	"context"
	"fmt"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "make personas of the harnesses' own agent files",
		ArgsUsage: "PATH...",
		Description: `Each PATH is an agent file or a directory holding them: a project (its
.claude/agents, .opencode/agent, .opencode/agents, .codex/agents and the agent
map of opencode.json), an agents directory, opencode's configuration
directory, a Claude Code plugin (agents/ beside .claude-plugin/plugin.json), or
a directory of .md and .toml agent files. Each agent becomes a persona without
tiers, its id the agent's name in kebab-case, on the harness the file is for:
prompt, description, model ("inherit" when the file names none), reasoning
effort, permission rules, MCP servers and the skills it names in their persona
fields, and every other key of the file kept as written in the persona's
"native" block, which workforce export writes back.
Each persona says "inherit": false: it takes nothing from a persona of the
same id in a lower layer (a built-in code-reviewer under an imported "Code
Reviewer"), since the agent file means only what it says; a note names the
persona it shadows. --inherit leaves that out, so that the persona is laid
over the lower one and inherits what it does not set; a note then names
the fields it inherits.
The personas land as install lands a pack: in the project layer, --user for
the user layer, or --dir; an existing persona is a conflict (exit 3) unless
--overwrite; all land or none. A file that cannot be read is an error naming
it and its line, and nothing is written.

Example:

   workforce import .claude/agents
   workforce import ~/.codex/agents/reviewer.toml --user
   workforce import ./agents/reviewer.md --harness opencode --dry-run`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Usage: "the harness of .md files whose place does not tell (claude or opencode); also reads only that harness's places"},
			&cli.BoolFlag{Name: "inherit", Usage: "lay each persona over a lower persona of the same id, inheriting what the agent file does not set, instead of shadowing it (\"inherit\": false)"},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace personas of the same id"},
			&cli.BoolFlag{Name: "user", Usage: "write into the user layer, <home>/personas"},
			&cli.StringFlag{Name: "dir", Usage: "write into this directory"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the persona files instead of writing them"},
			jsonFlag(),
		},
		Action: importAction,
	}
}

// importOptions are what `workforce import` imports: the agent files at
// Paths (of Harness, when set), into the layer Dir, User or the project's
// (layerTarget).
type importOptions struct {
	Paths                   []string
	Harness, Dir            string
	User, Inherit           bool
	Overwrite, DryRun, JSON bool
	Env                     procEnv
}

func importAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("import takes one or more agent files or directories")
	}
	if err := checkFlags(c, userDirRule); err != nil {
		return err
	}
	opts := importOptions{
		Paths: c.Args().Slice(), Harness: c.String("harness"), Dir: c.String("dir"), User: c.Bool("user"), Inherit: c.Bool("inherit"),
		Overwrite: c.Bool("overwrite"), DryRun: c.Bool("dry-run"), JSON: c.Bool("json"), Env: newProcEnv(),
	}
	if h := opts.Harness; h != "" && !persona.IsKnownHarness(h) {
		return unknownHarness(h, persona.Harnesses)
	}
	return runImport(c.Context, newStreams(c), opts)
}

func runImport(_ context.Context, ios *iostreams, opts importOptions) error {
	p, found, err := native.ImportPack(opts.Paths, opts.Harness, opts.Inherit)
	if err != nil {
		return err
	}
	if opts.DryRun {
		all := toreport.Imports(found, nil)
		if opts.JSON {
			return writeJSON(ios.Out, all)
		}
		for i, in := range all {
			fmt.Fprintf(ios.Out, "# %s.json, from %s\n%s", in.ID, in.Source, p.Personas[i].Data)
		}
		return nil
	}
	target, err := layerTarget(opts.Env, opts.Dir, opts.User)
	if err != nil {
		return err
	}
	res, err := install.Pack(p, install.Options{Target: target, Overwrite: opts.Overwrite, Layers: installLayers(opts.Env, target, opts.Dir, opts.User)})
	if err != nil {
		return installConflict(ios.Err, err, "imported")
	}
	all := toreport.Imports(found, res)
	if opts.JSON {
		return writeJSON(ios.Out, all)
	}
	outsideNote(ios.Err, res)
	overrideNotes(ios.Err, res.Installed)
	report.Imports(all).WriteText(ios.Out)
	return nil
}
