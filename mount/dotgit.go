package mount

import (
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// Names a file system takes for .git. On a case-insensitive file system
// (WSL's /mnt/c, vfat, exFAT, NTFS, SMB, a casefolded ext4, f2fs or tmpfs
// directory, macOS), .GIT/hooks/pre-commit is .git/hooks/pre-commit; on
// NTFS so are .git./hooks, GIT~1/hooks and .git::$INDEX_ALLOCATION/hooks;
// on HFS+ .g\u200cit/hooks. A path with such a component (other than .git
// itself, which git.go handles: the sandbox's own repository) never
// crosses, in either direction, whatever the file system of either side:
//
//   - the copy leaves it out of the sandbox (and a warm sandbox's refresh
//     removes it): it is in no manifest (one an older workforce wrote is
//     read without it), so nothing removes or replaces it in the real
//     tree either;
//   - sync-back (run, sessions apply, sessions sync) never writes it, and
//     reports each file, link or special file the agent left below it in
//     Report.NotSynced; it stays in the session's sandbox;
//   - live sync carries it neither way, nor watches such a directory;
//   - a run whose working directory lies below it is refused, as one
//     below .git is (InGitDir).
//
// A project whose git directory is itself named so (a repository moved
// to .GIT on a case-insensitive file system) gets no repository in the
// sandbox. What the agent writes below such a name is never taken for the
// sandbox's repository either: that is .git, exactly (gitDir).

// dotGitAlias reports whether a component of rel (slashes, relative to the
// project root) is a name a file system may take for .git
// (pathutil.IsDotGit) but is not .git itself.
func dotGitAlias(rel string) bool {
	for rel != "" {
		name := rel
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			name, rel = rel[:i], rel[i+1:]
		} else {
			rel = ""
		}
		if name != ".git" && pathutil.IsDotGit(name) {
			return true
		}
	}
	return false
}
