package harness

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"
	"github.com/stretchr/testify/require"
)

// A DynamoDB answer without X-Amz-Crc32, as ministack gives some, makes the
// SDK's default client log a checksum warning; the tools' client logs
// nothing, and still reads the answer.
func TestDynamoDBLogsNoChecksumWarning(t *testing.T) {
	t.Parallel()
	const body = `{"Item":{"pk":{"S":"a"}}}`
	tests := []struct {
		name   string
		header string // X-Amz-Crc32; "" sends none
		client func(aws.Config) *dynamodb.Client
		warns  bool
	}{
		{"SDK default, no header", "", func(c aws.Config) *dynamodb.Client { return dynamodb.NewFromConfig(c) }, true},
		{"SDK default, right header", strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(body))), 10), func(c aws.Config) *dynamodb.Client { return dynamodb.NewFromConfig(c) }, false},
		{"tools, no header", "", DynamoDB, false},
		{"tools, wrong header", "12345", DynamoDB, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/x-amz-json-1.0")
				if tc.header != "" {
					w.Header().Set("X-Amz-Crc32", tc.header)
				}
				fmt.Fprint(w, body)
			}))
			defer srv.Close()
			var logs bytes.Buffer
			cfg := aws.Config{
				Region:       "us-east-1",
				Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
				BaseEndpoint: aws.String(srv.URL),
				Logger:       logging.NewStandardLogger(&logs),
			}
			out, err := tc.client(cfg).GetItem(context.Background(), &dynamodb.GetItemInput{
				TableName: aws.String("t"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}},
			})
			require.NoError(t, err)
			require.Equal(t, "a", out.Item["pk"].(*types.AttributeValueMemberS).Value, "the answer is read either way")
			if tc.warns {
				require.Contains(t, logs.String(), "did not match expected checksum")
			} else {
				require.Empty(t, logs.String())
			}
		})
	}
}

// operatorCommands are the programs under scripts/ that an operator runs
// against a real account: like the functions, they keep the SDK's check.
var operatorCommands = map[string]bool{
	"../../scripts/enqueuereprocess/main.go": true,
	"../../scripts/sealsecrets/main.go":      true,
}

// The tools build their DynamoDB clients with DynamoDB, so none of them
// prints the checksum warning against the local cloud. The functions and the
// operator's commands are not tools: they keep the SDK's check.
func TestToolsBuildDynamoDBClientsHere(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"../cmd", "../../scripts", "../../e2e", "../perf", "."} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") && dir == "." {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if path != "harness.go" && !operatorCommands[path] && bytes.Contains(src, []byte("dynamodb.NewFromConfig(")) {
				t.Errorf("%s builds a DynamoDB client with dynamodb.NewFromConfig: use harness.DynamoDB", path)
			}
			return nil
		})
		require.NoError(t, err)
	}
}
