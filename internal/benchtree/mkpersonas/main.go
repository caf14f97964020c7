// Command mkpersonas writes a benchmark persona tree: mkpersonas DIR N
// writes N personas over three layers (see package benchtree) and prints
// the three layer directories, highest first.
package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/seed-3bc194a6/workforce/internal/benchtree"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mkpersonas DIR N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkpersonas: N must be a number:", err)
		os.Exit(2)
	}
	project, user, base, err := benchtree.Layers(os.Args[1], n)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkpersonas:", err)
		os.Exit(1)
	}
	fmt.Println(project, user, base)
}
