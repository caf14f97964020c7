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
