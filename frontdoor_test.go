package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-3bc194a6/workforce/personas"
	"github.com/seed-3bc194a6/workforce/picker"
	"github.com/seed-3bc194a6/workforce/report"
)

// TestFrontDoorBuiltins walks every built-in persona, on each of its
// tiers, through the front door's path as far as the run's plan: the
// picker's items as the front door makes them, the picker run on what a
// user types (down to the persona, Tab to the tier, Enter, an answer to
// each input it asks for), and the run it starts, planned as `workforce
// run --dry-run` plans it. A built-in with a required input the picker
// does not ask for, or a tier it cannot start, fails here.
func TestFrontDoorBuiltins(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin, proj := filepath.Join(dir, "bin"), filepath.Join(dir, "proj")
	for _, d := range []string{bin, filepath.Join(proj, ".git"), filepath.Join(dir, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	standin := buildStandin(t)
	for _, h := range []string{"claude", "codex", "opencode", "gemini"} {
		if err := os.Symlink(standin, filepath.Join(bin, h)); err != nil {
			t.Fatal(err)
		}
	}
	env := procEnv{Dir: proj, Home: filepath.Join(dir, "home"), Environ: []string{"PATH=" + bin, "HOME=" + dir}}
	cat, err := loadCatalog(env)
	if err != nil {
		t.Fatal(err)
	}
	items := pickerItems(cat, env)
	if len(items) != len(personas.Files) {
		t.Fatalf("%d items for %d built-in personas", len(items), len(personas.Files))
	}
	ctx := context.Background()
	for row, it := range items {
		for k, tier := range it.Tiers {
			name := it.ID + "@" + tier.Name
			if tier.Missing != "" {
				t.Errorf("%s: %s, with every harness on PATH", name, tier.Missing)
				continue
			}
			keys := strings.Repeat("\x1b[B", row) + strings.Repeat("\t", (k-it.Default+len(it.Tiers))%len(it.Tiers)) + "\r"
			answers := map[string]string{}
			for _, in := range it.Inputs {
				answers[in.Name] = "answer-" + strings.ToLower(in.Name)
				keys += answers[in.Name] + "\r"
			}
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			choice, err := picker.Run(pctx, picker.Options{Items: items, In: strings.NewReader(keys), Out: io.Discard, Environ: []string{"TERM=xterm", "NO_COLOR=1"}})
			cancel()
			if err != nil || choice.ID != it.ID || choice.Tier != tier.Name {
				t.Errorf("%s: the picker chose %+v, %v", name, choice, err)
				continue
			}
			opts, argv := pickedRun(choice, env)
			opts.DryRun, opts.JSON = true, true
			stdout, stderr, code := call(func(ios *iostreams) error { return runRun(ctx, ios, opts) })
			if code != 0 {
				t.Errorf("%s: %s: exit %d: %s", name, strings.Join(argv, " "), code, stderr)
				continue
			}
			var plan report.Plan
			if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if plan.Persona != it.ID || plan.Tier != tier.Name || plan.Harness != tier.Harness {
				t.Errorf("%s: planned %s@%s on %s", name, plan.Persona, plan.Tier, plan.Harness)
			}
			for in, v := range answers {
				if !strings.Contains(stdout, v) {
					t.Errorf("%s: the answer to %s is not in the plan:\n%s", name, in, stdout)
				}
			}
		}
	}
}
