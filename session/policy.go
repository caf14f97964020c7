package session

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/persona"
)

// This file holds the run policy: what decides, before a run is planned,
// where it runs and with what. The command line gathers the user's
// choices; these functions apply the persona's and the configuration's.

// SandboxOff reports whether the persona r turns the sandbox off
// ("mount": {"enabled": false}, agentworkforce's switch): the run then
// goes in the repository itself, as without a sandbox.
func SandboxOff(r *persona.Resolved) bool {
	m := r.Mount.Enabled
	return m != nil && !*m
}

// RootError is the error of a project root a run cannot use: one that
// cannot be resolved (Err), or one that does not contain the working
// directory Cwd (Err nil).
type RootError struct {
	Root, Cwd string
	Err       error
}

func (e *RootError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("project root %s: %v", e.Root, e.Err)
	}
	return fmt.Sprintf("the project root %s does not contain the working directory %s", e.Root, e.Cwd)
}

func (e *RootError) Unwrap() error { return e.Err }

// Dirs returns the canonical (symlinks resolved) working directory of a
// run started in wd, and its project root: root, relative to wd, which
// must contain the working directory (a *RootError otherwise), or, when
// root is empty, the nearest directory at or above the working directory
// holding a root marker, else the working directory.
func Dirs(wd, root string) (realRoot, cwd string, err error) {
	if cwd, err = filepath.EvalSymlinks(wd); err != nil {
		return "", "", err
	}
	if root == "" {
		return home.ProjectRoot(cwd, home.RootMarkers), cwd, nil
	}
	abs := root
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(wd, abs)
	}
	if realRoot, err = filepath.EvalSymlinks(abs); err != nil {
		return "", "", &RootError{Root: root, Cwd: cwd, Err: err}
	}
	if !pathutil.Within(realRoot, cwd) {
		return "", "", &RootError{Root: root, Cwd: cwd}
	}
	return realRoot, cwd, nil
}

// Inputs resolves the input values of r, from the explicit ones, the
// environment (getenv) and the defaults, substitutes them into r's system
// prompt, and returns them for the instruction text (PlanOptions.Inputs).
func Inputs(r *persona.Resolved, explicit map[string]string, getenv func(string) string) (map[string]string, error) {
	values, err := r.ResolveInputs(explicit, getenv)
	if err != nil {
		return nil, err
	}
	r.SystemPrompt = persona.Substitute(r.SystemPrompt, values)
	return values, nil
}

// HoldsForReview reports whether a run holds the agent's work for review: as
// asked, else as "review" in the workforce home's config.json says (no
// when it cannot be read).
func HoldsForReview(dir string, asked *bool) bool {
	if asked != nil {
		return *asked
	}
	cfg, err := home.ReadConfig(dir)
	return err == nil && cfg.Review
}

// Timeout is the time limit of the plan's run: the one asked for (a
// negative one is none), else, when nobody is at a terminal to stop the
// harness (attended false), the persona's harnessSettings.timeoutSeconds,
// else none.
func (p *Plan) Timeout(asked *time.Duration, attended bool) time.Duration {
	if asked != nil {
		return max(*asked, 0)
	}
	if attended {
		return 0
	}
	return p.inv.Timeout
}
