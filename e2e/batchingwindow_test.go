//go:build e2e

package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"
)

// batchCounter is a function, in Python (the local cloud runs it in
// process), that posts each invocation's source and record count to
// TARGET.
const batchCounter = `import json, os, urllib.request
def handler(event, context):
    records = event.get("Records", [])
    source = records[0].get("eventSource", "") if records else ""
    body = json.dumps({"source": source, "n": len(records)}).encode()
    urllib.request.urlopen(urllib.request.Request(os.environ["TARGET"], data=body, method="POST"), timeout=10).read()
    return {}
`

// TestLocalCloudHonoursTheBatchingWindow: a mapping with a batching window
// gathers the records that arrive within it into one invocation, on a
// DynamoDB stream and on an SQS queue, as Lambda does
// (hookline.Props.BatchingWindow); ministack stores the window and ignores
// it, and scripts/localcloud/hookline_localcloud.py makes it real. Without
// a window, records written 1.5 s apart are invoked apart. On
// resources of its own: the stack's mappings stay as deployed.
func TestLocalCloudHonoursTheBatchingWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	batches := map[string][]int{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Source string `json:"source"`
			N      int    `json:"n"`
		}
		if json.NewDecoder(r.Body).Decode(&b) == nil {
			mu.Lock()
			batches[b.Source] = append(batches[b.Source], b.N)
			mu.Unlock()
		}
		w.WriteHeader(http.StatusNoContent)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	name := fmt.Sprintf("hookline-window-%d", time.Now().UnixNano())
	tbl, err := env.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewImage},
	})
	require.NoError(t, err)
	t.Cleanup(func() { env.ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}) })
	q, err := env.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: map[string]string{"VisibilityTimeout": "60"}})
	require.NoError(t, err)
	t.Cleanup(func() { env.sqs.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: q.QueueUrl}) })
	qa, err := env.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	require.NoError(t, err)

	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	f, err := zw.Create("index.py")
	require.NoError(t, err)
	_, err = f.Write([]byte(batchCounter))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	_, err = env.lambda.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: &name,
		Runtime:      lambdatypes.RuntimePython312,
		Handler:      aws.String("index.handler"),
		Role:         aws.String("arn:aws:iam::000000000000:role/" + name),
		Code:         &lambdatypes.FunctionCode{ZipFile: zipped.Bytes()},
		Timeout:      aws.Int32(30),
		Environment:  &lambdatypes.Environment{Variables: map[string]string{"TARGET": "http://" + ln.Addr().String() + "/"}},
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		env.lambda.DeleteFunction(context.Background(), &lambda.DeleteFunctionInput{FunctionName: &name})
	})

	mappings := map[string]*string{}
	for source, arn := range map[string]string{"aws:dynamodb": aws.ToString(tbl.TableDescription.LatestStreamArn), "aws:sqs": qa.Attributes["QueueArn"]} {
		in := &lambda.CreateEventSourceMappingInput{FunctionName: &name, EventSourceArn: aws.String(arn), BatchSize: aws.Int32(10),
			MaximumBatchingWindowInSeconds: aws.Int32(10), Enabled: aws.Bool(true)}
		if source == "aws:dynamodb" {
			in.StartingPosition = lambdatypes.EventSourcePositionTrimHorizon
		}
		m, err := env.lambda.CreateEventSourceMapping(ctx, in)
		require.NoError(t, err, source)
		mappings[source] = m.UUID
		t.Cleanup(func() {
			env.lambda.DeleteEventSourceMapping(context.Background(), &lambda.DeleteEventSourceMappingInput{UUID: m.UUID})
		})
	}

	// write puts n items and sends n messages, every apart.
	next := 0
	write := func(n int, every time.Duration) {
		for i := range n {
			if i > 0 {
				time.Sleep(every)
			}
			next++
			id := strconv.Itoa(next)
			_, err := env.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &name, Item: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: id}}})
			require.NoError(t, err)
			_, err = env.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: &id})
			require.NoError(t, err)
		}
	}
	// await waits until each source has brought total records, and returns
	// its batches.
	await := func(total int) map[string][]int {
		got := map[string][]int{}
		require.Eventually(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			for _, source := range []string{"aws:dynamodb", "aws:sqs"} {
				sum := 0
				for _, n := range batches[source] {
					sum += n
				}
				if sum < total {
					return false
				}
				got[source] = append([]int(nil), batches[source]...)
			}
			return true
		}, 90*time.Second, 100*time.Millisecond, "records of both sources: %v", batches)
		return got
	}

	// With a window of 10 s (wide: the suite runs beside this test), three
	// records 200 ms apart: one batch each.
	write(3, 200*time.Millisecond)
	got := await(3)
	require.Equal(t, []int{3}, got["aws:dynamodb"], "the stream's three records in one invocation")
	require.Equal(t, []int{3}, got["aws:sqs"], "the queue's three messages in one invocation")

	// Without a window, three records 1.5 s apart: invoked apart.
	for _, uuid := range mappings {
		_, err := env.lambda.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: uuid, MaximumBatchingWindowInSeconds: aws.Int32(0)})
		require.NoError(t, err)
	}
	write(3, 1500*time.Millisecond)
	got = await(6)
	require.Greater(t, len(got["aws:dynamodb"]), 2, "without a window, the stream's records are not held: %v", got["aws:dynamodb"])
	require.Greater(t, len(got["aws:sqs"]), 2, "without a window, the queue's messages are not held: %v", got["aws:sqs"])
}
