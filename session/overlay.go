package session

import (
	"errors"
	"fmt"

	"github.com/seed-3bc194a6/workforce/confine"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
)

// The overlay's run (tree.go). With the overlay, the sandbox's tree is an
// empty directory outside the harness's namespaces (mount makes it, with
// the directories down to the working directory); the launcher mounts the
// project over it, the session's upper layer taking every write
// (confine.Overlay). The harness's write policy is the copy's: the tree
// (the overlay's target), the session's tmp, the harness's state; never
// the session directory above the upper and work directories, nor the
// project, whose real path stays unreadable (reads.go). The launcher
// changes to the working directory once the overlay is mounted.
//
// Workforce's own work after the harness reads the upper layer over the
// real tree in Go (package mount: sync-back, sessions diff and apply, the
// agent's commits); it never mounts the overlay again, so a session whose
// namespace is gone (a crash) is recovered as a live one is.

// errOverlayUnconfined is the error of an overlay sandbox whose harness
// would start without the namespaces that mount it.
var errOverlayUnconfined = errors.New("the overlay's tree needs the harness confined in namespaces, and this run's is not")

// withOverlay hands the launcher of inv the overlay of box, when box is
// one: the project as the lower layer, the upper and work directories,
// the tree as the target and the whiteouts. The policy is copied, not
// changed in place: the plan keeps what run --dry-run showed.
func withOverlay(inv *harness.Invocation, box *mount.Sandbox) error {
	ov := box.Overlay
	if ov == nil {
		return nil
	}
	if inv.Confine == nil || inv.Confine.Net == nil {
		return errOverlayUnconfined
	}
	pol := *inv.Confine
	net := *pol.Net
	net.Overlay = &confine.Overlay{Lower: box.Root, Upper: ov.Upper, Work: ov.Work, Target: box.Tree, Whiteouts: ov.Whiteouts}
	pol.Net = &net
	if err := pol.Check(); err != nil {
		return fmt.Errorf("the overlay's policy: %w", err)
	}
	inv.Confine = &pol
	return nil
}

// watchFrom returns the harness's started hook for a run whose overlay
// reads watches (nil for a copy): started, then the watch of the
// directories left (ReadWatch.Begin).
func watchFrom(started func(pid int), reads *mount.ReadWatch) func(pid int) {
	return func(pid int) {
		started(pid)
		reads.Begin()
	}
}

// warnReads warns of each file the agent read that changed in the real
// tree afterwards, as the read watch of an overlay sandbox saw them
// (mount.ReadWatch): the agent may have worked from the version it read.
// A watch left incomplete is a note among the warnings, never an error.
func warnReads(r mount.ReadReport, warn func(string)) {
	for _, rel := range r.Changed {
		warn(fmt.Sprintf("%s changed in your tree after the agent read it: it may have worked from the earlier version", quote.Name(rel)))
	}
	for _, a := range r.Appeared {
		what, seen := "file", ""
		if a.Dir {
			what = "directory"
		}
		if a.Read {
			seen = ", and it read it"
		}
		warn(fmt.Sprintf("%s appeared in your tree during the run: a %s your ignore rules hide, which the agent could see%s (the overlay shows your live tree, its hidden files found at the start; the copy, made before, never has it): make such files before a run, or run with --tree copy", quote.Name(a.Path), what, seen))
	}
	if r.Incomplete != "" {
		warn(fmt.Sprintf("%s; a file changed after the agent read it may go unreported", r.Incomplete))
	}
}
