package egress_test

import (
	"fmt"

	"github.com/seed-3bc194a6/workforce/egress"
)

// The user's config.json and flags widen; a persona narrows.
func ExampleResolve() {
	api, _ := egress.NewEntry("api.anthropic.com:443", "harness claude (api key)")
	pol, err := egress.Resolve(egress.Sources{
		User: []egress.Spec{
			{Origin: "config.json", Presets: []string{}, Allow: []string{"*.example.com", "pypi.org"}},
			{Origin: "--network-allow", Allow: []string{"localhost:11434"}},
		},
		Narrow: []egress.Spec{{Origin: "persona reviewer", Presets: []string{}, Allow: []string{"api.example.com:443", "evil.test"}}},
		Always: []egress.Entry{api},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pol.Mode)
	for _, e := range pol.Entries() {
		fmt.Println(e)
	}
	// Output:
	// allowlist
	// api.example.com:443 (config.json)
	// api.anthropic.com:443 (harness claude (api key))
}

func ExampleParseRule() {
	for _, s := range []string{"Example.COM:443", "*.npmjs.org", "[::1]:11434", "https://example.com"} {
		r, err := egress.ParseRule(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(r)
	}
	// Output:
	// example.com:443
	// *.npmjs.org
	// [::1]:11434
	// network rule "https://example.com": a rule is a host, not a URL: write the host alone, or host:port
}
