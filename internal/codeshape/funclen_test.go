// Package codeshape holds tests about the shape of the product code itself,
// not its behaviour: functions short enough to read top-down, each default
// spelled once, small ports, the modules' layout, the docs' links and map,
// fakes that import no product code, and new unit tests that run in
// parallel.
package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// MaxFuncLines is the longest a product function or method may be, counted
// from the line of its opening brace to the line of its closing brace, both
// included.
const MaxFuncLines = 60

// root is the module root, seen from this package's directory.
const root = "../.."

// tooling lists the trees, relative to the module root, that are not
// product code: tests, benchmarks, harnesses, scripts and the clients they
// use. The rule does not apply to them. An entry for a tree that is gone
// exempts nothing; a tooling tree missing here is held to the rule.
var tooling = []string{
	"e2e",
	"scripts",
	"tooling",
	"internal/stackoutputs",
	// The store on the fake table and its conformance suite, and the fakes
	// of AWS services, serve tests only: no binary links them
	// (functions/deps_test.go).
	"internal/store/storefake",
	"internal/store/storetest",
	"internal/fakes",
}

// skipped are directories that hold no source of this module: tool
// installs, build outputs and test data.
var skipped = map[string]bool{
	"node_modules": true, "cdk.out": true, "dist": true, "testdata": true,
}

// funcLen is one function's length.
type funcLen struct {
	Where string // file:line
	Name  string // Recv.Name, Name, or "func literal"
	Lines int
}

func TestNoProductFunctionIsLong(t *testing.T) {
	t.Parallel()
	all := productFuncs(t)
	require.NotEmpty(t, all, "no product function found under %s", root)
	var long []string
	for _, f := range all {
		if f.Lines > MaxFuncLines {
			long = append(long, fmt.Sprintf("%s %s: %d lines", f.Where, f.Name, f.Lines))
		}
	}
	require.Empty(t, long, "functions longer than %d lines; split them into named steps", MaxFuncLines)
}

// TestFuncLines checks the counting on source whose lengths are known.
func TestFuncLines(t *testing.T) {
	t.Parallel()
	src := "package p\n\n" +
		"func one() {}\n\n" +
		"func three() {\n\tprintln()\n}\n\n" +
		"type T struct{}\n\n" +
		"func (T) m() {\n\n\n}\n\n" +
		"var v = func() {\n}\n"
	got := funcsOf(t, token.NewFileSet(), "p.go", src)
	lines := map[string]int{}
	for _, f := range got {
		lines[f.Name] = f.Lines
	}
	require.Equal(t, map[string]int{"one": 1, "three": 3, "T.m": 4, "func literal": 2}, lines)
}

// productFuncs lists every function of the module's product code.
func productFuncs(t *testing.T) []funcLen {
	t.Helper()
	fset := token.NewFileSet()
	var out []funcLen
	walkGo(t, root, func(rel, _ string) bool { return isTooling(rel) }, func(rel string, src []byte) error {
		out = append(out, funcsOf(t, fset, rel, src)...)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Lines > out[j].Lines })
	return out
}

// walkGo calls visit with each non-test .go file below dir (its path
// relative to dir, slash-separated, and its source), leaving out hidden
// directories, the skipped ones and those prune names (by relative path
// and name).
func walkGo(t *testing.T, dir string, prune func(rel, name string) bool, visit func(rel string, src []byte) error) {
	t.Helper()
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel != "." && (strings.HasPrefix(e.Name(), ".") || skipped[e.Name()] || prune(rel, e.Name())) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return visit(rel, src)
	})
	require.NoError(t, err)
}

func isTooling(rel string) bool {
	for _, dir := range tooling {
		if rel == dir || strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

// funcsOf parses one file (named name, its source src as for
// parser.ParseFile) and measures its
// function declarations and its package-level function literals.
func funcsOf(t *testing.T, fset *token.FileSet, name string, src any) []funcLen {
	t.Helper()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	require.NoError(t, err)
	measure := func(fn string, body *ast.BlockStmt) funcLen {
		open, end := fset.Position(body.Lbrace), fset.Position(body.Rbrace)
		return funcLen{Where: fmt.Sprintf("%s:%d", name, open.Line), Name: fn, Lines: end.Line - open.Line + 1}
	}
	var out []funcLen
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Body != nil {
				out = append(out, measure(funcName(d), d.Body))
			}
		case *ast.GenDecl:
			ast.Inspect(d, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					out = append(out, measure("func literal", lit.Body))
					return false
				}
				return true
			})
		}
	}
	return out
}

func funcName(d *ast.FuncDecl) string {
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return d.Name.Name
	}
	typ := d.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + d.Name.Name
		}
		return d.Name.Name
	}
}
