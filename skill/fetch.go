package skill

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/seed-3bc194a6/workforce/internal/npm"
	"github.com/seed-3bc194a6/workforce/internal/pathutil"
	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
)

// errNoSkill is wrapped by the errors of an installer that left no skill
// to take.
var errNoSkill = errors.New("no skill")

// errNoNpm is the error of an npm skill without npm, in the words of
// install's.
var errNoNpm = fmt.Errorf("%w; it is needed to fetch packs from the npm registry", npm.ErrNotInstalled)

// fetched is a skill a fetcher brought into its work directory.
type fetched struct {
	dir     string // the skill's directory, holding SKILL.md
	version string
}

// fetchSource fetches a remote skill into work, by its kind: npm pack for
// npm, and for skills.sh and prpm their installers, delegated to npx in
// work as agentworkforce 4.0.2 runs them (`npx -y skills add URL --skill
// NAME -y`, `npx -y prpm install REF --as claude`, the harness whose
// layout is the Agent Skills directory every harness reads).
func fetchSource(ctx context.Context, src persona.SkillSource, work string, env []string) (*fetched, error) {
	switch src.Kind {
	case persona.SkillNpm:
		return fetchNpm(ctx, src, work, env)
	case persona.SkillGitHub:
		if err := npx(ctx, work, env, "skills", "add", src.Ref, "--skill", src.Name, "-y"); err != nil {
			return nil, err
		}
	case persona.SkillPrpm:
		if err := npx(ctx, work, env, "prpm", "install", src.Ref, "--as", "claude"); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("a %s skill is not fetched", src.Kind)
	}
	dir, err := findSkill(work, src.Name)
	if err != nil {
		return nil, err
	}
	return &fetched{dir: dir}, nil
}

// npx runs `npx -y PACKAGE ARGS...` in dir.
func npx(ctx context.Context, dir string, env []string, pkg string, args ...string) error {
	bin, err := npm.LookPath("npx", env)
	if err != nil {
		return fmt.Errorf("npx is not installed; it comes with npm and installs %s skills: %w", pkg, err)
	}
	argv := append([]string{"-y", pkg}, args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Dir = dir
	cmd.Env = append(append([]string{}, env...), "PWD="+dir)
	cmd.Stdin = nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("npx %s failed: %v: %s", strings.Join(argv, " "), err, errorTail(out))
	}
	return nil
}

// fetchNpm fetches an npm package holding a skill: its root (SKILL.md at
// the top) or one of skills/<name>/ (the one named as the source says,
// or the only one).
func fetchNpm(ctx context.Context, src persona.SkillSource, work string, env []string) (*fetched, error) {
	pkg, err := npm.Pack(ctx, src.Ref, work, work, env)
	if errors.Is(err, npm.ErrNotInstalled) {
		err = errNoNpm
	}
	if err != nil {
		return nil, err
	}
	f, err := os.Open(pkg.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := filepath.Join(work, "unpacked")
	if err := os.Mkdir(out, 0o700); err != nil {
		return nil, err
	}
	root, err := pack.ReadArchive(f, out)
	if err != nil {
		return nil, fmt.Errorf("npm package %s: %w", src.Ref, err)
	}
	if _, err := os.Stat(filepath.Join(root, "SKILL.md")); err == nil {
		return &fetched{dir: root, version: pkg.Version}, nil
	}
	dir, err := findSkill(filepath.Join(root, "skills"), src.Name)
	if err != nil {
		return nil, fmt.Errorf("npm package %s@%s holds no skill (SKILL.md at its root, or skills/<name>/SKILL.md): %w", pkg.Name, pkg.Version, err)
	}
	return &fetched{dir: dir, version: pkg.Version}, nil
}

// findSkill finds, below dir, the skill directory an installer made: a
// directory holding SKILL.md named name (one under .agents/skills first,
// where skills.sh puts the skill it links elsewhere), or, when none is
// named so, the only one there is. Symlinks are not followed: an
// installer's links lead to the directory found anyway.
func findSkill(dir, name string) (string, error) {
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		if d.IsDir() && (d.Name() == "node_modules" || pathutil.IsDotGit(d.Name())) {
			return filepath.SkipDir
		}
		if d.Name() == "SKILL.md" && d.Type().IsRegular() {
			found = append(found, filepath.Dir(p))
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	rank := func(p string) int {
		rel, _ := filepath.Rel(dir, p)
		switch {
		case strings.HasPrefix(filepath.ToSlash(rel), ".agents/skills/"):
			return 0
		case strings.HasPrefix(filepath.ToSlash(rel), ".claude/skills/"):
			return 1
		}
		return 2
	}
	sort.Slice(found, func(i, j int) bool {
		if ri, rj := rank(found[i]), rank(found[j]); ri != rj {
			return ri < rj
		}
		return found[i] < found[j]
	})
	for _, p := range found {
		if filepath.Base(p) == name {
			return p, nil
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%w: the installer left no SKILL.md", errNoSkill)
	case 1:
		return found[0], nil
	}
	var names []string
	for _, p := range found {
		names = append(names, filepath.Base(p))
	}
	return "", fmt.Errorf("%w named %q among %s", errNoSkill, name, strings.Join(names, ", "))
}
