package mount

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func skillDir(name string) Dir {
	return Dir{Rel: ".claude/skills/" + name, Files: []DirFile{
		{Path: "SKILL.md", Data: []byte("---\nname: " + name + "\ndescription: d\n---\n")},
		{Path: "scripts/check.sh", Data: []byte("#!/bin/sh\n"), Exec: true},
	}}
}

// TestMaterializeDir: the skill's files land in the sandbox with their
// modes; neither they, nor what the agent changes or adds in their
// directory, sync back, in memory or from the manifest after a crash.
func TestMaterializeDir(t *testing.T) {
	for _, reopen := range []bool{false, true} {
		t.Run(map[bool]string{false: "in memory", true: "reopened from its manifest"}[reopen], func(t *testing.T) {
			s, root := fixture(t)
			abs, err := s.MaterializeDir(skillDir("review"))
			if err != nil {
				t.Fatal(err)
			}
			if abs != filepath.Join(s.Tree, ".claude/skills/review") {
				t.Errorf("MaterializeDir = %s", abs)
			}
			if b, err := os.ReadFile(filepath.Join(abs, "SKILL.md")); err != nil || !strings.Contains(string(b), "name: review") {
				t.Errorf("SKILL.md = %q, %v", b, err)
			}
			if fi, err := os.Stat(filepath.Join(abs, "scripts/check.sh")); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("check.sh mode = %v, %v; want 0755", fi.Mode(), err)
			}
			must(t, os.WriteFile(filepath.Join(abs, "SKILL.md"), []byte("edited by the agent"), 0o644))
			must(t, os.WriteFile(filepath.Join(abs, "notes.md"), []byte("the agent's notes"), 0o644))
			must(t, os.WriteFile(filepath.Join(s.Tree, "a.txt"), []byte("a by agent"), 0o644))
			if reopen {
				must(t, s.Save())
				if s, err = Open(s.Dir); err != nil {
					t.Fatal(err)
				}
			}
			r, err := s.Sync(context.Background(), SyncOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Updated, []string{"a.txt"}) || len(r.Created) != 0 {
				t.Errorf("created %q, updated %q; want a.txt updated alone", r.Created, r.Updated)
			}
			// The skill's own files are not even reported; what the agent
			// added beside them is.
			if !slices.Equal(r.NotSynced, []string{".claude/skills/review/notes.md"}) {
				t.Errorf("not synced %q, want the agent's file in the skill's directory alone", r.NotSynced)
			}
			if _, err := os.Lstat(filepath.Join(root, ".claude")); err == nil {
				t.Error("the skill reached the real tree")
			}
		})
	}
}

// TestMaterializeDirNoLinks: a symlink on the way, or where a directory
// goes, is never followed; a symlink where a file goes is replaced.
func TestMaterializeDirNoLinks(t *testing.T) {
	s, _ := fixture(t)
	outside := t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(s.Tree, ".claude")))
	if _, err := s.MaterializeDir(skillDir("review")); err == nil || !strings.Contains(err.Error(), "symlink or not a directory") {
		t.Errorf("MaterializeDir through a symlinked directory = %v, want an error", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("MaterializeDir wrote through the link: %v", entries)
	}
	must(t, os.Remove(filepath.Join(s.Tree, ".claude")))
	must(t, os.MkdirAll(filepath.Join(s.Tree, ".claude/skills/review"), 0o755))
	target := filepath.Join(outside, "target")
	must(t, os.WriteFile(target, []byte("outside"), 0o644))
	must(t, os.Symlink(target, filepath.Join(s.Tree, ".claude/skills/review/SKILL.md")))
	if _, err := s.MaterializeDir(skillDir("review")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "outside" {
		t.Errorf("MaterializeDir wrote through a symlinked file: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(s.Tree, ".claude/skills/review/SKILL.md")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("SKILL.md is %v, %v; want a regular file in place of the link", fi.Mode(), err)
	}
	for _, rel := range []string{"", "/abs", "../x", "a/../../x", "a//b"} {
		if _, err := s.MaterializeDir(Dir{Rel: rel}); err == nil {
			t.Errorf("MaterializeDir(%q) accepted an unclean path", rel)
		}
	}
	if _, err := s.MaterializeDir(Dir{Rel: "x", Files: []DirFile{{Path: "../escape"}}}); err == nil {
		t.Error("MaterializeDir accepted a file path leaving its directory")
	}
}

// TestMaterializeDirGit: git in the sandbox does not see the skill.
func TestMaterializeDirGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	must(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	s, err := create(context.Background(), Options{Home: t.TempDir(), Persona: "p", Root: root, Cwd: root})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MaterializeDir(skillDir("review")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "status", "--porcelain")
	cmd.Dir = s.Tree
	out, err := cmd.Output()
	if err != nil || len(out) != 0 {
		t.Errorf("git status in the sandbox = %q, %v; want nothing", out, err)
	}
}
