package persona

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/home"
)

// ProjectTarget is the directory an install, an import or outdated works
// on without another: the project layer of opts's working directory, or,
// when it has none yet, where it goes (home.ProjectDir under the project
// root, found from the working directory with its links resolved).
func ProjectTarget(opts Options) (string, error) {
	layers, err := Layers(opts)
	if err != nil {
		return "", err
	}
	if layers[0].Name == LayerProject {
		return layers[0].Dir, nil
	}
	root, err := ProjectRoot(opts)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, filepath.FromSlash(home.ProjectDir)), nil
}

// ProjectRoot is the project root of opts's working directory, its links
// resolved: the nearest directory above it with a root marker, or the
// working directory without one (home.ProjectRoot).
func ProjectRoot(opts Options) (string, error) {
	_, wd, err := opts.paths()
	if err != nil {
		return "", err
	}
	if wd, err = filepath.EvalSymlinks(wd); err != nil {
		return "", err
	}
	return home.ProjectRoot(wd, opts.markers()), nil
}

// WithProjectLayer is layers with a project layer in dir first when they
// have none: the cascade an install into a new project layer is read in.
func WithProjectLayer(layers []Layer, dir string) []Layer {
	if len(layers) == 0 || layers[0].Name == LayerProject {
		return layers
	}
	return append([]Layer{{Name: LayerProject, Dir: dir}}, layers...)
}

// FindAllFiles returns the persona files each of args names, in their
// order (FindFiles, given in the working directory dir); args that name
// no file at all are an error naming them.
func FindAllFiles(dir string, args []string) ([]string, error) {
	var files []string
	for _, arg := range args {
		found, err := FindFiles(dir, arg)
		if err != nil {
			return nil, err
		}
		files = append(files, found...)
	}
	if len(args) > 0 && len(files) == 0 {
		return nil, fmt.Errorf("no *.json persona files in %s", strings.Join(args, ", "))
	}
	return files, nil
}
