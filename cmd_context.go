package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func contextCommand() *cli.Command {
	markersFlag := &cli.StringFlag{Name: "root-markers", Usage: "comma-separated files or directories that mark the project root (default: the profile's)"}
	stateFlag := &cli.StringFlag{Name: "state", Usage: "resolver state file (JSON), created on first use", Required: true}
	return &cli.Command{
		Name:      "context",
		Usage:     "show which instruction files a harness loads in a directory, and the text it injects",
		ArgsUsage: "[DIR]",
		Description: `Applies the discovery rules of a harness (its profile) to DIR, the working
directory by default: the project root, the instruction files loaded in
order with their size, whether the byte budget cut them and whether they are
global or project files, then the exact text the harness injects.

Without --harness, the harness is claude, or when claude is not installed
the first installed of opencode, codex and gemini (a note says which); with
none installed, codex's newest profile, with a warning naming how to
install them.

--harness claude, opencode, codex or gemini takes the profile of the installed
version of that harness (workforce harness check shows which), with a
warning when that version was not measured; --profile forces one. --harness
may also name a profile: opencode-nearest, agents, or a version family such
as claude-2.1.197.

Example:

   workforce context --harness claude
   workforce context services/api --harness codex --max-bytes 8192 --json`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "harness", Usage: "harness or profile: " + strings.Join(discover.Names(), ", "), DefaultText: "claude, else the first installed of " + strings.Join(persona.Harnesses, ", ") + ", else codex"},
			profileFlag(),
			markersFlag,
			&cli.IntFlag{Name: "max-bytes", Action: atLeast("max-bytes", 0), Usage: "byte budget across project files", DefaultText: "the profile's"},
			&cli.StringSliceFlag{Name: "fallback", Usage: "extra instruction file name tried after the profile's own (codex)"},
			&cli.BoolFlag{Name: "no-globals", Usage: "leave out global files from the home directory"},
			jsonFlag(),
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
					jsonFlag(),
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
				Flags:  []cli.Flag{stateFlag, markersFlag, jsonFlag()},
				Action: contextResumeAction,
			},
		},
	}
}

// contextOptions are what `workforce context` looks at: the directory Dir
// (the working directory when empty) as the harness or profile Harness
// sees it, with the profile Profile forces, and the discovery settings.
type contextOptions struct {
	Dir, Harness, Profile string
	// Markers are the root markers, comma-separated (the profile's when
	// empty).
	Markers   string
	MaxBytes  int
	Fallbacks []string
	NoGlobals bool
	JSON      bool
	Env       procEnv
}

func contextAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("%s takes at most one directory", c.Command.Name)
	}
	opts := contextOptions{
		Dir: c.Args().First(), Harness: c.String("harness"), Profile: c.String("profile"), Markers: c.String("root-markers"),
		MaxBytes: c.Int("max-bytes"), Fallbacks: c.StringSlice("fallback"), NoGlobals: c.Bool("no-globals"), JSON: c.Bool("json"),
		Env: newProcEnv(),
	}
	return runContext(c.Context, newStreams(c), opts)
}

func runContext(ctx context.Context, ios *iostreams, opts contextOptions) error {
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = opts.Env.dir(); err != nil {
			return err
		}
	}
	p, version, err := contextProfile(ctx, ios, opts)
	if err != nil {
		return err
	}
	o := discoverOptions(opts.Env, p, opts.Markers)
	o.MaxBytes = opts.MaxBytes
	o.Fallbacks = opts.Fallbacks
	o.NoGlobals = opts.NoGlobals
	res, err := discover.Chain(p, dir, o)
	if err != nil {
		return err
	}
	harness := p.Harness
	if harness == "" {
		harness = p.Name
	}
	out := report.Context{Harness: harness, Version: version, Profile: p.Name, Dir: res.Dir, Root: res.Root, Files: []report.ContextFile{}, Problems: res.Problems, Text: res.Text}
	for _, f := range res.Files {
		out.Files = append(out.Files, report.ContextFile{Path: f.Path, Bytes: f.Bytes, Truncated: f.Truncated, Scope: f.Scope, Content: f.Text})
	}
	for _, f := range res.Dropped {
		out.Dropped = append(out.Dropped, report.ContextFile{Path: f.Path, Bytes: f.Bytes, Scope: f.Scope})
	}
	if opts.JSON {
		return writeJSON(ios.Out, out)
	}
	w := ios.Out
	for _, p := range out.Problems {
		warnf(ios.Err, "cannot read %s", quote.Name(p))
	}
	fmt.Fprintf(w, "harness: %s (profile %s)\nroot: %s\n", out.Harness, out.Profile, quote.Name(out.Root))
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
		fmt.Fprintf(w, "  %-7s %8d B  %s%s\n", f.Scope, f.Bytes, quote.Name(f.Path), note)
	}
	for _, f := range out.Dropped {
		fmt.Fprintf(w, "  dropped %8d B  %s\n", f.Bytes, quote.Name(f.Path))
	}
	fmt.Fprintf(w, "text:\n%s\n", quote.Block(out.Text))
	return nil
}

// contextProfile is the profile of `context`: --harness names a harness,
// whose installed version picks the profile (--profile forces one), or a
// profile itself.
func contextProfile(ctx context.Context, ios *iostreams, opts contextOptions) (discover.Profile, string, error) {
	name := opts.Harness
	if name == "" {
		name = contextHarness(ios, opts.Env)
	}
	if persona.IsHarness(name) {
		return harnessProfile(ctx, ios.Err, opts.Env, opts.Profile, name)
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
	if opts.Profile != "" {
		return p, "", usageError(fmt.Errorf("--profile goes with --harness claude, opencode, codex or gemini, not with the profile %s", name))
	}
	return p, "", nil
}

// contextHarness is the harness context shows without --harness: claude,
// else the first installed (a note says which), else codex with a
// warning naming how to install one.
func contextHarness(ios *iostreams, env procEnv) string {
	h, err := harness.FirstInstalled(env.Environ)
	var none *harness.NoneInstalledError
	switch {
	case errors.As(err, &none):
		warnf(ios.Err, "%v; showing codex's instruction discovery (%s)", err, none.Hint())
		return persona.HarnessCodex
	case h != persona.HarnessClaude:
		notef(ios.Err, "claude is not installed: showing %s, the first installed of %s (--harness chooses)", h, strings.Join(persona.Harnesses, ", "))
	}
	return h
}

// discoverOptions are the discovery options of profile p in the
// environment, with the root markers of --root-markers when given.
func discoverOptions(env procEnv, p discover.Profile, markers string) discover.Options {
	o := discover.FromEnv(p, env.getenv)
	if markers != "" {
		o.Markers = discover.SplitList(markers)
	}
	return o
}

// contextResolveOptions are what `workforce context resolve` resolves:
// Paths, with the resolver state in the file State, made from Dir (the
// working directory when empty) on first use.
type contextResolveOptions struct {
	Paths      []string
	State, Dir string
	MaxFiles   int
	Markers    string
	JSON       bool
	Env        procEnv
}

func contextResolveAction(c *cli.Context) error {
	if c.NArg() == 0 {
		return usagef("resolve needs at least one path")
	}
	opts := contextResolveOptions{
		Paths: c.Args().Slice(), State: c.String("state"), Dir: c.String("dir"), MaxFiles: c.Int("max-files"),
		Markers: c.String("root-markers"), JSON: c.Bool("json"), Env: newProcEnv(),
	}
	return runContextResolve(c.Context, newStreams(c), opts)
}

func runContextResolve(_ context.Context, ios *iostreams, opts contextResolveOptions) error {
	p := discover.Profiles["agents"]
	o := discoverOptions(opts.Env, p, opts.Markers)
	state, err := discover.LoadState(opts.State)
	if err != nil {
		return err
	}
	if state == nil {
		dir := opts.Dir
		if dir == "" {
			if dir, err = opts.Env.dir(); err != nil {
				return err
			}
		}
		if state, err = discover.NewState(p, dir, o); err != nil {
			return err
		}
	}
	res, err := state.Resolve(p, opts.Paths, opts.MaxFiles, o)
	if err != nil {
		return err
	}
	if err := saveState(state, opts.State); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(ios.Out, toreport.Resolution(*res))
	}
	fmt.Fprint(ios.Out, discover.ResolveReminder(res))
	return nil
}

// saveState saves the resolver state to path.
func saveState(state *discover.State, path string) error {
	if err := state.Save(path); err != nil {
		return fmt.Errorf("cannot save the resolver state: %w", err)
	}
	return nil
}

// contextResumeOptions are what `workforce context resume` compares: the
// resolver state in the file State with the session started again in Dir
// (the working directory when empty).
type contextResumeOptions struct {
	Dir, State string
	Markers    string
	JSON       bool
	Env        procEnv
}

func contextResumeAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("%s takes at most one directory", c.Command.Name)
	}
	opts := contextResumeOptions{Dir: c.Args().First(), State: c.String("state"), Markers: c.String("root-markers"), JSON: c.Bool("json"), Env: newProcEnv()}
	return runContextResume(c.Context, newStreams(c), opts)
}

func runContextResume(_ context.Context, ios *iostreams, opts contextResumeOptions) error {
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = opts.Env.dir(); err != nil {
			return err
		}
	}
	p := discover.Profiles["agents"]
	o := discoverOptions(opts.Env, p, opts.Markers)
	state, err := discover.LoadState(opts.State)
	if err != nil {
		return err
	}
	if state == nil {
		return fmt.Errorf("no resolver state at %s", opts.State)
	}
	diff, now, err := state.Resume(p, dir, o)
	if err != nil {
		return err
	}
	if err := saveState(now, opts.State); err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(ios.Out, toreport.Resume(*diff))
	}
	fmt.Fprint(ios.Out, discover.ResumeReminder(diff))
	return nil
}
