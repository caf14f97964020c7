package install

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-3bc194a6/workforce/pack"
	"github.com/seed-3bc194a6/workforce/persona"
)

// makePack writes a pack of n personas, each with a top-level sidecar and
// a tier sidecar sharing its base name, and collects it.
func makePack(t testing.TB, n int) *pack.Pack {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("package.json", `{"name": "p", "version": "1.0.0"}`)
	for i := range n {
		id := fmt.Sprintf("p%04d", i)
		write("personas/"+id+".json", fmt.Sprintf(`{"id": %q, "intent": "x", "description": "d", "claudeMd": "%s/notes.md",
 "tiers": {"best": {"harness": "codex", "model": "m", "agentsMd": "%s/tier/notes.md"}, "minimum": {"harness": "claude", "model": "m", "claudeMd": "%s/notes.md"}}}`, id, id, id, id))
		write("personas/"+id+"/notes.md", "top notes of "+id)
		write("personas/"+id+"/tier/notes.md", "tier notes of "+id)
	}
	p, err := pack.Collect(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot lists a directory's files with their contents.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(b)
		}
		return nil
	})
	return out
}

func TestInstallRoundTrip(t *testing.T) {
	p := makePack(t, 2)
	target := filepath.Join(t.TempDir(), "layer")
	res, err := Pack(p, Options{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Installed) != 2 || !slices.Equal(res.Installed[0].Assets, []string{"notes--best-agentsMd.md", "notes.md"}) {
		t.Fatalf("result = %+v", res)
	}
	cat := persona.LoadLayers([]persona.Layer{{Name: "user", Dir: target}})
	if len(cat.Errors)+len(cat.Warnings) > 0 {
		t.Fatalf("installed personas do not load: %v %v", cat.Errors, cat.Warnings)
	}
	got, _ := cat.Get("p0000")
	for tier, want := range map[string]string{"best": "tier notes of p0000", "minimum": "top notes of p0000"} {
		r, _ := got.Resolve(tier)
		sc := r.Sidecar(persona.ChannelFor(r.Harness))
		if text, _ := sc.Text(); text != want {
			t.Errorf("%s sidecar = %q, want %q", tier, text, want)
		}
	}
	// The same content as in the pack.
	orig := p.Personas[0].Spec
	if got.Spec.Description != orig.Description || got.Spec.Tiers["best"].Model != orig.Tiers["best"].Model {
		t.Errorf("installed spec differs: %+v", got.Spec)
	}
	// The lock and staging files are not left in the target.
	entries, _ := os.ReadDir(target)
	if len(entries) != 4 {
		t.Errorf("target holds %d entries, want 2 personas and 2 asset directories", len(entries))
	}
}

func TestConflictsAndOverwrite(t *testing.T) {
	p := makePack(t, 2)
	target := filepath.Join(t.TempDir(), "layer")
	if _, err := Pack(p, Options{Target: target}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target, "p0001__assets", "stale.md"), []byte("old"), 0o644)
	before := snapshot(t, target)
	_, err := Pack(p, Options{Target: target})
	var ce *ConflictError
	if !errors.As(err, &ce) || !slices.Equal(ce.IDs, []string{"p0000", "p0001"}) {
		t.Fatalf("second install error = %v, want conflicts for both", err)
	}
	if !equalMaps(before, snapshot(t, target)) {
		t.Error("a conflicting install changed the target")
	}
	if _, err := Pack(p, Options{Target: target, Overwrite: true, Personas: []string{"p0001"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "p0001__assets", "stale.md")); err == nil {
		t.Error("--overwrite left the old assets behind")
	}
	_, err = Pack(p, Options{Target: target, Personas: []string{"p0001", "nobody"}})
	var ue *UnknownPersonaError
	if !errors.As(err, &ue) || !slices.Equal(ue.IDs, []string{"nobody"}) {
		t.Errorf("unknown persona error = %v", err)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestFailureMidInstall injects a failure at every step of the commit and
// checks that the target is left exactly as it was.
func TestFailureMidInstall(t *testing.T) {
	p := makePack(t, 3)
	for _, overwrite := range []bool{false, true} {
		for step := range 6 {
			t.Run(fmt.Sprintf("overwrite=%v/step=%d", overwrite, step), func(t *testing.T) {
				target := filepath.Join(t.TempDir(), "layer")
				if overwrite {
					if _, err := Pack(p, Options{Target: target}); err != nil {
						t.Fatal(err)
					}
					os.WriteFile(filepath.Join(target, "p0000.json"), []byte(`{"id": "p0000", "description": "edited"}`), 0o644)
				} else {
					os.MkdirAll(target, 0o755)
				}
				before := snapshot(t, target)
				failHook = func(s int) error {
					if s == step {
						return errors.New("injected failure")
					}
					return nil
				}
				defer func() { failHook = nil }()
				_, err := Pack(p, Options{Target: target, Overwrite: overwrite})
				if err == nil || !strings.Contains(err.Error(), "injected failure") {
					t.Fatalf("Pack() error = %v", err)
				}
				if after := snapshot(t, target); !equalMaps(before, after) {
					t.Errorf("target changed by a failed install:\nbefore %v\nafter  %v", keys(before), keys(after))
				}
				if left, _ := filepath.Glob(filepath.Join(filepath.Dir(target), ".layer.staging-*")); len(left) > 0 {
					t.Errorf("staging left behind: %v", left)
				}
			})
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestConcurrentInstalls(t *testing.T) {
	p := makePack(t, 20)
	target := filepath.Join(t.TempDir(), "layer")
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = Pack(p, Options{Target: target, Overwrite: true}) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	cat := persona.LoadLayers([]persona.Layer{{Name: "user", Dir: target}})
	if len(cat.Personas) != 20 || len(cat.Errors) > 0 {
		t.Errorf("after concurrent installs: %d personas, errors %v", len(cat.Personas), cat.Errors)
	}
}

func TestReadOnlyTarget(t *testing.T) {
	if os.Geteuid() == 0 {
		// Root writes anywhere; make the parent unusable another way: a
		// file where the target's parent directory should be.
		parent := filepath.Join(t.TempDir(), "file")
		os.WriteFile(parent, []byte("x"), 0o644)
		_, err := Pack(makePack(t, 1), Options{Target: filepath.Join(parent, "layer")})
		if err == nil || !strings.Contains(err.Error(), "cannot create") {
			t.Errorf("error = %v, want one naming the directory", err)
		}
		return
	}
	parent := t.TempDir()
	os.Chmod(parent, 0o555)
	defer os.Chmod(parent, 0o755)
	_, err := Pack(makePack(t, 1), Options{Target: filepath.Join(parent, "layer")})
	if err == nil {
		t.Error("install into a read-only directory succeeded")
	}
}

func BenchmarkInstall500(b *testing.B) {
	p := makePack(b, 500)
	for b.Loop() {
		if _, err := Pack(p, Options{Target: filepath.Join(b.TempDir(), "layer")}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCollectAndWrite500(b *testing.B) {
	p := makePack(b, 500)
	for b.Loop() {
		q, err := pack.Collect(p.Dir)
		if err != nil {
			b.Fatal(err)
		}
		f, _ := os.Create(filepath.Join(b.TempDir(), "p.tgz"))
		if err := q.Write(f); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// TestInstallSaysWhatItOverrides: with the cascade given, each installed
// persona names the persona of its id below the target that it overrides
// (and what it inherits from it) or shadows; layers above the target do
// not count, and a target outside the cascade is taken to be above it.
func TestInstallSaysWhatItOverrides(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pack/package.json", `{"name": "p", "version": "1.0.0"}`)
	write("pack/personas/rev.json", `{"id": "rev", "description": "mine", "permissions": {"deny": ["Bash"]}}`)
	write("pack/personas/solo.json", `{"id": "solo", "intent": "i", "description": "d", "harness": "claude", "model": "m"}`)
	write("pack/personas/mine.json", `{"id": "mine", "inherit": false, "intent": "i", "description": "d", "harness": "claude", "model": "m"}`)
	whole := `{"id": %q, "intent": "base", "description": "base", "claudeMdContent": "base notes", "permissions": {"deny": ["WebFetch"]},
 "tiers": {"best": {"harness": "codex", "model": "m"}, "minimum": {"harness": "claude", "model": "m"}}}`
	write("base/rev.json", fmt.Sprintf(whole, "rev"))
	write("base/mine.json", fmt.Sprintf(whole, "mine"))
	write("project/rev.json", fmt.Sprintf(whole, "rev"))
	p, err := pack.Collect(filepath.Join(root, "pack"))
	if err != nil {
		t.Fatal(err)
	}
	project := persona.Layer{Name: persona.LayerProject, Dir: filepath.Join(root, "project")}
	user := persona.Layer{Name: persona.LayerUser, Dir: filepath.Join(root, "user")}
	base := persona.Layer{Name: "dir:2", Dir: filepath.Join(root, "base")}
	tests := []struct {
		name   string
		target string
		layers []persona.Layer
		layer  string            // Result.Layer
		want   map[string]string // id -> "overrides LAYER FILE: INHERITS" or "shadows LAYER FILE"
	}{
		{
			name:   "a layer of the cascade",
			target: user.Dir,
			layers: []persona.Layer{project, user, base},
			layer:  persona.LayerUser,
			want: map[string]string{
				"rev":  "overrides dir:2 base/rev.json: claudeMd intent permissions.deny tiers.best tiers.minimum",
				"mine": "shadows dir:2 base/mine.json",
				"solo": "",
			},
		},
		{
			name:   "outside the cascade, above none of it",
			target: filepath.Join(root, "elsewhere"),
			layers: []persona.Layer{project, base},
			want:   map[string]string{"rev": "", "mine": "", "solo": ""},
		},
		{
			name:   "no cascade given",
			target: filepath.Join(root, "quiet"),
			want:   map[string]string{"rev": "", "mine": "", "solo": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Pack(p, Options{Target: tt.target, Layers: tt.layers})
			if err != nil {
				t.Fatal(err)
			}
			if res.Layer != tt.layer {
				t.Errorf("Layer = %q, want %q", res.Layer, tt.layer)
			}
			got := map[string]string{}
			for _, in := range res.Installed {
				rel := func(o *persona.Origin) string {
					r, _ := filepath.Rel(root, o.File)
					return o.Layer + " " + r
				}
				switch {
				case in.Overrides != nil && in.Shadows != nil:
					got[in.ID] = "both"
				case in.Overrides != nil:
					got[in.ID] = "overrides " + rel(in.Overrides) + ": " + strings.Join(in.Inherits, " ")
				case in.Shadows != nil:
					got[in.ID] = "shadows " + rel(in.Shadows)
				default:
					got[in.ID] = ""
				}
			}
			for id, want := range tt.want {
				if got[id] != want {
					t.Errorf("%s: %q, want %q", id, got[id], want)
				}
			}
		})
	}
}

// TestOpenNamesArchiveEntries: an error about a file of a .tgz names it as
// the archive does, after the archive's path, never by the temporary
// directory it was unpacked into.
func TestOpenNamesArchiveEntries(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // each after "<tgz>: "
	}{
		{"a schema error and a missing sidecar", map[string]string{
			"package/package.json":        `{"name": "p", "version": "1.0.0"}`,
			"package/personas/x.json":     "{\n  \"id\": \"x\",\n  \"intent\": 5\n}",
			"package/personas/fine.json":  `{"id": "fine", "intent": "i", "description": "d", "harness": "claude", "model": "m"}`,
			"package/personas/notes.md":   "notes",
			"package/personas/other.json": `{"id": "other", "claudeMd": "gone.md"}`,
		}, []string{"package/personas/x.json:3:13: intent: must be string", "package/personas/other.json: claudeMd: sidecar file not found"}},
		{"a syntax error, in a pack of another top directory", map[string]string{
			"pkg/package.json":    `{"name": "p", "version": "1.0.0"}`,
			"pkg/personas/x.json": "{\n  \"id\": \"x\",\n  \"intent\": 5\n}",
		}, []string{"pkg/personas/x.json:3:13: intent: must be string"}},
		{"invalid UTF-8", map[string]string{
			"package/package.json":    `{"name": "p", "version": "1.0.0"}`,
			"package/personas/x.json": "{\"id\": \"x\", \"intent\": \"caf\xe9\"}",
		}, []string{"package/personas/x.json:1:27: invalid UTF-8"}},
		{"no personas", map[string]string{
			"package/package.json": `{"name": "p", "version": "1.0.0", "agentworkforce": {"personas": "agents"}}`,
			"package/agents/x.md":  "not a persona",
		}, []string{"package: no persona files in agents"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tgz := filepath.Join(t.TempDir(), "bad.tgz")
			writeTgz(t, tgz, tt.files)
			p, cleanup, err := Open(t.Context(), tgz, OpenOptions{})
			defer cleanup()
			if err == nil {
				t.Fatalf("Open(%s) = %v, want an error", tgz, p.IDs())
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), tgz+": "+want) {
					t.Errorf("Open() error = %q, want it to hold %q", err, tgz+": "+want)
				}
			}
			if strings.Contains(err.Error(), os.TempDir()+string(filepath.Separator)+"workforce-") {
				t.Errorf("Open() error = %q names the temporary directory", err)
			}
		})
	}
}

// writeTgz writes a gzip'd tarball of files.
func writeTgz(t *testing.T, path string, files map[string]string) {
	t.Helper()
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Size: int64(len(files[n])), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInstallRefusesExtendsCycles: personas that would extend each other
// in a cycle in the target layer, among themselves or with the personas
// already there, are refused before anything is written, naming the cycle
// as the loader does; a chain that ends is installed.
func TestInstallRefusesExtendsCycles(t *testing.T) {
	const whole = `{"id": %q, "intent": "i", "description": "d", "harness": "codex", "model": "m"%s}`
	ext := func(id string) string { return fmt.Sprintf(`, "extends": %q`, id) }
	tests := []struct {
		name     string
		pack     map[string]string // persona file -> extends ("" none)
		target   map[string]string // the same, already in the target
		personas []string
		want     string // "" installs
	}{
		{name: "two in the pack", pack: map[string]string{"x": "y", "y": "x"}, want: "personas/x.json: extends: extends cycle: x -> y -> x"},
		{name: "three in the pack", pack: map[string]string{"c": "a", "a": "b", "b": "c"}, want: "personas/a.json: extends: extends cycle: a -> b -> c -> a"},
		{name: "one extends itself through another id's file", pack: map[string]string{"x": "y", "y": "y"}},
		{name: "with a persona already there", pack: map[string]string{"x": "y"}, target: map[string]string{"y": "x"}, want: "personas/x.json: extends: extends cycle: x -> y -> x"},
		{name: "replacing the persona that closed it", pack: map[string]string{"x": "y", "y": ""}, target: map[string]string{"y": "x"}},
		{name: "a chain that ends", pack: map[string]string{"x": "y", "y": "z", "z": ""}},
		{name: "only one of the cycle installed", pack: map[string]string{"x": "y", "y": "x"}, personas: []string{"x"}},
		{name: "into a cycle already there", pack: map[string]string{"x": "a"}, target: map[string]string{"a": "b", "b": "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			write := func(path, content string) {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			body := func(id, x string) string {
				if x == "" {
					return fmt.Sprintf(whole, id, "")
				}
				return fmt.Sprintf(whole, id, ext(x))
			}
			write(filepath.Join(root, "pack", "package.json"), `{"name": "p", "version": "1.0.0"}`)
			for id, x := range tt.pack {
				write(filepath.Join(root, "pack", "personas", id+".json"), body(id, x))
			}
			target := filepath.Join(root, "layer")
			for id, x := range tt.target {
				write(filepath.Join(target, id+".json"), body(id, x))
			}
			before := snapshot(t, target)
			p, err := pack.Collect(filepath.Join(root, "pack"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Pack(p, Options{Target: target, Personas: tt.personas, Overwrite: true})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Pack() = %v, want it installed", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Pack() error = %v, want %q", err, tt.want)
			}
			if after := snapshot(t, target); !equalMaps(before, after) {
				t.Errorf("the target changed: %v, was %v", keys(after), keys(before))
			}
		})
	}
}
