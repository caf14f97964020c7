// Command generate inlines a built-in persona catalog into Go source. Run it
// from a go:generate line in the catalog's package:
//
//	//go:generate go run github.com/seed-3bc194a6/workforce/generate
//
// It reads the *.json persona files of -dir in sorted order, validates them
// with the same code as the loader, replaces every claudeMd / agentsMd path
// (top level and per tier) with the file's text in claudeMdContent /
// agentsMdContent, carries every local skill (a .md file or a skill
// directory, its SKILL.md checked) inline in the skill's files, keeping
// its source to say where it came from, and writes one gofmt-ed Go file
// declaring
//
//	var Files = []persona.File{...}
//
// The output is byte-for-byte deterministic. On any error nothing is written
// and the previous file stays. With -watch it regenerates after each change
// to a file of the catalog (.json, .md, and a skill's other files),
// debounced, and keeps watching when a regeneration fails.
//
// Other catalog repositories use it the same way, with -pkg and -var to name
// the package and the variable.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/google/renameio/v2"
	"github.com/seed-3bc194a6/workforce/internal/catalog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stderr))
}

func run(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", ".", "catalog directory holding the persona *.json files")
	out := fs.String("out", "", "output file (default catalog_gen.go in -dir)")
	pkg := fs.String("pkg", "", "package name of the output (default: the package of -dir)")
	name := fs.String("var", "Files", "name of the generated variable")
	watch := fs.Bool("watch", false, "regenerate on every change to a .json or .md file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: generate [-dir DIR] [-out FILE] [-pkg NAME] [-var NAME] [-watch]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "generate: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	g := generator{dir: *dir, out: *out, opts: catalog.Options{Dir: *dir, Package: *pkg, Var: *name}}
	if g.out == "" {
		g.out = filepath.Join(*dir, "catalog_gen.go")
	}
	if g.opts.Package == "" {
		g.opts.Package = catalog.PackageName(*dir)
	}
	err := g.generate()
	if !*watch {
		if err != nil {
			fmt.Fprintf(stderr, "generate: %v\n", err)
			return 1
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "generate: %v\n", err)
	}
	if err := g.watch(ctx, stderr, 150*time.Millisecond); err != nil {
		fmt.Fprintf(stderr, "generate: %v\n", err)
		return 1
	}
	return 0
}

type generator struct {
	dir, out string
	opts     catalog.Options
}

// generate builds the catalog and writes it atomically, only when it
// changed.
func (g *generator) generate() error {
	files, err := catalog.Build(g.dir)
	if err != nil {
		return err
	}
	src, err := catalog.Render(g.opts, files)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(g.out); err == nil && string(old) == string(src) {
		return nil
	}
	return renameio.WriteFile(g.out, src, 0o644, renameio.WithTempDir(filepath.Dir(g.out)))
}

// watch regenerates after changes to .json and .md files in the catalog
// directory and its subdirectories, waiting for quiet before each run.
func (g *generator) watch(ctx context.Context, stderr io.Writer, quiet time.Duration) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	err = filepath.WalkDir(g.dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != g.dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return w.Add(path)
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "generate: watching %s\n", g.dir)
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return errors.New("watcher closed")
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					_ = w.Add(ev.Name)
				}
			}
			if ext := filepath.Ext(ev.Name); ext == ".json" || ext == ".md" || underSkills(g.dir, ev.Name) {
				timer = time.After(quiet)
			}
		case err := <-w.Errors:
			fmt.Fprintf(stderr, "generate: watch: %v\n", err)
		case <-timer:
			timer = nil
			if err := g.generate(); err != nil {
				fmt.Fprintf(stderr, "generate: %v\n", err)
			} else {
				fmt.Fprintf(stderr, "generate: wrote %s\n", g.out)
			}
		}
	}
}

// underSkills reports whether path is below a directory named skills of
// the catalog, where a skill's files other than markdown live.
func underSkills(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		return false
	}
	segs := strings.Split(filepath.ToSlash(rel), "/")
	return segs[0] != ".." && slices.Contains(segs[:len(segs)-1], "skills")
}
