package native

import (
	"path/filepath"

	"github.com/seed-3bc194a6/workforce/internal/home"
)

// ProjectAgentDir is the agents directory of harness (AgentDirs) in the
// project of the working directory wd: under its project root (the
// nearest directory with a root marker, or wd), wd's links resolved.
func ProjectAgentDir(wd, harness string) (string, error) {
	wd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return "", err
	}
	return filepath.Join(home.ProjectRoot(wd, home.RootMarkers), filepath.FromSlash(AgentDirs[harness])), nil
}
