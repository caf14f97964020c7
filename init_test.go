package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// eagerCalls are the calls that do work a package-level variable must not
// do at initialisation: every command starts every package the binary
// links, so a regular expression compiled there (batch's id pattern,
// {0,99}, was 1,400 allocations) or a terminal style built there is paid
// by `workforce --version` too. Such a variable holds a function that
// makes its value on first use (internal/lazyre.New, sync.OnceValue).
var eagerCalls = map[string]bool{
	"regexp.MustCompile":      true,
	"regexp.Compile":          true,
	"regexp.MustCompilePOSIX": true,
	"lipgloss.NewStyle":       true,
	"template.Must":           true,
}

// TestNoWorkAtInit fails on a package-level variable of the module
// initialised by one of eagerCalls (outside a function literal), and on a
// func init.
func TestNoWorkAtInit(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil && decl.Name.Name == "init" {
					t.Errorf("%s: func init does work at initialisation: make it lazy", fset.Position(decl.Pos()))
				}
			case *ast.GenDecl:
				if decl.Tok != token.VAR {
					continue
				}
				for _, spec := range decl.Specs {
					for _, v := range spec.(*ast.ValueSpec).Values {
						for _, call := range eager(v) {
							t.Errorf("%s: a package-level variable calls %s at initialisation: make it lazy (internal/lazyre, sync.OnceValue)", fset.Position(call.Pos()), callName(call))
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// eager returns the calls of eagerCalls that evaluating e makes: those
// outside a function literal.
func eager(e ast.Expr) []*ast.CallExpr {
	var out []*ast.CallExpr
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if eagerCalls[callName(n)] {
				out = append(out, n)
			}
		}
		return true
	})
	return out
}

// callName is pkg.Func for a call of a package's function, else "".
func callName(c *ast.CallExpr) string {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok {
		return ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return ""
	}
	return id.Name + "." + sel.Sel.Name
}
