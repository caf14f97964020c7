package jsonschema

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestMain checks, before any test compiles a schema, that the package's
// initialisation compiled no meta-schema: that is the one change of this
// copy.
func TestMain(m *testing.M) {
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.meta != nil {
			fmt.Fprintf(os.Stderr, "the meta-schema of %s was compiled at package initialisation\n", d)
			os.Exit(1)
		}
		if d.metaURL == "" || d.metaSchema == "" {
			fmt.Fprintf(os.Stderr, "the meta-schema of %s was not recorded\n", d)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// TestMetasLoadOnFirstCompile checks that compiling a schema compiles the
// meta-schemas, which then reject an invalid schema as the library does.
func TestMetasLoadOnFirstCompile(t *testing.T) {
	c := NewCompiler()
	if err := c.AddResource("bad.json", strings.NewReader(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": 5}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("bad.json"); err == nil || !strings.Contains(err.Error(), "type") {
		t.Errorf("Compile(bad schema) = %v, want the meta-schema to reject its type", err)
	}
	for _, d := range []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020} {
		if d.meta == nil || d.meta.meta != d.meta {
			t.Errorf("%s: meta-schema not loaded by the first Compile", d)
		}
	}
}
