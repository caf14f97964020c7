package run

import (
	"fmt"
	"slices"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/persona"
)

// ModelProblems are what workforce validate adds to v (persona.Validate's
// checks): each tier of a persona whose model its harness cannot reach
// (harness.CheckModel, in the environment environ with the persona's
// env), an error at the checked file that set the model, once per file,
// harness and model. Such a persona is refused at run time too
// (CheckModel).
func ModelProblems(v persona.Validation, environ []string) []*diag.Diagnostic {
	if v.Catalog == nil {
		return nil
	}
	var out []*diag.Diagnostic
	seen := map[string]bool{}
	for _, p := range v.Catalog.Personas {
		if p.Spec == nil {
			continue
		}
		for _, tier := range p.Spec.TierNames() {
			r, err := p.Resolve(tier)
			if err != nil {
				continue
			}
			file, field := p.Path, "model"
			if o, ok := r.Origins["model"]; ok && o.File != "" {
				file = o.File
			}
			if rt := p.Spec.Tiers[tier]; rt != nil && rt.Model != "" {
				field = "tiers." + tier + ".model"
			}
			key := file + "\x00" + r.Harness + "\x00" + r.Model
			if seen[key] || !slices.Contains(v.Files, file) {
				continue
			}
			env := slices.Clone(environ)
			for k, val := range r.Env {
				env = append(env, k+"="+val)
			}
			if err := harness.CheckModel(r.Harness, r.Model, env, nil); err != nil {
				seen[key] = true
				out = append(out, &diag.Diagnostic{File: file, Field: field, Message: fmt.Sprintf("%s@%s: %v", p.ID, tier, err)})
			}
		}
	}
	return out
}
