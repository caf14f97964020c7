package eval

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/report"
)

// Persona is a persona an evaluation runs, on one harness, as the
// caller's Lookup resolved it: its id, tier, harness, content hash (its
// version) and layer.
type Persona struct {
	// Ref is the reference as the file or --persona gave it.
	Ref     string `json:"ref"`
	ID      string `json:"persona"`
	Tier    string `json:"tier"`
	Harness string `json:"harness"`
	Hash    string `json:"hash"`
	Layer   string `json:"layer,omitempty"`
	// Switched says the harness is --harness's, not the tier's: the run
	// is given it.
	Switched bool `json:"switched,omitempty"`
}

// Key names the persona on its harness: PERSONA@TIER/HARNESS.
func (p Persona) Key() string { return p.ID + "@" + p.Tier + "/" + p.Harness }

// Lookup resolves a persona reference (PERSONA[@TIER]) on a harness (""
// for its tier's) and a model ("" for its tier's), or says why it
// cannot: the command layer's catalog, and the hash of the persona as a
// run given that harness and model resolves it (and reports it).
type Lookup func(ref, harness, model string) (Persona, error)

// Cell is one attempt of the matrix: a case, a persona on a harness, an
// attempt's number, and the batch task that runs it.
type Cell struct {
	Case    *Case
	Persona Persona
	Attempt int
	Task    batch.Prepared
}

// matrix is every attempt of cases × personas × attempts, in that
// order; base is the case file's directory, remote whether the tasks go
// to a queue (no directory of this machine).
func matrix(cases []Case, personas []Persona, attempts int, base string, remote bool) []Cell {
	var cells []Cell
	used := map[string]bool{}
	for i := range cases {
		c := &cases[i]
		for _, p := range personas {
			for n := 1; n <= attempts; n++ {
				t := taskOf(c, p, n)
				t.ID = taskID(used, c.ID, p, n)
				pt := batch.Prepared{Task: t, Tier: p.Tier, Harness: p.Harness}
				if !remote {
					pt.Dir = t.ProjectDir(base)
				}
				cells = append(cells, Cell{Case: c, Persona: p, Attempt: n, Task: pt})
			}
		}
	}
	return cells
}

// taskOf is the batch task of attempt n of case c by persona p: its
// setup, check and protected files as the attempt's spec, the persona's
// hash in its digest (an edited persona's attempts run again).
func taskOf(c *Case, p Persona, n int) batch.Task {
	t := batch.Task{Persona: p.ID + "@" + p.Tier, Task: c.Task, Dir: c.Dir, Repo: c.Repo, Ref: c.Ref,
		Model: c.ModelFor(p.ID, p.Harness), Inputs: c.Inputs, Timeout: c.Timeout, Network: c.Network, PersonaHash: p.Hash,
		Attempt: &report.AttemptSpec{Setup: c.Setup, Check: c.Check, Protect: c.Protect,
			SetupTimeoutMS: c.SetupTimeout.Milliseconds(), CheckTimeoutMS: c.CheckTimeout.Milliseconds()}}
	if p.Switched {
		t.Harness = p.Harness
	}
	if t.Dir == "" && t.Repo == "" {
		t.Dir = "."
	}
	return t
}

// taskID is the id of attempt n of case id by persona p:
// CASE.PERSONA.TIER.HARNESS.N, a safe name of at most 100 bytes; one too
// long, or taken (the dots of two ids can meet), keeps the case's id and
// adds 12 hex digits of the whole.
func taskID(used map[string]bool, caseID string, p Persona, n int) string {
	id := fmt.Sprintf("%s.%s.%s.%s.%d", caseID, p.ID, p.Tier, p.Harness, n)
	if !batch.SafeName(id) || used[id] {
		sum := sha256.Sum256([]byte(strings.Join([]string{caseID, p.ID, p.Tier, p.Harness, fmt.Sprint(n)}, "\x00")))
		prefix := caseID
		if len(prefix) > 80 {
			prefix = prefix[:80]
		}
		id = prefix + "-" + hex.EncodeToString(sum[:6])
	}
	used[id] = true
	return id
}

// personasOf resolves each reference of refs on each harness of
// harnesses (none: the tier's), in that order: the problems name where
// the reference came from, personas[i] of the file (on its line, of
// lines) or --persona.
func personasOf(name string, refs, harnesses []string, lines []int, lookup Lookup) ([]Persona, Problems) {
	if len(harnesses) == 0 {
		harnesses = []string{""}
	}
	var out []Persona
	var probs Problems
	seen := map[string]bool{}
	for i, ref := range refs {
		for _, h := range harnesses {
			p, err := lookup(ref, h, "")
			if err != nil {
				pr := &Problem{File: name, Where: "--persona " + ref, Err: err}
				if lines != nil {
					pr.Line, pr.Where = lines[i], fmt.Sprintf("personas[%d]", i)
				}
				if h != "" {
					pr.Where += " on --harness " + h
				}
				probs = append(probs, pr)
				continue
			}
			p.Ref, p.Switched = ref, h != ""
			if !seen[p.Key()] {
				seen[p.Key()] = true
				out = append(out, p)
			}
		}
	}
	return out, probs
}

// DefaultID is the id of the evaluation of the case file at the absolute
// path abs: its name and a hash of its path (batch.IDFor).
func DefaultID(abs string) string { return batch.IDFor(abs) }
