package proctree

import (
	"os"
	"testing"
)

// BenchmarkChildren measures what a run pays at its end when its harness
// left nothing: one read of the process table.
func BenchmarkChildren(b *testing.B) {
	for b.Loop() {
		Children(os.Getpid())
	}
}
