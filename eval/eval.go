package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/renameio/v2"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

// Dir is the directory of the evaluations in the workforce home.
const Dir = "evals"

// Options say which case file to evaluate, on which personas and
// harnesses, how many times, and where its state goes.
type Options struct {
	// File is the case file as given; a relative one is under WorkDir.
	File, WorkDir string
	// Personas (--persona) replace the file's; Harnesses (--harness) run
	// each persona on each (none: the tier's).
	Personas, Harnesses []string
	// Attempts (--attempts) replaces the file's (default 1); K is the k
	// of pass@k (0: the attempts).
	Attempts, K int
	// ID names the evaluation; "" is DefaultID of the file.
	ID string
	// Lookup resolves the personas, and is called once the file is
	// parsed; its error for a reference is a problem of the file. The
	// hash it gives with a case's model is that of the case's attempts'
	// tasks (an edited persona's attempts run again), and what their
	// runs' reported hashes are compared with.
	Lookup Lookup
	// Check, when set, checks what a case asks of a persona on a harness
	// ("": the tier's) on this machine: its inputs, its model ("": the
	// tier's). Not for a queue: a worker's environment and harnesses are
	// its own.
	Check func(ref, harness, model string, inputs map[string]string) error
	// Remote, when set, checks a case's task for a queue ("" when it may
	// go there), as batch.LoadOptions.Remote: the cases name a
	// repository, and no directory of this machine is checked.
	Remote func(batch.Task) string
}

// FileError is a case file that is wrong, or names what is not there (a
// persona, a directory): nothing runs. Err is Problems, or the file's
// read error.
type FileError struct{ Err error }

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Hints are what to say after the problems: how many there are, when
// more than one.
func (e *FileError) Hints() []string {
	if n := e.Count(); n > 1 {
		return []string{fmt.Sprintf("%d problems in the case file; nothing was run", n)}
	}
	return nil
}

// Count is how many problems the file has.
func (e *FileError) Count() int {
	var ps Problems
	if errors.As(e.Err, &ps) {
		return len(ps)
	}
	return 1
}

// Evaluation is a case file checked and its matrix of attempts made:
// what a dry run prints, and what Open opens to run.
type Evaluation struct {
	ID string
	// File is the case file's absolute path, Name as given.
	File, Name string
	Cases      []Case
	Personas   []Persona
	// Attempts is the attempts of each case by each persona, K the k of
	// pass@k.
	Attempts, K int
	Cells       []Cell
	// Batch is the evaluation's batch once opened (Open): its state in
	// <home>/evals/<id>/.
	Batch *batch.Batch
}

// Load reads and checks the case file of o, resolves its personas and
// makes its matrix: every problem of the file at once, as a *FileError.
func Load(o Options) (*Evaluation, error) {
	abs := o.File
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(o.WorkDir, o.File)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, &FileError{fmt.Errorf("case file: %w", err)}
	}
	f, err := Parse(o.File, data)
	var probs Problems
	if err != nil && !errors.As(err, &probs) {
		return nil, &FileError{err}
	}
	refs, lines := f.Personas, f.personaLines
	if len(o.Personas) > 0 {
		refs, lines = o.Personas, nil
	}
	if len(refs) == 0 {
		probs = append(probs, &Problem{File: o.File, Err: errors.New("no personas: give personas in the file (personas: [code-reviewer@best]) or --persona")})
	}
	personas, pprobs := personasOf(o.File, refs, o.Harnesses, lines, o.Lookup)
	probs = append(probs, pprobs...)
	base := filepath.Dir(abs)
	for i, c := range f.Cases {
		if msg := caseProblem(c, base, o.Remote); msg != "" {
			probs = append(probs, &Problem{File: o.File, Line: c.Line, Where: where(i, c.ID, ""), Err: errors.New(msg)})
		}
	}
	if len(probs) > 0 {
		slices.SortStableFunc(probs, func(a, b *Problem) int { return a.Line - b.Line })
		return nil, &FileError{probs}
	}
	e := &Evaluation{ID: o.ID, File: abs, Name: o.File, Cases: f.Cases, Personas: personas, Attempts: o.Attempts, K: o.K}
	if e.ID == "" {
		e.ID = DefaultID(abs)
	}
	if e.Attempts == 0 {
		e.Attempts = max(f.Attempts, 1)
	}
	if e.K == 0 {
		e.K = e.Attempts
	}
	e.Cells = matrix(e.Cases, personas, e.Attempts, base, o.Remote != nil)
	if probs := e.checkCells(o); len(probs) > 0 {
		return nil, &FileError{probs}
	}
	return e, nil
}

// checkCells checks each case on each persona (o.Check, on this machine)
// and gives each attempt the hash of its persona with its case's model:
// a problem for each case and persona that cannot run.
func (e *Evaluation) checkCells(o Options) Problems {
	var probs Problems
	index := map[*Case]int{}
	for i := range e.Cases {
		index[&e.Cases[i]] = i
	}
	for i := range e.Cells {
		c := &e.Cells[i]
		if c.Attempt > 1 {
			c.Task.PersonaHash = e.Cells[i-1].Task.PersonaHash
			continue
		}
		var err error
		if o.Check != nil && o.Remote == nil {
			err = o.Check(c.Persona.Ref, c.Task.Task.Harness, c.Task.Model, c.Task.Inputs)
		}
		if err == nil && c.Task.Model != "" {
			var p Persona
			p, err = o.Lookup(c.Persona.Ref, c.Task.Task.Harness, c.Task.Model)
			c.Task.PersonaHash = p.Hash
		}
		if err != nil {
			where := where(index[c.Case], c.Case.ID, "persona "+c.Persona.Key())
			probs = append(probs, &Problem{File: o.File, Line: c.Case.Line, Where: where, Err: err})
		}
	}
	return probs
}

// caseProblem says what keeps case c from running here (its directory is
// not one) or on a queue (remote's word); "" when nothing does.
func caseProblem(c Case, base string, remote func(batch.Task) string) string {
	t := batch.Task{ID: c.ID, Persona: "p", Task: c.Task, Dir: c.Dir, Repo: c.Repo, Ref: c.Ref}
	if remote != nil {
		return remote(t)
	}
	if c.Repo != "" {
		return "repo and ref are for a queue of workers (--queue nats://HOST); on this machine, give the repository's checkout as dir"
	}
	if fi, err := os.Stat(t.ProjectDir(base)); err != nil || !fi.IsDir() {
		return fmt.Sprintf("dir %s is not a directory", quote.Name(c.Dir))
	}
	return ""
}

// Record is the evaluation's own record: <home>/evals/<id>/eval.json.
type Record struct {
	ID       string    `json:"id"`
	File     string    `json:"file"`
	K        int       `json:"k"`
	Attempts int       `json:"attempts"`
	Cases    []string  `json:"cases"`
	Personas []Persona `json:"personas"`
	Updated  time.Time `json:"updated"`
}

// Open opens the evaluation's batch in <home>/evals/<id>/ (its state:
// what ran before, for resume; home gives the workforce home, or why
// there is none) and locks it, and writes its record; the caller closes
// it (Close). Another process's evaluation of the same id is a
// *batch.LockError.
func (e *Evaluation) Open(homeDir func() (string, error)) error {
	home, err := homeDir()
	if err != nil {
		return err
	}
	tasks := make([]batch.Prepared, len(e.Cells))
	for i, c := range e.Cells {
		tasks[i] = c.Task
	}
	b, err := batch.OpenAt(filepath.Join(home, Dir, e.ID), e.ID, e.File, e.Name, tasks)
	if err != nil {
		return err
	}
	e.Batch = b
	rec := Record{ID: e.ID, File: e.File, K: e.K, Attempts: e.Attempts, Personas: e.Personas, Updated: time.Now().UTC()}
	for _, c := range e.Cases {
		rec.Cases = append(rec.Cases, c.ID)
	}
	if err := writeJSON(filepath.Join(b.State.Dir, "eval.json"), rec); err != nil {
		b.Close()
		return err
	}
	return nil
}

// Close lets the evaluation's batch go.
func (e *Evaluation) Close() {
	if e.Batch != nil {
		e.Batch.Close()
	}
}

// Finish makes the report of the attempts' states (as the batch's run
// or a queue's following left them), keeps it and each attempt's files
// in the evaluation's directory (Keep), and returns it.
func (e *Evaluation) Finish(states map[string]batch.TaskState) (report.Eval, error) {
	rep := e.Report(states)
	if err := e.Keep(states, rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// Keep writes, in the evaluation's directory, report.json (durably) and, in each
// attempt's task directory, result.json, setup.txt and check.txt (the
// outputs, when the step ran) and patch.diff (when the agent changed
// anything), unless they were kept since the attempt ended.
func (e *Evaluation) Keep(states map[string]batch.TaskState, rep report.Eval) error {
	st := e.Batch.State
	for _, c := range e.Cells {
		ts, ok := states[c.Task.ID]
		if !ok || ts.Result == nil {
			continue
		}
		dir, r := st.TaskDir(c.Task.ID), ts.Result
		if kept(filepath.Join(dir, "result.json"), ts) {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		data, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		files := map[string]string{"result.json": string(data) + "\n", "patch.diff": r.Patch}
		if a := r.Attempt; a != nil {
			if a.Setup != nil {
				files["setup.txt"] = a.Setup.Output
			}
			if a.Check != nil {
				files["check.txt"] = a.Check.Output
			}
		}
		for name, text := range files {
			if err := writeText(filepath.Join(dir, name), text, name == "patch.diff"); err != nil {
				return err
			}
		}
	}
	return writeJSON(filepath.Join(st.Dir, "report.json"), rep)
}

// kept reports whether the attempt's files at result (its result.json)
// were kept after its task ended as ts: a resumed evaluation does not
// write again the files of the attempts it skipped.
func kept(result string, ts batch.TaskState) bool {
	fi, err := os.Stat(result)
	return err == nil && ts.Finished != nil && fi.ModTime().After(*ts.Finished)
}

// writeText writes text to path, whole or not at all (a temporary file
// renamed), without the fsync of a state: these are copies of what the
// batch's state (state.json, written durably) holds, which Keep writes
// again on every run. An empty text that may be left out removes the
// file (a patch of an earlier run).
func writeText(path, text string, omitEmpty bool) error {
	if text == "" && omitEmpty {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, append(data, '\n'), 0o600)
}

// ReadReport reads the report of the evaluation arg names under home: its
// id, or the case file whose default id it is (batch.IDOf).
func ReadReport(home, arg string) (report.Eval, error) {
	var rep report.Eval
	id, err := batch.IDOf(arg)
	if err != nil {
		return rep, err
	}
	if !batch.SafeName(id) {
		return rep, fmt.Errorf("%q is not an evaluation's id", id)
	}
	data, err := os.ReadFile(filepath.Join(home, Dir, id, "report.json"))
	if os.IsNotExist(err) {
		return rep, fmt.Errorf("no evaluation %s", id)
	}
	if err != nil {
		return rep, err
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return rep, fmt.Errorf("evaluation %s: report.json: %v", id, err)
	}
	return rep, nil
}
