package session

import (
	"fmt"
	"os"
	"path/filepath"
)

// CanResume reports whether the session id (exactly that id, not a
// prefix) is still in the sessions' directory of home and can be resumed
// now (Resumable): what workforce history says of a past run's session.
// A one-shot run removes its session when it ends unless it is kept.
func CanResume(home, id string) bool {
	if id == "" || id != filepath.Base(id) || id == "." || id == ".." {
		return false
	}
	dir := filepath.Join(Dir(home), id)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return false
	}
	s := &Session{Dir: dir}
	if err := s.ReadRecord(); err != nil {
		return false
	}
	return s.Resumable() == nil
}

// NoSessionError is a session id that names no session of the sessions'
// directory Dir, nor the start of one's id.
type NoSessionError struct {
	ID, Dir string
}

func (e *NoSessionError) Error() string { return fmt.Sprintf("no session %s in %s", e.ID, e.Dir) }
