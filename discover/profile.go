package discover

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/lazyre"

	"golang.org/x/mod/semver"
)

// Walk is the order directories are visited in.
type Walk int

const (
	// RootToDir visits the project root first and the start directory last.
	RootToDir Walk = iota
	// DirToRoot visits the start directory first.
	DirToRoot
)

// Select says which candidate names of a directory load.
type Select int

const (
	// FirstInDir loads, in each directory, the first candidate name that is
	// a regular file (codex).
	FirstInDir Select = iota
	// AllInDir loads every candidate name that is a regular file (claude).
	AllInDir
	// FirstNameWins takes the names in order; the first name with a match
	// anywhere on the walk wins and all its matches load (opencode).
	FirstNameWins
	// FirstMatch loads only the first match: names in order, each looked up
	// nearest first (opencode-nearest).
	FirstMatch
)

// RootRule says where the walk stops.
type RootRule int

const (
	// MarkerRoot: the nearest ancestor holding a marker; without one, the
	// start directory alone.
	MarkerRoot RootRule = iota
	// MarkerOrFilesystemRoot: the nearest ancestor holding a marker;
	// without one, the file system root.
	MarkerOrFilesystemRoot
	// BelowFilesystemRoot: every ancestor up to, not including, "/".
	BelowFilesystemRoot
)

// Render names how a profile's text is rendered.
type Render int

const (
	// RenderCodex: global text, "--- project-doc ---", project files joined
	// by blank lines, wrapped in "# AGENTS.md instructions for D" and
	// <INSTRUCTIONS>.
	RenderCodex Render = iota
	// RenderOpencode: "Instructions from: PATH\nCONTENT" blocks.
	RenderOpencode
	// RenderClaude: "Contents of PATH (...):\n\nCONTENT" blocks.
	RenderClaude
	// RenderAgents: "# AGENTS.md: PATH\n\nCONTENT" blocks.
	RenderAgents
	// RenderGemini: "--- Context from: PATH ---\nCONTENT\n--- End of
	// Context from: PATH ---" blocks, global files first (gemini sends
	// those in its system instruction, the project's in its first user
	// message).
	RenderGemini
)

// Global is a global instruction file: Base names the directory it lives
// in ("home", "codex-home", "gemini-home"), Rel its path there.
type Global struct {
	Base string
	Rel  string
}

// Profile is how one harness version family discovers instruction files.
// Profiles are data: a new harness version is a new profile.
type Profile struct {
	Name string
	// Harness is the harness the profile describes.
	Harness string
	// Names are the candidate file names of a directory, in order; they
	// may include a directory part (".claude/CLAUDE.md").
	Names []string
	// Otherwise are names used instead of Names when no file of Names is
	// found anywhere on the walk.
	Otherwise []string
	Select    Select
	Walk      Walk
	Root      RootRule
	// Markers are the default root markers.
	Markers []string
	// MaxBytes is the byte budget across project files; 0 is none.
	// Truncate cuts the last file at the budget; otherwise files that do not
	// fit are dropped whole.
	MaxBytes int
	Truncate bool
	// MaxFiles caps the number of project files; 0 is none.
	MaxFiles int
	// SkipBlank skips a file that is empty after trimming white space,
	// without falling back to the next name of its directory.
	SkipBlank bool
	// SkipEmpty skips a file with no bytes at all, without falling back to
	// the next name (opencode: the empty file's name still wins).
	SkipEmpty bool
	// Trim removes the white space around each file's text.
	Trim bool
	// Join goes between the rendered blocks of two files.
	Join string
	// Globals are candidate global files; the first that exists (and, with
	// SkipBlank, is not blank) loads.
	Globals []Global
	// GlobalDir, when set, replaces Globals: the global files are each
	// candidate name in that directory, all that exist, in the order of
	// Names (gemini: <gemini-home>/.gemini).
	GlobalDir *Global
	// SortPaths loads the project files in the order of their paths
	// (gemini sorts them), each file once (the first reached of the
	// links to one file, in walk order), instead of in walk order.
	SortPaths bool
	// Imports inlines the @path imports of each file (gemini).
	Imports bool
	// Settings names the harness whose own settings change the names and
	// root markers (FromEnv, Chain): "gemini", or empty.
	Settings string
	Render   Render
	// Measured are the harness versions the profile was checked against
	// with the real harness (make e2e); a profile without any is not a
	// version family (opencode-nearest, agents) and ForVersion never picks
	// it.
	Measured []string
	// From is the lowest harness version the family applies to; empty
	// means every version below the next family's.
	From string
}

// Profiles are the built-in profiles, by name.
var Profiles = map[string]Profile{
	"codex": {
		Name: "codex", Harness: "codex",
		Names:  []string{"AGENTS.override.md", "AGENTS.md"},
		Select: FirstInDir, Walk: RootToDir, Root: MarkerRoot,
		Markers:  []string{".git"},
		MaxBytes: 32 << 10, Truncate: true, SkipBlank: true,
		Globals: []Global{{"codex-home", "AGENTS.override.md"}, {"codex-home", "AGENTS.md"}},
		Render:  RenderCodex, Join: "\n\n",
		Measured: []string{"0.169.0", "0.171.0"},
	},
	"opencode": {
		Name: "opencode", Harness: "opencode",
		Names:  []string{"AGENTS.md", "CLAUDE.md"},
		Select: FirstNameWins, Walk: DirToRoot, Root: MarkerOrFilesystemRoot,
		Markers: []string{".git"},
		// An empty AGENTS.md wins the name and adds nothing (opencode
		// 1.18.33, make e2e).
		SkipEmpty: true,
		Globals:   []Global{{"home", ".config/opencode/AGENTS.md"}, {"home", ".claude/CLAUDE.md"}},
		Render:    RenderOpencode, Join: "\n",
		Measured: []string{"1.18.33"},
	},
	"opencode-nearest": {
		Name: "opencode-nearest", Harness: "opencode",
		Names:  []string{"AGENTS.md", "CLAUDE.md", "CONTEXT.md"},
		Select: FirstMatch, Walk: DirToRoot, Root: MarkerOrFilesystemRoot,
		Markers: []string{".git"},
		Globals: []Global{{"home", ".config/opencode/AGENTS.md"}, {"home", ".claude/CLAUDE.md"}},
		Render:  RenderOpencode, Join: "\n",
	},
	"claude": {
		Name: "claude", Harness: "claude",
		// Claude Code 2.1.330 reads the AGENTS.md files when there is no
		// CLAUDE.md file at all (found by make e2e); 2.1.197 does not.
		Names:     []string{"CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"},
		Otherwise: []string{"AGENTS.md"},
		Select:    AllInDir, Walk: RootToDir, Root: BelowFilesystemRoot,
		Globals:   []Global{{"home", ".claude/CLAUDE.md"}},
		SkipBlank: true, Trim: true,
		Render: RenderClaude, Join: "\n\n",
		Measured: []string{"2.1.330", "2.1.331", "2.1.332"}, From: "2.1.330",
	},
	"claude-2.1.197": {
		Name: "claude-2.1.197", Harness: "claude",
		Names:  []string{"CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"},
		Select: AllInDir, Walk: RootToDir, Root: BelowFilesystemRoot,
		Globals:   []Global{{"home", ".claude/CLAUDE.md"}},
		SkipBlank: true, Trim: true,
		Render: RenderClaude, Join: "\n\n",
		Measured: []string{"2.1.197"},
	},
	"gemini": {
		Name: "gemini", Harness: "gemini",
		// context.fileName adds names before it (Settings).
		Names:  []string{"GEMINI.md"},
		Select: AllInDir, Walk: RootToDir, Root: MarkerRoot,
		Markers: []string{".git"},
		Trim:    true, SkipBlank: true, SortPaths: true, Imports: true,
		GlobalDir: &Global{"gemini-home", ".gemini"},
		Settings:  "gemini",
		Render:    RenderGemini, Join: "\n\n",
		Measured: []string{"0.61.0"},
	},
	"agents": {
		Name:   "agents",
		Names:  []string{"AGENTS.md"},
		Select: AllInDir, Walk: RootToDir, Root: MarkerRoot,
		Markers:  []string{".codelia", ".git", ".jj"},
		MaxFiles: 16, MaxBytes: 64 << 10,
		Render: RenderAgents, Join: "\n\n",
	},
}

// ForHarness returns the default profile of a harness: claude, opencode,
// codex or gemini.
func ForHarness(harness string) (Profile, bool) {
	p, ok := Profiles[harness]
	return p, ok && p.Harness == harness
}

// ForVersion returns the profile of the version family that harness
// version belongs to: among the profiles of harness with measured
// versions, the one with the highest From at or below version. version is
// what `HARNESS --version` prints ("2.1.330 (Claude Code)", "codex-cli
// 0.169.0"); its first x.y.z is taken. When version is empty or has no
// x.y.z, the default profile (ForHarness) is returned with no note. The
// note is non-empty when version was not measured: newer than every
// measured version of the harness, or between or below the families'.
func ForVersion(harness, version string) (Profile, string) {
	def, _ := ForHarness(harness)
	v := ParseVersion(version)
	if v == "" {
		return def, ""
	}
	var fams []Profile
	newest := ""
	for _, p := range Profiles {
		if p.Harness != harness || len(p.Measured) == 0 {
			continue
		}
		fams = append(fams, p)
		for _, m := range p.Measured {
			if newest == "" || semver.Compare("v"+m, "v"+newest) > 0 {
				newest = m
			}
		}
	}
	if len(fams) == 0 {
		return def, ""
	}
	sort.Slice(fams, func(i, j int) bool { return semver.Compare(from(fams[i]), from(fams[j])) < 0 })
	pick := fams[0]
	for _, p := range fams {
		if p.From == "" || semver.Compare(from(p), "v"+v) <= 0 {
			pick = p
		}
	}
	for _, m := range pick.Measured {
		if semver.Compare("v"+m, "v"+v) == 0 {
			return pick, ""
		}
	}
	if semver.Compare("v"+v, "v"+newest) > 0 {
		return pick, fmt.Sprintf("%s %s is newer than any measured version (%s); using profile %s: check it with make e2e (docs/e2e.md)", harness, v, newest, pick.Name)
	}
	return pick, fmt.Sprintf("%s %s was not measured; using profile %s, measured on %s", harness, v, pick.Name, strings.Join(pick.Measured, ", "))
}

// from is p.From as a semver string; an empty From sorts first.
func from(p Profile) string {
	if p.From == "" {
		return "v0.0.0"
	}
	return "v" + p.From
}

// versionPattern finds a version number in a harness's --version output.
var versionPattern = lazyre.New(`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`)

// ParseVersion returns the first x.y.z version in s, or "".
func ParseVersion(s string) string {
	v := versionPattern().FindString(s)
	if v == "" || !semver.IsValid("v"+v) {
		return ""
	}
	return v
}

// Lookup returns the profile with the given name.
func Lookup(name string) (Profile, bool) {
	p, ok := Profiles[name]
	return p, ok
}

// Names returns the profile names, sorted.
func Names() []string {
	names := make([]string, 0, len(Profiles))
	for n := range Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// HiddenNames returns the instruction file names the profile considers in
// a directory: the files a sandbox hides to keep a harness from seeing the
// repository's own instructions.
func (p Profile) HiddenNames() []string {
	return append(append([]string(nil), p.Names...), p.Otherwise...)
}

// HiddenNamesIn returns the instruction file names the profile considers
// in a directory started from dir with the options o: HiddenNames, with
// the names the harness's own settings add (gemini's context.fileName)
// or o.Names.
func (p Profile) HiddenNamesIn(o Options, dir string) []string {
	names := p.HiddenNames()
	extra := o.Names
	if extra == nil && p.Settings == geminiHarness && o.Getenv != nil {
		extra = LoadGeminiConfig(o.Getenv, dir).FileNames
	}
	for _, n := range extra {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}
