package persona

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/seed-3bc194a6/workforce/internal/diag"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
)

// FindFiles returns the persona files arg names, given in the working
// directory dir: arg as an absolute path when it is a file, the *.json
// files directly in it, sorted, when it is a directory, or the files a
// doublestar pattern matches, sorted (an invalid pattern is a
// *PatternError, one that matches nothing an error).
func FindFiles(dir, arg string) ([]string, error) {
	abs := pathutil.AbsIn(dir, arg)
	if abs == "" {
		return nil, fmt.Errorf("%s: no working directory to find it in", arg)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) && IsPattern(arg) {
		if err := CheckPattern(filepath.ToSlash(abs)); err != nil {
			return nil, err
		}
		matches, err := doublestar.FilepathGlob(abs, doublestar.WithFilesOnly())
		if err != nil {
			return nil, err
		}
		if len(matches) == 0 {
			return nil, fmt.Errorf("pattern %q matches no file", arg)
		}
		sort.Strings(matches)
		return matches, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file or directory", arg)
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{abs}, nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, filepath.Join(abs, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

// Validation is what validate finds: the files checked, and the errors
// and warnings about them, each at its file, line and column.
type Validation struct {
	Files            []string
	Errors, Warnings []*diag.Diagnostic
	// Catalog is the catalog the files were loaded into, for the checks
	// this package cannot make (run.ModelProblems).
	Catalog *Catalog
}

// Validate loads the persona files files over layers, as the first layer
// (named "validate"), and returns what is wrong with them, or, without
// files, with every file of every layer (those that do not load as a
// persona at all included), sorted.
func Validate(layers []Layer, files []string) Validation {
	checked := map[string]bool{}
	if len(files) > 0 {
		layers = append([]Layer{FilesLayer("validate", files)}, layers...)
		for _, f := range files {
			checked[f] = true
		}
	}
	cat := LoadLayers(layers)
	if len(files) == 0 {
		files = cat.Files()
		for _, f := range files {
			checked[f] = true
		}
		for _, ds := range [][]*diag.Diagnostic{cat.Errors, cat.Warnings} {
			for _, d := range ds {
				if !checked[d.File] {
					checked[d.File] = true
					files = append(files, d.File)
				}
			}
		}
		sort.Strings(files)
	}
	v := Validation{Files: files, Catalog: cat}
	for _, d := range cat.Errors {
		if checked[d.File] {
			v.Errors = append(v.Errors, d)
		}
	}
	for _, d := range cat.Warnings {
		if checked[d.File] {
			v.Warnings = append(v.Warnings, d)
		}
	}
	return v
}
