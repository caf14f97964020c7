package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/author"
	"github.com/seed-3bc194a6/workforce/install"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/report"
	"github.com/seed-3bc194a6/workforce/run"
	"github.com/seed-3bc194a6/workforce/toreport"
	"github.com/urfave/cli/v2"
)

func createCommand() *cli.Command {
	return &cli.Command{
		Name:      "create",
		Usage:     "make a new persona with the persona-author persona, then validate and install it",
		ArgsUsage: "[DESCRIPTION|-]",
		Description: `Runs the built-in persona-author persona (or yours of that id) in a sandbox
whose project is an empty staging directory, <home>/create/<time>-<random>/:
the agent writes the new persona there, <id>.json with its sidecars, and may
read your project (not write it). When it is done, workforce checks what it
wrote as workforce validate does, then installs it as workforce install
does (whole or not at all; the agent installs nothing), and prints where the
persona is and how to run it. When what the agent wrote is not valid, or
would replace a persona (without --overwrite), nothing is installed, the
errors name each file, and the staging directory is kept for you to look at.

Without DESCRIPTION, create talks with you: the persona author runs
interactively on your terminal and asks what the persona should do. With
DESCRIPTION (or - to read it from stdin), it runs unattended, as
workforce run PERSONA TASK does, on that description.

--save-in-directory says where the persona lands:
  cwd      the project layer (.agentworkforce/workforce/personas at the
           nearest directory with .git, or the working directory)
  user     the first personaDirs entry of <home>/config.json (by default
           <home>/personas)
  dir:N    the N-th personaDirs entry (workforce sources list)
  library  the personas/ directory of the catalog repository you are in
           (one whose personas/ package runs workforce's generator);
           refused elsewhere
  PATH     that directory
The default is "create": {"saveIn": ...} of <home>/config.json, else cwd;
--save-default stores the --save-in-directory given there.

Exit status: 0 installed; 1 the persona author's run failed, or what it
wrote is no valid persona; 3 a persona of that id is in the target; 127 the
harness is not installed; 124 or 128+n when a time limit or a signal
stopped the run (docs/create.md).

Example:

   workforce create
   workforce create --save-in-directory=user --save-default
   workforce create "reviews SQL migrations for locking and rollback safety"
   workforce create - --save-in-directory=library < brief.md`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "save-in-directory", Usage: "where the new persona lands: cwd, user, dir:N, library or a PATH (default: \"create\" in <home>/config.json, else cwd)"},
			&cli.BoolFlag{Name: "save-default", Usage: "store --save-in-directory as the default, \"create\": {\"saveIn\": ...} in <home>/config.json"},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace a persona of the same id in the target"},
			&cli.StringFlag{Name: "tier", Usage: "the persona-author tier to run (default: its defaultTier)"},
			&cli.StringFlag{Name: "harness", Usage: "run the persona author on this harness instead of the tier's: claude, opencode, codex or gemini"},
		},
		Action: createAction,
	}
}

// createOptions are what `workforce create` makes: a persona described by
// Description (nil: asked interactively), saved in SaveIn (empty: the
// configured default), with the persona author on Tier and Harness when
// set.
type createOptions struct {
	Description   *string
	SaveIn        string
	SaveDefault   bool
	Overwrite     bool
	Tier, Harness string
	Env           procEnv
}

var createRules = []flagRule{
	{flag: "save-default", needs: "save-in-directory", err: "--save-default stores the --save-in-directory given, and none is",
		hint: "workforce create --save-in-directory=user --save-default"},
}

func createAction(c *cli.Context) error {
	if c.NArg() > 1 {
		return usagef("create takes at most one description, quoted (or - to read it from stdin)")
	}
	if err := checkFlags(c, createRules...); err != nil {
		return err
	}
	if c.IsSet("save-in-directory") && strings.TrimSpace(c.String("save-in-directory")) == "" {
		return usagef("--save-in-directory needs a value: cwd, user, dir:N, library or a path")
	}
	opts := createOptions{
		SaveIn: strings.TrimSpace(c.String("save-in-directory")), SaveDefault: c.Bool("save-default"), Overwrite: c.Bool("overwrite"),
		Tier: c.String("tier"), Harness: c.String("harness"), Env: newProcEnv(),
	}
	if h := opts.Harness; h != "" && !persona.IsKnownHarness(h) {
		return unknownHarness(h, persona.Harnesses)
	}
	ios := newStreams(c)
	if c.NArg() == 1 {
		d, err := readTask(ios.In, c.Args().Slice(), "")
		if err != nil {
			return usagef("the description is empty")
		}
		opts.Description = &d
	}
	return runCreate(c.Context, ios, opts)
}

// resolveCreateTarget returns the target choice names, given in the
// working directory of env with the workforce home home.
func resolveCreateTarget(env procEnv, home, choice string) (author.Target, error) {
	return author.Resolve(home, choice, env.dir, func() (string, error) { return layerTarget(env, "", false) })
}

func runCreate(ctx context.Context, ios *iostreams, opts createOptions) error {
	home, err := opts.Env.home()
	if err != nil {
		return err
	}
	choice, fromConfig, err := author.Choice(home, opts.SaveIn)
	if err != nil {
		return err
	}
	target, err := resolveCreateTarget(opts.Env, home, choice)
	if err != nil {
		var nc *author.NotCatalogError
		switch {
		case fromConfig:
			return &diag.Diagnostic{File: homedir.ConfigPath(home), Field: "create.saveIn", Message: err.Error()}
		case errors.As(err, &nc):
			return usageError(fmt.Errorf("--save-in-directory=library: %w", err),
				"run create inside a catalog repository, or use --save-in-directory=cwd for this project's layer, user for yours, or a PATH")
		}
		return usageError(fmt.Errorf("--save-in-directory=%s: %w", choice, err))
	}
	if opts.Description == nil && !ios.InTTY {
		return usageError(errors.New("create talks with the persona author on a terminal, and stdin is none"),
			`give it the description instead: workforce create "what the persona does" (or - to read it from stdin)`)
	}
	if opts.SaveDefault {
		if err := homedir.SetCreateSaveIn(home, target.Store); err != nil {
			return err
		}
		notef(ios.Err, "create saves new personas in %s by default now (%s)", target.Store, homedir.ConfigPath(home))
	}
	wd, err := opts.Env.dir()
	if err != nil {
		return err
	}
	stage, err := author.NewStage(home)
	if err != nil {
		return err
	}
	written := filepath.Join(stage, "personas")
	authorEnv := opts.Env
	authorEnv.Dir = written // the staging directory is the agent's project
	ro := runOptions{
		Ref: author.Ref(opts.Tier), Harness: opts.Harness, ForeignModelInherits: true, Root: written, Env: authorEnv, Review: new(bool),
		Inputs: map[string]string{"PERSONA": author.Brief(opts.Description, target, homedir.ProjectRoot(wd, homedir.RootMarkers))},
	}
	if err := runAuthor(ctx, ios, ro, opts.Description); err != nil {
		author.RemoveIfEmpty(stage, written)
		var ee *exitError
		var re *run.Error
		if _, serr := os.Stat(written); serr == nil && errors.As(err, &ee) {
			ee.hints = append(ee.hints, "what it wrote is kept in "+written)
		} else if serr == nil && errors.As(err, &re) {
			re.Hints = append(re.Hints, "what it wrote is kept in "+written)
		}
		return err
	}
	return installCreated(ctx, ios, opts, target, stage, written)
}

// runAuthor runs the persona author as ro says: interactively, or with
// description unattended, its result taken from the run (run.Outcome)
// and its summary printed on stderr. A run that ended otherwise than
// succeeded, or denied (the author may have tried what its permissions
// refuse, such as a command that would ask; what it wrote is checked next
// either way), is an error with the run's exit status.
func runAuthor(ctx context.Context, ios *iostreams, ro runOptions, description *string) error {
	fail := func(status int, what string) error {
		return withCode(status, fmt.Errorf("the persona author's run %s: nothing installed", what))
	}
	if description == nil {
		err := runPersona(ctx, ios, ro)
		var s silentExit
		switch {
		case err == nil || errors.As(err, &s) && s == exitOK:
			return nil
		case errors.As(err, &s):
			return fail(int(s), fmt.Sprintf("ended with exit status %d", int(s)))
		}
		return err
	}
	task := "Write the persona: " + *description
	ro.Task = &task
	r, err := run.Prepare(ctx, ro.toRun(), runHooks(ctx, ios, ro.Env))
	if err != nil {
		return err // it never started
	}
	out, err := r.Start(run.Streams{Err: ios.Err})
	if out == nil || out.Result == nil {
		if err == nil {
			err = errors.New("the persona author's run left no result")
		}
		r.Finish(out, errorStatus(err), failure(err))
		return err // it never started
	}
	res := *out.Result
	if err != nil {
		printError(ios.Err, err)
	}
	status := oneShotStatus(res.Status, out.Session.Signal)
	r.Finish(out, status, nil)
	printOneShot(ios.Err, ios.Err, res, nil)
	switch res.Status {
	case report.StatusSucceeded:
		return nil
	case report.StatusDenied:
		warnf(ios.Err, "%s", author.Refused(len(res.Denials)))
		return nil
	}
	return fail(oneShotStatus(res.Status, nil), fmt.Sprintf("ended with status %s", res.Status))
}

// installCreated checks and installs the personas the agent wrote into
// written, in the staging directory stage, into the target; the staging
// directory goes once they are installed, and stays, named, otherwise.
func installCreated(ctx context.Context, ios *iostreams, opts createOptions, target author.Target, stage, written string) error {
	kept := "what the agent wrote is kept in " + written
	files, err := filepath.Glob(filepath.Join(written, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		author.RemoveIfEmpty(stage, written)
		return withCode(exitFailure, errors.New("the persona author wrote no persona (no <id>.json in its directory): nothing installed"),
			"run create again and ask for the persona's JSON file")
	}
	// As workforce validate checks them, in your layers: errors at
	// file:line:column.
	vios := &iostreams{Out: io.Discard, Err: ios.Err} // not its "ok" lines
	if err := validatePersonas(vios, opts.Env, []string{written}); err != nil {
		return withCode(exitFailure, errors.New("the persona the agent wrote is not valid: nothing installed"), kept)
	}
	if err := author.WritePackage(stage); err != nil {
		return err
	}
	p, cleanup, err := install.Open(ctx, stage, install.OpenOptions{})
	defer cleanup()
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("the persona the agent wrote cannot be installed: nothing installed:\n%w", err), kept)
	}
	dir := target.Dir
	if target.Layer == "cwd" {
		dir = "" // the project layer: installLayers adds it when it is new
	}
	res, err := install.Pack(p, install.Options{Target: target.Dir, Overwrite: opts.Overwrite, Layers: installLayers(opts.Env, target.Dir, dir, false)})
	if err != nil {
		err = installConflict(ios.Err, err, "installed")
		var ee *exitError
		if errors.As(err, &ee) {
			ee.hints = append(ee.hints, kept)
			return ee
		}
		return withCode(exitFailure, err, kept)
	}
	os.RemoveAll(stage)
	outsideNote(ios.Err, res)
	overrideNotes(ios.Err, res.Installed)
	toreport.Install(*res).WriteCreatedText(ios.Out)
	if target.Layer == "library" {
		hintf(ios.Err, "go generate ./personas builds it into the catalog (in %s)", filepath.Dir(target.Dir))
	}
	return nil
}
