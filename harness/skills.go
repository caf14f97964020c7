package harness

import (
	"fmt"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/discover"
	"github.com/seed-3bc194a6/workforce/persona"
	"golang.org/x/mod/semver"
)

// SkillDirs says where one version family of a harness finds Agent
// Skills (<dir>/<name>/SKILL.md) in a project, as measured with the real
// harness against a loopback model: a skill is found when its name and
// description reach the model (e2e/skills_test.go, TestSkillDirs, which
// `make e2e` runs on every Measured version; docs/e2e.md). The skills of
// the user's home (~/.claude/skills, ...) the harness reads itself.
type SkillDirs struct {
	Harness string
	// Read are the directories, relative to a project directory, the
	// harness reads skills from, in every directory from its working
	// directory up to the repository's root (the nearest directory with
	// a .git, itself included).
	Read []string
	// Write is the one of Read that run materializes a persona's skills
	// into.
	Write string
	// WalkWithoutGit says that, outside a repository, the harness goes on
	// reading Read up to the file system's root; otherwise it reads them
	// in its working directory alone.
	WalkWithoutGit bool
	// WorkdirOnly says that the harness reads Read in its working
	// directory alone, with or without git (gemini).
	WorkdirOnly bool
	// Measured are the versions the table was measured on; From is the
	// lowest version the family applies to (empty: every version below
	// the next family's).
	Measured []string
	From     string
}

// SkillTable is the measured skill directories of every harness, one
// entry per version family.
//
// Measured (make e2e, TestSkillDirs): a skill in each candidate directory
// (.claude/skills, .agents/skills, .codex/skills, .opencode/skill,
// .opencode/skills, .skills, skills, .github/skills) of a git repository,
// the harness started at its root and in a sub-directory, and, without
// git, in a sub-directory. claude 2.1.332, 2.1.331, 2.1.330 and 2.1.197
// read .claude/skills only, and walk up without git too; codex 0.171.0
// and 0.169.0 read .agents/skills and .codex/skills, and without git only
// in its working directory;
// opencode 1.18.33 reads .agents/skills, .claude/skills, .opencode/skill
// and .opencode/skills, and walks up without git. None reads .skills (where
// agentworkforce 4.0.2 installs opencode's skills), skills or
// .github/skills. A repository nested in the project (a .git below its
// root, above the working directory) stops every harness's walk.
var SkillTable = []SkillDirs{
	{Harness: persona.HarnessClaude, Read: []string{".claude/skills"}, Write: ".claude/skills",
		WalkWithoutGit: true, Measured: []string{"2.1.197", "2.1.330", "2.1.331", "2.1.332"}},
	{Harness: persona.HarnessCodex, Read: []string{".agents/skills", ".codex/skills"}, Write: ".agents/skills",
		Measured: []string{"0.169.0", "0.171.0"}},
	// Not .opencode/skills: opencode writes a .gitignore into an .opencode
	// directory it finds (TestRunSkills caught it syncing back).
	{Harness: persona.HarnessOpencode, Read: []string{".agents/skills", ".claude/skills", ".opencode/skill", ".opencode/skills"},
		Write: ".agents/skills", WalkWithoutGit: true, Measured: []string{"1.18.33"}},
	// gemini reads a skill of .agents/skills over one of the same name in
	// .gemini/skills.
	{Harness: persona.HarnessGemini, Read: []string{".gemini/skills", ".agents/skills"}, Write: ".agents/skills",
		WorkdirOnly: true, Measured: []string{"0.61.0"}},
}

// SkillDirsFor returns the skill directories of the version family that
// the harness's version (what `HARNESS --version` prints) belongs to, as
// discover.ForVersion picks instruction profiles: the family with the
// highest From at or below the version. An empty or unreadable version
// gets the newest family. The note is non-empty when the version was not
// measured.
func SkillDirsFor(harness, version string) (SkillDirs, string, error) {
	var fams []SkillDirs
	for _, d := range SkillTable {
		if d.Harness == harness {
			fams = append(fams, d)
		}
	}
	if len(fams) == 0 {
		return SkillDirs{}, "", fmt.Errorf("no skill directories are known for harness %q", harness)
	}
	from := func(d SkillDirs) string {
		if d.From == "" {
			return "v0.0.0"
		}
		return "v" + d.From
	}
	sort.Slice(fams, func(i, j int) bool { return semver.Compare(from(fams[i]), from(fams[j])) < 0 })
	v := discover.ParseVersion(version)
	if v == "" {
		return fams[len(fams)-1], "", nil
	}
	pick := fams[0]
	newest := ""
	for _, d := range fams {
		if semver.Compare(from(d), "v"+v) <= 0 {
			pick = d
		}
		for _, m := range d.Measured {
			if newest == "" || semver.Compare("v"+m, "v"+newest) > 0 {
				newest = m
			}
		}
	}
	for _, m := range pick.Measured {
		if m == v {
			return pick, "", nil
		}
	}
	return pick, fmt.Sprintf("the skill directories of %s %s were not measured; using those measured on %s %s (%s)",
		harness, v, harness, strings.Join(pick.Measured, ", "), strings.Join(pick.Read, ", ")), nil
}
