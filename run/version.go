package run

import (
	"fmt"

	"github.com/seed-3bc194a6/workforce/persona"
)

// Version finds the persona ref names in cat and resolves it as a run on
// harness h ("": the tier's) with model ("": the tier's) resolves it,
// and returns its hash (PersonaHash), which such a run reports in its
// result: the version of the persona workforce eval records and keys its
// attempts on. A harness workforce cannot run is an error.
func Version(cat *persona.Catalog, ref, h, model string) (*persona.Persona, *persona.Resolved, string, error) {
	p, r, err := cat.Lookup(ref)
	if err != nil {
		return nil, nil, "", err
	}
	if h != "" {
		if err := persona.Runnable(h); err != nil {
			return nil, nil, "", err
		}
		r.Harness = h
	}
	if model != "" {
		r.Model = model
	}
	return p, r, PersonaHash(r), nil
}

// CheckEntry checks what an entry of a batch or a case of an evaluation
// asks of persona ref on this machine before anything runs: its inputs
// (one the persona has not, one it requires that neither inputs nor
// env's environment gives) and that its run can reach model ("": the
// tier's) on harness h ("": the tier's) (CheckEntryModel).
func CheckEntry(cat *persona.Catalog, ref, h, model string, inputs map[string]string, env Env) error {
	_, r, err := cat.Lookup(ref)
	if err != nil {
		return err
	}
	if _, err := r.ResolveInputs(inputs, env.Getenv); err != nil {
		return fmt.Errorf("inputs: %w", err)
	}
	return CheckEntryModel(cat, ref, h, model, env.Environ)
}
