package docexamples

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	t.Parallel()
	type want struct {
		line   int
		lang   string
		code   string
		notRun string
	}
	tests := []struct {
		name string
		doc  string
		want []want
		err  string // a part of the error; "" for none
	}{
		{
			name: "shell blocks in order, others left out",
			doc:  "# t\n\n```sh\nmake demo\n```\n\n```go\nx := 1\n```\n\n```bash\necho a\necho b\n```\n\n```\nplain\n```\n\n~~~shell\necho c\n~~~\n",
			want: []want{{3, "sh", "make demo\n", ""}, {11, "bash", "echo a\necho b\n", ""}, {20, "shell", "echo c\n", ""}},
		},
		{
			name: "a mark right before, or before blank lines",
			doc:  "<!-- example: not run: needs an AWS account -->\n```sh\nmake deploy\n```\n<!--example: not run: takes an hour-->\n\n\n```zsh\nmake soak\n```\n",
			want: []want{{2, "sh", "make deploy\n", "needs an AWS account"}, {8, "zsh", "make soak\n", "takes an hour"}},
		},
		{
			name: "an indented fence (a list item) and a longer closing fence",
			doc:  "1. step\n\n   ```sh\n   echo hi\n   ````\n",
			want: []want{{3, "sh", "   echo hi\n", ""}},
		},
		{
			name: "a fence inside a block is text",
			doc:  "````sh\n```\necho inner\n````\n",
			want: []want{{1, "sh", "```\necho inner\n", ""}},
		},
		{
			name: "inline curl inside a block is code, not running text",
			doc:  "```http\nsee `curl -X POST x`\n```\n",
		},
		{
			name: "curl with -f, --fail or --fail-with-body",
			doc:  "```sh\ncurl -fsS x\ncurl -sS --fail-with-body -X POST \"$A?x=1&y=2\" \\\n  -d '{}' | jq .\nK=$(curl --fail x | jq -r .k)\ncurl -sSf x; echo\n```\n",
			want: []want{{1, "sh", "curl -fsS x\ncurl -sS --fail-with-body -X POST \"$A?x=1&y=2\" \\\n  -d '{}' | jq .\nK=$(curl --fail x | jq -r .k)\ncurl -sSf x; echo\n", ""}},
		},
		{
			name: "curl in a comment is not a command",
			doc:  "```sh\n# curl -s x would pass on a 404\necho ok\n```\n",
			want: []want{{1, "sh", "# curl -s x would pass on a 404\necho ok\n", ""}},
		},
		{
			name: "curl without --fail in a block not run is allowed",
			doc:  "<!-- example: not run: on AWS only -->\n```sh\ncurl -s x\n```\n",
			want: []want{{2, "sh", "curl -s x\n", "on AWS only"}},
		},
		{name: "curl without --fail", doc: "```sh\ncurl -s -X POST x -d '{}'\n```\n", err: "curl without --fail-with-body"},
		{name: "curl whose -f belongs to the next command", doc: "```sh\ncurl -s x | tail -f\n```\n", err: "curl without --fail-with-body"},
		{name: "curl whose --fail is inside a quoted string", doc: "```sh\ncurl -s -d ' --fail ' x\n```\n", err: "curl without --fail-with-body"},
		{name: "curl in a substitution without --fail", doc: "```sh\nK=$(curl -s x)\n```\n", err: "curl without --fail-with-body"},
		{name: "inline curl in running text", doc: "Then run `curl -X POST $API/v1/x`.\n", err: "in running text"},
		{name: "a mark without a reason", doc: "<!-- example: not run -->\n```sh\nx\n```\n", err: "gives no reason"},
		{name: "a malformed mark", doc: "<!-- example: skip -->\n```sh\nx\n```\n", err: "malformed example mark"},
		{name: "a mark before text", doc: "<!-- example: not run: why -->\nsome text\n```sh\nx\n```\n", err: "not followed by a shell block"},
		{name: "a mark before a go block", doc: "<!-- example: not run: why -->\n```go\nx\n```\n", err: "not a shell block"},
		{name: "a mark at the end", doc: "<!-- example: not run: why -->\n", err: "not followed by a shell block"},
		{name: "two marks", doc: "<!-- example: not run: a -->\n<!-- example: not run: b -->\n```sh\nx\n```\n", err: "follows another"},
		{name: "a fence never closed", doc: "text\n```sh\necho x\n", err: "doc.md:2: the code block is never closed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse("doc.md", []byte(tc.doc))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.ErrorContains(t, err, "doc.md:", "the error names where")
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(tc.want))
			for i, w := range tc.want {
				require.Equal(t, Block{File: "doc.md", Line: w.line, Lang: w.lang, Code: w.code, NotRun: w.notRun}, got[i])
			}
		})
	}
}

// awsOrLong is what an example that runs in a test must not do: deploy to
// AWS, or start a run of its own (the whole suite, the soak, the benchmarks).
var awsOrLong = regexp.MustCompile(`cdk (deploy|bootstrap)|make (deploy|test|soak|bench|bench-replay)(\s|$)`)

// The project's own documents follow the rules: every shell example either
// runs (the e2e test TestDocExamples runs them) or says why it cannot.
func TestProjectDocs(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	files = append([]string{"../../README.md"}, files...)
	runs := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		blocks, err := Parse(f, src)
		require.NoError(t, err)
		for _, b := range blocks {
			if b.NotRun != "" {
				t.Logf("not run: %s: %s", b, b.NotRun)
				continue
			}
			runs++
			require.NotRegexp(t, awsOrLong, b.Code, "%s deploys to AWS, or is a run of its own: mark it not run", b)
		}
	}
	require.Positive(t, runs, "the HTTP API example of docs/api.md runs")
}
