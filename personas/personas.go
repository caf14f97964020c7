// Package personas holds the built-in persona catalog of workforce: the
// persona JSON files with their sibling markdown sidecars, and the Go file
// generated from them that carries the catalog inside the binary.
package personas

import "github.com/seed-3bc194a6/workforce/persona"

// Files is the built-in catalog, one entry per persona JSON file, with every
// sidecar inlined as content. It is replaced by the generated catalog.
var Files []persona.File
