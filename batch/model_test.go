package batch

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLoadModel: LoadOptions.Model is asked of each entry on this machine
// with the entry's persona, harness and model (empty for the tier's), and
// what it refuses is a problem of the entry's line; for a queue it is not
// asked (a worker's harnesses are configured its own way).
func TestLoadModel(t *testing.T) {
	dir := t.TempDir()
	data := strings.Join([]string{
		`{"id":"a","persona":"p","task":"t","model":"gpt-5"}`,
		`{"id":"b","persona":"p","task":"t","harness":"codex"}`,
		`{"id":"c","persona":"p","task":"t","model":"claude-opus-4-5"}`,
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "t.jsonl"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	model := func(ref, h, m string) error {
		asked = append(asked, ref+"|"+h+"|"+m)
		if m == "gpt-5" || h == "codex" {
			return errors.New("unreachable")
		}
		return nil
	}
	catalog := func() (Lookup, error) {
		return func(string) (string, string, error) { return "best", "claude", nil }, nil
	}
	o := LoadOptions{File: "t.jsonl", WorkDir: dir, KnownHarnesses: []string{"claude", "codex"}, Harnesses: []string{"claude", "codex"}, Model: model, Catalog: catalog}
	_, _, err := Load(o)
	if got := problemLines(t, err); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("problems on lines %v, want 1, 2: %v", got, err)
	}
	for _, want := range []string{"t.jsonl:1: task a: unreachable", "t.jsonl:2: task b: unreachable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if want := []string{"p||gpt-5", "p|codex|", "p||claude-opus-4-5"}; !slices.Equal(asked, want) {
		t.Errorf("Model asked %q, want %q", asked, want)
	}
	asked = nil
	o.Remote = func(Task) string { return "" }
	if _, tasks, err := Load(o); err != nil || len(tasks) != 3 || asked != nil {
		t.Errorf("Load for a queue = %d tasks, %v, Model asked %q; want 3 tasks, Model not asked", len(tasks), err, asked)
	}
}
