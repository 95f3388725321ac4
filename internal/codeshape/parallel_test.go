package codeshape

import (
	"bufio"
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

// A unit test runs in parallel (t.Parallel()) or says why not: a comment
// holding "not parallel", in its doc comment or its body (t.Setenv, a
// process-wide hook, a shared port). The tests that were neither when the
// rule came are listed in serialBaseline, so that the rule holds new tests
// without editing every old one; an entry whose test is gone or now
// parallel is reported in the log, to be removed.

// serialBaseline lists the old serial tests, one "file:TestName" a line,
// file relative to the module root.
const serialBaseline = "testdata/serial_tests.txt"

// serialWhy is what a comment says to exempt a serial test.
const serialWhy = "not parallel"

// serialTests lists the Test functions of file rel (source src) that call
// no t.Parallel() on their *testing.T and carry no comment saying
// serialWhy, as "rel:TestName".
func serialTests(t *testing.T, rel string, src any) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ParseComments|parser.SkipObjectResolution)
	require.NoError(t, err)
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
			continue
		}
		param := testingParam(fn)
		if param == "" || callsParallel(fn.Body, param) || saysWhy(f, fn) {
			continue
		}
		out = append(out, rel+":"+fn.Name.Name)
	}
	return out
}

// testingParam is the name of fn's *testing.T parameter, "" if it has none.
func testingParam(fn *ast.FuncDecl) string {
	ps := fn.Type.Params.List
	if len(ps) != 1 || len(ps[0].Names) != 1 {
		return ""
	}
	star, ok := ps[0].Type.(*ast.StarExpr)
	if !ok {
		return ""
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "T" {
		return ""
	}
	return ps[0].Names[0].Name
}

// callsParallel reports whether body calls param.Parallel() as one of its
// own statements (not a subtest's).
func callsParallel(body *ast.BlockStmt, param string) bool {
	for _, st := range body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			continue
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Parallel" {
			continue
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == param {
			return true
		}
	}
	return false
}

// saysWhy reports whether fn's doc comment or a comment inside it says
// serialWhy.
func saysWhy(f *ast.File, fn *ast.FuncDecl) bool {
	for _, cg := range f.Comments {
		inside := cg.Pos() >= fn.Pos() && cg.End() <= fn.End()
		if (inside || cg == fn.Doc) && strings.Contains(strings.ToLower(cg.Text()), serialWhy) {
			return true
		}
	}
	return false
}

// allSerialTests lists serialTests over every _test.go file of the tree
// but the e2e tests (which share a deployed stack and choose their order
// themselves), sorted.
func allSerialTests(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if e.IsDir() {
			if rel != "." && (strings.HasPrefix(e.Name(), ".") || skipped[e.Name()] || rel == "e2e" || strings.HasPrefix(rel, "e2e/")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out = append(out, serialTests(t, rel, src)...)
		return nil
	})
	require.NoError(t, err)
	sort.Strings(out)
	return out
}

func readBaseline(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(serialBaseline)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out[line] = true
		}
	}
	require.NoError(t, sc.Err())
	return out
}

func TestNewTestsAreParallel(t *testing.T) {
	t.Parallel()
	base := readBaseline(t)
	var fresh []string
	for _, s := range allSerialTests(t) {
		if !base[s] {
			fresh = append(fresh, s)
		}
		delete(base, s)
	}
	if len(base) > 0 {
		stale := make([]string, 0, len(base))
		for s := range base {
			stale = append(stale, s)
		}
		sort.Strings(stale)
		t.Logf("%s lists tests that are gone or now parallel; remove them: %v", serialBaseline, stale)
	}
	require.Empty(t, fresh, "call t.Parallel() first, or say in a comment why the test is %s", serialWhy)
}

// The check finds a serial test, and lets pass a parallel one, one whose
// comment says why not, a subtest's t.Parallel() not counting for its
// parent, and functions that are not tests.
func TestSerialTestIsFound(t *testing.T) {
	t.Parallel()
	src := `package p
import "testing"
func TestParallel(t *testing.T) { t.Parallel() }
// Not parallel: it sets the environment.
func TestSaysWhy(t *testing.T) { t.Setenv("A", "b") }
func TestSaysWhyInside(t *testing.T) {
	// not parallel: one port for all
	_ = t
}
func TestSerial(t *testing.T) { _ = t }
func TestSubtestOnly(t *testing.T) { t.Run("x", func(t *testing.T) { t.Parallel() }) }
func TestMain(m *testing.M) {}
func BenchmarkX(b *testing.B) {}
func helper(t *testing.T) {}
`
	require.Equal(t, []string{"x/p_test.go:TestSerial", "x/p_test.go:TestSubtestOnly"}, serialTests(t, "x/p_test.go", src))
}
