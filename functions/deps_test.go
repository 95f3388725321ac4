// Package functions_test holds what is true of every function binary at once:
// the product links no tooling.
package functions_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// module is this repository's module path.
const module = "github.com/hookline/hookline"

// functions are the Lambda binaries `make build` ships.
var functions = []string{"api", "deliver", "enqueue", "replay"}

// forbidden are the import paths no product binary may link, with the
// packages under them: the
// tooling tree, the repository's other programs and tests, the CDK app and the
// CDK's Go runtime (jsii starts a Node.js process), and the browser driver of
// the console's tests (chromedp); the fakes of AWS services the tests use
// (internal/fakes).
var forbidden = []string{
	module + "/tooling",
	module + "/e2e",
	module + "/infra",
	module + "/scripts",
	module + "/internal/store/storetest",
	module + "/internal/store/storefake",
	module + "/internal/fakes",
	"github.com/aws/aws-cdk-go",
	"github.com/aws/jsii-runtime-go",
	"github.com/aws/constructs-go",
	"github.com/cdklabs",
	"github.com/chromedp",
}

// listing maps a package to every package it links, as `go list -deps` sees it.
type listing map[string][]string

// forbiddenLinks returns, for each package of l, the forbidden packages it
// links, sorted; packages that link none are left out.
func forbiddenLinks(l listing) map[string][]string {
	bad := map[string][]string{}
	for pkg, deps := range l {
		for _, d := range deps {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					bad[pkg] = append(bad[pkg], d)
					break
				}
			}
		}
		sort.Strings(bad[pkg])
	}
	for pkg, deps := range bad {
		if len(deps) == 0 {
			delete(bad, pkg)
		}
	}
	return bad
}

// goList runs `go list` on patterns with the tags of `make build` and returns
// each main package with its dependencies.
func goList(t *testing.T, patterns ...string) listing {
	t.Helper()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list what the functions link")
	args := append([]string{"list", "-tags", "lambda.norpc", "-f", `{{if eq .Name "main"}}{{.ImportPath}} {{join .Deps " "}}{{end}}`}, patterns...)
	cmd := exec.Command(goBin, args...)
	cmd.Env = append(cmd.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	l := listing{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			l[f[0]] = f[1:]
		}
	}
	require.NoError(t, sc.Err())
	return l
}

// No function binary links tooling, the other programs, the e2e tests, infra
// or the CDK: the product is built from functions/, internal/ and outbox/.
func TestFunctionsLinkNoTooling(t *testing.T) {
	t.Parallel()
	l := goList(t, "./...")
	for _, fn := range functions {
		deps, ok := l[module+"/functions/"+fn]
		require.True(t, ok, "go list did not list function %s", fn)
		require.Contains(t, deps, module+"/internal/boot", "function %s: the listing lacks what every function links", fn)
	}
	require.Empty(t, forbiddenLinks(l), "function binaries link tooling or the CDK")
}

// The operator's commands under scripts/ run against production: like the
// functions, they link no tooling.
func TestOperatorCommandsLinkNoTooling(t *testing.T) {
	t.Parallel()
	l := goList(t, "../scripts/...")
	require.Contains(t, l, module+"/scripts/enqueuereprocess")
	require.Contains(t, l, module+"/scripts/sealsecrets")
	for pkg, deps := range l {
		var bad []string
		for _, d := range deps {
			if strings.HasPrefix(d, module+"/tooling/") || strings.HasPrefix(d, module+"/e2e") {
				bad = append(bad, d)
			}
		}
		require.Empty(t, bad, "operator command %s links tooling", pkg)
	}
}

// The producers' library (package outbox, which producers link) links the
// SDK's DynamoDB types only, not its client: the one-off put hookline's own
// writers make is internal/outboxwrite's, with the library's condition.
func TestOutboxLinksNoDynamoDBClient(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command is needed to list what the outbox links")
	var stderr bytes.Buffer
	cmd := exec.Command(goBin, "list", "-deps", module+"/outbox")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/aws/aws-sdk-go-v2/service/dynamodb/types")
	require.NotContains(t, deps, "github.com/aws/aws-sdk-go-v2/service/dynamodb")
}

// sdkService is the import path of the AWS SDK's service packages.
const sdkService = "github.com/aws/aws-sdk-go-v2/service/"

// services are the AWS SDK services each function may link: those it calls,
// and DynamoDB Streams' types, which the SDK's attributevalue links. Each
// service package runs its init (its schemas and endpoint tables, 0.2 to
// 1.5 ms apiece) at every cold start, whether its client is used or not, and
// no lazy client can defer that: only not importing the service helps
// (docs/performance.md, "Cold start"). The api validates AWS destinations
// with internal/destination/arn, not internal/destination, whose sender
// links STS, SNS and EventBridge.
var services = map[string][]string{
	"api":     {"cloudwatch", "dynamodb", "dynamodbstreams", "kms", "secretsmanager", "sqs"},
	"deliver": {"dynamodb", "dynamodbstreams", "eventbridge", "kms", "sns", "sqs", "sts"},
	"enqueue": {"dynamodb", "dynamodbstreams", "eventbridge", "sqs"},
	"replay":  {"dynamodb", "dynamodbstreams", "sqs"},
}

// linkedServices returns the AWS SDK services deps link, sorted, each once:
// the service's name under sdkService, without the SDK's shared helpers
// (service/internal/...).
func linkedServices(deps []string) []string {
	var out []string
	for _, d := range deps {
		rest, ok := strings.CutPrefix(d, sdkService)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "/")
		if name != "internal" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// No function links an AWS SDK service it does not call: a new one is a
// cold start cost to decide on, and to add to services above, not to pick
// up by importing a package that happens to link it.
func TestFunctionsLinkOnlyTheServicesTheyCall(t *testing.T) {
	t.Parallel()
	l := goList(t, "./...")
	for _, fn := range functions {
		deps, ok := l[module+"/functions/"+fn]
		require.True(t, ok, "go list did not list function %s", fn)
		require.Equal(t, services[fn], linkedServices(deps),
			"function %s links other AWS SDK services than it calls: each service package's init is paid at every cold start "+
				"(docs/performance.md, \"Cold start\"); import what does not link it (the api checks ARNs with internal/destination/arn), "+
				"or, if the function now calls the service, add it to services and measure the cold start", fn)
	}
}

// linkedServices names each service once, without the SDK's shared
// helpers, so that the test above can fail.
func TestLinkedServices(t *testing.T) {
	t.Parallel()
	deps := []string{
		"fmt",
		sdkService + "sts", sdkService + "sts/types", sdkService + "sts/internal/endpoints",
		sdkService + "internal/presigned-url", sdkService + "internal/accept-encoding",
		sdkService + "cloudwatch/schemas",
		"github.com/aws/aws-sdk-go-v2/aws", "github.com/aws/aws-sdk-go-v2/credentials/stscreds",
	}
	require.Equal(t, []string{"cloudwatch", "sts"}, linkedServices(deps))
	require.Empty(t, linkedServices([]string{"fmt", module + "/internal/destination/arn"}))
}

// forbiddenLinks names each binary with what it must not link, and nothing
// else, so that the two tests above can fail.
func TestForbiddenLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		l    listing
		want map[string][]string
	}{
		{"product only", listing{"f/a": {"fmt", module + "/internal/deliver", module + "/outbox"}}, map[string][]string{}},
		{"tooling", listing{"f/a": {module + "/tooling/harness", "fmt"}}, map[string][]string{"f/a": {module + "/tooling/harness"}}},
		{"cdk and jsii", listing{"f/a": {"github.com/aws/jsii-runtime-go/internal/kernel", "github.com/aws/aws-cdk-go/awscdk/v2"}},
			map[string][]string{"f/a": {"github.com/aws/aws-cdk-go/awscdk/v2", "github.com/aws/jsii-runtime-go/internal/kernel"}}},
		{"scripts, e2e, infra", listing{"f/a": {module + "/scripts/sealsecrets", module + "/e2e", module + "/infra"}, "f/b": {"os"}},
			map[string][]string{"f/a": {module + "/e2e", module + "/infra", module + "/scripts/sealsecrets"}}},
		{"browser driver", listing{"f/a": {"github.com/chromedp/chromedp", "github.com/chromedp/cdproto/page"}},
			map[string][]string{"f/a": {"github.com/chromedp/cdproto/page", "github.com/chromedp/chromedp"}}},
		{"a name that only starts alike", listing{"f/a": {module + "/internal/toolingx", module + "/infrastructure"}}, map[string][]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, forbiddenLinks(tc.l))
		})
	}
}

// Only enqueue, which validates payloads (internal/payloadschema), links
// the JSON Schema library (about 2 MB of binary with what it brings); the
// api function reads the event-type catalog without it (internal/eventtypes).
func TestOnlyEnqueueLinksTheJSONSchemaLibrary(t *testing.T) {
	t.Parallel()
	l := goList(t, "./...")
	for _, fn := range functions {
		deps := l[module+"/functions/"+fn]
		require.Equal(t, fn == "enqueue", slices.Contains(deps, jsonSchemaLibrary), "function %s", fn)
	}
}

// jsonSchemaLibrary is the JSON Schema library payloadschema uses.
const jsonSchemaLibrary = "github.com/kaptinlin/jsonschema"

// The JSON Schema library does next to nothing when its package
// initialises: the first one enqueue linked compiled every draft's
// metaschema there (1.7 MB allocated, 21,285 allocations), and enqueue's
// cold start went from 2.1x a hello world to 5x. Counted in allocations,
// which the runtime's init trace reports the same on every run, not in time.
func TestTheJSONSchemaLibraryInitialisesCheaply(t *testing.T) {
	t.Parallel()
	bin := t.TempDir() + "/enqueue"
	out, err := exec.Command("go", "build", "-o", bin, "./enqueue").CombinedOutput()
	require.NoError(t, err, "%s", out)
	// Outside Lambda the function exits at once, after every package's init.
	cmd := exec.Command(bin)
	cmd.Env = []string{"GODEBUG=inittrace=1"}
	out, _ = cmd.CombinedOutput()
	var line string
	for l := range strings.Lines(string(out)) {
		if strings.HasPrefix(l, "init "+jsonSchemaLibrary+" ") {
			line = l
		}
	}
	require.NotEmpty(t, line, "the init trace names the library: %s", out)
	// init github.com/kaptinlin/jsonschema @3.3 ms, 0.007 ms clock, 2248 bytes, 20 allocs
	f := strings.Fields(line)
	require.GreaterOrEqual(t, len(f), 10, line)
	allocs, err := strconv.Atoi(f[len(f)-2])
	require.NoError(t, err, line)
	require.Less(t, allocs, 1000, "the library's init allocates: %s", line)
}
