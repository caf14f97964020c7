package home

import (
	"os"
	"path/filepath"
	"strings"
)

// RootMarkers are the files or directories that mark a project root when
// nothing else is said: a repository's .git.
var RootMarkers = []string{".git"}

// ProjectRoot returns the project root of dir: the nearest directory at or
// above dir holding one of markers (followed when a symlink), or dir itself
// when none does.
func ProjectRoot(dir string, markers []string) string {
	for d := dir; ; d = filepath.Dir(d) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(d, m)); err == nil {
				return d
			}
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// ProjectLayer returns the project layer directory for the working
// directory dir, or "" when there is none: the nearest ProjectDir found
// walking up from dir to the project root, the first directory holding
// one of markers (a symlink counts, whatever it leads to). Without a
// marker the walk goes on to the file system root. The user's home
// directory is never taken for a project: the walk stops before it, whose
// ProjectDir is the default workforce home's user layer.
func ProjectLayer(dir string, markers []string) string {
	userHome, _ := os.UserHomeDir()
	for d := dir; ; {
		if d == userHome {
			return ""
		}
		p := filepath.Join(d, ProjectDir)
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		}
		for _, m := range markers {
			if _, err := os.Lstat(filepath.Join(d, m)); err == nil {
				return ""
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// ProjectRootOf returns the project root of a project layer directory:
// layer without its ProjectDir suffix; ok is false when layer does not
// end in ProjectDir.
func ProjectRootOf(layer string) (root string, ok bool) {
	suffix := string(filepath.Separator) + filepath.FromSlash(ProjectDir)
	root, ok = strings.CutSuffix(filepath.Clean(layer), suffix)
	if !ok || root == "" {
		return "", false
	}
	return root, true
}
