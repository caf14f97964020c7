package mount

import "path/filepath"

// InGitDir reports whether rel, a path relative to the project root, is a
// git directory or lies in one (.git, at any depth): the sandbox never
// syncs such a path back, so a run started there would lose the agent's
// work.
func InGitDir(rel string) bool { return rel != "." && inGit(filepath.ToSlash(rel)) }
