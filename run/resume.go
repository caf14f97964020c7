package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/persona"
	"github.com/seed-3bc194a6/workforce/session"
)

// ResumeOptions are a resumed run (sessions resume): session ID
// continued with Task, the arguments Extra passed to the harness, the
// persona's input values Inputs, and the choices of the command line, as
// in Options.
type ResumeOptions struct {
	ID, Task string
	Extra    []string
	Inputs   map[string]string
	// Model continues the conversation on this model instead of the
	// tier's, as Options.Model.
	Model string

	SyncDeletes, SyncCommitted, SyncConfig, AllowUnmapped, NoHistory bool
	Review                                                           *bool
	Timeout                                                          *time.Duration
	SandboxFlags
	Env Env
}

// PrepareResume plans the one-shot run that continues the conversation
// of a kept session, with its persona resolved again from the catalog on
// the session's harness (a persona gone from it resumes with the
// harness's defaults, and a warning). Start runs it; the session stays,
// whatever the run's status.
func PrepareResume(ctx context.Context, opts ResumeOptions, hooks Hooks) (*Run, error) {
	env := opts.Env
	if env.HomeErr != nil {
		return nil, env.HomeErr
	}
	sb, nw, err := opts.settings(env)
	if err != nil {
		return nil, err
	}
	s, err := session.Open(env.Home, opts.ID)
	if err != nil {
		return nil, goneError(env.Home, err)
	}
	if err := s.Resumable(); err != nil {
		return nil, resumeError(s, err)
	}
	r, p, warned, err := resumePersona(opts.Env, s.Record, hooks)
	if err != nil {
		return nil, err
	}
	if opts.Model != "" {
		r.Model = opts.Model
	}
	if err := CheckModel(s.Record.Persona, r, opts.Model != "", false, opts.Extra, env.Environ); err != nil {
		return nil, err
	}
	values, err := session.Inputs(r, opts.Inputs, env.Getenv)
	if err != nil {
		return nil, err
	}
	var layers []persona.Origin
	if p != nil {
		layers = p.Chain
	}
	plan, err := session.NewPlan(session.PlanOptions{
		Home: env.Home, Persona: s.Record.Persona, Layers: layers, Resolved: r, Inputs: values,
		Extra: opts.Extra, Env: env.Environ, AllowUnmapped: opts.AllowUnmapped,
		OneShot: &harness.OneShot{Task: opts.Task}, Session: s, Sandbox: sb, Network: nw, Version: hooks.Version,
		Profile: func(h string) (discover.Profile, string, error) {
			if hooks.Profile == nil {
				p, st, _ := harness.VersionCache{}.Profile(ctx, h, env.Environ)
				return p, st.Version, nil
			}
			return hooks.Profile("", h)
		},
	})
	if err != nil {
		return nil, resumeError(s, err)
	}
	for _, w := range plan.Warnings {
		hooks.warn("%s", w)
	}
	task := opts.Task
	o := Options{SyncDeletes: opts.SyncDeletes, Keep: true, SyncCommitted: opts.SyncCommitted, SyncConfig: opts.SyncConfig,
		Review: opts.Review, Timeout: opts.Timeout, Task: &task, NoHistory: opts.NoHistory, Env: env}
	return &Run{Plan: plan, Persona: p, Home: env.Home, Hooks: hooks, opts: o, resumed: s, warned: warned}, nil
}

// resumePersona resolves the persona of a session's record again from the
// catalog, on the session's harness, and warns of what it warns of
// (warned). A persona that is gone is resumed with the harness's own
// defaults: p is then nil.
func resumePersona(env Env, rec session.Record, hooks Hooks) (r *persona.Resolved, p *persona.Persona, warned []string, err error) {
	lo, err := LoadOptions(env)
	if err != nil {
		return nil, nil, nil, err
	}
	cat, err := persona.Load(lo)
	if err != nil {
		return nil, nil, nil, err
	}
	warn := func(format string, args ...any) {
		warned = append(warned, fmt.Sprintf(format, args...))
		hooks.warn(format, args...)
	}
	if err := RefuseLoaderEnv(cat, rec.Persona); err != nil {
		return nil, nil, nil, err
	}
	p, ok := cat.Get(rec.Persona)
	if ok {
		r, err = p.Resolve(rec.Tier)
	}
	if !ok || err != nil {
		why := "is not in the catalog any more"
		if err != nil {
			why = fmt.Sprintf("cannot be resolved (%v)", err)
		}
		warn("persona %s@%s of session %s %s: the harness resumes with its own model, permissions and settings", rec.Persona, rec.Tier, rec.ID, why)
		return &persona.Resolved{ID: rec.Persona, Tier: rec.Tier, Harness: rec.Harness, Model: persona.ModelInherit}, nil, warned, nil
	}
	if hooks.Catalog != nil {
		hooks.Catalog(cat, p)
	}
	if w := ProjectShadowWarning(p); w != "" {
		warn("%s", w)
	}
	if r.Harness != rec.Harness {
		warn("persona %s@%s now runs on %s; session %s ran on %s, and resumes there", rec.Persona, rec.Tier, r.Harness, rec.ID, rec.Harness)
		r.Harness = rec.Harness
	}
	return r, p, warned, nil
}

// resumeError adds to an error of a resumed run the hint of what else
// to do with the session s.
func resumeError(s *session.Session, err error) error {
	if errors.As(err, new(*session.ConfigRootError)) {
		return usage(err)
	}
	var nr *session.NotResumableError
	if errors.As(err, &nr) {
		return refused(err, fmt.Sprintf("workforce sessions show %s shows the session; workforce run starts a new conversation", s.ID()))
	}
	return err
}
