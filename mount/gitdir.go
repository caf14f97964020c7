package mount

import "path/filepath"

// InGitDir reports whether rel, a path relative to the project root, is a
// git directory or lies in one (.git, at any depth, a name a file system
// takes for .git such as .GIT or GIT~1, or a git directory of the project
// under another name that the root's .git file names): the sandbox never
// syncs such a path back, so a run started there would lose the agent's
// work.
func InGitDir(root, rel string) bool {
	if rel == "." {
		return false
	}
	rel = filepath.ToSlash(rel)
	return inGit(rel) || dotGitAlias(rel) || projectGitDirs(root).inGit(rel)
}
