// Package gittest runs git for tests: as a user with no configuration of
// their own, failing the test when git fails.
package gittest

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Run runs git in dir and returns its combined output.
func Run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// RepoWithHistory makes a repository whose working tree is the same
// whatever commits, but whose history holds commits of 64 KiB of random
// bytes each.
func RepoWithHistory(t testing.TB, commits int) string {
	t.Helper()
	root := t.TempDir()
	Run(t, root, "init", "-q")
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range commits {
		b := make([]byte, 64<<10)
		rand.Read(b)
		write("blob.bin", string(b))
		Run(t, root, "add", "-A")
		Run(t, root, "commit", "-q", "-m", fmt.Sprint("commit ", i))
	}
	write("blob.bin", "the same tree\n")
	write("main.go", "package main\n")
	Run(t, root, "add", "-A")
	Run(t, root, "commit", "-q", "-m", "last")
	return root
}

// State hashes every file below the git directories dirs, objects
// included: what git in a sandbox must never change.
func State(t testing.TB, dirs ...string) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			state[path] = fmt.Sprintf("%x", sha256.Sum256(data))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return state
}
