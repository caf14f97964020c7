//go:build e2e

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-3bc194a6/workforce/report"
)

// TestWorkforceOverlay runs `workforce run editor TASK --json --tree
// overlay` with each real harness, confined (the default): the project is
// shown to the harness through an overlay in its namespaces, not copied.
// The scripted model writes out.txt and edits README.md with the harness's
// own tools; both come back through sync-back from the upper layer, and
// the run says nothing of falling back to the copy.
func TestWorkforceOverlay(t *testing.T) {
	for _, h := range []string{"claude", "codex", "opencode", "gemini"} {
		t.Run(h, func(t *testing.T) {
			dir, _, e := oneShotProject(t, h, "editor", writerPermissions[h], writeStep(h), step{Text: "finished"})
			res, code, stderr := runWorkforceJSON(t, e, dir, "editor", "write the file", "--tree", "overlay")
			if res.Status != report.StatusSucceeded || code != 0 {
				t.Errorf("status %q, exit %d; want succeeded, 0\nstderr:\n%s", res.Status, code, stderr)
			}
			if strings.Contains(stderr+strings.Join(res.Warnings, "\n"), "copied instead") {
				t.Errorf("the run fell back to the copy:\n%s\n%v", stderr, res.Warnings)
			}
			if res.Files == nil || len(res.Files.Created) != 1 || res.Files.Created[0] != "out.txt" {
				t.Errorf("files %+v, want out.txt created", res.Files)
			}
			if got, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(got) != written {
				t.Errorf("out.txt in the real repository = %q, %v; want %q", got, err, written)
			}
		})
	}
}
