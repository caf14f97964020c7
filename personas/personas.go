// Package personas holds the built-in persona catalog of workforce: the
// persona JSON files with their sibling markdown sidecars, and catalog_gen.go,
// generated from them, which carries the catalog inside the binary with every
// sidecar inlined. Edit the JSON and markdown files, then run go generate.
package personas

//go:generate go run github.com/seed-3bc194a6/workforce/generate
