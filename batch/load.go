package batch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// Prepared is a task of the file, checked, with its directory (empty for
// a queue's task) and the tier and harness it runs on.
type Prepared struct {
	Task
	Dir     string
	Tier    string
	Harness string
}

// Lookup resolves a persona reference (PERSONA[@TIER]) to the tier and
// the harness it runs on, or says why it cannot.
type Lookup func(ref string) (tier, harness string, err error)

// LoadOptions say where the batch file is and how its entries are
// checked beyond their syntax.
type LoadOptions struct {
	// File is the batch file as given: errors name it; a relative one is
	// under WorkDir.
	File    string
	WorkDir string
	// Catalog gives the Lookup of the personas; it is called once the
	// file is parsed, and its error is returned as it is.
	Catalog func() (Lookup, error)
	// KnownHarnesses are the harnesses an entry may name; Harnesses, those
	// the error names.
	KnownHarnesses, Harnesses []string
	// Remote, when set, checks an entry for a queue of workers ("" when it
	// may go there): its tasks have a repository, no directory. When nil,
	// the tasks run on this machine, each in its dir.
	Remote func(Task) string
	// Inputs, when set, checks an entry's inputs against its persona
	// (PERSONA[@TIER]): an input the persona has not, one it requires
	// that neither the entry nor the environment gives. Only on this
	// machine: a worker's environment is its own.
	Inputs func(ref string, inputs map[string]string) error
	// Model, when set, checks that an entry's run can reach its model:
	// the entry's model ("" for its tier's) on the entry's harness (""
	// for its tier's). Only on this machine, as Inputs: a worker's
	// configuration of its harnesses is its own.
	Model func(ref, harness, model string) error
}

// FileError is a batch file that is wrong (it cannot be read, an entry
// is wrong, or names what is not there): nothing has started. Err is
// Problems, every problem of the file, each naming the file and the line,
// or the file's read error.
type FileError struct{ Err error }

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Load reads and checks the batch file of o: its syntax, each entry, and
// what the file alone cannot say (the persona exists, the harness is
// known, the directory exists). It goes on past a wrong entry, so that
// the error (a *FileError of Problems) lists every problem of the file at
// once. abs is the file's absolute path.
func Load(o LoadOptions) (abs string, tasks []Prepared, err error) {
	abs = o.File
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(o.WorkDir, o.File)
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return "", nil, &FileError{fmt.Errorf("batch file: %w", err)}
	}
	parsed, err := Parse(o.File, data)
	var probs Problems
	if !errors.As(err, &probs) && err != nil {
		return "", nil, &FileError{err}
	}
	if len(parsed) > 0 {
		lookup, err := o.Catalog()
		if err != nil {
			return "", nil, err
		}
		base := filepath.Dir(abs)
		for _, t := range parsed {
			p, err := o.prepare(t, base, lookup)
			if err != nil {
				probs = append(probs, &ParseError{File: o.File, Line: t.Line, Err: fmt.Errorf("task %s: %w", t.ID, err)})
				continue
			}
			tasks = append(tasks, p)
		}
	}
	if len(probs) > 0 {
		return "", nil, &FileError{probs.sorted()}
	}
	return abs, tasks, nil
}

// prepare checks the entry t of a file in the directory base.
func (o LoadOptions) prepare(t Task, base string, lookup Lookup) (Prepared, error) {
	if o.Remote != nil {
		if msg := o.Remote(t); msg != "" {
			return Prepared{}, fmt.Errorf("%s", msg)
		}
	} else if t.Repo != "" {
		return Prepared{}, fmt.Errorf("repo and ref are for a queue of workers (--queue nats://HOST); on this machine, give the repository's checkout as dir")
	}
	if t.Harness != "" && !slices.Contains(o.KnownHarnesses, t.Harness) {
		return Prepared{}, fmt.Errorf("unknown harness %q; want %s", t.Harness, strings.Join(o.Harnesses, ", "))
	}
	tier, h, err := lookup(t.Persona)
	if err != nil {
		return Prepared{}, fmt.Errorf("%v", err)
	}
	if t.Harness != "" {
		h = t.Harness
	}
	if o.Inputs != nil && o.Remote == nil {
		if err := o.Inputs(t.Persona, t.Inputs); err != nil {
			return Prepared{}, fmt.Errorf("inputs: %v", err)
		}
	}
	if o.Model != nil && o.Remote == nil {
		if err := o.Model(t.Persona, t.Harness, t.Model); err != nil {
			return Prepared{}, err
		}
	}
	var dir string
	if o.Remote == nil {
		dir = t.ProjectDir(base)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return Prepared{}, fmt.Errorf("dir %s is not a directory", quote.Name(t.Dir))
		}
	}
	return Prepared{Task: t, Dir: dir, Tier: tier, Harness: h}, nil
}

// Batch is a batch file checked and its state locked: what the local pool
// (RunLocal) and a queue's submitter both start from.
type Batch struct {
	// File is the batch file's absolute path, Name the file as given
	// (errors name it); ID the batch's id.
	File, Name, ID string
	State          *State
	Tasks          []Prepared
	// IDs, Entries and ByID are the tasks' ids, entries and prepared
	// tasks; States their states as the batch's directory has them.
	IDs     []string
	Entries []Task
	ByID    map[string]Prepared
	States  map[string]TaskState
}

// OpenOptions say which batch file to open, and as which batch.
type OpenOptions struct {
	LoadOptions
	// ID is the batch's id; "" is the id of the file's path (IDFor).
	ID string
	// Home gives the workforce home, or why there is none.
	Home func() (string, error)
	// Rerun sets the tasks' states of the batch's last run aside
	// (State.SetAside) once it is locked: every task runs again.
	Rerun bool
}

// LockError is a batch that cannot be locked: another process runs it,
// or its lock file cannot be opened.
type LockError struct {
	ID  string
	Err error
}

func (e *LockError) Error() string { return fmt.Sprintf("batch %s: %v", e.ID, e.Err) }
func (e *LockError) Unwrap() error { return e.Err }

// OpenFile checks the batch file of o (Load), opens the state of its
// batch and locks it: the caller closes it (Close).
func OpenFile(o OpenOptions) (*Batch, error) {
	abs, tasks, err := Load(o.LoadOptions)
	if err != nil {
		return nil, err
	}
	home, err := o.Home()
	if err != nil {
		return nil, err
	}
	id := o.ID
	if id == "" {
		id = IDFor(abs)
	}
	st, err := Open(home, id)
	if err != nil {
		return nil, err
	}
	return openState(st, abs, o.File, tasks, o.Rerun)
}

// OpenAt opens the state of batch id in the directory dir (created when
// missing), for tasks prepared by the caller rather than read from a
// batch file (workforce eval's attempts, whose state lives in the
// evaluation's directory), and locks it: the caller closes it (Close).
// file is the absolute path of the file the tasks come from, name the
// file as given.
func OpenAt(dir, id, file, name string, tasks []Prepared) (*Batch, error) {
	st, err := openDir(dir, id)
	if err != nil {
		return nil, err
	}
	return openState(st, file, name, tasks, false)
}

// openState locks the state st of the batch of tasks (setting the last
// run's states aside when rerun), and reads their states.
func openState(st *State, abs, name string, tasks []Prepared, rerun bool) (*Batch, error) {
	if err := st.Lock(); err != nil {
		return nil, &LockError{ID: st.ID, Err: err}
	}
	if rerun {
		if err := st.SetAside(); err != nil {
			st.Unlock()
			return nil, err
		}
	}
	b := &Batch{File: abs, Name: name, ID: st.ID, State: st, Tasks: tasks, IDs: make([]string, len(tasks)),
		Entries: make([]Task, len(tasks)), ByID: map[string]Prepared{}}
	for i, t := range tasks {
		b.IDs[i], b.Entries[i], b.ByID[t.ID] = t.ID, t.Task, t
	}
	var err error
	if b.States, err = st.ReadTasks(b.IDs); err != nil {
		st.Unlock()
		return nil, err
	}
	return b, nil
}

// Close lets the batch go (its lock).
func (b *Batch) Close() { b.State.Unlock() }
