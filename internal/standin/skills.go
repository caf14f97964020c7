package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// skillDirs are the directories each harness reads skills from, as
// measured with the real harnesses (claude 2.1.330, codex 0.169.0,
// opencode 1.18.33), written here apart from workforce's own table so that
// the tests compare the two: each directory in every directory from the
// harness's working directory up to the nearest one with a .git; without
// one, up to the file system's root (claude, opencode) or in the working
// directory alone (codex).
var skillDirs = map[string]struct {
	read []string
	walk bool // without a .git
	only bool // in the working directory alone
}{
	"claude":   {[]string{".claude/skills"}, true, false},
	"codex":    {[]string{".agents/skills", ".codex/skills"}, false, false},
	"opencode": {[]string{".agents/skills", ".claude/skills", ".opencode/skill", ".opencode/skills"}, true, false},
	"gemini":   {[]string{".gemini/skills", ".agents/skills"}, false, true},
}

// listSkills implements the action
//
//	skills OUT
//
// which writes to OUT the skills the harness the stand-in is named after
// would advertise, started in dir, one a line, sorted: the skill's
// directory relative to dir, its front matter's name and description
// ("../.claude/skills/review: review: Reviews a change.").
func listSkills(dir, out string) error {
	h, ok := skillDirs[filepath.Base(os.Args[0])]
	if !ok {
		return fmt.Errorf("the stand-in is not named after a harness")
	}
	var lines []string
	for d := dir; ; d = filepath.Dir(d) {
		for _, r := range h.read {
			base := filepath.Join(d, r)
			entries, _ := os.ReadDir(base)
			for _, e := range entries {
				data, err := os.ReadFile(filepath.Join(base, e.Name(), "SKILL.md"))
				if err != nil {
					continue
				}
				name, desc := frontMatter(data)
				rel, _ := filepath.Rel(dir, filepath.Join(base, e.Name()))
				lines = append(lines, fmt.Sprintf("%s: %s: %s", filepath.ToSlash(rel), name, desc))
			}
		}
		_, err := os.Lstat(filepath.Join(d, ".git"))
		if h.only || err == nil || d == filepath.Dir(d) || !h.walk && !hasGitAbove(d) {
			break
		}
	}
	sort.Strings(lines)
	text := strings.Join(lines, "\n")
	if text != "" {
		text += "\n"
	}
	return os.WriteFile(out, []byte(text), 0o644)
}

// hasGitAbove reports whether a directory above d holds a .git.
func hasGitAbove(d string) bool {
	for p := filepath.Dir(d); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
			return true
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

// frontMatter returns the name and description lines of a SKILL.md's
// front matter, read line by line (the stand-in needs no YAML).
func frontMatter(data []byte) (name, desc string) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for i := 0; sc.Scan(); i++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "---" {
			if i > 0 {
				break
			}
			continue
		}
		if v, ok := strings.CutPrefix(line, "name:"); ok {
			name = strings.Trim(strings.TrimSpace(v), `"'`)
		}
		if v, ok := strings.CutPrefix(line, "description:"); ok {
			desc = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return name, desc
}
