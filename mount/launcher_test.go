package mount

import (
	"os"
	"testing"

	"github.com/seed-3bc194a6/workforce/confine"
)

// TestMain lets the test binary be confine's launcher, as workforce's
// binary is, for the tests that start a shell in an overlay.
func TestMain(m *testing.M) {
	if confine.IsLauncher(os.Args) {
		os.Exit(confine.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}
