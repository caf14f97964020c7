// Command binsize prints what a Go binary's bytes are: the sections of
// the file, then the code (.text) by the module it comes from (the
// standard library, workforce, each dependency), from the symbol table
// and the build information the binary carries. A function's size is the
// distance to the next symbol.
//
// Usage: go run ./testdata/bench/binsize BINARY [BINARY...]
package main

import (
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"slices"
	"strings"
)

func main() {
	for _, bin := range os.Args[1:] {
		if err := report(bin); err != nil {
			fmt.Fprintln(os.Stderr, "binsize:", err)
			os.Exit(1)
		}
	}
}

func report(bin string) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return err
	}
	mods := []string{info.Main.Path}
	for _, d := range info.Deps {
		mods = append(mods, d.Path)
	}
	// The longest module path first: a nested module wins.
	slices.SortFunc(mods, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	st, _ := os.Stat(bin)
	fmt.Printf("%s: %.1f MB\n", bin, float64(st.Size())/1e6)
	var debug uint64
	for _, s := range f.Sections {
		switch {
		case strings.HasPrefix(s.Name, ".debug"):
			debug += s.FileSize // compressed in the file
		case s.Type != elf.SHT_NOBITS && s.FileSize > 1<<20:
			fmt.Printf("  %-12s %6.2f MB\n", s.Name, float64(s.FileSize)/1e6)
		}
	}
	fmt.Printf("  %-12s %6.2f MB (DWARF, not loaded at start-up)\n", ".debug_*", float64(debug)/1e6)
	text := f.Section(".text")
	syms, err := f.Symbols()
	if err != nil {
		return err
	}
	var in []elf.Symbol
	for _, s := range syms {
		if s.Value >= text.Addr && s.Value < text.Addr+text.Size {
			in = append(in, s)
		}
	}
	slices.SortFunc(in, func(a, b elf.Symbol) int { return cmp.Compare(a.Value, b.Value) })
	by := map[string]uint64{}
	for i, s := range in {
		end := text.Addr + text.Size
		if i+1 < len(in) {
			end = in[i+1].Value
		}
		by[owner(s.Name, mods, info.Main.Path)] += end - s.Value
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(by[b], by[a]) })
	fmt.Printf("  .text by module:\n")
	for _, k := range keys {
		if by[k] >= 50_000 {
			fmt.Printf("    %6.2f MB  %s\n", float64(by[k])/1e6, k)
		}
	}
	return nil
}

// owner is the module a symbol's package belongs to: one of mods, "std"
// for a package of the standard library, "other" for the rest.
func owner(name string, mods []string, main string) string {
	name = strings.TrimLeft(strings.TrimPrefix(name, "type:"), "*[]")
	if strings.HasPrefix(name, "main.") {
		return main
	}
	for _, m := range mods {
		if strings.HasPrefix(name, m+".") || strings.HasPrefix(name, m+"/") {
			return m
		}
	}
	// A package of the standard library has no dot in its path's first
	// element (crypto/tls.(*Conn).Read, runtime.main).
	if i := strings.Index(name, "/"); i > 0 && !strings.ContainsAny(name[:i], ".:") {
		return "std"
	}
	if pkg, _, ok := strings.Cut(name, "."); ok && pkg != "" && !strings.ContainsAny(pkg, ":/") {
		return "std"
	}
	return "other"
}
