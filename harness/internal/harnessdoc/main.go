// Command harnessdoc writes the mapping table of every harness,
// harness.MappingDoc, to a file: go generate ./harness runs it for
// docs/harnesses.md, and a test of package harness fails when that file
// differs from what the code maps.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/seed-3bc194a6/workforce/harness"
)

func main() {
	out := flag.String("o", "", "the file to write")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: harnessdoc -o FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(*out, []byte(harness.MappingDoc()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "harnessdoc:", err)
		os.Exit(1)
	}
}
