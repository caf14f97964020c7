// Command mktree makes a tree of small files for the benchmarks, fast: one
// process writes them all, where a cp per file would take minutes for
// 200,000. Usage: go run ./testdata/bench/mktree DIR FILES
//
// File n is DIR/d<n/10000>/e<n/100%100>/f<n%100>.dat: 100 files a
// directory, 100 directories a group, as a source tree spreads them. Its
// size is 1 to 4 KiB, and its content pseudo-random from a fixed seed, so
// that two runs make the same tree and no file system shares blocks
// between files.
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mktree DIR FILES")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[2])
	if err == nil {
		err = makeTree(os.Args[1], n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mktree:", err)
		os.Exit(1)
	}
}

// makeTree writes files files under dir, making each directory before its
// first file.
func makeTree(dir string, files int) error {
	rng := rand.New(rand.NewPCG(44, 44))
	buf := make([]byte, 4096)
	for i := 0; i < files; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%d", i/10000), fmt.Sprintf("e%d", i/100%100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		size := 1024 + rng.IntN(3*1024+1)
		for j := range buf[:size] {
			buf[j] = byte('a' + rng.IntN(26))
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.dat", i%100)), buf[:size], 0o644); err != nil {
			return err
		}
	}
	return nil
}
