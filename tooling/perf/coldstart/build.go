package coldstart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Version is the value Build gives sender.Version, which `make build` sets
// from `git describe`: only the bytes of this string differ from a release
// build.
const Version = "coldstart"

// buildArgs are the arguments of `go build` in the Makefile's build target,
// in its order: the lambda.norpc tag, -trimpath and LDFLAGS.
var buildArgs = []string{
	"-tags", "lambda.norpc", "-trimpath",
	"-ldflags", "-s -w -X github.com/hookline/hookline/internal/sender.Version=" + Version,
}

// Build builds the main package in the directory pkgDir into
// dir/bootstrap-<base name of pkgDir> with the flags of `make build`
// (CGO_ENABLED=0, GOOS=linux, -tags lambda.norpc, -trimpath,
// -ldflags "-s -w -X ...sender.Version=..."), for the architecture of
// this machine, as `make build-local` does. It returns the binary's path
// and size in bytes. The go command is the one on PATH, like the Makefile's
// default $(GO).
func Build(ctx context.Context, dir, pkgDir string) (path string, size int64, err error) {
	dir, err = filepath.Abs(dir)
	if err != nil {
		return "", 0, err
	}
	path = filepath.Join(dir, "bootstrap-"+filepath.Base(filepath.Clean(pkgDir)))
	args := append([]string{"build"}, buildArgs...)
	args = append(args, "-o", path, ".")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = pkgDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("go build %s: %w: %s", pkgDir, err, strings.TrimSpace(out.String()))
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	return path, fi.Size(), nil
}
