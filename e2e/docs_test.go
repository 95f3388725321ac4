//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/tooling/docexamples"
)

// docExampleTenant is the tenant the HTTP API example of docs/api.md creates.
const docExampleTenant = "acme"

// Every shell example of README.md and docs/*.md runs as written, against
// the stack in the local cloud: the blocks in order (README first, then
// docs/ by name) in one bash session, as a reader pasting them into one
// terminal would, so that a later block uses what an earlier one set ($API,
// $OP, $KEY, $EP: docs/api.md, first of docs/ by name, sets them for the
// examples of docs/operations.md). The session starts with only PATH, HOME and the AWS_ and
// HOOKLINE_ variables of the test; it runs under set -euo pipefail, and
// every curl in a block that runs fails on an HTTP error status
// (docexamples.Parse refuses one that does not). Blocks marked not run are
// listed with their reasons.
//
// It is not parallel: the operations runbook's example redrives the whole
// DLQ and waits for the job to complete, before the parallel tests start.
func TestDocExamples(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq", "aws"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the documents' examples need %s on PATH", tool)
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var run []docexamples.Block
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		blocks, err := docexamples.Parse(rel, src)
		require.NoError(t, err)
		for _, b := range blocks {
			if b.NotRun != "" {
				t.Logf("not run here: %s (%s): %s", b, firstLine(b.Code), b.NotRun)
				continue
			}
			run = append(run, b)
		}
	}
	require.NotEmpty(t, run, "no example to run: the HTTP API example of docs/api.md is gone?")

	// docs/api.md creates the tenant acme, as a reader would on a new stack.
	// On a stack the examples ran on before, the tenant exists (a 409): its
	// record goes, so that the example runs as written again. Its old keys
	// and endpoints stay, unknown to anyone.
	_, err = env.ddb.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
		TableName: &env.out.StateTableName,
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "TENANT#" + docExampleTenant},
			"sk": &types.AttributeValueMemberS{Value: "TENANT"},
		},
	})
	require.NoError(t, err)

	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	marker := "@@example-" + hex.EncodeToString(nonce)
	var script strings.Builder
	script.WriteString("exec 2>&1\n")
	for i, b := range run {
		// A reader's pace, a second between examples: the API limits a
		// tenant's expensive requests (the listings among them) to 5 a
		// second (apiTenantExpensiveRate), which one example stays within
		// but the examples back to back, as one tenant, do not.
		fmt.Fprintf(&script, "sleep 1\nprintf '\\n%s %d start\\n'\n%s\nprintf '\\n%s %d done\\n'\n", marker, i, b.Code, marker, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "examples.sh")
	require.NoError(t, os.WriteFile(path, []byte(script.String()), 0o600))
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-euo", "pipefail", path)
	cmd.Dir = root
	cmd.Env = sessionEnv(os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The whole process group goes on a timeout: curl and sleep included.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runErr := cmd.Run()
	if ctx.Err() != nil {
		runErr = fmt.Errorf("stopped after 10 minutes: %w", runErr)
	}

	outputs, started := splitByMarker(out.String(), marker, len(run))
	for i, b := range run {
		t.Run(b.String(), func(t *testing.T) {
			switch {
			case outputs[i].done:
				t.Logf("%s\n%s", b.Code, outputs[i].text)
			case started[i]:
				t.Errorf("the example failed (%v):\n%s\noutput:\n%s", runErr, b.Code, outputs[i].text)
			default:
				t.Errorf("not reached: an earlier example failed")
			}
		})
	}
	require.NoError(t, runErr, "the session ends without an error")
}

// sessionEnv keeps what a reader's terminal holds: PATH, HOME, locale, and
// the AWS_ and HOOKLINE_ variables (where the local cloud is). Nothing an
// example is expected to set itself.
func sessionEnv(environ []string) []string {
	var keep []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "HOME", name == "TMPDIR", name == "LANG", strings.HasPrefix(name, "LC_"),
			strings.HasPrefix(name, "AWS_"), strings.HasPrefix(name, "HOOKLINE_"):
			keep = append(keep, kv)
		}
	}
	return keep
}

type blockOutput struct {
	text string
	done bool
}

// splitByMarker cuts a session's output into each block's, by the lines
// "<marker> <i> start" and "<marker> <i> done" printed around block i.
func splitByMarker(out, marker string, n int) ([]blockOutput, []bool) {
	outputs, started := make([]blockOutput, n), make([]bool, n)
	current := -1
	var text strings.Builder
	flush := func() {
		if current >= 0 {
			outputs[current].text = strings.TrimSpace(text.String())
		}
		text.Reset()
	}
	for _, line := range strings.Split(out, "\n") {
		var i int
		var what string
		if _, err := fmt.Sscanf(line, marker+" %d %s", &i, &what); err == nil && i >= 0 && i < n {
			switch what {
			case "start":
				flush()
				current, started[i] = i, true
				continue
			case "done":
				outputs[i].done = true
				flush()
				current = -1
				continue
			}
		}
		text.WriteString(line)
		text.WriteByte('\n')
	}
	flush()
	return outputs, started
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
