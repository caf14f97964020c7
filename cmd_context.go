package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/urfave/cli/v2"
)

func init() {
	markersFlag := &cli.StringFlag{Name: "root-markers", Usage: "comma-separated files or directories that mark the project root (default: the profile's)"}
	stateFlag := &cli.StringFlag{Name: "state", Usage: "resolver state file (JSON), created on first use", Required: true}
	register(&cli.Command{
		Name:      "context",
		Usage:     "show which instruction files a harness loads in a directory, and the text it injects",
		ArgsUsage: "[DIR]",
		Description: `Applies the discovery rules of a harness (its profile) to DIR, the working
directory by default: the project root, the instruction files loaded in
order with their size, whether the byte budget cut them and whether they are
global or project files, then the exact text the harness injects.

--harness claude, opencode or codex takes the profile of the installed
version of that harness (workforce harness check shows which), with a
warning when that version was not measured; --profile forces one. --harness
may also name a profile: opencode-nearest, agents, or a version family such
as claude-2.1.197.

Example:

   workforce context --harness claude
   workforce context services/api --harness codex --max-bytes 8192 --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Value: "codex", Usage: "harness or profile: " + strings.Join(discover.Names(), ", ")},
			profileFlagDef,
			markersFlag,
			&cli.IntFlag{Name: "max-bytes", Action: atLeast("max-bytes", 0), Usage: "byte budget across project files (default: the profile's)"},
			&cli.StringSliceFlag{Name: "fallback", Usage: "extra instruction file name tried after the profile's own (codex)"},
			&cli.BoolFlag{Name: "no-globals", Usage: "leave out global files from the home directory"},
			jsonFlag,
		},
		Action: contextAction,
		Subcommands: []*cli.Command{
			{
				Name:      "resolve",
				Usage:     "report the AGENTS.md files that newly apply to paths an agent touches",
				ArgsUsage: "PATH...",
				Description: `Returns only the AGENTS.md files that apply to PATH (from the project root
down to PATH's directory) and were not reported before or changed since,
never their bodies, at most --max-files per call (the rest on the next
call). The state file remembers the session's initial chain, recorded on
first use from --dir, and what was reported.

Example:

   workforce context resolve src/api/handler.go --state .session/agents.json`,
				Flags: []cli.Flag{
					stateFlag,
					&cli.StringFlag{Name: "dir", Usage: "session working directory, used when the state file is created (default: the working directory)"},
					&cli.IntFlag{Name: "max-files", Value: discover.DefaultMaxFilesPerResolve, Action: atLeast("max-files", 1), Usage: "most files returned by one call"},
					markersFlag,
					jsonFlag,
				},
				Action: contextResolveAction,
			},
			{
				Name:      "resume",
				Usage:     "report what changed since a session's state was saved",
				ArgsUsage: "[DIR]",
				Description: `Compares the saved state with the session started again in DIR (the working
directory by default): working directory, project root, root markers and the
instruction files' modification times, and prints the session.resume.diff
reminder block when anything changed. The state is updated.

Example:

   workforce context resume --state .session/agents.json`,
				Flags:  []cli.Flag{stateFlag, markersFlag, jsonFlag},
				Action: contextResumeAction,
			},
		},
	})
}

// contextFile is one file of `workforce context --json`.
type contextFile struct {
	Path      string `json:"path"`
	Bytes     int64  `json:"bytes"`
	Truncated bool   `json:"truncated"`
	Scope     string `json:"scope"`
	// Content is the text the file contributes (after trimming rules and
	// the byte budget).
	Content string `json:"content"`
}

// contextOutput is what `workforce context --json` prints.
type contextOutput struct {
	Harness string `json:"harness"`
	// Version is the installed harness's version, when the profile was
	// chosen by it.
	Version  string        `json:"version,omitempty"`
	Profile  string        `json:"profile"`
	Dir      string        `json:"dir"`
	Root     string        `json:"root"`
	Files    []contextFile `json:"files"`
	Dropped  []contextFile `json:"dropped,omitempty"`
	Problems []string      `json:"problems,omitempty"`
	Text     string        `json:"text"`
}

// contextProfile is the profile of `context`: --harness names a harness,
// whose installed version picks the profile (--profile forces one), or a
// profile itself.
func contextProfile(c *cli.Context) (discover.Profile, string, error) {
	name := c.String("harness")
	if persona.IsHarness(name) {
		return harnessProfile(c, name)
	}
	if persona.IsKnownHarness(name) {
		return discover.Profile{}, "", withCode(exitFailure, fmt.Errorf("harness %s is not supported yet: its instruction discovery has not been measured", name),
			"--harness takes one of "+strings.Join(discover.Names(), ", "))
	}
	p, ok := discover.Lookup(name)
	if !ok {
		return p, "", usageError(fmt.Errorf("unknown harness %q", name),
			"--harness takes one of "+strings.Join(discover.Names(), ", "))
	}
	if c.String("profile") != "" {
		return p, "", usageError(fmt.Errorf("--profile goes with --harness claude, opencode or codex, not with the profile %s", name))
	}
	return p, "", nil
}

func discoverOptions(c *cli.Context, p discover.Profile) discover.Options {
	o := discover.FromEnv(p, os.Getenv)
	if m := c.String("root-markers"); m != "" {
		o.Markers = discover.SplitList(m)
	}
	return o
}

func oneDirArg(c *cli.Context) (string, error) {
	switch c.NArg() {
	case 0:
		return os.Getwd()
	case 1:
		return c.Args().First(), nil
	}
	return "", usagef("%s takes at most one directory", c.Command.Name)
}

func contextAction(c *cli.Context) error {
	dir, err := oneDirArg(c)
	if err != nil {
		return err
	}
	p, version, err := contextProfile(c)
	if err != nil {
		return err
	}
	o := discoverOptions(c, p)
	o.MaxBytes = c.Int("max-bytes")
	o.Fallbacks = c.StringSlice("fallback")
	o.NoGlobals = c.Bool("no-globals")
	res, err := discover.Chain(p, dir, o)
	if err != nil {
		return err
	}
	harness := p.Harness
	if harness == "" {
		harness = p.Name
	}
	out := contextOutput{Harness: harness, Version: version, Profile: p.Name, Dir: res.Dir, Root: res.Root, Files: []contextFile{}, Problems: res.Problems, Text: res.Text}
	for _, f := range res.Files {
		out.Files = append(out.Files, contextFile{Path: f.Path, Bytes: f.Bytes, Truncated: f.Truncated, Scope: f.Scope, Content: f.Text})
	}
	for _, f := range res.Dropped {
		out.Dropped = append(out.Dropped, contextFile{Path: f.Path, Bytes: f.Bytes, Scope: f.Scope})
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, out)
	}
	w := c.App.Writer
	for _, p := range out.Problems {
		warnf(c.App.ErrWriter, "cannot read %s", p)
	}
	fmt.Fprintf(w, "harness: %s (profile %s)\nroot: %s\n", out.Harness, out.Profile, out.Root)
	if len(out.Files) == 0 {
		fmt.Fprintln(w, "files: none")
		return nil
	}
	fmt.Fprintln(w, "files:")
	for _, f := range out.Files {
		note := ""
		if f.Truncated {
			note = "  (truncated)"
		}
		fmt.Fprintf(w, "  %-7s %8d B  %s%s\n", f.Scope, f.Bytes, f.Path, note)
	}
	for _, f := range out.Dropped {
		fmt.Fprintf(w, "  dropped %8d B  %s\n", f.Bytes, f.Path)
	}
	fmt.Fprintf(w, "text:\n%s\n", out.Text)
	return nil
}

func contextResolveAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("resolve needs at least one path")
	}
	p := discover.Profiles["agents"]
	o := discoverOptions(c, p)
	path := c.String("state")
	state, err := discover.LoadState(path)
	if err != nil {
		return err
	}
	if state == nil {
		dir := c.String("dir")
		if dir == "" {
			if dir, err = os.Getwd(); err != nil {
				return err
			}
		}
		if state, err = discover.NewState(p, dir, o); err != nil {
			return err
		}
	}
	res, err := state.Resolve(p, c.Args().Slice(), c.Int("max-files"), o)
	if err != nil {
		return err
	}
	return saveAndPrint(c, state, path, res, discover.ResolveReminder(res))
}

// saveAndPrint saves the resolver state, then prints v as JSON with
// --json, else the reminder block.
func saveAndPrint(c *cli.Context, state *discover.State, path string, v any, reminder string) error {
	if err := state.Save(path); err != nil {
		return fmt.Errorf("cannot save the resolver state: %w", err)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, v)
	}
	fmt.Fprint(c.App.Writer, reminder)
	return nil
}

func contextResumeAction(c *cli.Context) error {
	dir, err := oneDirArg(c)
	if err != nil {
		return err
	}
	p := discover.Profiles["agents"]
	o := discoverOptions(c, p)
	path := c.String("state")
	state, err := discover.LoadState(path)
	if err != nil {
		return err
	}
	if state == nil {
		return fmt.Errorf("no resolver state at %s", path)
	}
	diff, now, err := state.Resume(p, dir, o)
	if err != nil {
		return err
	}
	return saveAndPrint(c, now, path, diff, discover.ResumeReminder(diff))
}
