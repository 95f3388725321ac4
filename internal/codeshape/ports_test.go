package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/require"
)

// MaxPortMethods is the most methods a product interface (a port) may
// declare itself; a consumer that needs more composes small ports into one
// interface by embedding them.
const MaxPortMethods = 4

// wideAdapters are the interfaces allowed wider than a port: a client an
// adapter wraps whole (the store's DynamoDB calls), not a consumer's need.
var wideAdapters = map[string]bool{
	"internal/store/store.go:DynamoDB": true,
}

// wideInterfaces returns the interfaces of one file that declare more than
// MaxPortMethods methods, as "file:Name (n methods)".
func wideInterfaces(t *testing.T, rel string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	require.NoError(t, err)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		it, ok := ts.Type.(*ast.InterfaceType)
		if !ok {
			return true
		}
		m := 0
		for _, field := range it.Methods.List {
			if _, isFunc := field.Type.(*ast.FuncType); isFunc {
				m += len(field.Names)
			}
		}
		if m > MaxPortMethods && !wideAdapters[rel+":"+ts.Name.Name] {
			out = append(out, fmt.Sprintf("%s:%s (%d methods)", rel, ts.Name.Name, m))
		}
		return true
	})
	return out
}

// Every product port declares at most MaxPortMethods methods: a consumer
// composes small ports (as api.Store and background.Store do).
func TestPortsAreSmall(t *testing.T) {
	t.Parallel()
	var wide []string
	walkGo(t, root, func(rel, _ string) bool { return isTooling(rel) || rel == "internal/fakes" }, func(rel string, src []byte) error {
		wide = append(wide, wideInterfaces(t, rel, src)...)
		return nil
	})
	require.Empty(t, wide, "compose them of ports of at most %d methods", MaxPortMethods)
}

// The check finds a wide port, and counts embedded ports as none of its
// own methods.
func TestWidePortIsFound(t *testing.T) {
	t.Parallel()
	src := `package p
type Small interface{ A(); B() }
type Composed interface{ Small; C(); D(); E() }
type Wide interface{ A(); B(); C(); D(); E() }
`
	require.Equal(t, []string{"x/p.go:Wide (5 methods)"}, wideInterfaces(t, "x/p.go", src))
}
