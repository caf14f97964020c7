package native

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed-3bc194a6/workforce/persona"
)

// importFile reads the agent file path as workforce import does and returns
// the persona it makes, loaded as the loader loads a persona file.
func importFile(t *testing.T, path, harness string) (*persona.Persona, *Agent) {
	t.Helper()
	src, err := Find(path, harness)
	if err != nil {
		t.Fatal(err)
	}
	if len(src) != 1 {
		t.Fatalf("Find(%s) = %v", path, src)
	}
	a, err := src[0].Read()
	if err != nil {
		t.Fatal(err)
	}
	data, err := MarshalPersona(a.Spec())
	if err != nil {
		t.Fatal(err)
	}
	cat := persona.LoadLayers([]persona.Layer{persona.BuiltinLayer([]persona.File{{Name: a.Name + ".json", Data: data}})})
	if len(cat.Errors) > 0 {
		t.Fatalf("%s makes an invalid persona: %v\n%s", path, cat.Errors[0], data)
	}
	p, ok := cat.Get(a.Name)
	if !ok {
		t.Fatalf("persona %s not loaded", a.Name)
	}
	return p, a
}

// TestRoundTrip: every agent file in testdata, imported and exported
// again, is the same file byte for byte.
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/*/*.*")
	if len(files) < 6 {
		t.Fatalf("testdata holds %d agent files", len(files))
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			h := filepath.Base(filepath.Dir(f))
			p, a := importFile(t, f, h)
			r, err := p.Resolve("")
			if err != nil {
				t.Fatal(err)
			}
			out, err := Export(p.Spec.Description, r, h, a.Name)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := os.ReadFile(f)
			if !bytes.Equal(out.Data, want) {
				t.Errorf("exported:\n%s\nwant:\n%s", out.Data, want)
			}
		})
	}
}
