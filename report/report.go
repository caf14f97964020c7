// Package report defines the JSON that workforce's commands print: the
// plan of run --dry-run, the listings of list, sources and sessions, the
// persona show prints, what install, import and export did, what context
// finds, what harness check finds.
//
// The types here are the command-line contract. They are deliberately not
// the types of the packages that compute the values (persona, session,
// mount, harness, discover, skill, install): the command layer converts
// those into these, so that an internal type can be renamed, reshaped or
// given another JSON tag without changing a byte of what a command prints,
// and a change of what a command prints is a change of this package, seen
// in review. The field names and their order, omitempty and the nil-ness
// of lists and maps are those the commands have always printed; the tests
// of package main compare the bytes with golden files.
//
// The package sits below the command layer and above nothing of
// workforce: it imports no other package of the module. The one-shot
// result, batch results and the history will be its types too.
package report

// Origin is where a persona value came from: the layer and the file.
type Origin struct {
	Layer string `json:"layer"`
	File  string `json:"file"`
}
