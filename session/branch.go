package session

import (
	"context"
	"fmt"

	"github.com/seed-3bc194a6/workforce/mount"
)

// BranchName returns the branch of the real repository that the agent's
// commits of session id are brought to: workforce/<id>.
func BranchName(id string) string { return branchPrefix + id }

// branchPrefix begins the name of every session's branch.
const branchPrefix = "workforce/"

// exportBranch brings the commits the agent made in box into the real
// repository as the session's branch (BranchName), and records the branch,
// the number of commits and the commit it names. onBranch says the agent's
// commits are on the branch; it is false, with no error, when the agent
// committed nothing. A HEAD the agent moved to a commit the repository
// already had is no commit of the agent's, and one pointed at what is no
// commit (a blob, an object no repository has) makes no branch either:
// warn says so.
func (s *Session) exportBranch(box *mount.Sandbox, warn func(string)) (onBranch bool, err error) {
	box, done, err := gitView(box)
	defer done()
	if err != nil {
		return false, fmt.Errorf("cannot read the agent's repository in session %s: %w", s.ID(), err)
	}
	c, err := agentCommits(box, branchPrefix)
	if err != nil {
		return false, fmt.Errorf("cannot read the agent's commits in session %s: %w", s.ID(), err)
	}
	switch {
	case c.NotCommit == "missing":
		warn(fmt.Sprintf("the agent pointed HEAD at %s, an object the repository does not have: no branch is made", c.Head[:12]))
	case c.NotCommit != "":
		warn(fmt.Sprintf("the agent pointed HEAD at %s, which is not a commit but a %s: no branch is made", c.Head[:12], c.NotCommit))
	case c.Moved:
		warn(fmt.Sprintf("the agent moved HEAD to %s, a commit the repository already has: no branch is made", c.Head[:12]))
	}
	if c.New == 0 {
		return false, nil
	}
	name := BranchName(s.ID())
	if err := fetchBranch(box, name); err != nil {
		return false, fmt.Errorf("session %s: %w", s.ID(), err)
	}
	s.Record.Branch, s.Record.Commits, s.Record.Head = name, c.New, c.Head
	return true, s.save()
}

// hold holds the agent's work in box for review: its commits become its
// branch, nothing is synced back, and the session is recorded in phase
// Review. held is false, and nothing recorded, when there is nothing to
// review: no commit and no change sessions apply would bring.
func (s *Session) hold(box *mount.Sandbox, warn func(string)) (held bool, err error) {
	if _, err := s.exportBranch(box, warn); err != nil {
		warn(fmt.Sprintf("%v; the commits stay in the sandbox, and what they changed shows as changes", err))
	}
	rep, err := box.Sync(context.Background(), mount.SyncOptions{Deletes: true, DryRun: true, SyncConfig: true})
	if err != nil {
		return false, err
	}
	if s.Record.Commits == 0 && len(changedPaths(rep)) == 0 {
		return false, nil
	}
	s.Record.Phase = Review
	return true, s.save()
}

// RemoveBranch deletes the session's branch from the real repository, if
// the session made one and it still names the commit it was made to name:
// a branch moved since, or checked out, is left as it is (an error says
// so).
func (s *Session) RemoveBranch() error {
	if s.Record.Branch == "" {
		return nil
	}
	if err := deleteBranch(s.Record.Root, s.Record.Branch, s.Record.Head); err != nil {
		return fmt.Errorf("session %s: %w", s.ID(), err)
	}
	return nil
}

// Discard drops the agent's work of a session no process holds: the
// session directory and the session's branch (RemoveBranch). It refuses
// what RemoveIdle refuses; the branch is deleted once the session is
// gone.
func (s *Session) Discard(force bool) error {
	if err := s.RemoveIdle(force); err != nil {
		return err
	}
	return s.RemoveBranch() // as the record read under the lock names it
}
