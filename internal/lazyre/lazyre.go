// Package lazyre compiles a regular expression on its first use instead
// of at package initialisation: every command pays for what its packages
// initialise, and most never use most patterns (`workforce context` uses
// none).
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that returns expr compiled, compiling it on the
// first call; expr must compile (regexp.MustCompile).
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
