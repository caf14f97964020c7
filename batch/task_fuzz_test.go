package batch

import (
	"io"
	"strings"
	"testing"
)

// FuzzValidate: a task that passes Validate holds no NUL byte in any
// string that ends as a program's argument: the local pool's and the
// worker's command line (Command), the task text (the harness gets it as
// an argument), the directory, and the repository and ref (git's
// arguments on the submitter and the worker).
func FuzzValidate(f *testing.F) {
	f.Add("a", "p", "t", "", "", "", "", "K", "v", "")
	f.Add("a", "p@best", "fix it", "d", "", "", "claude", "TARGET", "./pkg", "5m")
	f.Add("a", "p", "t", "", "https://example.com/r.git", "main", "", "K", "v\x00w", "")
	f.Add("a", "p", "t\x00", "", "", "", "", "", "", "")
	f.Add("a", "p", "t", "", "r\x00", "main\x00", "codex\x00", "K\x00", "v", "1s\x00")
	f.Fuzz(func(t *testing.T, id, persona, task, dir, repo, ref, harness, key, value, timeout string) {
		tk := Task{ID: id, Persona: persona, Task: task, Dir: dir, Repo: repo, Ref: ref, Harness: harness, Timeout: timeout}
		if key != "" || value != "" {
			tk.Inputs = map[string]string{key: value}
		}
		if tk.Validate() != nil {
			return
		}
		cmd := Command("workforce", tk, "/project")
		stdin, err := io.ReadAll(cmd.Stdin)
		if err != nil {
			t.Fatal(err)
		}
		strs := append(append([]string{}, cmd.Args...), string(stdin), tk.Dir, tk.Repo, tk.Ref)
		for _, s := range strs {
			if strings.IndexByte(s, 0) >= 0 {
				t.Fatalf("Validate passed %+v, whose %q holds a NUL byte", tk, s)
			}
		}
	})
}
