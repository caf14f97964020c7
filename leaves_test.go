package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// The shape of package main, beside the import rules of deps_test.go:
// command files are leaves. Each cmd_<name>.go and cmd_<name>_<sub>.go is
// an entry of commands() (a command, one of its subcommands, or a mode of
// a command given by one of its flags: cmd_batch_queue.go is batch
// --queue) and uses no top-level name of another command's files (a
// command's own files are one group); what two commands share lives in a
// file that is no command's (output.go, ui.go, exitcode.go,
// catalog.go, runs.go, runflags.go, queueflags.go...) or in the package
// that owns the idea, and such a file uses no command's names either
// (main.go aside, which lists the commands). Only
// main.go catches signals or ends the process, and no function is over
// maxFuncLines lines but the command-tree definitions (a function
// returning *cli.Command, which is a list of flags and prose).

// maxFuncLines is the longest a function of package main may be.
const maxFuncLines = 80

// leafAllowed lists what the rules find today and is left to do, each
// with why: the test fails on anything else, and on an entry no longer
// found, so that the list only shrinks. A key is the finding's rule and
// subject as leafFindings writes it.
var leafAllowed = map[string]string{}

// TestCommandFilesAreLeaves fails on a use of one command's top-level
// names from another command's files or from a shared file, a cmd_ file that names no command,
// signal.Notify or os.Exit outside main.go, and a function over
// maxFuncLines lines, unless leafAllowed lists it.
func TestCommandFilesAreLeaves(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var srcs []string
	for _, name := range files {
		if !strings.HasSuffix(name, "_test.go") {
			srcs = append(srcs, name)
		}
	}
	found, err := leafFindings(srcs, commandEntries(commands()))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range found {
		seen[f.key] = true
		if _, ok := leafAllowed[f.key]; !ok {
			t.Errorf("%s: %s", f.pos, f.msg)
		}
	}
	for key := range leafAllowed {
		if !seen[key] {
			t.Errorf("leafAllowed: %q is no longer found: remove it from the list", key)
		}
	}
}

// TestLeafRules breaks each rule on purpose in a small package main and
// checks the rules find it, so that TestCommandFilesAreLeaves passing
// means something.
func TestLeafRules(t *testing.T) {
	entries := map[string]bool{"alpha": true, "alpha_x": true, "beta": true, "beta_sub": true}
	long := "func long() {\n" + strings.Repeat("\tprintln()\n", maxFuncLines-1) + "}\n"   // one line over
	short := "func short() {\n" + strings.Repeat("\tprintln()\n", maxFuncLines-2) + "}\n" // at the limit
	tests := []struct {
		name  string
		files map[string]string
		want  []string // keys, sorted
	}{
		{"clean", map[string]string{
			"main.go":         "package main\nimport (\"os\"; \"os/signal\")\nfunc main() { signal.Notify(nil); os.Exit(shared()) }\n",
			"output.go":       "package main\nfunc shared() int { return 0 }\n",
			"cmd_alpha.go":    "package main\nfunc alphaRun() int { return shared() + alphaOwn }\n",
			"cmd_alpha_x.go":  "package main\nvar alphaOwn = 1\n",
			"cmd_beta.go":     "package main\nfunc betaRun() { x := alphaRun; _ = x }\n",
			"cmd_beta_sub.go": "package main\nfunc betaSub() { betaRun() }\n",
		}, []string{"uses:cmd_beta.go:alphaRun"}},
		{"shared files lean on no command, main.go lists them", map[string]string{
			"main.go":      "package main\nfunc main() { alphaCommand() }\n",
			"runs.go":      "package main\nfunc helper() { alphaRun() }\n",
			"cmd_alpha.go": "package main\nfunc alphaCommand() {}\nfunc alphaRun() {}\n",
		}, []string{"uses:runs.go:alphaRun"}},
		{"shadowed and fields are not uses", map[string]string{
			"cmd_alpha.go": "package main\ntype T struct{ alphaRun int }\nfunc alphaRun() {}\n",
			"cmd_beta.go":  "package main\nfunc betaRun(t T) int { alphaRun := 1; return alphaRun + t.alphaRun }\n",
		}, []string{"uses:cmd_beta.go:T"}},
		{"no command", map[string]string{
			"cmd_gamma.go":  "package main\n",
			"cmd_beta_y.go": "package main\n",
		}, []string{"names:cmd_beta_y.go", "names:cmd_gamma.go"}},
		{"signals and exit", map[string]string{
			"ui.go": "package main\nimport (ex \"os\"; sig \"os/signal\")\nfunc f() { sig.Notify(nil); ex.Exit(1) }\n",
		}, []string{"calls:ui.go:ex.Exit", "calls:ui.go:sig.Notify"}},
		{"long", map[string]string{
			"ui.go":        "package main\n" + long,
			"cmd_alpha.go": "package main\nimport \"github.com/urfave/cli/v2\"\nfunc alphaCommand() *cli.Command {\n" + strings.Repeat("\tprintln()\n", maxFuncLines) + "\treturn nil\n}\n" + short,
		}, []string{"long:ui.go:long"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var names []string
			for name, src := range tt.files {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				names = append(names, path)
			}
			found, err := leafFindings(names, entries)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range found {
				got = append(got, f.key)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("found %q, want %q", got, tt.want)
			}
		})
	}
}

// leafFinding is one breach of the rules.
type leafFinding struct {
	key string // rule:file[:name], what leafAllowed lists
	pos token.Position
	msg string
}

// commandEntries returns the names a cmd_ file may take after "cmd_" and
// before ".go": each command, command_subcommand and command_flag, with
// dashes as underscores.
func commandEntries(cmds []*cli.Command) map[string]bool {
	entries := map[string]bool{}
	under := func(s string) string { return strings.ReplaceAll(s, "-", "_") }
	for _, c := range cmds {
		entries[under(c.Name)] = true
		for _, s := range c.Subcommands {
			entries[under(c.Name+"_"+s.Name)] = true
		}
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				entries[under(c.Name+"_"+n)] = true
			}
		}
	}
	return entries
}

// commandGroup returns the command a file of package main belongs to (the
// first word after cmd_), or "" for a file that is no command's.
func commandGroup(file string) string {
	base, ok := strings.CutPrefix(filepath.Base(file), "cmd_")
	if !ok {
		return ""
	}
	base = strings.TrimSuffix(base, ".go")
	group, _, _ := strings.Cut(base, "_")
	return group
}

// leafFindings parses the files of a package main and returns what breaks
// the rules, entries being the names a cmd_ file may take.
func leafFindings(files []string, entries map[string]bool) ([]leafFinding, error) {
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	declared := map[string]string{} // top-level name -> file
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed[path] = f
		for name := range topLevelNames(f) {
			declared[name] = path
		}
	}
	var found []leafFinding
	add := func(key string, pos token.Pos, format string, args ...any) {
		found = append(found, leafFinding{key: key, pos: fset.Position(pos), msg: fmt.Sprintf(format, args...)})
	}
	sort.Strings(files)
	for _, path := range files {
		f, base := parsed[path], filepath.Base(path)
		group := commandGroup(path)
		if group != "" && !entries[strings.TrimSuffix(strings.TrimPrefix(base, "cmd_"), ".go")] {
			add("names:"+base, f.Package, "%s names no command, subcommand or flag of commands(): name it for what it holds, without cmd_, or fold it into its command's file", base)
		}
		// Uses of another command's names, from a command's file or a
		// shared one: the file's own names are resolved in it, what is
		// left is declared in another file (or is a predeclared or
		// imported name, declared nowhere here).
		reported := map[string]bool{}
		for _, id := range f.Unresolved {
			from, ok := declared[id.Name]
			if !ok || base == "main.go" {
				continue
			}
			if other := commandGroup(from); other != "" && other != group && !reported[id.Name] {
				reported[id.Name] = true
				add("uses:"+base+":"+id.Name, id.Pos(), "%s uses %s of %s, another command's file: move it to a file no command owns (output.go, ui.go, runs.go...) or to the package that owns the idea", base, id.Name, filepath.Base(from))
			}
		}
		if base != "main.go" {
			for _, c := range processCalls(f) {
				add("calls:"+base+":"+c.local, c.sel.Pos(), "%s outside main.go: only main.go catches signals (notifyStop) and ends the process", c.what)
			}
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || commandTree(fn) {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFuncLines {
				name := fn.Name.Name
				if fn.Recv != nil && len(fn.Recv.List) == 1 {
					name = recvName(fn.Recv.List[0].Type) + "." + name
				}
				add("long:"+base+":"+name, fn.Pos(), "%s is %d lines, over %d: split it", name, lines, maxFuncLines)
			}
		}
	}
	return found, nil
}

// topLevelNames returns the names a file declares at package level
// (functions, types, variables, constants; not methods).
func topLevelNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" && d.Name.Name != "_" {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names
}

// commandTree reports whether fn defines a command: a function of no
// receiver returning *cli.Command.
func commandTree(fn *ast.FuncDecl) bool {
	if fn.Recv != nil || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
		return false
	}
	star, ok := fn.Type.Results.List[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "cli" && sel.Sel.Name == "Command"
}

// recvName returns the type name of a method's receiver.
func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// oneSignalExempt are the library files that are a process's main all
// the same, each with why.
var oneSignalExempt = map[string]string{
	"confine/ns_linux.go": "the launcher in namespaces is process 1 of its PID namespace, started as workforce __confine before main's own code: it catches the signals it passes on to the harness",
}

// TestOneSignalSource fails on signal.Notify, signal.NotifyContext or
// os.Exit in a non-test file of workforce's packages outside main.go:
// the packages get the signal source from the command layer
// (session.Notify, batch.Signals, picker.Options.Signals) and return
// errors, never end the process. The separate programs of the module (a
// directory whose package is main: the generator, the stand-in harness)
// are their own processes and are left out, and so is the launcher
// (oneSignalExempt).
func TestOneSignalSource(t *testing.T) {
	var found []string
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "e2e") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == "." {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" || oneSignalExempt[filepath.ToSlash(path)] != "" {
			return nil
		}
		for _, c := range processCalls(f) {
			found = append(found, fmt.Sprintf("%s: %s", fset.Position(c.sel.Pos()), c.local))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s outside main.go: only main.go catches signals (notify) and ends the process", f)
	}
}

// processCall is a use of os.Exit, signal.Notify or signal.NotifyContext
// in a file: what it is, and how the file names it.
type processCall struct {
	what, local string
	sel         *ast.SelectorExpr
}

// processCalls returns the uses in f of what only main.go may call (os.Exit,
// signal.Notify, signal.NotifyContext), under whatever name f imports
// their package.
func processCalls(f *ast.File) []processCall {
	forbidden := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := filepath.Base(p)
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch p {
		case "os":
			forbidden[local+".Exit"] = "os.Exit"
		case "os/signal":
			forbidden[local+".Notify"], forbidden[local+".NotifyContext"] = "signal.Notify", "signal.NotifyContext"
		}
	}
	var out []processCall
	if len(forbidden) == 0 {
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				if what, ok := forbidden[x.Name+"."+sel.Sel.Name]; ok {
					out = append(out, processCall{what: what, local: x.Name + "." + sel.Sel.Name, sel: sel})
				}
			}
		}
		return true
	})
	return out
}
