package session

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/seed-3bc194a6/workforce/harness"
	"github.com/seed-3bc194a6/workforce/internal/proctree"
	"github.com/seed-3bc194a6/workforce/mount"
	"github.com/seed-3bc194a6/workforce/persona"
)

// Resume. A kept session (run --keep, --review, one kept for conflicts)
// can continue: `sessions resume ID TASK` plans a one-shot run of the
// session's harness for its existing directory (PlanOptions.Session) that
// continues the harness's own conversation (harness.OneShot.Resume), and
// Plan.Run runs it in the sandbox as it is (resume): nothing is copied or
// materialized again, the harness's configuration is written again, and
// once the harness exits the run ends as Run ends (afterHarness: review,
// sync-back, keep or remove). The sandbox was synced before: its manifest
// holds what that sync applied as the base of the next
// (mount.Sandbox.SaveApplied), so the next sync brings only what changed
// since, and the user's edits of what was applied are the user's.
//
// The conversation is the record's HarnessSessionID: claude's is fixed
// before the start (--session-id, interactive and one-shot runs alike);
// a one-shot run of codex or opencode records the id its output says; an
// interactive one, when the session is kept, the id its session store
// says ran in the sandbox's working directory (harness.FindSession). A
// record that has none (a session of an older workforce, one whose
// workforce process died) is looked up in the store again when resumed;
// where nothing says which conversation ran there, resume refuses with a
// *NotResumableError.
//
// A session held for review is held again after the resumed run; one
// whose phase is creating or failed, whose run still holds it (ErrLive),
// whose harness outlived its run and still runs (*HarnessRunningError),
// or whose sandbox tree is gone, is refused.

// NotResumableError reports a session that cannot be resumed, and why.
type NotResumableError struct {
	ID     string
	Reason string
	// Err is the error behind Reason, if any.
	Err error
}

func (e *NotResumableError) Error() string {
	return fmt.Sprintf("session %s cannot be resumed: %s", e.ID, e.Reason)
}

func (e *NotResumableError) Unwrap() error { return e.Err }

// Resumable returns nil when the session, as its record says, can be
// resumed, and why not otherwise: ErrLive, a *HarnessRunningError or a
// *NotResumableError. Plan.Run checks again under the session's lock.
func (s *Session) Resumable() error {
	if r := s.Record; (r.Phase == Creating || r.Phase == Running) && alive(r.PID) {
		if ok, err := (&Session{Dir: s.Dir}).probeLock(); err == nil && !ok {
			return fmt.Errorf("%s: %w (process %d)", s.ID(), ErrLive, r.PID)
		}
	}
	if err := s.resumableState(); err != nil {
		return err
	}
	return s.HarnessRunning()
}

// resumableState returns why the session's phase or sandbox cannot be
// resumed, nil when they can: Resumable without the checks of the
// processes.
func (s *Session) resumableState() error {
	r := s.Record
	if r.Attempt {
		// Its resumed run would sync the work back.
		return &NotResumableError{ID: s.ID(), Reason: "it is an evaluation's attempt, whose work is never synced back (its result holds its patch)"}
	}
	switch r.Phase {
	case Creating:
		return &NotResumableError{ID: s.ID(), Reason: "it was never made whole (phase creating): there is no conversation to continue"}
	case Failed:
		why := "its run failed"
		if r.Error != "" {
			why += ": " + r.Error
		}
		return &NotResumableError{ID: s.ID(), Reason: why}
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, mount.TreeDir)); err != nil {
		return &NotResumableError{ID: s.ID(), Reason: "its sandbox tree is gone", Err: err}
	}
	return nil
}

// probeLock reports whether the session's lock is free, letting it go at
// once.
func (s *Session) probeLock() (bool, error) {
	ok, err := s.TryLock()
	if ok {
		s.Close()
	}
	return ok, err
}

// resumable checks the plan of a resumed run: one-shot, on the
// session's harness, of a session that can be resumed.
func resumable(o PlanOptions, r *persona.Resolved) error {
	s := o.Session
	switch {
	case o.OneShot == nil:
		return errors.New("a resumed session runs its harness unattended: it needs a task")
	case r.Harness != s.Record.Harness:
		return fmt.Errorf("session %s ran %s, not %s: it resumes on its own harness", s.ID(), s.Record.Harness, r.Harness)
	}
	return s.Resumable()
}

// resumeID returns the harness conversation of session s to continue:
// the record's, else the one the harness's session store says ran in the
// sandbox's working directory workdir. The store is read through an
// invocation of the harness planned as the run's is, and confined as the
// run's is (confine: Plan.confineLookup): opencode's lookup starts
// opencode, which loads the project's plugins. What it leaves running is
// ended (lookupSession), and said in the warning it returns.
func resumeID(s *Session, r *persona.Resolved, o harness.Options, workdir string, confine func(*harness.Invocation) error) (id, warning string, err error) {
	if id := s.Record.HarnessSessionID; id != "" {
		return id, "", nil
	}
	if harness.FixesSessionID(r.Harness) {
		why := "its record keeps no " + r.Harness + " session id"
		if s.Record.Format < 3 {
			why += fmt.Sprintf(" (workforce fixes it when the run starts since record format 3; this record is of format %d)", s.Record.Format)
		}
		return "", "", &NotResumableError{ID: s.ID(), Reason: why}
	}
	inv, err := harness.Plan(r, o)
	if inv == nil {
		return "", "", err
	}
	if err := confine(inv); err != nil {
		return "", "", err
	}
	id, ended, err := lookupSession(func() (string, error) { return harness.FindSession(inv, workdir, s.Record.Started) })
	if len(ended) > 0 {
		n := "1 process"
		if len(ended) != 1 {
			n = fmt.Sprintf("%d processes", len(ended))
		}
		warning = fmt.Sprintf("ended %s the lookup of %s's session store left running: %s", n, r.Harness, proctree.Describe(ended, 10))
	}
	if err != nil {
		why := fmt.Sprintf("its record keeps no %s session id, and %v", r.Harness, err)
		if warning != "" {
			why += "; " + warning
		}
		return "", "", &NotResumableError{ID: s.ID(), Reason: why, Err: err}
	}
	if !ValidHarnessSessionID(id) {
		return "", "", &NotResumableError{ID: s.ID(), Reason: fmt.Sprintf("%s's session store names its conversation %q, which cannot be passed back to it", r.Harness, id)}
	}
	return id, warning, nil
}

// lookupSession runs find, a lookup of a harness's session store, and
// ends what it leaves running (opencode session list may leave a
// plugin's daemon), as endLeftovers does: this process adopts the
// orphans meanwhile (adoptOrphans), and ends its children that were not
// there before find ran, with everything below them. It returns what
// find returned and the processes it ended.
func lookupSession(find func() (string, error)) (string, []proctree.Proc, error) {
	adoptOrphans()
	before := map[int]bool{}
	for _, pid := range leftovers() {
		before[pid] = true
	}
	id, err := find()
	ended := proctree.End(func() []int {
		var pids []int
		for _, pid := range leftovers() {
			if !before[pid] {
				pids = append(pids, pid)
			}
		}
		return pids
	}, leftoverGrace)
	for _, p := range ended {
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(p.PID, &ws, syscall.WNOHANG, nil)
	}
	return id, ended, err
}

// resume runs the harness of o in the sandbox of the kept session s, then
// ends as Run does (afterHarness). It takes the session's lock: a session
// a running process holds is refused with ErrLive, one another workforce
// process syncs or removes with ErrBusy; and checks again what Resumable
// checks. A harness that cannot start leaves the session as it was.
func resume(s *Session, o Options) (*Result, error) {
	// The harness's phase from the start: a signal that comes before it
	// started is passed on to it once it has.
	sigs := watchSignals(phaseHarness, o.Abort, o.Signals)
	defer sigs.stop()
	warn := func(msg string) {
		if o.Warn != nil {
			o.Warn(msg)
		}
	}
	progress := func(event, detail string) {
		if o.Progress != nil && !sigs.hup.Load() {
			o.Progress(event, detail)
		}
	}

	ok, err := s.TryLock()
	if err != nil {
		return nil, err
	}
	if !ok {
		r, rerr := readRecord(s.Dir)
		if rerr == nil && (r.Phase == Creating || r.Phase == Running) && alive(r.PID) {
			return nil, fmt.Errorf("%s: %w (process %d)", s.ID(), ErrLive, r.PID)
		}
		return nil, fmt.Errorf("%s: %w", s.ID(), ErrBusy)
	}
	defer s.Close()
	// Read again under the lock: another process may have synced,
	// removed or resumed it since it was planned.
	if err := s.ReadRecord(); err != nil {
		if _, serr := os.Stat(s.Dir); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", s.ID(), ErrGone)
		}
		return nil, err
	}
	if err := s.resumableState(); err != nil {
		return nil, err
	}
	if err := s.awaitHarness(); err != nil {
		return nil, err
	}
	box, err := mount.Open(s.Dir)
	if err != nil {
		return nil, err
	}
	box.SetHome(o.Mount.Home) // the read watch's listing uses its cache
	if err := withOverlay(o.Invocation, box); err != nil {
		return nil, err
	}
	if err := o.Invocation.WriteFiles(); err != nil {
		return nil, err
	}
	if o.state != nil {
		if err := o.state.refresh(warn); err != nil {
			return nil, err
		}
		if err := o.state.writeFiles(o.Invocation.StateFiles); err != nil {
			return nil, err
		}
	}
	// A session of an older workforce has no tmp directory.
	if err := os.MkdirAll(filepath.Join(s.Dir, tmpDir), 0o700); err != nil {
		return nil, err
	}
	// What was held for review stays held.
	o.Review = o.Review || s.Record.Phase == Review

	before := s.Record
	s.Record.Phase, s.Record.PID, s.Record.Error = Running, os.Getpid(), ""
	s.Record.ExitCode, s.Record.HarnessPID, s.Record.HarnessStart = nil, 0, nil
	if err := s.save(); err != nil {
		return nil, err
	}
	started := func(pid int) {
		s.Record.HarnessPID, s.Record.HarnessStart = pid, procStart(pid)
		_ = s.save()
	}
	reads := box.WatchReads() // an overlay's: before the harness starts
	ran, err := sigs.runHarness(nil, o.Invocation, box.Workdir, o.Timeout, o.Stdin, o.Stdout, o.Stderr, watchFrom(started, reads), s.findEarly(&o), netHooks{o.net, o.netDenied})
	warnReads(reads.Stop(), warn) // before sync-back writes the real tree
	if len(ran.ended) > 0 {
		warn(endedWarning(ran.ended))
	}
	if err != nil {
		// Nothing ran, or nothing workforce can tell: the session stays
		// as it was, to resume or sync later.
		s.Record = before
		_ = s.save()
		return nil, err
	}
	return s.afterHarness(sigs, box, o, ended{exit: ran.exit, timedOut: ran.timedOut, network: ran.network}, warn, progress)
}

// newUUID returns a random (version 4) UUID: a conversation id fixed
// before the harness starts.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
