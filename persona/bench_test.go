package persona

import (
	"fmt"
	"testing"

	"github.com/seed-3bc194a6/workforce/internal/benchtree"
)

// BenchmarkLoad loads and cascades n personas over three layers.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("personas=%d", n), func(b *testing.B) {
			project, user, base, err := benchtree.Layers(b.TempDir(), n)
			if err != nil {
				b.Fatal(err)
			}
			layers := []Layer{{Name: "project", Dir: project}, {Name: "user", Dir: user}, {Name: "dir:2", Dir: base}}
			b.ResetTimer()
			for b.Loop() {
				cat := LoadLayers(layers)
				if len(cat.Personas) != n || len(cat.Errors) > 0 {
					b.Fatalf("loaded %d personas, errors %v", len(cat.Personas), cat.Errors)
				}
			}
		})
	}
}
