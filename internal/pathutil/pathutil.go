// Package pathutil is the one containment check of workforce: whether a
// path is a directory or inside it, by whole path segments, so that
// /a/app2 is not taken for a part of /a/app; and the one test of a path
// component for git's own directory (IsDotGit: .GIT, .git., GIT~1 and
// the other names a file system may take for .git), with the code points
// some file systems ignore in a name (Ignorable), which mount's held
// configuration folds away too.
//
// Its checks compare strings and touch no file system: callers pass clean
// absolute paths, and canonical ones (Real, or filepath.EvalSymlinks)
// wherever a symlink could lead out of the directory: a sidecar, a skill,
// a --root, a path sealed into a sandbox. Resolving is theirs, since each
// reports a path that cannot be resolved in its own words; Real is the
// resolver for paths resolved on every run, in three system calls
// whatever the depth.
package pathutil

import (
	"path/filepath"
	"strings"
)

// Within reports whether path is dir or inside it, comparing whole path
// segments. Both must be clean absolute paths.
func Within(dir, path string) bool {
	_, ok := Rel(dir, path)
	return ok
}

// Rel returns path relative to dir when path is dir (".") or inside it,
// comparing whole path segments, and ok false otherwise. Both must be
// clean absolute paths. Unlike filepath.Rel it never climbs with "..".
func Rel(dir, path string) (rel string, ok bool) {
	rest, found := strings.CutPrefix(path, dir)
	switch {
	case !found:
		return "", false
	case rest == "":
		return ".", true
	case strings.HasSuffix(dir, string(filepath.Separator)):
		return rest, true // dir is the root, "/"
	case rest[0] == filepath.Separator:
		return rest[1:], true
	}
	return "", false
}

// AbsIn returns path made absolute in the working directory dir, cleaned;
// empty when path is relative and dir is unknown.
func AbsIn(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, path)
}
