//go:build !linux

package confine

import (
	"fmt"
	"os"
	"os/exec"
)

func kernelABI() int { return 0 }

// Start refuses: this system cannot confine (*UnavailableError).
func Start(cmd *exec.Cmd, p Policy) (*Launched, error) { return nil, Available() }

// Spawn refuses: this system cannot confine (*UnavailableError).
func Spawn(cmd *exec.Cmd, s Shape) (*Pending, error) { return nil, Available() }

// Pending is a launcher Spawn started; this system has none.
type Pending struct{}

// Launch refuses: this system cannot confine.
func (pd *Pending) Launch(p Policy, dir string, env []string) (*Launched, error) {
	return nil, Available()
}

// Abort does nothing: no launcher was started.
func (pd *Pending) Abort() {}

// probeNamespaces fails: this system has no namespaces.
func probeNamespaces() error { return Available() }

// probeOverlay fails: this system has no overlay in namespaces.
func probeOverlay(string) error { return Available() }

// Main reports that this system has no launcher and returns
// ExitCannotRun.
func Main(args []string) int {
	fmt.Fprintf(os.Stderr, "workforce: error: %s: %v\n", LauncherArg, Available())
	return ExitCannotRun
}

// LauncherName is the launcher's own executable; on this system nothing
// is confined, and nothing executes it.
const LauncherName = "workforce-launcher"

// Launcher returns "" and false: nothing is confined on this system.
func Launcher() (string, bool) { return "", false }
