package mount

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
)

// Separator goes between the repository's instruction text and the
// persona's in extend mode.
const Separator = "\n\n---\n\n"

// Extend is how extend mode gives a harness, started in the sandbox, the
// instruction text it would have loaded in the user's real directory,
// followed by the persona's.
//
// The repository's instruction files of the harness's convention are hidden
// in the sandbox, as in overwrite mode, and their text, in the harness's own
// load order and joining, is folded into the one file materialized in the
// sandbox's working directory, before Separator and the persona text. Files
// the harness reads anyway are not folded: global files (from the home
// directory, which the harness reads itself) and files in the directories
// above the sandbox that the harness walks into and that the real directory
// would have given too. Files above the sandbox that the real directory
// would not have given cannot be hidden without writing outside the sandbox;
// they are reported in Extra.
type Extend struct {
	// Real is what the harness loads in the real directory.
	Real *discover.Result `json:"real"`
	// Folded are the real files whose text is in the materialized file.
	Folded []string `json:"folded"`
	// LoadedAnyway are real files the harness reads itself in the sandbox.
	LoadedAnyway []string `json:"loadedAnyway"`
	// Extra are files above the sandbox the harness would read there and
	// the real directory would not give.
	Extra []string `json:"extra"`
	// Text is the materialized file's content.
	Text string `json:"text"`
}

// PlanExtend computes extend mode for profile p: realDir is the user's
// working directory, tree the sandbox copy of the project root (it need not
// exist yet), treeHasRoot whether the copy holds one of the profile's root
// markers, name the materialized file's name, and text the persona's.
func PlanExtend(p discover.Profile, realDir, tree string, treeHasRoot bool, name, text string, o discover.Options) (*Extend, error) {
	real, err := discover.Chain(p, realDir, o)
	if err != nil {
		return nil, err
	}
	e := &Extend{Real: real, Folded: []string{}, LoadedAnyway: []string{}, Extra: []string{}}
	above := map[string]bool{}
	for _, f := range aboveSandbox(p, tree, treeHasRoot, name) {
		above[f] = true
	}
	var texts []string
	inReal := map[string]bool{}
	for _, f := range real.Files {
		inReal[f.Canonical] = true
		switch {
		case f.Scope == discover.ScopeGlobal || above[f.Canonical]:
			e.LoadedAnyway = append(e.LoadedAnyway, f.Path)
		default:
			e.Folded = append(e.Folded, f.Path)
			texts = append(texts, f.Text)
		}
	}
	for _, f := range aboveSandbox(p, tree, treeHasRoot, name) {
		if !inReal[f] {
			e.Extra = append(e.Extra, f)
		}
	}
	e.Text = text
	if len(texts) > 0 {
		e.Text = strings.Join(texts, "\n\n") + Separator + text
	}
	return e, nil
}

// aboveSandbox lists, canonical, the instruction files the harness of p
// would read in the directories above the sandbox tree: only profiles whose
// walk is not stopped by the tree's own root do. For profiles where the
// first name with a match wins, the materialized file (name) wins, so only
// files of that name count.
func aboveSandbox(p discover.Profile, tree string, treeHasRoot bool, name string) []string {
	escapes := p.Root == discover.BelowFilesystemRoot || (p.Root == discover.MarkerOrFilesystemRoot && !treeHasRoot)
	if !escapes {
		return nil
	}
	names := p.Names
	if p.Select == discover.FirstNameWins || p.Select == discover.FirstMatch {
		names = []string{name}
	}
	var dirs []string
	for d := filepath.Dir(tree); ; d = filepath.Dir(d) {
		if d == filepath.Dir(d) {
			if p.Root != discover.BelowFilesystemRoot {
				dirs = append(dirs, d)
			}
			break
		}
		dirs = append(dirs, d)
	}
	var out []string
	for i := len(dirs) - 1; i >= 0; i-- {
		for _, n := range names {
			path := filepath.Join(dirs[i], filepath.FromSlash(n))
			if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
				if c, err := filepath.EvalSymlinks(path); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// HasMarker reports whether dir holds one of markers.
func HasMarker(dir string, markers []string) bool {
	for _, m := range markers {
		if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
			return true
		}
	}
	return false
}
