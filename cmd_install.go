package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/native"
	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "install",
		Usage:     "install a persona pack into the project or user layer",
		ArgsUsage: "SOURCE",
		Description: `SOURCE is a pack directory, a .tgz made by workforce pack or npm pack, or an
npm spec (fetched with npm pack --ignore-scripts); or a Claude Code plugin,
a directory or a .tgz without a package.json, whose agents are imported as
personas (workforce import) with the plugin's skills and MCP servers. Each persona lands as
<target>/<id>.json with its sidecars in <target>/<id>__assets/ and its local
skills in <target>/<id>__assets/skills/<name>/. The target is
the project layer (.agentworkforce/workforce/personas at the nearest
directory with .git, or the working directory), --user for the user layer,
or --dir. An existing persona is a conflict (exit 3) unless --overwrite.
A persona lands as an override: where a lower layer (the user layer, the
built-in catalog) has a persona of the same id, the installed one inherits
what it does not set, unless its file says "inherit": false (the agents of
a plugin do); a note names that persona and the fields inherited from it,
and --json carries them (overrides, inherits, shadows).
The install lands whole or not at all. --persona takes ids or doublestar
patterns of ids; an unknown id or a pattern matching no persona fails before
anything is written.

SOURCE may also be a git repository: git+URL[#REF] (any URL git clones,
file:// included) or github:OWNER/REPO[@REF], REF a branch, tag or commit.
Each install records in the layer's workforce.lock the source, what it
resolved to (the commit, the npm name@version) and a hash of every file it
wrote; --frozen installs only when the source still matches that record
(and replaces the personas it holds), and workforce outdated lists the
sources that moved.

Example:

   workforce install ./team-personas --user
   workforce install git+https://github.com/acme/personas.git#v2
   workforce install github:acme/personas@main --frozen
   workforce install @acme/review-personas --persona reviewer --overwrite
   workforce install ./team-personas --persona 'review-*'`,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "persona", Usage: "install only this persona id, or the ids a doublestar pattern such as 'review-*' matches (repeatable)"},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace personas already installed"},
			&cli.BoolFlag{Name: "user", Usage: "install into the user layer, <home>/personas"},
			&cli.StringFlag{Name: "dir", Usage: "install into this directory"},
			&cli.BoolFlag{Name: "frozen", Usage: "install only what the layer's lock file records for SOURCE: the same commit or version and the same files"},
			jsonFlag,
		},
		Action: installAction,
	})
}

func init() { install.ReadPlugin = readPlugin }

// readPlugin reads a Claude Code plugin directory as a pack: each of its
// agents a persona (native.Import), with the plugin's skills and MCP
// servers.
func readPlugin(dir string) (*pack.Pack, error) {
	found, err := native.Import(dir, persona.HarnessClaude)
	if err != nil {
		return nil, err
	}
	p := &pack.Pack{Dir: dir, Files: map[string]string{}}
	for _, in := range found {
		ps, err := importedPersona(in)
		if err != nil {
			return nil, err
		}
		p.Personas = append(p.Personas, ps)
	}
	return p, nil
}

func installAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usagef("install takes one source: a directory, a .tgz or an npm spec")
	}
	if c.Bool("user") && c.String("dir") != "" {
		return usageError(errors.New("--user and --dir conflict"), "use --user for the user layer or --dir DIR for another directory, not both")
	}
	target, err := installTarget(c)
	if err != nil {
		return err
	}
	source := c.Args().First()
	if _, err := os.Stat(source); err != nil && isTerminal(c.App.ErrWriter) {
		// Progress, on terminals only: npm may take a while.
		fmt.Fprintf(c.App.ErrWriter, "workforce: fetching %s with npm pack\n", source)
	}
	p, cleanup, err := install.Open(c.Context, source)
	defer cleanup()
	if err != nil {
		return err
	}
	res, err := install.Pack(p, install.Options{
		Target: target, Personas: c.StringSlice("persona"), Overwrite: c.Bool("overwrite"),
		Source: lockSource(source), Resolved: p.Resolved, Frozen: c.Bool("frozen"),
		Layers: cascadeLayers(),
	})
	var fe *install.FrozenError
	if errors.As(err, &fe) {
		return withCode(exitFailure, fmt.Errorf("nothing installed: %w", err), "install without --frozen to take the source as it is now and update the lock file")
	}
	if err != nil {
		return installConflict(c.App.ErrWriter, err, "installed")
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, res)
	}
	overrideNotes(c.App.ErrWriter, res.Installed)
	for _, in := range res.Installed {
		fmt.Fprintf(c.App.Writer, "installed %s: %s", in.ID, in.File)
		var sidecars, skills int
		for _, a := range in.Assets {
			if strings.HasPrefix(a, "skills/") {
				skills++
			} else {
				sidecars++
			}
		}
		switch {
		case sidecars > 0 && skills > 0:
			fmt.Fprintf(c.App.Writer, " (+%d sidecars, +%d skills)", sidecars, skills)
		case sidecars > 0:
			fmt.Fprintf(c.App.Writer, " (+%d sidecars)", sidecars)
		case skills > 0:
			fmt.Fprintf(c.App.Writer, " (+%d skills)", skills)
		}
		fmt.Fprintln(c.App.Writer)
	}
	return nil
}

// installTarget returns the layer directory to install into.
func installTarget(c *cli.Context) (string, error) {
	if d := c.String("dir"); d != "" {
		return d, nil
	}
	if c.Bool("user") {
		home, err := persona.Home()
		if err != nil {
			return "", err
		}
		return persona.DefaultUserDir(home), nil
	}
	layers, err := persona.Layers(loadOptions())
	if err != nil {
		return "", err
	}
	if layers[0].Name == persona.LayerProject {
		return layers[0].Dir, nil
	}
	return projectLayerDir()
}

// projectLayerDir is where a new project layer goes: under the project root
// (the nearest directory with .git), or the working directory without one.
func projectLayerDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if wd, err = filepath.EvalSymlinks(wd); err != nil {
		return "", err
	}
	return filepath.Join(mount.ProjectRoot(wd, persona.DefaultRootMarkers), filepath.FromSlash(persona.ProjectDir)), nil
}

// lockSource is how the lock file names source: a local directory or
// tarball by its absolute path, so that outdated finds it from anywhere;
// anything else as given.
func lockSource(source string) string {
	if _, err := os.Stat(source); err == nil {
		if abs, err := filepath.Abs(source); err == nil {
			return abs
		}
	}
	return source
}
