//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/harness"
)

// skillCandidates are the directories a harness might read skills from:
// those of harness.SkillTable, and others that some tool uses (.skills is
// where agentworkforce 4.0.2 puts opencode's skills).
var skillCandidates = []string{".claude/skills", ".agents/skills", ".codex/skills", ".opencode/skill", ".opencode/skills", ".skills", "skills", ".github/skills", ".gemini/skills"}

// probeName is the skill put in the i-th candidate directory; its
// description carries a marker found nowhere else.
func probeName(i int) string   { return fmt.Sprintf("probe-%c", 'a'+i) }
func probeMarker(i int) string { return "skill-marker-" + probeName(i) }

func writeSkill(t *testing.T, dir, name, description string) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(dir, 0o755))
	must(os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: "+name+"\ndescription: "+description+"\n---\n\nThe body of "+name+", read on demand.\n"), 0o644))
}

// TestSkillDirs measures, for every harness version harness.SkillTable
// names, which directories it reads skills from: a probe skill in each
// candidate directory of a git repository, the harness started at the
// root and in a sub-directory, and without git in a sub-directory. The
// table's Read directories, and only those, must reach the model (name
// and description in a recorded request); without git, a harness that
// does not walk up reads none of the root's.
func TestSkillDirs(t *testing.T) {
	for _, d := range harness.SkillTable {
		for _, v := range d.Measured {
			bin, ok := harnessBinaries[d.Harness+"@"+v]
			if !ok {
				t.Fatalf("skill directories of %s are measured on %s, which make e2e does not install (e2e/versions.json, e2e/older.json)", d.Harness, v)
			}
			for _, c := range []struct {
				name     string
				git      bool
				sub      string
				wantRead bool
			}{
				{"root", true, "", true},
				{"sub-directory", true, "sub", !d.WorkdirOnly},
				{"sub-directory without git", false, "sub", d.WalkWithoutGit},
			} {
				t.Run(d.Harness+"@"+v+"/"+c.name, func(t *testing.T) {
					root, _ := filepath.EvalSymlinks(t.TempDir())
					os.MkdirAll(filepath.Join(root, "sub"), 0o755)
					if c.git {
						if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
							t.Fatalf("git init: %v: %s", err, out)
						}
					}
					for i, dir := range skillCandidates {
						writeSkill(t, filepath.Join(root, dir, probeName(i)), probeName(i), "A probe skill in "+dir+", "+probeMarker(i)+".")
					}
					e := newEnv(t)
					e.run(t, filepath.Join(root, c.sub), append([]string{bin}, harnessArgs[d.Harness]...)...)
					sent := strings.Join(e.rec.strings(), "\n")
					for i, dir := range skillCandidates {
						want := c.wantRead && slices.Contains(d.Read, dir)
						got := strings.Contains(sent, probeMarker(i)) && strings.Contains(sent, probeName(i))
						if got != want {
							t.Errorf("%s %s: a skill in %s reached the model: %v, want %v (harness.SkillTable)", d.Harness, v, dir, got, want)
						}
					}
				})
			}
		}
	}
}

// TestRunSkills: `workforce run` with each real harness installs a
// persona's local skills where the harness reads them: both are advertised
// to the model (name and description in the recorded requests), a
// repository skill of the same name is replaced (its description never
// reaches the model) while another repository skill stays, and the real
// tree is unchanged, byte for byte, with no session left.
func TestRunSkills(t *testing.T) {
	// Where the repository's clashing skill is, for each harness: one of
	// the directories it reads, not the one skills land in.
	clash := map[string]string{"claude": ".claude/skills", "codex": ".codex/skills", "opencode": ".claude/skills", "gemini": ".gemini/skills"}
	for _, h := range []string{"claude", "opencode", "codex", "gemini"} {
		for _, sub := range []string{"", "sub"} {
			t.Run(h+"/"+map[string]string{"": "root", "sub": "sub-directory"}[sub], func(t *testing.T) {
				root, _ := filepath.EvalSymlinks(t.TempDir())
				repo := filepath.Join(root, "repo")
				os.MkdirAll(filepath.Join(repo, "sub"), 0o755)
				if out, err := exec.Command("git", "init", "-q", repo).CombinedOutput(); err != nil {
					t.Fatalf("git init: %v: %s", err, out)
				}
				os.WriteFile(filepath.Join(repo, "main.go"), []byte("package main\n"), 0o644)
				base := repo
				if h == "gemini" {
					base = filepath.Join(repo, sub) // it reads its working directory's alone
				}
				writeSkill(t, filepath.Join(base, clash[h], "review"), "review", "The repository's review, replaced, repo-review-marker.")
				writeSkill(t, filepath.Join(base, clash[h], "other"), "other", "The repository's own skill, repo-other-marker.")

				e := newEnv(t)
				pdir := filepath.Join(e.home, ".agentworkforce", "workforce", "personas")
				writeSkill(t, filepath.Join(pdir, "skills", "review"), "review", "Reviews a change against the team checklist, persona-review-marker.")
				os.WriteFile(filepath.Join(pdir, "skills", "lint.md"), []byte("---\nname: lint\ndescription: Runs the linters and fixes findings, persona-lint-marker.\n---\n\nRun the linters.\n"), 0o644)
				spec := fmt.Sprintf(`{"id": "e2e-skills", "intent": "test", "description": "e2e skills persona",
 "harness": %q, "model": %q,
 "skills": [{"id": "review", "source": "./skills/review"}, {"id": "lint", "source": "skills/lint.md"}]}`, h, runModels[h])
				if err := os.WriteFile(filepath.Join(pdir, "e2e-skills.json"), []byte(spec), 0o644); err != nil {
					t.Fatal(err)
				}

				dir := filepath.Join(repo, sub)
				before := snapshot(t, root)
				e.vars = append(e.vars, "PWD="+dir, "OLDPWD="+root)
				e.run(t, dir, append([]string{workforce, "run", "e2e-skills", "--"}, harnessArgs[h]...)...)
				sent := strings.Join(e.rec.strings(), "\n")
				for _, want := range []string{"review", "persona-review-marker", "lint", "persona-lint-marker", "other", "repo-other-marker"} {
					if !strings.Contains(sent, want) {
						t.Errorf("%q did not reach the model", want)
					}
				}
				if strings.Contains(sent, "repo-review-marker") {
					t.Errorf("the repository's review skill reached the model; the persona's should have replaced it")
				}
				if d := diffSnapshots(before, snapshot(t, root)); len(d) != 0 {
					t.Errorf("the real tree changed: %q", d)
				}
				sessions, _ := os.ReadDir(filepath.Join(e.home, ".agentworkforce", "workforce", "sessions"))
				if len(sessions) != 0 {
					t.Errorf("%d sessions left behind", len(sessions))
				}
			})
		}
	}
}

// TestRunSkillsCanFail is the negative control of TestRunSkills: the same
// skill put where the harness does not look (.skills, as agentworkforce
// 4.0.2 does for opencode) does not reach the model, so the check bites.
func TestRunSkillsCanFail(t *testing.T) {
	for _, h := range []string{"claude", "opencode", "codex", "gemini"} {
		t.Run(h, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v: %s", err, out)
			}
			writeSkill(t, filepath.Join(root, ".skills", "review"), "review", "Reviews, persona-review-marker.")
			e := newEnv(t)
			e.run(t, root, append([]string{filepath.Join(binDir, h)}, harnessArgs[h]...)...)
			if strings.Contains(strings.Join(e.rec.strings(), "\n"), "persona-review-marker") {
				t.Errorf("%s read a skill in .skills; the check cannot tell where skills must go", h)
			}
		})
	}
}
