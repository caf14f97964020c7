package main

import (
	"testing"

	"github.com/seed-3bc194a6/workforce/batch"
	"github.com/seed-3bc194a6/workforce/session"
)

// TestParentDeathSignal: the signal the pool asks the kernel to send its
// tasks' runs when it dies is the one run takes once (package batch may
// not import session, so each names it).
func TestParentDeathSignal(t *testing.T) {
	if batch.ParentDeathSignal != session.ParentDeathSignal {
		t.Errorf("the pool's parent-death signal is %v, run takes %v once", batch.ParentDeathSignal, session.ParentDeathSignal)
	}
}
