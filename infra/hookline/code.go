package hookline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// Code supplies the deployment package of each hookline function: one
// `bootstrap` executable for the provided.al2023 runtime.
type Code interface {
	// FunctionCode returns the code of the function name ("enqueue",
	// "deliver", "api" or "replay") for architecture ("arm64" or
	// "x86_64"), or an error saying why there is none. New asks for all
	// four before it creates any resource.
	FunctionCode(name, architecture string) (awslambda.Code, error)
}

// FunctionPackage is the Go package of the hookline function name
// ("enqueue", "deliver", "api", "replay"): what BuildFromSource builds.
func FunctionPackage(name string) string {
	return "github.com/hookline/hookline/functions/" + name
}

// CodeFromDir deploys binaries built beforehand: dir/<name>/bootstrap for
// each function, as `make build ARCH=<architecture>` writes them to
// dist/<architecture>. An empty dir means "dist/<architecture>". A missing
// bootstrap is an error naming it and how to build it.
func CodeFromDir(dir string) Code { return dirCode{dir: dir} }

type dirCode struct{ dir string }

func (c dirCode) FunctionCode(name, architecture string) (awslambda.Code, error) {
	dir, err := c.FunctionDir(name, architecture)
	if err != nil {
		return nil, err
	}
	return awslambda.Code_FromAsset(jsii.String(dir), nil), nil
}

// FunctionDir is dir/<name> (CodeDir), when its bootstrap is there.
func (c dirCode) FunctionDir(name, architecture string) (string, error) {
	dir := c.dir
	if dir == "" {
		dir = filepath.Join("dist", architecture)
	}
	path := filepath.Join(dir, name, "bootstrap")
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
		return "", fmt.Errorf("%s is missing: run `make build ARCH=%s` first", path, architecture)
	}
	return filepath.Dir(path), nil
}

// BuildFromSource builds each function at synth time with the go command:
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=<arm64|amd64> go build -tags lambda.norpc \
//	    -trimpath -ldflags "-s -w" -o <cache>/bootstrap github.com/hookline/hookline/functions/<name>
//
// run in dir (empty: the directory the CDK app runs in, where cdk.json is).
// The module there must have hookline in its build list, as an app that
// imports this package does. Nothing runs in Docker: the build is plain Go,
// done before any asset is staged, so a missing go command or a failed
// build is an error from New, not a CDK bundling fallback. The binaries go
// to a folder under the user's cache directory; each is built once per
// process, and Go's build cache makes a second synth fast.
func BuildFromSource(dir string) Code { return sourceCode{dir: dir} }

type sourceCode struct{ dir string }

// builds memoizes BuildFromSource's binaries within one process (two
// hookline instances in one app build each function once).
var builds sync.Map // key string → *buildResult

type buildResult struct {
	once sync.Once
	dir  string
	err  error
}

func (c sourceCode) FunctionCode(name, architecture string) (awslambda.Code, error) {
	dir, err := c.FunctionDir(name, architecture)
	if err != nil {
		return nil, err
	}
	return awslambda.Code_FromAsset(jsii.String(dir), nil), nil
}

// FunctionDir builds the function (once per process) and answers the
// folder of its bootstrap (CodeDir).
func (c sourceCode) FunctionDir(name, architecture string) (string, error) {
	goarch := map[string]string{"arm64": "arm64", "x86_64": "amd64"}[architecture]
	if goarch == "" {
		return "", fmt.Errorf("architecture %q: want arm64 or x86_64", architecture)
	}
	dir, err := filepath.Abs(c.dir)
	if err != nil {
		return "", err
	}
	v, _ := builds.LoadOrStore(dir+"\x00"+name+"\x00"+goarch, &buildResult{})
	r := v.(*buildResult)
	r.once.Do(func() { r.dir, r.err = goBuild(dir, name, goarch) })
	return r.dir, r.err
}

// goBuild builds the function name for linux/goarch in moduleDir, into a
// folder of its own, and returns that folder.
func goBuild(moduleDir, name, goarch string) (string, error) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("building the hookline %s function from source needs the go command on PATH (or set Props.Code, e.g. hookline.CodeFromDir): %w", name, err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256([]byte(moduleDir))
	out := filepath.Join(cache, "hookline-build", hex.EncodeToString(sum[:8]), goarch, name)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", fmt.Errorf("build the hookline %s function: %w", name, err)
	}
	cmd := exec.Command(gocmd, "build", "-tags", "lambda.norpc", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w",
		"-o", filepath.Join(out, "bootstrap"), FunctionPackage(name))
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+goarch)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s for linux/%s in %s: %w: %s (%s)",
			FunctionPackage(name), goarch, moduleDir, err, strings.TrimSpace(stderr.String()), buildHint(stderr.String()))
	}
	return out, nil
}

// toolsCommand is the command that makes an app's module hold the functions'
// dependencies: each function named as a tool of the module (docs/deploying.md).
func toolsCommand() string {
	cmd := "go mod edit"
	for _, name := range functionNames {
		cmd += " -tool=" + FunctionPackage(name)
	}
	return cmd + " && go mod tidy"
}

// buildHint says how to mend the failed build whose go command wrote stderr.
// The go command's words for a module that lacks the functions' dependencies
// are "missing go.sum entry" and "no required module provides package".
func buildHint(stderr string) string {
	if strings.Contains(stderr, "missing go.sum entry") || strings.Contains(stderr, "no required module provides package") {
		return "the app's module must name hookline's functions as tools, so that its go.sum holds their dependencies: run `" + toolsCommand() + "` in it; or set Props.Code"
	}
	return "the app's module must require github.com/hookline/hookline; or set Props.Code"
}
