package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
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

// MaxComposedMethods is the most methods an interface may have in all, its
// embedded ports' methods counted (each once): the whole of what one
// consumer may ask of its dependencies through one port. It is a ratchet
// at the widest composed port when it was set, api.Store's 27 (the API's
// routes over the state table; background.Store has 26, deliver.Store 17,
// enqueue.Store 4; reflect's NumMethod agrees with this count on each). No
// consumer may widen past it: one more method on the widest is a sign it
// serves several handler groups, and its port is split by group (the
// api's routes, the worker's job kinds) rather than this raised. Lower it
// as the wide ones are split.
const MaxComposedMethods = 27

// module is this module's import path, the prefix of its packages'.
const module = "github.com/hookline/hookline"

// iface is one interface declaration: its own methods' names and the
// interfaces it embeds, as "dir.Name".
type iface struct {
	methods []string
	embeds  []string
	// foreign are embedded interfaces of other modules, which the count
	// cannot read.
	foreign []string
}

// interfacesOf adds the interface declarations of one file (its path rel,
// relative to the module root) to all, keyed "dir.Name".
func interfacesOf(t *testing.T, rel string, src any, all map[string]iface) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.SkipObjectResolution)
	require.NoError(t, err)
	dir := path.Dir(rel)
	imports := map[string]string{}
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		imports[name] = p
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, s := range gd.Specs {
			ts, ok := s.(*ast.TypeSpec)
			if !ok {
				continue
			}
			it, ok := ts.Type.(*ast.InterfaceType)
			if !ok {
				continue
			}
			var in iface
			for _, field := range it.Methods.List {
				switch x := field.Type.(type) {
				case *ast.FuncType:
					for _, n := range field.Names {
						in.methods = append(in.methods, n.Name)
					}
				case *ast.Ident:
					in.embeds = append(in.embeds, dir+"."+x.Name)
				case *ast.SelectorExpr:
					pkg, _ := x.X.(*ast.Ident)
					if pkg == nil {
						continue
					}
					p := imports[pkg.Name]
					if rest, ok := strings.CutPrefix(p, module+"/"); ok {
						in.embeds = append(in.embeds, rest+"."+x.Sel.Name)
					} else {
						in.foreign = append(in.foreign, p+"."+x.Sel.Name)
					}
				}
				// Anything else is a type constraint's term, no method.
			}
			all[dir+"."+ts.Name.Name] = in
		}
	}
}

// methodSet is the names of all of key's methods, its embedded ports'
// included; foreign collects the embedded interfaces it cannot read.
func methodSet(all map[string]iface, key string, set map[string]bool, foreign *[]string) {
	in := all[key]
	for _, m := range in.methods {
		set[m] = true
	}
	*foreign = append(*foreign, in.foreign...)
	for _, e := range in.embeds {
		methodSet(all, e, set, foreign)
	}
}

// composedWidths returns the interfaces that embed others, with their
// whole method sets' sizes, and those that embed an interface of another
// module (whose methods the count cannot see).
func composedWidths(all map[string]iface) (widths map[string]int, foreign []string) {
	widths = map[string]int{}
	for key, in := range all {
		if len(in.embeds) == 0 && len(in.foreign) == 0 {
			continue
		}
		set := map[string]bool{}
		var f []string
		methodSet(all, key, set, &f)
		widths[key] = len(set)
		for _, x := range f {
			foreign = append(foreign, key+" embeds "+x)
		}
	}
	return widths, foreign
}

// Every composed port has at most MaxComposedMethods methods in all, its
// embedded ports' counted: the small ports rule (TestPortsAreSmall) alone
// would let a consumer embed any number of them.
func TestComposedPortsAreBounded(t *testing.T) {
	t.Parallel()
	all := map[string]iface{}
	walkGo(t, root, func(rel, _ string) bool { return isTooling(rel) || rel == "internal/fakes" }, func(rel string, src []byte) error {
		interfacesOf(t, rel, src, all)
		return nil
	})
	widths, foreign := composedWidths(all)
	var wide []string
	for key, n := range widths {
		if n > MaxComposedMethods {
			wide = append(wide, fmt.Sprintf("%s (%d methods)", key, n))
		}
	}
	slices.Sort(wide)
	require.Empty(t, wide, "split them by handler group: at most %d methods in all", MaxComposedMethods)
	require.Empty(t, foreign, "a port embeds only this module's ports, whose methods are counted")
	// The ports the rule was set against are found and counted.
	for key, least := range map[string]int{"internal/deliver.Store": 10, "internal/api.Store": 10, "internal/background.Store": 10} {
		require.GreaterOrEqual(t, widths[key], least, "%s: %v", key, widths)
	}
	t.Logf("composed ports: %v", widths)
}

// The count includes embedded ports, across packages and at any depth,
// each method once.
func TestComposedPortIsCounted(t *testing.T) {
	t.Parallel()
	all := map[string]iface{}
	interfacesOf(t, "x/q/q.go", `package q
type Two interface{ A(); B() }
`, all)
	interfacesOf(t, "x/p/p.go", `package p
import (
	"io"
	"github.com/hookline/hookline/x/q"
)
type Small interface{ C(); D() }
type Mid interface{ Small; q.Two }
type Top interface{ Mid; q.Two; E() }
type Foreign interface{ io.Reader }
type Constraint interface{ ~int | ~string }
`, all)
	widths, foreign := composedWidths(all)
	require.Equal(t, map[string]int{"x/p.Mid": 4, "x/p.Top": 5, "x/p.Foreign": 0}, widths)
	require.Equal(t, []string{"x/p.Foreign embeds io.Reader"}, foreign)
}
