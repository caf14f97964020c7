//go:build !linux

package mount

import "context"

// journal is not kept where inotify is not available: sync-back walks.
type journal struct{}

func startJournal(string, []string) *journal { return nil }

func (j *journal) close() {}

func (s *Sandbox) narrow(context.Context, func(string) bool, func([]statEntry)) (map[string]struct{}, []string, bool) {
	return nil, nil, false
}

func (s *Sandbox) keepUnchanged(*seenState, map[string]struct{}) {}
