package hookline_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hooklineModules are this repository's modules, each replaced by its
// folder in the checkout in a new app's go.mod (they are not on the module
// proxy while under test).
var hooklineModules = map[string]string{
	"github.com/hookline/hookline":        "",
	"github.com/hookline/hookline/infra":  "infra",
	"github.com/hookline/hookline/outbox": "outbox",
	"github.com/hookline/hookline/verify": "verify",
}

// TestNewAppFromDocs follows docs/deploying.md's "Add hookline to your own
// CDK app" as a new user does, in a module of its own outside this
// repository's (no go.work): its shell lines, its main.go and cdk.json as
// written, go mod tidy, then cdk synth. The one change is the `go get
// ...@latest`, replaced by a require of the checkout. The synth must build
// the four functions in the new module, and the template hold them. Without
// the doc's tool lines, the synth stops with the error naming the command.
func TestNewAppFromDocs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a new module's functions: not in -short")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "deploying.md"))
	require.NoError(t, err)
	section := docSection(t, string(doc), "## Add hookline to your own CDK app")
	blocks := fencedBlocks(section)
	require.GreaterOrEqual(t, len(blocks["sh"]), 2, "the section's shell blocks: setup, then tidy and synth")
	require.Len(t, blocks["go"], 1, "the section's main.go")
	require.Contains(t, section, "`cdk.json` of `{\"app\": \"go run .\"}`")

	t.Run("as written", func(t *testing.T) {
		app := newApp(t, root, blocks["sh"][0], blocks["go"][0])
		for _, line := range lines(blocks["sh"][1]) {
			if strings.HasPrefix(line, "cdk deploy") {
				continue // needs an AWS account
			}
			run(t, app, root, line)
		}
		var tmpl struct {
			Resources map[string]struct{ Type string }
		}
		raw, err := os.ReadFile(filepath.Join(app, "cdk.out", "Shop.template.json"))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(raw, &tmpl))
		functions := 0
		for _, r := range tmpl.Resources {
			if r.Type == "AWS::Lambda::Function" {
				functions++
			}
		}
		require.Equal(t, 5, functions, "hookline's four functions and the app's producer")
	})

	t.Run("without the tool lines", func(t *testing.T) {
		var setup []string
		for _, line := range lines(blocks["sh"][0]) {
			if !strings.Contains(line, "-tool=") {
				setup = append(setup, line)
			}
		}
		app := newApp(t, root, strings.Join(setup, "\n"), blocks["go"][0])
		run(t, app, root, "go mod tidy")
		cmd := exec.Command("go", "run", ".")
		cmd.Dir, cmd.Env = app, appEnv(app)
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "%s", out)
		require.Contains(t, string(out), "go mod edit -tool=github.com/hookline/hookline/functions/", "the error says how to mend it")
	})
}

// newApp makes a new app's folder from the doc's setup lines and main.go,
// with the go get of hookline replaced by a require of the checkout at root.
func newApp(t *testing.T, root, setup, mainGo string) string {
	t.Helper()
	app := t.TempDir()
	for _, line := range lines(setup) {
		if strings.HasPrefix(line, "go get github.com/hookline/hookline/infra") {
			args := []string{"mod", "edit"}
			for mod, dir := range hooklineModules {
				args = append(args, "-require="+mod+"@v0.0.0-00010101000000-000000000000", "-replace="+mod+"="+filepath.Join(root, dir))
			}
			line = "go " + strings.Join(args, " ")
		}
		run(t, app, root, line)
	}
	require.NoError(t, os.WriteFile(filepath.Join(app, "main.go"), []byte(mainGo), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(app, "cdk.json"), []byte(`{"app": "go run ."}`), 0o644))
	return app
}

// run runs one shell line of the doc in the app's folder; cdk is the
// checkout's pinned CLI on its pinned Node (scripts/cdk.sh, as make runs
// it).
func run(t *testing.T, app, root, line string) {
	t.Helper()
	if strings.HasPrefix(line, "cdk ") {
		line = filepath.Join(root, "scripts", "cdk.sh") + line[len("cdk"):] + " -q"
	}
	cmd := exec.Command("bash", "-c", line)
	cmd.Dir, cmd.Env = app, appEnv(app)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s:\n%s", line, out)
}

// appEnv is the environment of a command in the new app: outside any
// workspace (the checkout's go.work does not apply), its synth output in
// the app's own cdk.out.
func appEnv(app string) []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=", "CDK_OUTDIR="+filepath.Join(app, "cdk.out"))
}

// docSection is the Markdown section of doc under heading, up to the next
// heading of the same level.
func docSection(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, heading+"\n")
	require.GreaterOrEqual(t, i, 0, "docs/deploying.md has %q", heading)
	rest := doc[i+len(heading):]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

var fenceRE = regexp.MustCompile("(?ms)^```(\\w+)\\n(.*?)^```")

// fencedBlocks are the fenced code blocks of a Markdown text by language.
func fencedBlocks(md string) map[string][]string {
	out := map[string][]string{}
	for _, m := range fenceRE.FindAllStringSubmatch(md, -1) {
		out[m[1]] = append(out[m[1]], m[2])
	}
	return out
}

// lines are the non-blank lines of a shell block.
func lines(block string) []string {
	var out []string
	for _, l := range strings.Split(block, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}
