// Package author is what workforce create prepares around the persona
// author's run: where the new persona lands (--save-in-directory's
// choices: cwd, user, dir:N, library or a path), the staging directory
// the agent writes into (<home>/create/<time>-<random>/personas), and the
// brief it is given (its PERSONA input), with the text of its warnings
// (Refused). It runs nothing and prints nothing: running the persona
// author is package run's, checking and installing what it wrote and the
// printing are the command's.
package author

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	homedir "github.com/seed-3bc194a6/workforce/internal/home"
	"github.com/seed-3bc194a6/workforce/internal/lazyre"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/internal/quote"
)

// Persona is the persona create runs.
const Persona = "persona-author"

// Ref is the reference of the persona author on tier: PERSONA@TIER, or
// without a tier its default one.
func Ref(tier string) string {
	if tier == "" {
		return Persona
	}
	return Persona + "@" + tier
}

// Target is where create installs: Dir, the layer directory, from the
// choice Choice; Store is the choice as --save-default stores it (a path
// made absolute).
type Target struct {
	Dir, Choice, Store string
	// Layer is the kind of target: cwd, user, dir:N, library or path.
	Layer string
}

// dirChoice is the form dir:N.
var dirChoice = lazyre.New(`^dir:([0-9]+)$`)

// Resolve returns the target choice names, with the workforce home home
// and the working directory wd gives (or why there is none); projectLayer
// gives the project's persona layer, the target of cwd.
func Resolve(home, choice string, wd, projectLayer func() (string, error)) (Target, error) {
	t := Target{Choice: choice, Store: choice, Layer: choice}
	switch {
	case choice == "cwd":
		dir, err := projectLayer()
		t.Dir = dir
		return t, err
	case choice == "user" || strings.HasPrefix(choice, "dir:"):
		cfg, err := homedir.ReadConfig(home)
		if err != nil {
			return t, err
		}
		dirs := cfg.Dirs(home)
		n := 1
		if choice != "user" {
			m := dirChoice().FindStringSubmatch(choice)
			if m == nil {
				return t, fmt.Errorf("%s is not dir:N, N a number from 1", quote.Name(choice))
			}
			if n, err = strconv.Atoi(m[1]); err != nil || n < 1 {
				return t, fmt.Errorf("%s is not dir:N, N a number from 1", quote.Name(choice))
			}
		}
		if n > len(dirs) {
			return t, fmt.Errorf("%s: personaDirs lists %d director%s, so there is no %s (workforce sources list shows them)",
				homedir.ConfigPath(home), len(dirs), plural(len(dirs), "y", "ies"), choice)
		}
		t.Dir = dirs[n-1]
		return t, nil
	case choice == "library":
		dir, err := wd()
		if err != nil {
			return t, err
		}
		dir, ok := CatalogPersonas(dir)
		if !ok {
			return t, &NotCatalogError{Dir: dir}
		}
		t.Dir = dir
		return t, nil
	}
	dir, _ := wd()
	abs := pathutil.AbsIn(dir, choice)
	if abs == "" {
		return t, fmt.Errorf("%s: no working directory to find it in", choice)
	}
	t.Dir, t.Store, t.Layer = abs, abs, "path"
	return t, nil
}

// plural is one or many as n is 1 or not.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Refused is create's warning of a persona author's run that was refused
// n actions (it ended denied): what it wrote is checked all the same.
func Refused(n int) string {
	return fmt.Sprintf("the persona author was refused %d action%s; what it wrote is checked all the same", n, plural(n, "", "s"))
}

// NotCatalogError is --save-in-directory=library outside a catalog
// repository.
type NotCatalogError struct{ Dir string }

func (e *NotCatalogError) Error() string {
	return fmt.Sprintf("library is the personas/ of a catalog repository, and %s is none: it holds no Go package whose go:generate line runs %s", e.Dir, Generator)
}

// Generator is the program a catalog repository's personas/ package runs
// (//go:generate go run ...): the built-in catalog's generator.
const Generator = "github.com/seed-3bc194a6/workforce/generate"

// CatalogPersonas returns the personas/ directory of the project root
// above wd (the nearest directory with .git, else wd), and whether it is
// a catalog: a Go package whose go:generate line runs workforce's
// generator, as the built-in catalog's does.
func CatalogPersonas(wd string) (string, bool) {
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	dir := filepath.Join(homedir.ProjectRoot(wd, homedir.RootMarkers), "personas")
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(data)) {
			if strings.HasPrefix(line, "//go:generate ") && strings.Contains(line, Generator) {
				return dir, true
			}
		}
	}
	return dir, false
}

// NewStage makes the staging directory of a create,
// <home>/create/<time>-<random>, with personas/ in it for the agent.
func NewStage(home string) (string, error) {
	base := homedir.CreateDir(home)
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp(base, time.Now().Format("20060102-150405")+"-")
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(filepath.Join(stage, "personas"), 0o755); err != nil {
		os.RemoveAll(stage)
		return "", err
	}
	return stage, nil
}

// WritePackage makes the staging directory stage a pack of what the
// agent wrote into its personas/: a private package.json that names it,
// for install.Open.
func WritePackage(stage string) error {
	pj := `{"name": "workforce-create", "private": true, "agentworkforce": {"personas": "personas"}}` + "\n"
	return os.WriteFile(filepath.Join(stage, "package.json"), []byte(pj), 0o644)
}

// RemoveIfEmpty removes the staging directory stage when the agent wrote
// nothing into written: there is nothing to look at.
func RemoveIfEmpty(stage, written string) {
	if entries, err := os.ReadDir(written); err == nil && len(entries) == 0 {
		os.RemoveAll(stage)
	}
}

// Brief is the persona author's PERSONA input: what the persona should do
// (description; nil: that it asks), where to write it and what becomes of
// it in the target t, for the project project.
func Brief(description *string, t Target, project string) string {
	var b strings.Builder
	if description != nil {
		fmt.Fprintf(&b, "The new persona: %s.", strings.TrimRight(strings.TrimSpace(*description), "."))
	} else {
		b.WriteString("First ask the user what the new persona should do.")
	}
	fmt.Fprintf(&b, " Write it into the current directory, a staging directory, and nothing else: <id>.json, and the sidecar files it names (claudeMd, agentsMd) beside it, by relative paths."+
		" workforce then checks what you wrote and installs it into %s, %s; do not install it yourself."+
		" The project it is for is %s: read it for the knowledge its sidecar should carry, and write nothing there.", t.Dir, layerWords(t.Layer), project)
	return b.String()
}

// layerWords says what the target of kind layer is, for the persona
// author.
func layerWords(layer string) string {
	switch {
	case layer == "cwd":
		return "the project's persona layer"
	case layer == "user":
		return "the user's persona layer"
	case strings.HasPrefix(layer, "dir:"):
		return "a persona layer of the user's (" + layer + ")"
	case layer == "library":
		return "the built-in catalog of this repository"
	}
	return "a directory of personas"
}

// Choice is the --save-in-directory choice of a create: given when it is
// set, else "create": {"saveIn"} of home's config.json (fromConfig), else
// cwd.
func Choice(home, given string) (choice string, fromConfig bool, err error) {
	if given != "" {
		return given, false, nil
	}
	cc, err := homedir.ReadCreateConfig(home)
	if err != nil {
		return "", false, err
	}
	if cc.SaveIn != "" {
		return cc.SaveIn, true, nil
	}
	return "cwd", false, nil
}
