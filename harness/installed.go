package harness

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed-3bc194a6/workforce/persona"
)

// NoneInstalledError is no harness installed: none of persona.Harnesses
// is on PATH.
type NoneInstalledError struct{}

func (*NoneInstalledError) Error() string {
	return "no harness is installed: none of " + strings.Join(persona.Harnesses, ", ") + " is on PATH"
}

// Hint says how to install each harness.
func (*NoneInstalledError) Hint() string {
	var ways []string
	for _, h := range persona.Harnesses {
		ways = append(ways, fmt.Sprintf("npm install -g %s (%s)", Packages[h], h))
	}
	return "install one: " + strings.Join(ways, ", ")
}

// Installed reports whether harness h is on the PATH of env.
func Installed(h string, env []string) bool {
	_, err := LookPath(h, env)
	return err == nil
}

// FirstInstalled returns the first harness of prefer, then of
// persona.Harnesses (claude, opencode, codex, gemini), that is on the
// PATH of env: the harness a command runs when the one it was configured
// with is not installed. A *NoneInstalledError when none is.
func FirstInstalled(env []string, prefer ...string) (string, error) {
	for _, h := range append(slices.Clip(prefer), persona.Harnesses...) {
		if h != "" && Installed(h, env) {
			return h, nil
		}
	}
	return "", &NoneInstalledError{}
}
