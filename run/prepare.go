package run

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
)

// Prepare resolves the persona opts names, applies the run policy and
// plans the run; the plan's warnings go to hooks.Warn. A run refused by
// policy is an *Error; the plan's own refusal (settings the harness
// cannot apply) is left to Start, so that a dry run can show it.
func Prepare(ctx context.Context, opts Options, hooks Hooks) (*Run, error) {
	if err := refuseAttempt(opts); err != nil {
		return nil, err
	}
	lo, err := LoadOptions(opts.Env)
	if err != nil {
		return nil, err
	}
	p, r, err := resolve(opts, lo, hooks)
	if err != nil {
		return nil, err
	}
	inRepo, err := sandboxOff(opts, p, r, hooks)
	if err != nil {
		return nil, err
	}
	if inRepo && opts.Attempt != nil {
		return nil, refused(fmt.Errorf("persona %s sets mount.enabled false, which runs the harness in the repository: an attempt's setup and check need a sandbox", p.ID))
	}
	if name := opts.Profile; name != "" {
		if p, ok := discover.Lookup(name); !ok || p.Harness != r.Harness {
			return nil, usage(fmt.Errorf("--profile %s is not a discovery profile of %s", name, r.Harness), "profiles: "+strings.Join(discover.Names(), ", "))
		}
	}
	env := opts.Env
	values, err := session.Inputs(r, opts.Inputs, env.Getenv)
	if err != nil {
		return nil, err
	}
	sb, nw, err := opts.settings(env)
	if err != nil {
		return nil, err
	}
	if session.SandboxOff(r) && !opts.InstallInRepo && sb.Mode != confine.Off && !opts.DryRun {
		// A persona file can come from the project, which an agent can
		// write: turning the sandbox off takes the user's word.
		return nil, usage(fmt.Errorf("persona %s sets mount.enabled false, which runs the harness in the repository, unconfined, while the write sandbox is %s", p.ID, sb.Mode),
			"pass --install-in-repo to run it so, or --sandbox=off")
	}
	root, cwd, err := dirs(env.Dir, opts.Root)
	if err != nil {
		return nil, err
	}
	plan, err := session.NewPlan(session.PlanOptions{
		Home: env.Home, Persona: p.ID, Layers: p.Chain, Resolved: r, Inputs: values, RefreshSkills: opts.RefreshSkills,
		Root: root, Cwd: cwd, Extra: opts.Extra, Env: env.Environ, InRepo: inRepo, AllowUnmapped: opts.AllowUnmapped,
		OneShot: oneShotOf(opts.Task), Sandbox: sb, Network: nw, Version: hooks.Version,
		Tree: treeChoice(opts.Tree), Live: opts.Live, Reuse: opts.Reuse, Attempt: opts.Attempt != nil,
		Profile: func(h string) (discover.Profile, string, error) {
			if hooks.Profile == nil {
				p, st, _ := harness.VersionCache{}.Profile(ctx, h, env.Environ)
				return p, st.Version, nil
			}
			return hooks.Profile(opts.Profile, h)
		},
	})
	if err != nil {
		return nil, planError(err)
	}
	if opts.NoProjectPersonas {
		if w := ignoredProjectPersonas(lo, env.Dir); w != "" {
			plan.Warnings = append(plan.Warnings, w)
		}
	}
	if w := ProjectShadowWarning(p); w != "" {
		plan.Warnings = append(plan.Warnings, w)
	}
	for _, w := range plan.Warnings {
		hooks.warn("%s", w)
	}
	return &Run{Plan: plan, Persona: p, Home: env.Home, Hooks: hooks, opts: opts}, nil
}

// resolve loads the catalog of lo (without the project's layer with
// opts.NoProjectPersonas) and looks up the persona opts names, on
// opts.Harness when set, refusing one whose env sets a loader variable.
func resolve(opts Options, lo persona.Options, hooks Hooks) (*persona.Persona, *persona.Resolved, error) {
	lo.NoProject = opts.NoProjectPersonas
	cat, err := persona.Load(lo)
	if err != nil {
		return nil, nil, err
	}
	if id, _ := persona.SplitRef(opts.Ref); !persona.IsPattern(id) {
		if err := RefuseLoaderEnv(cat, id); err != nil {
			return nil, nil, err
		}
	}
	p, r, err := cat.Lookup(opts.Ref)
	if err != nil {
		if hooks.Catalog != nil {
			hooks.Catalog(cat, nil)
		}
		if opts.NoProjectPersonas && opts.Env.DirErr == nil {
			if w := ignoredProjectPersonas(lo, opts.Env.Dir); w != "" {
				hooks.warn("%s", w)
			}
		}
		return nil, nil, lookupError(err)
	}
	if err := RefuseLoaderEnv(cat, p.ID); err != nil {
		return nil, nil, err
	}
	if hooks.Catalog != nil {
		hooks.Catalog(cat, p)
	}
	switched := opts.Harness != "" && opts.Harness != r.Harness
	if opts.Harness != "" {
		r.Harness = opts.Harness
	}
	if err := persona.Runnable(r.Harness); err != nil {
		return nil, nil, refused(fmt.Errorf("%s@%s: %w", p.ID, r.Tier, err), "run it on another harness: --harness "+strings.Join(persona.Harnesses, "|"))
	}
	if opts.Model != "" {
		r.Model = opts.Model
		delete(r.Origins, "model")
	}
	err = CheckModel(p.ID, r, opts.Model != "", switched, opts.Extra, opts.Env.Environ)
	if err != nil && switched && opts.Model == "" && opts.ForeignModelInherits {
		hooks.warn("%s@%s's model %s is not one %s takes: %s runs with its own default model", p.ID, r.Tier, r.Model, r.Harness, r.Harness)
		r.Model, err = persona.ModelInherit, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

// CheckEntryModel is CheckModel for a batch entry of the catalog cat:
// the persona ref names on harness h ("" for its tier's) with model (""
// for its tier's), in the environment environ.
func CheckEntryModel(cat *persona.Catalog, ref, h, model string, environ []string) error {
	p, r, err := cat.Lookup(ref)
	if err != nil {
		return err
	}
	switched := h != "" && h != r.Harness
	if h != "" {
		r.Harness = h
	}
	if model != "" {
		r.Model = model
	}
	return CheckModel(p.ID, r, model != "", switched, nil, environ)
}

// CheckModel refuses the run of persona id (resolved as r) when its model
// is of a vendor its harness cannot reach (harness.CheckModel, in the
// environment environ with the persona's env, and the harness arguments
// extra): a usage error naming the model, the harness and what it
// takes, with a hint that says where the model came from (--model when
// flag, the tier's on a harness --harness switched to, the persona's
// file) and what to do.
func CheckModel(id string, r *persona.Resolved, flag, switched bool, extra, environ []string) error {
	env := append([]string(nil), environ...)
	for k, v := range r.Env {
		env = append(env, k+"="+v)
	}
	err := harness.CheckModel(r.Harness, r.Model, env, extra)
	var me *harness.ModelError
	if !errors.As(err, &me) {
		return err
	}
	others := "--harness " + strings.Join(me.Runs(), " or --harness ")
	switch {
	case flag:
		return usage(err, "pass a model "+r.Harness+" takes, or run on a harness that takes "+r.Model+": "+others)
	case switched:
		return usage(fmt.Errorf("%s@%s: the tier's %w", id, r.Tier, err),
			"--harness "+r.Harness+" keeps the tier's model: pass --model with a model "+r.Harness+" takes, or --model "+persona.ModelInherit+" for its own default")
	}
	where := "the persona's file"
	if o, ok := r.Origins["model"]; ok && o.File != "" {
		where = quote.Name(o.File)
	}
	return usage(fmt.Errorf("%s@%s: %w", id, r.Tier, err),
		"set a model "+r.Harness+" takes in "+where+" (workforce validate checks it), or pass --model for this run")
}

// sandboxOff says whether the run goes in the repository itself: with
// opts.InstallInRepo, or when persona p (resolved as r) sets
// mount.enabled false, which no flag that needs a sandbox goes with.
func sandboxOff(opts Options, p *persona.Persona, r *persona.Resolved, hooks Hooks) (bool, error) {
	if !session.SandboxOff(r) || opts.InstallInRepo {
		return opts.InstallInRepo, nil
	}
	for _, f := range []struct {
		name string
		on   bool
	}{{"keep", opts.Keep}, {"reuse", opts.Reuse}, {"sync-deletes", opts.SyncDeletes}, {"review", opts.Review != nil && *opts.Review},
		{"sync-committed", opts.SyncCommitted}, {"live", opts.Live}, {"sync-config", opts.SyncConfig}} {
		if f.on {
			return false, usage(fmt.Errorf("--%s needs a sandbox, and persona %s sets mount.enabled false", f.name, p.ID))
		}
	}
	hooks.warn("persona %s sets mount.enabled false: running in the repository without a sandbox, as --install-in-repo does", p.ID)
	return true, nil
}

// dirs are the project root and the working directory of a run in the
// working directory wd, with --root as given.
func dirs(wd, root string) (string, string, error) {
	realRoot, cwd, err := session.Dirs(wd, root)
	var re *session.RootError
	switch {
	case errors.As(err, &re) && re.Err != nil:
		return "", "", fmt.Errorf("--root %s: %w", root, re.Err)
	case errors.As(err, &re):
		return "", "", usage(fmt.Errorf("--root %s does not contain the working directory %s", root, re.Cwd))
	}
	return realRoot, cwd, err
}

// planError adds to an error of planning the hint of what to do.
func planError(err error) error {
	var gitDir *session.InGitDirError
	if errors.As(err, &gitDir) {
		return usage(err, "cd "+quote.Shell(gitDir.Root)+" first")
	}
	if errors.As(err, new(*session.ConfigRootError)) || errors.As(err, new(*session.TreeError)) {
		return usage(err)
	}
	return err
}

// treeChoice is the tree --tree asks for, zero when it was not given.
func treeChoice(t session.TreeMode) session.TreeChoice {
	if t == "" {
		return session.TreeChoice{}
	}
	return session.TreeChoice{Mode: t, Origin: "--tree"}
}

// Sandbox returns the write sandbox of a run in env: mode as asked
// (session.SandboxFor), with the paths allow names, relative to the
// working directory, added (one that cannot be allowed is a usage error,
// unless the mode is off).
func Sandbox(env Env, mode *confine.Mode, allow []string) (session.Sandbox, error) {
	sb, err := session.SandboxFor(env.Home, mode, env.Getenv)
	if err != nil || sb.Mode == confine.Off {
		return sb, err
	}
	for _, p := range allow {
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(env.Dir, p)
		}
		abs = filepath.Clean(abs)
		if err := session.CheckAllowIn(env.Home, abs); err != nil {
			return session.Sandbox{}, usage(fmt.Errorf("--sandbox-allow %s: %w", p, err))
		}
		sb.Allow = append(sb.Allow, abs)
	}
	return sb, nil
}

// DenyRead adds to sb the paths --sandbox-deny-read names, relative to
// the working directory: the confined harness may not read them. An
// empty path is a usage error; one that does not exist is denied all the
// same.
func DenyRead(sb *session.Sandbox, env Env, paths []string) error {
	for _, p := range paths {
		if p == "" || strings.IndexByte(p, 0) >= 0 {
			return usage(fmt.Errorf("--sandbox-deny-read %q: not a path", p))
		}
		abs := p
		if !filepath.IsAbs(p) {
			abs = filepath.Join(env.Dir, p)
		}
		sb.DenyRead = append(sb.DenyRead, session.ReadEntry{Path: filepath.Clean(abs), Origin: session.OriginDenyReadFlag})
	}
	return nil
}

// oneShotOf is the one-shot run of task; nil for none.
func oneShotOf(task *string) *harness.OneShot {
	if task == nil {
		return nil
	}
	return &harness.OneShot{Task: *task}
}

// RefuseLoaderEnv refuses a run of persona id when a file that is, or
// was meant to be, that persona sets a loader variable in its env
// (persona.LoaderVariable): the persona below it must not run in its
// place as if nothing happened. A usage error naming each file and
// variable.
func RefuseLoaderEnv(cat *persona.Catalog, id string) error {
	ds := cat.EnvRefusals(id)
	if len(ds) == 0 {
		return nil
	}
	msgs := make([]string, len(ds))
	for i, d := range ds {
		msgs[i] = d.Error()
	}
	return usage(fmt.Errorf("persona %s is refused: %s", id, strings.Join(msgs, "; ")),
		"a persona's env may not change what code the harness's programs load; remove the variable from the file")
}

// ProjectShadowWarning says so when persona p comes from the project
// layer and lies over a persona of its id in the user's layers or the
// catalog: a file of the repository, which an agent may have written,
// then decides the run instead of the user's. "" otherwise.
func ProjectShadowWarning(p *persona.Persona) string {
	if p.Layer != persona.LayerProject {
		return ""
	}
	how, lower := "laid over", p.Overrides
	if lower == nil {
		how, lower = "hiding", p.Shadows
	}
	if lower == nil {
		return ""
	}
	return fmt.Sprintf("persona %s comes from the project (%s), %s the one of the same id in the %s layer (%s): the repository's file decides this run; check it if you did not write it",
		p.ID, p.Path, how, lower.Layer, lower.File)
}

// ignoredProjectPersonas is the warning of a run that left out the
// project's personas (NoProjectPersonas) when the project has some,
// naming a few; "" when it has none.
func ignoredProjectPersonas(lo persona.Options, wd string) string {
	dir, files, err := persona.ProjectPersonas(lo)
	if dir == "" {
		return ""
	}
	if rel, rerr := filepath.Rel(wd, dir); rerr == nil && filepath.IsLocal(rel) {
		dir = rel
	}
	if err != nil {
		return fmt.Sprintf("the project's personas in %s are ignored (this run takes the user's and the built-in ones only); the directory cannot be read: %v", quote.Name(dir), err)
	}
	if len(files) == 0 {
		return ""
	}
	const most = 5
	names := make([]string, 0, most+1)
	for i, f := range files {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more", len(files)-most))
			break
		}
		names = append(names, quote.Name(f))
	}
	return fmt.Sprintf("the project's personas in %s (%s) are ignored: this run takes the user's and the built-in ones only", quote.Name(dir), strings.Join(names, ", "))
}
