// Command workforce-launcher is workforce's launcher alone: the process
// that confines a harness (Landlock, seccomp, the namespaces, the
// overlay) and then executes it, which workforce otherwise is for itself.
// make build puts it beside workforce, which executes it for every
// confined start when it is of the same build (confine.LauncherName):
// it links the confine package and the standard library only, so it
// starts in about a millisecond, where workforce initialises every
// package it links first. It is started by workforce, never by hand.
package main

import (
	"fmt"
	"os"

	"github.com/seed-3bc194a6/workforce/confine"
)

func main() {
	if !confine.IsLauncher(os.Args) {
		fmt.Fprintf(os.Stderr, "%s: error: workforce starts it to confine a harness; it is not run by hand\n", confine.LauncherName)
		os.Exit(2)
	}
	os.Exit(confine.Main(os.Args[2:]))
}
