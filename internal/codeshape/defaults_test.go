package codeshape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// literal reports whether an expression is written with literals only (a
// number, a string, time.Second and the like, joined by operators): the
// spelling of a value, not a reference to a constant that holds one.
func literal(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return literal(x.X)
	case *ast.UnaryExpr:
		return literal(x.X)
	case *ast.BinaryExpr:
		return literal(x.X) && literal(x.Y)
	case *ast.SelectorExpr:
		pkg, ok := x.X.(*ast.Ident)
		return ok && pkg.Name == "time"
	}
	return false
}

// spelling is where a default's value is written as a literal: name is
// the default and its value ("DefaultX = 15 * time.Second"), so that two
// defaults of one name and different meanings (two packages' MaxAge) are
// apart.
type spelling struct{ name, at string }

// defaultSpellings lists, over every product and tooling file of the tree
// (the infra module included), the constants named Default* whose value is
// a literal, and the assignments p.X = <literal> inside functions whose
// name says they apply defaults (setXDefaults, withDefaults, ...), each as
// the default it names (DefaultX).
func defaultSpellings(t *testing.T, dir string) []spelling {
	t.Helper()
	fset := token.NewFileSet()
	var out []spelling
	walkGo(t, dir, func(_, name string) bool { return name == "e2e" }, func(rel string, src []byte) error {
		f, err := parser.ParseFile(fset, rel, src, 0)
		if err != nil {
			return err
		}
		out = append(out, spellingsOf(fset, f)...)
		return nil
	})
	return out
}

func spellingsOf(fset *token.FileSet, f *ast.File) []spelling {
	var out []spelling
	ast.Inspect(f, func(n ast.Node) bool {
		switch d := n.(type) {
		case *ast.ValueSpec:
			for i, name := range d.Names {
				if strings.HasPrefix(name.Name, "Default") && i < len(d.Values) && literal(d.Values[i]) {
					out = append(out, spelling{name.Name + " = " + types.ExprString(d.Values[i]), fset.Position(name.Pos()).String()})
				}
			}
		case *ast.FuncDecl:
			if strings.Contains(d.Name.Name, "Defaults") && d.Body != nil {
				out = append(out, assignedDefaults(fset, d.Body)...)
			}
			return true
		}
		return true
	})
	return out
}

// assignedDefaults are the x.Field = <literal> assignments of a function
// that applies defaults, as DefaultField.
func assignedDefaults(fset *token.FileSet, body *ast.BlockStmt) []spelling {
	var out []spelling
	ast.Inspect(body, func(n ast.Node) bool {
		a, ok := n.(*ast.AssignStmt)
		if !ok || len(a.Lhs) != 1 || len(a.Rhs) != 1 || !literal(a.Rhs[0]) {
			return true
		}
		if sel, ok := a.Lhs[0].(*ast.SelectorExpr); ok {
			out = append(out, spelling{"Default" + sel.Sel.Name + " = " + types.ExprString(a.Rhs[0]), fset.Position(a.Pos()).String()})
		}
		return true
	})
	return out
}

// twice lists the defaults written as a literal in more than one place.
func twice(spellings []spelling) map[string][]string {
	at := map[string][]string{}
	for _, s := range spellings {
		at[s.name] = append(at[s.name], s.at)
	}
	for name, places := range at {
		if len(places) < 2 {
			delete(at, name)
			continue
		}
		sort.Strings(places)
	}
	return at
}

// Every default has one literal: a Default* constant written twice (the
// functions' fnenv and a handler's own, say), or a default the construct
// applies as a literal where a Default* constant of that name exists, fails
// with the places. The rest name the constant (internal/domain/defaults.go
// holds the shared ones).
func TestEveryDefaultIsSpelledOnce(t *testing.T) {
	t.Parallel()
	require.Empty(t, twice(defaultSpellings(t, root)), "defaults spelled in more than one place: write the literal once and name the constant elsewhere")
}

// The check finds a default spelled twice: a constant written again, and a
// construct default applied as a literal beside a constant of its name.
func TestDefaultSpelledTwiceIsFound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"a/a.go": "package a\n\nimport \"time\"\n\nconst DefaultRequestTimeout = 15 * time.Second\n",
		"b/b.go": "package b\n\nimport \"time\"\n\nconst DefaultRequestTimeout = 15 * time.Second\n",
		"c/c.go": "package c\n\nconst DefaultDisableAfter = 50\n\ntype P struct{ DisableAfter, Named int }\n\n" +
			"func (p *P) setHealthDefaults() {\n\tif p.DisableAfter == 0 {\n\t\tp.DisableAfter = 50\n\t}\n\tp.Named = DefaultDisableAfter\n}\n",
	}
	for name, src := range files {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	got := twice(defaultSpellings(t, dir))
	require.Len(t, got, 2, "%v", got)
	require.Len(t, got["DefaultRequestTimeout = 15 * time.Second"], 2)
	require.Len(t, got["DefaultDisableAfter = 50"], 2)
}
