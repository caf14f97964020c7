// Package buildinfo says which workforce a binary is: what --version
// prints.
//
// A binary built by `go install module@version` carries that version;
// one built from a clone (`make build`, `go build`, `go install .`)
// carries the commit it was built from, the commit's time, and whether
// the tree had changes (the Go toolchain stamps them, -buildvcs). A
// version set at link time (-ldflags "-X main.version=...") wins over
// both.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version returns the version of this binary: set, when the build set
// one; else what the Go toolchain stamped into it (Describe); else
// "dev".
func Version(set string) string {
	if set != "" && set != "dev" {
		return set
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return Describe(bi)
}

// Describe returns the version bi records: the module's version when it
// was installed as a module ("v1.4.0", a pseudo-version), else "dev" and
// the commit stamped from the clone it was built in: "dev 3690568c0d1e
// (2026-11-28T23:55:02Z, modified)". A build without either is "dev".
func Describe(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, at, modified := VCS(bi)
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var notes []string
	if at != "" {
		notes = append(notes, at)
	}
	if modified {
		notes = append(notes, "modified")
	}
	out := "dev " + rev
	if len(notes) > 0 {
		out += " (" + strings.Join(notes, ", ") + ")"
	}
	return out
}

// VCS returns what the Go toolchain stamped into bi of the commit it was
// built from: its revision, the revision's time and whether the tree had
// changes; "", "" and false without version control information.
func VCS(bi *debug.BuildInfo) (revision, time string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			time = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return revision, time, modified
}
