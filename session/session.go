// Package session owns one run of a persona's harness in a sandbox, from
// plan to cleanup: it plans the run (NewPlan: which instruction files the
// sandbox hides, or folds in extend mode, extend.go), makes the session
// directory (layout.go) and its durable record, has package mount copy the
// project, materializes the instruction file and the skills, starts the
// harness (package harness) with the signals it should get, brings the
// agent's commits as its branch (commits.go, branch.go), syncs the agent's
// work back, and removes what is no longer needed. It also finds sessions
// left behind by a crash and finishes them: List, Open, Sync, Remove.
//
// The cut with mount: mount is the tree (mount.Sandbox: the copy, its
// manifest, sync-back, live sync), told by session what to hide and what
// to write into it; everything that knows personas, harnesses and their
// instruction files, the real repository's branches and the session
// directory's name and record is here.
//
// The agent's commits. When the agent committed in the sandbox, its
// commits are brought into the real repository, before sync-back, as the
// branch workforce/<id> (BranchName; objects and that ref only, see
// commits.go), and the record says so (Record.Branch, Commits, Head). What the agent committed and left as committed is then
// on the branch, and sync-back leaves it out of the working tree
// (Report.OnBranch) unless asked to bring it too (SyncCommitted); its
// uncommitted work syncs back as ever. Sync of a session left by a crash
// does the same. The branch outlives the session: Remove leaves it,
// RemoveBranch and Discard delete it while it names what it was made to.
//
// Review. With Options.Review the run stops after the harness exits: the
// branch is made, nothing is synced back, and the session is kept in
// phase Review (Result.Held). Diff shows the agent's work as a git diff,
// Sync with SyncOptions.Only applies part of it (the rest stays, in phase
// Review), Sync applies it all, Discard drops it.
//
// One-shot output. A one-shot run's stdout and stderr are never held:
// they go whole to the results directory's files as they come, and stdout
// is read line by line as it arrives (harness.OutputWriter, bounded
// memory: oneshot.go).
//
// Attempts. With Options.Attempt the one-shot run is an attempt of an
// evaluation (attempt.go): a setup before the agent and a check after
// it, both run as the harness is, the tree recorded after each of the
// setup and the agent in a private repository of the session
// (snapshot.go), the protected files restored before the check, and
// nothing synced back: no sync-back, no branch (Result.Attempt).
//
// Resume. A kept session's harness conversation continues in its
// sandbox (resume.go): Plan.Run of a plan made with PlanOptions.Session
// runs the harness there and ends as Run does (afterHarness).
//
// A session that stays after a sync (part of the work applied, Keep,
// conflicts, files waiting for a deletion: mount.Report.Blocked, an
// interruption, policy files refused and configuration held: held.go)
// records what the sync applied as the base of the next
// one (mount.Sandbox.SaveApplied): the user's later edits and deletions
// of those files are the user's, never conflicts, and they sync again
// only when the agent changes them again.
//
// The diff. Diff shows exactly the files a sync-back would bring now
// (Changed: deletions included), committed and uncommitted alike, against
// the tree the session started from. Each side becomes a git tree in a
// temporary repository of its own, outside the project and the session:
// the agent's side from the sandbox's files, the start side from the real
// files, which are as the copy found them for every change but a conflict
// (the manifest tells). One git hash-object, without filters, hashes the
// files; temporary indexes give the two trees; git diff of the trees
// gives the patch, with modes and --stat as git shows them, binary files
// as binary patches (--binary) and paths as git apply reads them (a/,
// b/); git runs there as in any repository workforce does not trust
// (internal/git). Neither the real repository
// nor the sandbox's is written, and a project without a repository works
// the same (git itself must be installed). Diffing the sandbox against
// its start commit instead would show the user's uncommitted edits of
// copy time as the agent's. A conflict is shown against the real file as
// it is now, after a line "# conflict: ..." that git apply skips.
//
// A session directory, <home>/sessions/<id>/ (Dir, NewDir), holds:
//
//	session.json   the record (Record): persona, tier, harness, real root
//	               and working directory, owner process, phase, exit
//	               status, last sync report, the harness's conversation
//	               id; rewritten atomically
//	lock           held (flock) by the process working on the session
//	config/        the harness's configuration files
//	state/         the harness's per-session state (state.go): its
//	               configuration directories seeded from the user's, and
//	               the package caches of the agent's commands
//	tmp/           the harness's TMPDIR, which it may write (confine.go)
//
// and, as the sandbox directory of package mount, mount's own parts:
//
//	manifest.json  the sandbox's state (mount.ManifestFile): the real files
//	               at copy time, to tell the agent's changes from the user's
//	tree/          the sandbox (mount.TreeDir)
//	conflicts/     the agent's versions of conflicting files (mount.ConflictsDir)
//
// Both files are on disk, synced, before the harness starts. A session
// whose lock is free and whose phase is creating, running or syncing was
// left by a process that died: it is stale, and Sync finishes it exactly
// as the uninterrupted run would have (each file is written by an atomic
// rename; a file already written is recognised by its content and not
// written again; a deletion already applied counts as applied). A harness
// that outlived its run may still be writing: until it exits, Sync and
// RemoveIdle refuse the session (HarnessRunningError).
//
// Signals. One handler (signal.go) serves a run and a sync, and the
// harness is started through it. While the sandbox is made, SIGINT,
// SIGTERM and SIGHUP stop and remove it (Result.Stopped). While the
// harness runs, SIGINT is the harness's (the terminal sends it to the
// whole process group), and SIGTERM and SIGHUP sent to workforce are
// passed on to the harness; sync-back still runs when it exits (after
// SIGHUP without progress output: there is no terminal any more). During
// sync-back a first SIGINT, or a second SIGTERM or SIGHUP, stops it after
// the current file, leaving the session resumable; a second SIGINT calls
// Options.Abort, which ends the process at once, leaving it resumable
// too. Sync alone stops at the first signal and aborts at the second.
// Processes the harness leaves running: a one-shot run ends them as its
// harness exits, before anything reads the sandbox, and warns; an
// interactive run leaves them (leftover.go).
//
// The package ends no process but those and chooses no exit status: it
// reports outcomes (Result), and the command line turns them into its
// status.
package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed-3bc194a6/workforce/egress"
	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/quote"
	"github.com/seed-3bc194a6/workforce/mount"
)

// Session is one session directory, with its record.
type Session struct {
	Dir    string
	Record Record

	lock *os.File // held while this process works on the session
}

// Options are a run: what to copy, what to materialize, what to start.
type Options struct {
	// Dir is the session directory to create (NewDir).
	Dir                    string
	Persona, Tier, Harness string
	Mount                  mount.Options
	Materialize            *File
	Skills                 []mount.Dir // the persona's skills (mount.Sandbox.MaterializeDir)
	Invocation             *harness.Invocation
	Stdin                  io.Reader
	Stdout, Stderr         io.Writer
	SyncDeletes, Keep      bool
	// SyncCommitted syncs back what the agent committed and left as
	// committed too, besides bringing it as its branch.
	SyncCommitted bool
	// SyncConfig syncs back executable configuration (mount.HeldConfig)
	// with the rest, instead of holding it in the session.
	SyncConfig bool
	// Review holds the agent's work for the user's review instead of
	// syncing it back (run --review): the session is kept in phase
	// Review, and Result.Held is set.
	Review bool
	// Reuse starts from the project's warm sandbox, when there is one,
	// refreshed instead of copied, and parks the sandbox there afterwards.
	Reuse bool
	// Live syncs both ways while the harness runs (run --live,
	// mount.Live); the sync-back after it still runs.
	Live bool
	// Timeout, when positive, stops the harness that long after it
	// started, as SIGTERM sent to workforce does (harness.Start);
	// sync-back runs as after any stop, and Result.TimedOut says so.
	Timeout time.Duration
	// Progress, when set, reports progress (the copy, each file synced);
	// it is not called after SIGHUP.
	Progress func(event, detail string)
	// Warn reports what the user should know at once.
	Warn func(msg string)
	// Abort, when set, is called with a signal that asks to stop at once
	// (a second SIGINT during sync-back); it should end the process,
	// which leaves the session for Sync to finish. Unset, such a signal
	// only stops sync-back, as the first did.
	Abort func(os.Signal)
	// Signals is the program's signal source (Notify) the run catches
	// SIGINT, SIGTERM, SIGHUP and the parent-death signal through; nil
	// catches none.
	Signals Notify
	// HarnessSessionID is the harness's conversation id fixed before the
	// start (claude's --session-id), recorded with the session.
	HarnessSessionID string
	// HarnessSession, when set, returns the conversation id the
	// harness's output says, once it exited (a one-shot run's); it
	// replaces HarnessSessionID in the record.
	HarnessSession func() string
	// FindHarnessSession, when set, reads the conversation id from the
	// harness's own session store (harness.FindSession), for a session
	// that is kept and whose id is not known otherwise; since is when the
	// session started.
	FindHarnessSession func(since time.Time) (string, error)
	// Ended, when set, is called once the harness has exited, before the
	// session is synced, kept or removed: the harness's own records in
	// the session's state directory are still there to read.
	Ended func(*Session)
	// Attempt, when set, makes the run an attempt of an evaluation
	// (attempt.go): a one-shot run with its setup before the agent and
	// its check after, which syncs nothing back and makes no branch.
	Attempt *Attempt

	// state is the harness's per-session state (state.go): seeded before
	// the harness starts, its credentials written back after.
	state *harnessState
	// net is the network of a harness in namespaces (egress.go), and
	// netDenied gets each destination its proxy refuses.
	net       *netPlan
	netDenied func(egress.Denial)
	// sigs is the run's signal handler when the caller installed it
	// already (Plan.run, for the fetch of the skills before): Run uses
	// it, and stops it, instead of installing its own. Installing one
	// costs a round trip to the Go runtime's signal thread for each of
	// its four signals, and removing one as many.
	sigs *signals
}

// beforeHarness is called by Run with its signal handler once the
// sandbox is made, before the harness's phase begins: a test's view of
// the last moment of the making.
var beforeHarness = func(*signals) {}

// File is an instruction file to materialize in the sandbox's working
// directory.
type File struct {
	Name, Text string
}

// Result is how a run ended: the outcomes the command line turns into its
// exit status.
type Result struct {
	// Session is the session, its directory gone unless Kept.
	Session *Session
	// Stopped says a signal stopped the run while the sandbox was made,
	// before the harness started; Signal says which.
	Stopped bool
	// Harness is how the harness ended.
	Harness harness.Exit
	// Signal is the last signal workforce got, nil when none came: the
	// one that stopped the run (Stopped) or sync-back
	// (Report.Interrupted).
	Signal os.Signal
	Report *mount.Report
	// Kept says the session directory was kept: asked for, conflicts, or
	// an interrupted sync-back.
	Kept bool
	// Reused says the sandbox was the project's warm one, refreshed.
	Reused bool
	// Live is what the live sync did (Options.Live).
	Live *mount.LiveReport
	// Held says the agent's work is held for review (Options.Review):
	// nothing was synced back, and the session is kept in phase Review.
	Held bool
	// TimedOut says Options.Timeout stopped the harness.
	TimedOut bool
	// HungUp says SIGHUP came while the session ran: the terminal is
	// gone, and nobody is there to answer a question.
	HungUp bool
	// OneShot is what a one-shot run's harness said (Plan.Run of a plan
	// made with PlanOptions.OneShot); nil for an interactive run.
	OneShot *OneShotResult
	// Network is what the proxy of a harness in namespaces let through
	// and refused (egress.go); nil for a harness without them.
	Network *egress.Summary
	// Attempt is what an attempt's run did besides the agent's
	// (Options.Attempt); nil for any other run.
	Attempt *AttemptResult
}

// Run runs a session from start to end: create the session directory and
// its record, copy the project, materialize the instruction file, write
// the harness's configuration, start the harness, sync back, clean up.
// Signals are handled as the package documentation says.
func Run(o Options) (*Result, error) {
	sigs := o.sigs
	if sigs == nil {
		sigs = watchSignals(phaseCreate, o.Abort, o.Signals)
	}
	defer sigs.stop()
	warn := func(string) {}
	if o.Warn != nil {
		// Live sync warns from its own goroutine while the run warns
		// from this one: one message at a time.
		var mu sync.Mutex
		warn = func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			o.Warn(msg)
		}
	}
	progress := func(event, detail string) {
		if o.Progress != nil && !sigs.hup.Load() {
			o.Progress(event, detail)
		}
	}

	// The harness's launcher starts now, beside the making of its
	// sandbox; it is ended on every way out but the harness's start.
	early := spawnHarness(o)
	defer early.Abort()
	s, err := create(o.Dir, Record{
		ID: filepath.Base(o.Dir), Persona: o.Persona, Tier: o.Tier, Harness: o.Harness,
		Root: o.Mount.Root, Cwd: o.Mount.Cwd, Tree: treeOf(o.Mount), PID: os.Getpid(), Started: time.Now().UTC(), Phase: Creating,
		HarnessSessionID: o.HarnessSessionID, Attempt: o.Attempt != nil,
	})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	ctx, cancel := sigs.enter(context.Background(), phaseCreate)
	mo := o.Mount
	mo.Dir = o.Dir
	var warm string
	if o.Reuse && !mo.Overlay {
		warm = WarmTree(mo.Home, mo.Root)
		if _, err := os.Lstat(warm); err == nil {
			mo.Warm = warm
		}
	}
	if mo.Warm != "" {
		progress("refresh", mo.Root)
	} else {
		progress("copy", mo.Root)
	}
	box, err := mount.Create(ctx, mo)
	stopped := ctx.Err() != nil // a signal stopped the copy
	cancel()
	if err == nil {
		err = prepare(box, o)
	}
	if err == nil && o.state != nil {
		err = o.state.seed(warn)
		if err == nil {
			err = o.state.writeFiles(o.Invocation.StateFiles)
		}
	}
	// discard removes what was made: the sandbox and the session.
	discard := func() {
		if box != nil {
			box.Remove()
		}
		os.RemoveAll(s.Dir)
	}
	// stoppedMaking ends a run a signal stopped while its sandbox was
	// made.
	stoppedMaking := func() (*Result, error) {
		discard()
		return &Result{Session: s, Stopped: true, Signal: sigs.lastSignal()}, nil
	}
	if err != nil {
		if stopped {
			return stoppedMaking()
		}
		discard()
		return nil, err
	}

	s.Record.Phase = Running
	if err := s.save(); err != nil {
		box.Remove()
		return nil, err
	}
	beforeHarness(sigs)
	sigs.enter(context.Background(), phaseHarness)
	if sigs.stoppedCreating() {
		// A signal while the sandbox was made, after the making last
		// looked at its context (the materialized files, the state,
		// the record): it stops the run all the same.
		return stoppedMaking()
	}
	var att *attemptRun
	if o.Attempt != nil {
		var res *Result
		if att, res, err = s.beforeAgent(sigs, box, o, warn); att == nil {
			return res, err
		}
	}
	if warm != "" {
		adoptOrphans() // to know, before parking, that nothing runs in the sandbox
	}
	started := func(pid int) {
		s.Record.HarnessPID, s.Record.HarnessStart = pid, procStart(pid)
		_ = s.save()
	}
	var live *mount.Live
	if o.Live {
		live, err = box.Live(mount.LiveOptions{
			Deletes: o.SyncDeletes, Warn: warn,
			OnConflict: func(c mount.Conflict) {
				if c.Reason != "" {
					warn(fmt.Sprintf("conflict: %s %s; yours stays", quote.Name(c.Path), c.Reason))
					return
				}
				if c.Saved == "" { // the agent deleted it
					warn(fmt.Sprintf("conflict: %s changed in the repository but the agent deleted it; yours stays", quote.Name(c.Path)))
					return
				}
				warn(fmt.Sprintf("conflict: %s changed in the repository and in the sandbox; yours stays, the agent's is saved at %s", quote.Name(c.Path), quote.Name(c.Saved)))
			},
		})
		if err != nil {
			s.Record.Phase, s.Record.Error = Failed, err.Error()
			_ = s.save()
			box.Remove()
			return nil, err
		}
	}
	reads := box.WatchReads() // an overlay's: before the harness starts
	ran, err := sigs.runHarness(early, o.Invocation, box.Workdir, o.Timeout, o.Stdin, o.Stdout, o.Stderr, watchFrom(started, reads), s.findEarly(&o), netHooks{o.net, o.netDenied})
	warnReads(reads.Stop(), warn) // before sync-back writes the real tree
	exit, timedOut := ran.exit, ran.timedOut
	if len(ran.ended) > 0 {
		warn(endedWarning(ran.ended))
	}
	var left []int // processes the harness left, seen as it exits
	if warm != "" {
		left = leftovers()
	}
	var liveReport *mount.LiveReport
	if live != nil {
		liveReport = live.Stop()
	}
	if err != nil && att != nil {
		// Nothing of an attempt's syncs back: its session goes.
		s.Record.Phase, s.Record.Error = Failed, err.Error()
		s.endAttempt(o, &Result{Session: s}, warn)
		return nil, err
	}
	if err != nil && s.Record.HarnessPID != 0 {
		// The harness ran, and may have worked: its sandbox stays, for
		// sessions sync to bring the work back.
		s.Record.Phase, s.Record.Error = Syncing, err.Error()
		_ = s.save()
		return &Result{Session: s, Kept: true, Live: liveReport, TimedOut: timedOut, Signal: sigs.lastSignal(), Network: ran.network},
			fmt.Errorf("%w; the session is kept: workforce sessions sync %s brings its work back", err, s.ID())
	}
	if err != nil {
		s.Record.Phase, s.Record.Error = Failed, err.Error()
		_ = s.save()
		box.Remove()
		return nil, err
	}
	e := ended{exit: exit, timedOut: timedOut, live: liveReport, warm: warm, left: left, network: ran.network}
	if att != nil {
		return s.afterAgent(sigs, box, o, att, e, warn)
	}
	return s.afterHarness(sigs, box, o, e, warn, progress)
}

// spawnHarness starts the launcher of o's confined harness
// (harness.Spawn), so that its start (a process and the Go runtime, a
// few milliseconds) runs while the session and its sandbox are made,
// not after. It returns nil for a harness not confined, or a launcher
// that cannot be started: runHarness then starts the harness as
// before, and reports the error where it always has. The overlay's part
// of the policy is added once its layers exist (withOverlay), and the
// launcher is started for it.
func spawnHarness(o Options) *harness.Spawned {
	inv := o.Invocation
	if inv == nil || inv.Confine == nil {
		return nil
	}
	s := inv.Confine.Shape()
	s.Overlay = o.Mount.Overlay
	sp, err := harness.Spawn(inv, s, o.Stdin, o.Stdout, o.Stderr)
	if err != nil {
		return nil
	}
	return sp
}

// ended is how the harness of a run ended, and what the run saw then.
type ended struct {
	exit     harness.Exit
	timedOut bool
	live     *mount.LiveReport
	// warm is the warm tree the sandbox is parked at afterwards (Reuse),
	// left the processes the harness left running, seen as it exited.
	warm string
	left []int
	// network is what the proxy saw (a harness in namespaces).
	network *egress.Summary
}

// afterHarness is what a run (Run) and a resumed run (resume) do once
// their harness exited: record how it ended and its conversation id,
// hold the work for review (o.Review) or sync it back, keep the session
// (o.Keep, conflicts, an interruption) or park its sandbox warm and
// remove it.
func (s *Session) afterHarness(sigs *signals, box *mount.Sandbox, o Options, e ended, warn func(string), progress func(event, detail string)) (*Result, error) {
	res, err := s.syncAfterHarness(sigs, box, o, e, warn, progress)
	if res != nil {
		res.Network = e.network
	}
	return res, err
}

// syncAfterHarness is afterHarness but for the network's summary.
func (s *Session) syncAfterHarness(sigs *signals, box *mount.Sandbox, o Options, e ended, warn func(string), progress func(event, detail string)) (*Result, error) {
	exit, timedOut, liveReport, warm := e.exit, e.timedOut, e.live, e.warm
	if o.state != nil {
		o.state.WriteBack(warn)
	}
	if timedOut {
		warn(fmt.Sprintf("the harness was stopped after %s (its time limit); its work is synced back", o.Timeout))
	}
	code := exit.Status()
	s.Record.ExitCode = &code
	if o.HarnessSession != nil {
		s.noteHarnessSession(o.HarnessSession(), warn)
	}
	if o.Ended != nil {
		o.Ended(s)
	}

	if o.Review {
		held, err := s.hold(box, warn)
		if err != nil {
			return &Result{Session: s, Harness: exit, Kept: true, Live: liveReport, TimedOut: timedOut}, err
		}
		if held {
			s.findHarnessSession(o, warn)
			return &Result{Session: s, Harness: exit, Kept: true, Held: true, Live: liveReport, TimedOut: timedOut, HungUp: sigs.hup.Load()}, nil
		}
		// Nothing to review: the run ends as any other.
	}

	ctx, cancel := sigs.enter(context.Background(), phaseSync)
	defer cancel()
	rep, keep, err := s.sync(ctx, box, SyncOptions{
		SyncOptions:   mount.SyncOptions{Deletes: o.SyncDeletes, Progress: func(rel string) { progress("sync", rel) }, Remember: warm != "", SyncConfig: o.SyncConfig},
		SyncCommitted: o.SyncCommitted, Warn: warn,
	})
	res := &Result{Session: s, Harness: exit, Report: rep, Live: liveReport, TimedOut: timedOut, HungUp: sigs.hup.Load(), Signal: sigs.lastSignal()}
	if err != nil {
		res.Kept = true
		keepApplied(box, warn)
		s.findHarnessSession(o, warn)
		return res, err
	}
	res.Kept = o.Keep || keep || isKept(rep)
	if res.Kept {
		keepApplied(box, warn)
	}
	res.Reused = box.Reused
	if !res.Kept && warm != "" {
		// A process the harness left running could change the parked
		// tree after sync-back saw it, and the next run trusts what
		// sync-back saw: such a sandbox is not kept.
		// Looked at twice: one that exits during sync-back may have
		// written after sync-back saw the tree.
		if pids := slices.Compact(slices.Sorted(slices.Values(append(e.left, leftovers()...)))); len(pids) > 0 {
			warn(fmt.Sprintf("the harness left processes running in the sandbox (pid %s): it is not kept warm for the next run", strings.Trim(fmt.Sprint(pids), "[]")))
		} else if err := park(box, warm, s.Record.Root); err != nil {
			warn(fmt.Sprintf("cannot keep the sandbox warm: %v", err))
		}
	}
	if !res.Kept {
		if err := s.Remove(); err != nil {
			warn(fmt.Sprintf("cannot remove the session %s: %v", s.Dir, err))
			res.Kept = true
		}
	}
	if res.Kept {
		s.findHarnessSession(o, warn)
	}
	return res, nil
}

// noteHarnessSession records id, when it is one, as the session's
// harness conversation id (saved with the record's next change).
func (s *Session) noteHarnessSession(id string, warn func(string)) {
	switch {
	case id == "":
	case !ValidHarnessSessionID(id):
		warn(fmt.Sprintf("the harness named its session %s, which workforce cannot pass back to it: sessions resume %s will not continue it", quote.Text(id), s.ID()))
	default:
		s.Record.HarnessSessionID = id
	}
}

// findHarnessSession reads, for a session that is kept and whose
// harness conversation id is not known, the id from the harness's
// session store (o.FindHarnessSession), and saves the record with it;
// only kept sessions can be resumed, and reading a store can take a
// second (opencode). A one-shot run's lookup has run already, before its
// leftovers were ended (findEarly): this records its answer.
func (s *Session) findHarnessSession(o Options, warn func(string)) {
	if s.Record.HarnessSessionID != "" || o.FindHarnessSession == nil {
		return
	}
	id, err := o.FindHarnessSession(s.Record.Started)
	if err != nil {
		warn(fmt.Sprintf("cannot tell which conversation of %s ran in session %s (%v): sessions resume %s will look again", s.Record.Harness, s.ID(), err, s.ID()))
		return
	}
	s.noteHarnessSession(id, warn)
	if s.Record.HarnessSessionID != "" {
		_ = s.save()
	}
}

// findEarly returns, for a one-shot run with a session lookup
// (o.FindHarnessSession), what runHarness calls once the harness exited:
// the lookup, when the harness's output named no conversation, run then
// rather than once the session is known to be kept, so that what it
// leaves running (opencode session list loads the project's plugins,
// which the agent could write) is ended with what the agent left, before
// sync-back reads the tree. It replaces o.FindHarnessSession with the
// answer it got, which findHarnessSession records (or warns of) as
// before, for a kept session only; nil for any other run.
func (s *Session) findEarly(o *Options) func() {
	find := o.FindHarnessSession
	if find == nil || o.Invocation == nil || !o.Invocation.OneShot {
		return nil
	}
	var id string
	var err error
	o.FindHarnessSession = func(time.Time) (string, error) { return id, err }
	return func() {
		if s.Record.HarnessSessionID != "" {
			return
		}
		if o.HarnessSession != nil {
			if out := o.HarnessSession(); out != "" && ValidHarnessSessionID(out) {
				return // afterHarness records it
			}
		}
		id, err = find(s.Record.Started)
	}
}

// prepare materializes the instruction file, saves the manifest and writes
// the harness's configuration files: everything before the harness
// starts.
func prepare(box *mount.Sandbox, o Options) error {
	if o.Materialize != nil {
		if _, err := box.Materialize(o.Materialize.Name, o.Materialize.Text); err != nil {
			return err
		}
	}
	for _, d := range o.Skills {
		if _, err := box.MaterializeDir(d); err != nil {
			return err
		}
	}
	if err := box.Save(); err != nil {
		return err
	}
	if err := withOverlay(o.Invocation, box); err != nil {
		return err
	}
	return o.Invocation.WriteFiles()
}

// create makes the session directory dir with its directory for the
// harness's configuration, takes its lock and writes its first record.
func create(dir string, r Record) (*Session, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("cannot create the sessions directory: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the session directory: %w", err)
	}
	for _, sub := range []string{configDir, tmpDir} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("cannot create the session directory: %w", err)
		}
	}
	s := &Session{Dir: dir, Record: r}
	// The lock file is made here, and nowhere else (openLock).
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cannot lock the session %s: %w", dir, err)
	}
	s.lock = f
	if err := s.save(); err != nil {
		s.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *Session) save() error { return writeRecord(s.Dir, &s.Record) }

// openLock opens the session's lock file. The lock file is made with the
// session and removed last with it (Remove): when it is missing and the
// record too, the session is gone (ErrGone); a lock file missing from a
// session that has a record is made again.
func (s *Session) openLock() (*os.File, error) {
	path := filepath.Join(s.Dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, RecordFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", s.ID(), ErrGone)
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}

// ID returns the session's id (its directory's name).
func (s *Session) ID() string { return filepath.Base(s.Dir) }

// TryLock takes the session's lock if it is free, and reports whether it
// did.
func (s *Session) TryLock() (bool, error) {
	f, err := s.openLock()
	if err != nil {
		return false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	s.lock = f
	return true, nil
}

// Lock waits for the session's lock.
func (s *Session) Lock() error {
	f, err := s.openLock()
	if err != nil {
		return err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return err
	}
	s.lock = f
	return nil
}

// Close releases the session's lock, if held.
func (s *Session) Close() {
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
}

// sync syncs box back, recording the phase before and after; the report is
// kept in the record. The agent's commits are brought into the real
// repository as its branch first, and what it committed and left as
// committed is left to the branch unless o.SyncCommitted. keep says the
// session must be kept although the sync is complete: part of the work
// was left out (o.Only), or the commits could not be brought.
func (s *Session) sync(ctx context.Context, box *mount.Sandbox, o SyncOptions) (rep *mount.Report, keep bool, err error) {
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	if o.Only == nil {
		// A sync that dies half-way leaves a stale session for sessions
		// sync to finish; a partial apply leaves the session as it was.
		s.Record.Phase = Syncing
		if err := s.save(); err != nil {
			return nil, false, err
		}
	}
	mo := o.SyncOptions
	mo.OnBranch = nil
	onBranch, err := s.exportBranch(box, warn)
	if err != nil {
		keep = true
		warn(fmt.Sprintf("%v; what the agent committed syncs back as changes, its commits stay in the sandbox, and the session is kept (workforce sessions sync %s tries again)", err, s.ID()))
	}
	if onBranch && !o.SyncCommitted {
		committed, err := committedOnly(box)
		if err != nil {
			warn(fmt.Sprintf("cannot tell what the agent committed in session %s (%v): it syncs back as changes too", s.ID(), err))
		}
		mo.OnBranch = committed
	}
	var left map[string]bool // changes o.Only leaves out
	if o.Only != nil {
		all, err := box.Sync(ctx, mount.SyncOptions{Deletes: true, DryRun: true, SyncConfig: mo.SyncConfig})
		if err != nil {
			return nil, true, err
		}
		left = map[string]bool{}
		for _, rel := range changedPaths(all) {
			if !o.Only(rel) {
				left[rel] = true
			}
		}
		// Sync leaves out what OnBranch names: the changes not asked
		// for join what is on the branch.
		out := make(map[string]bool, len(mo.OnBranch)+len(left))
		for rel := range mo.OnBranch {
			out[rel] = true
		}
		for rel := range left {
			out[rel] = true
		}
		mo.OnBranch = out
	}
	rep, err = box.Sync(ctx, mo)
	if rep != nil && len(left) > 0 {
		kept := rep.OnBranch[:0]
		for _, rel := range rep.OnBranch {
			if !left[rel] {
				kept = append(kept, rel)
			}
		}
		rep.OnBranch = kept
		keep = true
	}
	if rep != nil && len(rep.OnBranch) == 0 {
		rep.OnBranch = nil
	}
	s.Record.Report = rep
	if err != nil {
		s.Record.Error = err.Error()
		_ = s.save()
		return rep, true, err
	}
	s.warnKept(rep, warn)
	if !rep.Interrupted {
		// Each file written back is on disk already (mount syncs them).
		s.Record.Phase, s.Record.Error = Synced, ""
		if len(left) > 0 {
			s.Record.Phase = Review // the rest still waits
		}
	}
	if err := s.save(); err != nil {
		return rep, keep, err
	}
	return rep, keep, nil
}

// changedPaths returns the paths of a sync-back report's changes:
// created, updated, deleted (applied or not), waiting for a deletion
// (Blocked) and conflicting files.
func changedPaths(r *mount.Report) []string {
	var out []string
	out = append(out, r.Created...)
	out = append(out, r.Updated...)
	out = append(out, r.Deleted...)
	out = append(out, r.Unapplied...)
	out = append(out, r.Blocked...)
	for _, c := range r.Conflicts {
		out = append(out, c.Path)
	}
	sort.Strings(out)
	return out
}

// Remove deletes the session directory, the record first: a removal cut
// short leaves a session that reads as unreadable, never one that looks
// whole, and a process waiting for the lock finds the session gone.
func (s *Session) Remove() error {
	if err := os.Remove(filepath.Join(s.Dir, RecordFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return mount.RemoveDir(s.Dir)
}

// Info is a session as List finds it.
type Info struct {
	Session *Session
	// Live says a process holds the session; Stale that none does and the
	// session never reached Synced.
	Live, Stale bool
	// Err is why the session's record could not be read.
	Err error
}

// ID returns the session's id (its directory's name).
func (i Info) ID() string { return filepath.Base(i.Session.Dir) }

// List returns the sessions of a workforce home, oldest first.
func List(home string) ([]Info, error) {
	entries, err := os.ReadDir(Dir(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(Dir(home), e.Name())
		info := Info{Session: &Session{Dir: dir}}
		r, err := readRecord(dir)
		if err != nil {
			info.Err = err
			out = append(out, info)
			continue
		}
		info.Session.Record = *r
		info.Live, info.Stale = liveness(info.Session)
		out = append(out, info)
	}
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Session.Record.Started.Before(out[j].Session.Record.Started)
	})
	return out, nil
}

// liveness reports whether a process holds s, and whether s is stale.
func liveness(s *Session) (live, stale bool) {
	probe := &Session{Dir: s.Dir}
	ok, err := probe.TryLock()
	if err != nil {
		return false, false
	}
	if !ok {
		return true, false
	}
	probe.Close()
	switch s.Record.Phase {
	case Creating, Running, Syncing, Failed:
		return false, true
	}
	return false, false
}

// Open returns the session id of a workforce home, with its record; id may
// be the start of one session's id (the persona's name, say), as long as
// it names only one.
func Open(home, id string) (*Session, error) {
	s, err := Find(home, id)
	if err != nil {
		return nil, err
	}
	if err := s.ReadRecord(); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadRecord reads the session's record into s.Record; a record that
// cannot be read is a *RecordError.
func (s *Session) ReadRecord() error {
	r, err := readRecord(s.Dir)
	if err != nil {
		return err
	}
	s.Record = *r
	return nil
}

// Find returns the session id of a workforce home as Open does, without
// reading its record: a session whose record cannot be read can still be
// removed.
func Find(home, id string) (*Session, error) {
	if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
		return nil, fmt.Errorf("%q is not a session id", id)
	}
	dir := filepath.Join(Dir(home), id)
	if _, err := os.Stat(dir); err != nil {
		entries, _ := os.ReadDir(Dir(home))
		var matches []string
		for _, e := range entries {
			if e.IsDir() && strings.HasPrefix(e.Name(), id) {
				matches = append(matches, e.Name())
			}
		}
		switch len(matches) {
		case 0:
			return nil, &NoSessionError{ID: id, Dir: Dir(home)}
		case 1:
			dir = filepath.Join(Dir(home), matches[0])
		default:
			return nil, fmt.Errorf("%s names %d sessions: %s", id, len(matches), strings.Join(matches, ", "))
		}
	}
	return &Session{Dir: dir}, nil
}

// ErrLive is returned for a session that a running process holds.
var ErrLive = errors.New("the session is still running")

// ErrBusy is returned for a session another workforce process is syncing
// or removing, when this one does not wait for it.
var ErrBusy = errors.New("another workforce process is syncing or removing the session")

// ErrAttempt is returned by Sync for the kept session of an attempt
// (Options.Attempt), whose work is never synced back: its patch is in its
// result.
var ErrAttempt = errors.New("the session is an evaluation's attempt, whose work is never synced back (its result holds its patch)")

// ErrGone is returned for a session removed while this process waited for
// it: another process synced it completely, or removed it.
var ErrGone = errors.New("the session is gone: another workforce process synced or removed it")

// SyncOptions are how Sync brings a session's work back.
type SyncOptions struct {
	mount.SyncOptions
	// Keep keeps the session directory after a complete sync.
	Keep bool
	// Force syncs even while the harness of a run that died still runs
	// (HarnessRunningError), bringing back what it has written so far.
	Force bool
	// SyncCommitted syncs back what the agent committed and left as
	// committed too, besides bringing it as its branch.
	SyncCommitted bool
	// Only, when set, applies only the agent's changes to the paths it
	// accepts (sessions apply PATH...); the session is kept for the rest,
	// in phase Review.
	Only func(rel string) bool
	// Warn reports what the user should know at once.
	Warn func(msg string)
	// Abort, when set, is called with a second signal (Sync): it should
	// end the process, which leaves the session for a later Sync. Unset,
	// such a signal is ignored.
	Abort func(os.Signal)
	// Signals is the program's signal source (Options.Signals).
	Signals Notify
}

// Changes returns what a sync-back of s would do now, without doing it.
func (s *Session) Changes(deletes bool) (*mount.Report, error) {
	box, err := mount.Open(s.Dir)
	if err != nil {
		return nil, err
	}
	return box.Sync(context.Background(), mount.SyncOptions{Deletes: deletes, DryRun: true})
}

// Sync brings the agent's work of a session back into the real tree, as
// the run that made it would have: the session is locked for the time (a
// second Sync waits, and returns ErrGone if the first removed it), a
// session a running process holds is refused with ErrLive, and one whose
// harness outlived its run and still runs with a *HarnessRunningError,
// after a short wait for it to exit (with o.Force it syncs, and keeps the
// session while that harness runs). Unless o.Keep, the session directory
// is removed when the sync is complete without conflicts, and nothing was
// left out (o.Only) or left in the sandbox only (the agent's commits, when
// they could not be brought as its branch). kept says the session
// directory is still there.
//
// A first SIGINT, SIGTERM or SIGHUP while Sync works stops it after the
// current file (Report.Interrupted), leaving the session to finish later;
// a second calls o.Abort.
func (s *Session) Sync(ctx context.Context, o SyncOptions) (rep *mount.Report, kept bool, err error) {
	sigs := watchSignals(phaseSyncOnly, o.Abort, o.Signals)
	defer sigs.stop()
	ctx, cancel := sigs.enter(ctx, phaseSyncOnly)
	defer cancel()
	ok, err := s.TryLock()
	if err != nil {
		return nil, !errors.Is(err, ErrGone), err
	}
	if !ok {
		// Held: by the run itself (refused), or by another sync, which
		// this one waits for. The record says which until the other sync
		// has rewritten it: a run's process is alive.
		r, rerr := readRecord(s.Dir)
		if rerr == nil && (r.Phase == Creating || r.Phase == Running) && alive(r.PID) {
			return nil, true, fmt.Errorf("%w (process %d)", ErrLive, r.PID)
		}
		if err := s.Lock(); err != nil {
			return nil, !errors.Is(err, ErrGone), err
		}
	}
	defer s.Close()
	// Read again under the lock: another sync may have finished it, or
	// removed it.
	if err := s.ReadRecord(); err != nil {
		if _, serr := os.Stat(s.Dir); errors.Is(serr, fs.ErrNotExist) {
			return nil, false, fmt.Errorf("%s: %w", s.ID(), ErrGone)
		}
		return nil, true, err
	}
	if s.Record.Attempt {
		return nil, true, fmt.Errorf("%s: %w", s.ID(), ErrAttempt)
	}
	// Forced while the harness still runs: what it has written so far
	// syncs, and the session stays, since the harness writes on in it.
	running := false
	if !o.Force {
		if err := s.awaitHarness(); err != nil {
			return nil, true, err
		}
	} else if herr := s.HarnessRunning(); herr != nil {
		running = true
		if o.Warn != nil {
			o.Warn(fmt.Sprintf("%v; the session is kept, so that what it writes next can still be synced", herr))
		}
	}
	box, err := mount.Open(s.Dir)
	if err != nil {
		return nil, true, err
	}
	rep, keep, err := s.sync(ctx, box, o)
	if err != nil {
		keepApplied(box, o.Warn)
		return rep, true, err
	}
	kept = o.Keep || keep || running || isKept(rep)
	if kept {
		keepApplied(box, o.Warn)
	} else if err := s.Remove(); err != nil {
		return rep, true, err
	}
	return rep, kept, nil
}

// isKept reports whether a sync-back's report leaves work in the session:
// conflicts, an interruption, files that wait for a deletion not applied
// (mount.Report.Blocked), policy files refused and configuration held
// (held.go).
func isKept(rep *mount.Report) bool {
	return len(rep.Conflicts) > 0 || rep.Interrupted || len(rep.Blocked) > 0 || len(rep.Refused) > 0 || len(rep.Held) > 0
}

// keepApplied saves, for a session that is kept, what its sync applied as
// the base of the next sync (mount.Sandbox.SaveApplied): what the user
// does to those files afterwards is the user's.
func keepApplied(box *mount.Sandbox, warn func(string)) {
	if err := box.SaveApplied(); err != nil && warn != nil {
		warn(fmt.Sprintf("cannot record what was applied (%v): a later sync may report the files applied as conflicts when you change them", err))
	}
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// RemoveIdle removes a session no process holds: a live one is refused
// with ErrLive, one another workforce process is syncing or removing with
// ErrBusy. Unless force, a session whose harness outlived its run and
// still runs is refused with a *HarnessRunningError, after a short wait
// for it to exit. A session whose record cannot be read is removed all
// the same (its harness unchecked); one already gone is not an error.
func (s *Session) RemoveIdle(force bool) error {
	ok, err := s.TryLock()
	switch {
	case errors.Is(err, ErrGone):
		// No record and no lock: a removal cut short, or one under way;
		// nothing can hold it.
		return s.Remove()
	case err != nil:
		return err
	case !ok:
		r, rerr := readRecord(s.Dir)
		if rerr == nil && alive(r.PID) && (r.Phase == Creating || r.Phase == Running) {
			return fmt.Errorf("%s: %w (process %d)", s.ID(), ErrLive, r.PID)
		}
		return fmt.Errorf("%s: %w", s.ID(), ErrBusy)
	}
	defer s.Close()
	if err := s.ReadRecord(); err == nil && !force {
		if err := s.awaitHarness(); err != nil {
			return err
		}
	}
	return s.Remove()
}

// WarmTree returns where the warm sandbox of the project root is kept in
// a workforce home: <home>/warm/<hash of root>/tree.
func WarmTree(home, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(home, "warm", hex.EncodeToString(sum[:8]), mount.TreeDir)
}

// park keeps the sandbox of box warm for the next run of root, with a note
// of the root beside it.
func park(box *mount.Sandbox, warm, root string) error {
	if err := box.Park(warm); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(filepath.Dir(warm), "root"), []byte(root+"\n"), 0o600)
}

// Warm is a warm sandbox of a project.
type Warm struct {
	Root string    `json:"root"`
	Dir  string    `json:"dir"`
	Time time.Time `json:"time"`
}

// WarmList returns the warm sandboxes of a workforce home.
func WarmList(home string) []Warm {
	entries, _ := os.ReadDir(filepath.Join(home, "warm"))
	var out []Warm
	for _, e := range entries {
		dir := filepath.Join(home, "warm", e.Name())
		root, err := os.ReadFile(filepath.Join(dir, "root"))
		fi, serr := os.Stat(filepath.Join(dir, mount.TreeDir))
		if err != nil || serr != nil {
			continue
		}
		out = append(out, Warm{Root: strings.TrimSpace(string(root)), Dir: dir, Time: fi.ModTime()})
	}
	return out
}

// RemoveWarm removes a warm sandbox.
func RemoveWarm(w Warm) error {
	return mount.RemoveDir(w.Dir)
}
