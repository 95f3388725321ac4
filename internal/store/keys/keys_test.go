package keys

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// prefixLiteral matches a string literal that begins with a key prefix, as
// "TENANT#" or "DELIVERY#" do.
var prefixLiteral = regexp.MustCompile(`"[A-Z][A-Z_]*#`)

// TestPrefixesOnlyHere fails when a key prefix literal is spelled in a
// non-test file of the store or storefake: keys are built in this package.
func TestPrefixesOnlyHere(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{"..", "../storefake"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		files = append(files, m...)
	}
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, line := range strings.Split(string(src), "\n") {
			if m := prefixLiteral.FindString(line); m != "" {
				t.Errorf("%s:%d: key prefix %s spelled outside internal/store/keys", f, i+1, m)
			}
		}
	}
}

// capsLiteral is a whole string literal of three or more capitals (and
// underscores): the shape of every sort key ("DELIVERY", "ERASED") and
// index-partition suffix ("KEYS", "DEADWINDOWS") of the table.
var capsLiteral = regexp.MustCompile(`^[A-Z][A-Z_]{2,}$`)

// notKeys are the all-capital words the store may spell that name no key:
// DynamoDB enum values, should a call spell one as a string rather than
// through the SDK's constants (types.ReturnValueAllNew and the like). The
// list is short on purpose: a word added here must not be a key.
var notKeys = map[string]string{
	"ALL_NEW":     "types.ReturnValue",
	"ALL_OLD":     "types.ReturnValue",
	"UPDATED_NEW": "types.ReturnValue",
	"NONE":        "types.ReturnValue, types.ReturnConsumedCapacity",
	"TOTAL":       "types.ReturnConsumedCapacity",
	"INDEXES":     "types.ReturnConsumedCapacity",
}

// storeFiles are the non-test Go files of the store and storefake.
func storeFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"..", "../storefake"} {
		m, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	require.NotEmpty(t, files)
	return files
}

// stringLits calls fn with each string literal of file f (comments are
// not literals) and its position.
func stringLits(t *testing.T, fset *token.FileSet, f *ast.File, fn func(string, token.Position)) {
	t.Helper()
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		require.NoError(t, err, fset.Position(lit.Pos()).String())
		fn(v, fset.Position(lit.Pos()))
		return true
	})
}

// TestKeyWordsOnlyHere fails when a sort key or an index-partition suffix
// (an all-capital literal such as "DELIVERY" or "KEYS") is spelled in a
// non-test file of the store or storefake: they are named in this package.
func TestKeyWordsOnlyHere(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	for _, name := range storeFiles(t) {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, e := range keyWords(t, fset, f) {
			t.Error(e)
		}
	}
}

// keyWords lists the key literals of file f: its all-capital string
// literals not in notKeys.
func keyWords(t *testing.T, fset *token.FileSet, f *ast.File) []string {
	t.Helper()
	var out []string
	stringLits(t, fset, f, func(v string, at token.Position) {
		if _, ok := notKeys[v]; !ok && capsLiteral.MatchString(v) {
			out = append(out, fmt.Sprintf("%s: key literal %q spelled outside internal/store/keys", at, v))
		}
	})
	return out
}

// literalSuffixes lists the calls of TenantIndex in file f with a string
// literal in their suffix.
func literalSuffixes(fset *token.FileSet, f *ast.File) (out []string, calls int) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "TenantIndex" {
			return true
		}
		calls++
		ast.Inspect(call.Args[1], func(a ast.Node) bool {
			if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				out = append(out, fmt.Sprintf("%s: keys.TenantIndex with the literal suffix %s: add a builder to internal/store/keys", fset.Position(lit.Pos()), lit.Value))
			}
			return true
		})
		return true
	})
	return out, calls
}

// The two checks find what they are for, and only that: a literal in a
// comment, an allowed enum word, a lower-case attribute name, a prefix
// with its '#' (TestPrefixesOnlyHere's) and a suffix held in a variable
// pass.
func TestChecksFindLiterals(t *testing.T) {
	t.Parallel()
	src := `package store

// The sort key "DELIVERY" in a comment is no literal.
var (
	sk     = "DELIVERY"
	rv     = "ALL_NEW"
	attr   = "dead_sk"
	short  = "ID"
	prefix = "TENANT#"
	a      = keys.TenantIndex(t, "KEYS")
	b      = keys.TenantIndex(t, "DEAD#"+strconv.Itoa(n))
	c      = keys.TenantIndex(t, suffix)
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	require.NoError(t, err)
	words := keyWords(t, fset, f)
	require.Len(t, words, 2, "%q", words)
	require.Contains(t, words[0], `"DELIVERY"`)
	require.Contains(t, words[1], `"KEYS"`)
	suffixes, calls := literalSuffixes(fset, f)
	require.Equal(t, 3, calls)
	require.Len(t, suffixes, 2, "%q", suffixes)
	require.Contains(t, suffixes[0], `"KEYS"`)
	require.Contains(t, suffixes[1], `"DEAD#"`)
}

// TestNoLiteralIndexSuffix fails when a non-test file outside this package
// calls keys.TenantIndex with a literal in its suffix: each index
// partition has a builder here (KeysIndex, DeadIndex, ...).
func TestNoLiteralIndexSuffix(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..", "..")
	_, err := os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository's root")
	self, err := filepath.Abs(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	calls := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "cdk.out", "dist", ".local", ".venv", "vendor":
				return filepath.SkipDir
			}
			if abs, _ := filepath.Abs(path); abs == self {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !strings.Contains(string(src), "TenantIndex(") {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found, n := literalSuffixes(fset, f)
		calls += n
		for _, e := range found {
			t.Error(e)
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("%d calls of TenantIndex outside package keys", calls)
}

func TestBuilders(t *testing.T) {
	t.Parallel()
	require.Equal(t, "TENANT#t1", Tenant("t1"))
	require.Equal(t, "TENANT#t1#DEAD", TenantIndex("t1", "DEAD"))
	require.Equal(t, "TENANT#t1#DEAD#15", DeadShard("t1", 15))
	require.Equal(t, "TENANT#t1#DLOG#15", LogShard("t1", 15))
	require.Equal(t, "ENDPOINT#e1", Endpoint("e1"))
	require.Equal(t, "DELIVERY#d1", Delivery("d1"))
	require.Equal(t, "GATE#t1#e1", Gate("t1", "e1"))
	require.Equal(t, "DEADWINDOW#t1#e1#s", DeadWindow("t1", "e1", "s"))
}

// The key words are data in deployed tables: renaming one loses every item
// written under it.
func TestKeyWordsPinned(t *testing.T) {
	t.Parallel()
	for want, got := range map[string]string{
		"TENANT": TenantSK, "ERASED": TombstoneSK, "REPLAYJOBS": OpenJobsSK,
		"DELIVERY": DeliverySK, "APIKEY": APIKeySK, "PORTAL": PortalSK,
		"REJECTED": RejectedSK, "REPLAYJOB": JobSK, "GATE": GateSK,
		"DEADWINDOW": DeadWindowSK, "DLQDEPTH": DepthSK,
		"REPLAY": SweepPK, "SWEEP": SweepSK,
		"TENANT#t1#KEYS":        KeysIndex("t1"),
		"TENANT#t1#PORTAL":      PortalIndex("t1"),
		"TENANT#t1#DEAD":        DeadIndex("t1"),
		"TENANT#t1#REJECTED":    RejectedIndex("t1"),
		"TENANT#t1#JOBS":        JobsIndex("t1"),
		"TENANT#t1#DEADWINDOWS": DeadWindowsIndex("t1"),
		"TENANT#t1#DLQDEPTH#7":  DepthShard("t1", 7),
		"DLQDEPTH#31":           DepthIndex(31),
	} {
		require.Equal(t, want, got)
	}
}

// A "<time>#<id>" sort key sorts in time order, to the nanosecond, whatever
// the time's zone, then by id.
func TestTimeIDSortsInTimeOrder(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 12, 0, 5, 0, time.UTC)
	require.Equal(t, "2026-12-01T12:00:05.000000000Z#d_1", TimeID(at, "d_1"))
	require.Equal(t, TimeID(at, "d_1"), TimeID(at.In(time.FixedZone("X", 3600)), "d_1"), "written in UTC")
	require.Less(t, TimeID(at, "d_2"), TimeID(at.Add(time.Nanosecond), "d_1"))
	require.Less(t, TimeID(at, "d_1"), TimeID(at, "d_2"))
}
