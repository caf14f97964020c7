package batch

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/report"
)

// WriteTable prints the table of a batch's tasks, as batch and batch
// status print it: a row a task (its phase, status, duration, session and
// a note), the branches a queue's workers pushed, the destinations the
// network proxy denied, and the counts.
//
// A status and a session id come from the run's result, which on a queue
// a worker wrote (anyone who may publish results): they are quoted as any
// name that is not the program's own.
func WriteTable(w io.Writer, ids []string, states map[string]TaskState) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tPHASE\tSTATUS\tDURATION\tSESSION\tNOTE")
	counts := map[string]int{}
	for _, id := range ids {
		ts, ok := states[id]
		if !ok {
			ts = TaskState{ID: id, Phase: PhasePending}
		}
		status, dur, session, note := "-", "-", "-", ""
		if ts.Status != "" {
			status = quote.Name(string(ts.Status))
			counts[string(ts.Status)]++
		} else {
			counts[string(ts.Phase)]++
		}
		if ts.DurationMS > 0 {
			dur = (time.Duration(ts.DurationMS) * time.Millisecond).Round(100 * time.Millisecond).String()
		}
		if r := ts.Result; r != nil {
			session = quote.Name(r.SessionID)
			if f := r.Files; f != nil && len(f.Conflicts) > 0 {
				paths := make([]string, len(f.Conflicts))
				for i, c := range f.Conflicts {
					paths[i] = quote.Name(c.Path)
				}
				note = "conflicts: " + strings.Join(paths, ", ")
			} else if r.Status != report.StatusSucceeded && r.Message != "" {
				note = quote.Line(quote.Text(r.Message), 60)
			}
		} else if ts.Error != "" {
			note = quote.Line(quote.Text(ts.Error), 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", id, ts.Phase, status, dur, session, note)
	}
	tw.Flush()
	// The branch a queue worker pushed each task's work to.
	for _, id := range ids {
		if r := states[id].Result; r != nil && r.Published != nil {
			fmt.Fprintf(w, "%s: %s\n", id, r.Published.Text())
		}
	}
	// The destinations the network proxy denied each task's run (a
	// worker's result, quoted).
	for _, id := range ids {
		if r := states[id].Result; r != nil && r.Network != nil && len(r.Network.Denied) > 0 {
			hosts := make([]string, len(r.Network.Denied))
			for i, d := range r.Network.Denied {
				hosts[i] = quote.Name(d.String())
			}
			fmt.Fprintf(w, "%s: network denied: %s\n", id, strings.Join(hosts, ", "))
		}
	}
	var parts []string
	for _, k := range []string{"succeeded", "conflict", "failed", "denied", "timed_out", "interrupted", "pending", "running", "queued"} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	fmt.Fprintf(w, "%d tasks: %s\n", len(ids), strings.Join(parts, ", "))
}

// DoneLine is the line of a task that ended, as batch prints it: its
// status and duration, the files its run changed, its conflicts, or why
// it printed no result.
func DoneLine(ts TaskState) string {
	line := fmt.Sprintf("task %s: %s (%s)", ts.ID, quote.Name(string(ts.Status)), (time.Duration(ts.DurationMS) * time.Millisecond).Round(100*time.Millisecond))
	if r := ts.Result; r != nil && r.Files.Summary(3) != "" {
		line += ", " + r.Files.Summary(3)
	}
	if r := ts.Result; r != nil && r.Files != nil && len(r.Files.Conflicts) > 0 {
		line += fmt.Sprintf(", %d conflicts, session %s kept", len(r.Files.Conflicts), quote.Name(r.SessionID))
	}
	if ts.Result == nil && ts.Error != "" {
		line += ": " + quote.Line(quote.Text(ts.Error), 100)
	}
	return line
}

// CountKey is the count a task's end adds to: succeeded or failed
// (failed, denied, timed out), conflict, or interrupted.
func CountKey(ts TaskState) string {
	switch ts.Status {
	case report.StatusSucceeded, report.StatusConflict, report.StatusInterrupted:
		return string(ts.Status)
	}
	return "failed"
}
