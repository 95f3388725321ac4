package codeshape

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fakes under internal/fakes stand for AWS. Each writes AWS's limits and
// rules itself, from AWS's documentation: a fake that read them from the
// product (package message, outbox, store/keys) would agree with a wrong
// product rule instead of refusing it. So no file of a fake, its tests
// included, imports a package of this repository's modules other than
// another fake.

const (
	// modulePath is the prefix of every package of the repository's
	// modules (the root module and the public ones such as outbox).
	modulePath = "github.com/hookline/hookline"
	// fakesPath is the prefix of the fakes' packages, which a fake may
	// import (awsfake's protocol helpers, a fake's conformance suite).
	fakesPath = modulePath + "/internal/fakes"
)

// productImports lists the imports of file rel (its source src) that name
// a package of the repository other than a fake, as "rel: path".
func productImports(t *testing.T, rel string, src any) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), rel, src, parser.ImportsOnly)
	require.NoError(t, err)
	var out []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		own := p == modulePath || strings.HasPrefix(p, modulePath+"/")
		fake := p == fakesPath || strings.HasPrefix(p, fakesPath+"/")
		if own && !fake {
			out = append(out, rel+": "+p)
		}
	}
	return out
}

func TestFakesImportNoProduct(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(root, "internal", "fakes")
	var bad []string
	files := 0
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files++
		bad = append(bad, productImports(t, filepath.ToSlash(rel), src)...)
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 10, "no fake found under %s", dir)
	require.Empty(t, bad, "a fake writes AWS's numbers itself, citing AWS's documentation; it does not import the product's")
}

// The check finds an import of the product and of the public outbox
// module, and lets a fake import another fake and any other module.
func TestFakeImportOfProductIsFound(t *testing.T) {
	t.Parallel()
	src := `package sqsfake
import (
	"fmt"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakesy"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/outbox"
)
`
	require.Equal(t, []string{
		"internal/fakes/x/x.go: github.com/hookline/hookline/internal/fakesy",
		"internal/fakes/x/x.go: github.com/hookline/hookline/internal/message",
		"internal/fakes/x/x.go: github.com/hookline/hookline/outbox",
	}, productImports(t, "internal/fakes/x/x.go", src))
}
