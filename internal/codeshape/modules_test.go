package codeshape

import (
	"encoding/json"
	"go/version"
	"io/fs"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The repository is several modules built together by go.work (root,
// infra/, outbox/, ...): `./...` stops at a nested go.mod, so the Makefile
// lists the workspace's modules and this file holds the layout to what the
// Makefile, the rules above and producers rely on.

// outboxMaxGo is the highest go line outbox/go.mod may have: producers
// import the outbox module and its go line is the least Go they must use.
// Its code needs 1.21 (the max builtin); its requirements are held to
// versions whose own go line is no higher (`go get go@1.21` picks them).
const outboxMaxGo = "1.21"

// cdkModules are the CDK's module path prefixes: the CDK, its constructs,
// its jsii runtime and cdk-nag. Only the infra module requires them.
var cdkModules = []string{"github.com/aws/aws-cdk-go", "github.com/aws/constructs-go", "github.com/aws/jsii-runtime-go", "github.com/cdklabs"}

// goJSON runs the go command with args (an -json edit of a go.mod or
// go.work file) and decodes its output into v.
func goJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out, err := exec.Command("go", args...).Output()
	require.NoError(t, err, "go %s", strings.Join(args, " "))
	require.NoError(t, json.Unmarshal(out, v))
}

// workspaceModules are the directories go.work uses, relative to the root.
func workspaceModules(t *testing.T) []string {
	t.Helper()
	var work struct{ Use []struct{ DiskPath string } }
	goJSON(t, &work, "work", "edit", "-json", filepath.Join(root, "go.work"))
	var dirs []string
	for _, u := range work.Use {
		dirs = append(dirs, filepath.ToSlash(filepath.Clean(u.DiskPath)))
	}
	sort.Strings(dirs)
	return dirs
}

// moduleDirs are the directories under the root that hold a go.mod, relative
// to the root, skipping what productFuncs skips (node_modules holds a go.mod
// only to keep the go command out).
func moduleDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && path != root && (strings.HasPrefix(e.Name(), ".") || skipped[e.Name()]) {
			return filepath.SkipDir
		}
		if !e.IsDir() && e.Name() == "go.mod" {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			dirs = append(dirs, filepath.ToSlash(rel))
			return err
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(dirs)
	return dirs
}

// Every go.mod in the tree is in go.work: a module left out would escape
// `make lint` and `make test-unit`, which cover the workspace's modules.
func TestEveryModuleIsInTheWorkspace(t *testing.T) {
	t.Parallel()
	dirs := moduleDirs(t)
	require.Contains(t, dirs, "outbox", "outbox/go.mod is missing: producers import the outbox module alone")
	require.Contains(t, dirs, "infra", "infra/go.mod is missing: the CDK lives in its own module")
	require.Equal(t, dirs, workspaceModules(t), "the modules in the tree and the ones go.work uses differ")
}

// The function-length rule reaches the product code of every module, not
// only the root's: the walk goes into nested modules.
func TestEveryModuleIsMeasured(t *testing.T) {
	t.Parallel()
	all := productFuncs(t)
	for _, dir := range workspaceModules(t) {
		if dir == "." || isTooling(dir) {
			continue
		}
		found := false
		for _, f := range all {
			found = found || strings.HasPrefix(f.Where, dir+"/")
		}
		require.True(t, found, "no product function of module %s was measured", dir)
	}
}

// modFile is the part of `go mod edit -json` these tests read.
type modFile struct {
	Go      string
	Require []struct {
		Path     string
		Indirect bool
	}
}

// The outbox module stays cheap to import: a low go line, the SDK's
// DynamoDB types and testify (its tests) for requirements, nothing of the
// CDK and not the root module.
func TestOutboxModuleIsSmall(t *testing.T) {
	t.Parallel()
	var mod modFile
	goJSON(t, &mod, "mod", "edit", "-json", filepath.Join(root, "outbox", "go.mod"))
	require.LessOrEqual(t, version.Compare("go"+mod.Go, "go"+outboxMaxGo), 0,
		"outbox/go.mod says go %s: a producer importing outbox would need it; keep requirements at versions whose go line is at most %s", mod.Go, outboxMaxGo)
	var direct []string
	for _, r := range mod.Require {
		if !r.Indirect {
			direct = append(direct, r.Path)
		}
		require.NotEqual(t, "github.com/hookline/hookline", r.Path, "outbox must not require the root module")
		for _, c := range cdkModules {
			require.False(t, strings.HasPrefix(r.Path, c), "outbox requires %s", r.Path)
		}
	}
	require.ElementsMatch(t, []string{"github.com/aws/aws-sdk-go-v2", "github.com/aws/aws-sdk-go-v2/service/dynamodb", "github.com/stretchr/testify"}, direct)
}

// The root module (functions, internal, tooling, e2e) requires nothing of
// the CDK: that is infra's module.
func TestRootModuleRequiresNoCDK(t *testing.T) {
	t.Parallel()
	var mod modFile
	goJSON(t, &mod, "mod", "edit", "-json", filepath.Join(root, "go.mod"))
	require.NotEmpty(t, mod.Require)
	for _, r := range mod.Require {
		for _, c := range cdkModules {
			require.False(t, strings.HasPrefix(r.Path, c), "the root module requires %s: CDK requirements belong in infra/go.mod", r.Path)
		}
	}
}
