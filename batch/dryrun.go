package batch

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// DryRun is what batch --dry-run says of a checked batch file: the
// batch's id and file, how many tasks would run at a time, and each task
// with where it would run and whether a run now would run it (Runs).
type DryRun struct {
	ID, File string
	Jobs     int
	Tasks    []Prepared
	// Remote says the tasks run on a queue's workers (batch --queue):
	// each is shown by its repository and ref, not a directory.
	Remote bool
	// Runs say, task by task, whether a run would run it and why:
	// "yes (new)", "no (done)"... (Decisions).
	Runs []string
}

// Jobs is how many of tasks run at a time: jobs, or when it is 0 the
// default for their harnesses (DefaultJobs).
func Jobs(jobs int, tasks []Prepared) int {
	if jobs != 0 {
		return jobs
	}
	harnesses := make([]string, len(tasks))
	for i, t := range tasks {
		harnesses[i] = t.Harness
	}
	return DefaultJobs(harnesses)
}

// Decisions say, for each of tasks, whether a run of the batch id under
// home would run it and why (Plan), from the batch's state as it is,
// read without taking its lock: "yes (new)", "no (done)"... Every task
// runs with rerun, or when the batch has no state yet (or home is
// unknown, "").
func Decisions(home, id string, tasks []Prepared, rerun bool, retry Retry) []string {
	out := make([]string, len(tasks))
	entries := make([]Task, len(tasks))
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		entries[i], ids[i], out[i] = t.Task, t.ID, "yes (new)"
	}
	if rerun {
		for i := range out {
			out[i] = "yes (rerun)"
		}
		return out
	}
	if home == "" {
		return out
	}
	st, err := Existing(home, id)
	if err != nil {
		return out
	}
	states, err := st.ReadTasks(ids)
	if err != nil {
		return out
	}
	for i, d := range Plan(entries, states, retry) {
		out[i] = "no (" + d.Reason + ")"
		if d.Run {
			out[i] = "yes (" + d.Reason + ")"
		}
	}
	return out
}

// WriteText prints the dry run as batch --dry-run does: a line of the
// batch, then a table of its tasks.
func (d DryRun) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "batch %s: %s: %d tasks, %d at a time; nothing run (--dry-run)\n", d.ID, quote.Name(d.File), len(d.Tasks), d.Jobs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tPERSONA\tTIER\tHARNESS\tDIR\tRUN")
	for i, t := range d.Tasks {
		where := quote.Name(t.Dir)
		if d.Remote {
			where = quote.Name(t.Repo)
			if t.Ref != "" {
				where += "@" + quote.Name(t.Ref)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, quote.Name(t.Persona), quote.Name(t.Tier), t.Harness, where, d.Runs[i])
	}
	return tw.Flush()
}
