package session

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/skill"
)

// planSkills plans the persona's skills (package skill): where they land in
// the sandbox for the effective harness, which repository skills they
// replace (hidden from the copy), and the cache state of each remote one.
// With InRepo they are skipped, with a warning: nothing is written into
// the repository.
func (p *Plan) planSkills(o PlanOptions, tree string) error {
	r := o.Resolved
	if o.InRepo {
		var ids []string
		for _, sk := range r.Skills {
			ids = append(ids, sk.ID)
		}
		p.Warnings = append(p.Warnings, fmt.Sprintf("--install-in-repo: the persona's skills (%s) are not installed; nothing is written into the repository", strings.Join(ids, ", ")))
		return nil
	}
	version := p.HarnessVersion
	if p.Profile == "" && o.Profile != nil {
		// Not asked yet (no sidecar): the skill directories depend on the
		// installed version too.
		_, v, err := o.Profile(r.Harness)
		if err != nil {
			return err
		}
		version = v
	}
	sp, err := skill.NewPlan(skill.Options{
		Skills: r.Skills, Harness: r.Harness, Version: version,
		Root: o.Root, Cwd: o.Cwd, Tree: tree,
		Cache: skill.NewCache(o.Home), Refresh: o.RefreshSkills,
	})
	if err != nil {
		return err
	}
	p.Skills = sp
	p.mount.HidePaths = append(p.mount.HidePaths, sp.Hide()...)
	p.Warnings = append(p.Warnings, sp.Notes...)
	for _, it := range sp.Items {
		for _, rel := range it.Replaces {
			p.Warnings = append(p.Warnings, fmt.Sprintf("skill %s replaces the repository's %s in the sandbox", it.Name, rel))
		}
	}
	return nil
}

// StoppedError is a run that a signal stopped while its skills were
// fetched, before anything was made: the command exits as the signal
// asks (128+n), as a run stopped while its sandbox was made does
// (Result.Stopped). Err is how the fetch ended.
type StoppedError struct {
	Signal os.Signal
	Err    error
}

func (e *StoppedError) Error() string {
	return fmt.Sprintf("stopped (%v) while the skills were fetched: %v", e.Signal, e.Err)
}

func (e *StoppedError) Unwrap() error { return e.Err }

// fetchSkills gets the skills' content, fetching into the cache what it
// does not hold, before anything is made: a skill that cannot be fetched
// fails the run with nothing created. SIGINT, SIGTERM and SIGHUP stop the
// fetch (sigs, the run's handler, in phaseCreate). When a fetched skill's
// name changed where it lands, the copy's hidden files follow.
func (p *Plan) fetchSkills(sigs *signals, o RunOptions) ([]mount.Dir, error) {
	ctx, cancel := sigs.enter(context.Background(), phaseCreate)
	defer cancel()
	before := p.Skills.Hide()
	err := p.Skills.Fetch(ctx, func(it *skill.Item) {
		if o.Progress != nil {
			o.Progress("skill", it.Source)
		}
	})
	if err != nil {
		return nil, err
	}
	if after := p.Skills.Hide(); !slices.Equal(before, after) {
		hide := p.mount.HidePaths[:0:0]
		for _, h := range p.mount.HidePaths {
			if !slices.Contains(before, h) {
				hide = append(hide, h)
			}
		}
		p.mount.HidePaths = append(hide, after...)
	}
	return p.Skills.Dirs(), nil
}
