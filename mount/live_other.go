//go:build !linux

package mount

import (
	"errors"
	"time"
)

// LiveOptions change what Live does (see live_linux.go).
type LiveOptions struct {
	Deletes      bool
	Settle, Poll time.Duration
	OnConflict   func(Conflict)
	OnCross      func(rel string, toReal bool)
	Warn         func(string)
}

// LiveReport is what a live sync did.
type LiveReport struct {
	ToReal, ToSandbox, Deleted int
	Conflicts                  []Conflict
	Failed                     []Failure
}

// Live is not available on this system.
type Live struct{}

// Live fails where live sync is not available.
func (s *Sandbox) Live(LiveOptions) (*Live, error) {
	return nil, errors.New("live sync needs Linux")
}

// Stop does nothing.
func (l *Live) Stop() *LiveReport { return &LiveReport{} }
