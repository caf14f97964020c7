package native

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/persona"
)

// AgentDirs are the project directories, relative to the project root
// with slashes, each harness reads agent files from.
var AgentDirs = map[string]string{
	persona.HarnessClaude:   ".claude/agents",
	persona.HarnessOpencode: ".opencode/agents",
	persona.HarnessCodex:    ".codex/agents",
}

// ExportOptions say what PlanExport plans: the agent files of harness
// Harness in directory Dir, for tier Tier of the persona (all its tiers
// when empty).
type ExportOptions struct {
	Tier, Harness, Dir string
	// Check looks at each target: one that exists and is not a regular
	// file is an error, one that is a regular file a conflict unless
	// Overwrite.
	Check, Overwrite bool
}

// ExportFile is one agent file an export writes.
type ExportFile struct {
	Persona, Tier, Harness, Agent string
	// Path is where the file goes.
	Path string
	// Dropped are the persona values the file cannot say.
	Dropped []Dropped
	Data    []byte
}

// ExportPlan is what an export writes, and the targets that exist
// already (with ExportOptions.Check).
type ExportPlan struct {
	Files     []ExportFile
	Conflicts []string
}

// PlanExport plans the agent files of persona p: a persona without tiers
// gives one file named by its id; with tiers, one file per tier named
// ID-TIER, or, for the one tier o.Tier names, one named ID.
func PlanExport(p *persona.Persona, o ExportOptions) (*ExportPlan, error) {
	type job struct{ tier, name string }
	var jobs []job
	switch {
	case o.Tier != "":
		jobs = []job{{o.Tier, p.ID}}
	case p.Spec.Flat():
		jobs = []job{{p.Spec.EffectiveDefaultTier(), p.ID}}
	default:
		for _, t := range p.Spec.TierNames() {
			jobs = append(jobs, job{t, p.ID + "-" + t})
		}
	}
	plan := &ExportPlan{}
	for _, j := range jobs {
		r, err := p.Resolve(j.tier)
		if err != nil {
			return nil, err
		}
		f, err := Export(p.Spec.Description, r, o.Harness, j.name)
		if err != nil {
			return nil, fmt.Errorf("%s@%s: %w", p.ID, j.tier, err)
		}
		e := ExportFile{Persona: p.ID, Tier: j.tier, Harness: o.Harness, Agent: f.Agent, Path: filepath.Join(o.Dir, f.Name), Dropped: f.Dropped, Data: f.Data}
		if fi, err := os.Lstat(e.Path); err == nil && o.Check {
			if !fi.Mode().IsRegular() {
				// Checked before anything is written: a rename onto it
				// would fail half-way.
				return nil, fmt.Errorf("%s exists and is not a file; nothing exported", e.Path)
			}
			if !o.Overwrite {
				plan.Conflicts = append(plan.Conflicts, e.Path)
			}
		}
		plan.Files = append(plan.Files, e)
	}
	return plan, nil
}

// Write writes the plan's files into dir, made if needed: every file is
// staged beside its target before any is renamed into place, so that an
// export that fails on one file leaves the others as they were.
func (p *ExportPlan) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var pending []*renameio.PendingFile
	defer func() {
		for _, t := range pending {
			t.Cleanup()
		}
	}()
	for _, e := range p.Files {
		t, err := renameio.NewPendingFile(e.Path, renameio.WithPermissions(0o644), renameio.WithTempDir(dir))
		if err != nil {
			return err
		}
		pending = append(pending, t)
		if _, err := t.Write(e.Data); err != nil {
			return err
		}
	}
	for _, t := range pending {
		if err := t.CloseAtomicallyReplace(); err != nil {
			return err
		}
	}
	return nil
}
