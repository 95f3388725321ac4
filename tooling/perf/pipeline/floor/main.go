// Command floor is the do-nothing Lambda function of the end-to-end
// benchmark's floor: the same two hops as hookline's pipeline (a DynamoDB
// stream handler that sends one SQS message per inserted item, and an SQS
// handler that POSTs each message's body to a receiver) with none of
// hookline's work. FLOOR_MODE picks the hop: "stream" (FLOOR_QUEUE_URL) or
// "sqs" (FLOOR_TARGET); or "api", the API floor's handler (an HTTP API
// route answering 202 and doing nothing else).
package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/boot"
)

func main() { boot.Main("floor", run) }

func run() error {
	_, cfg, err := boot.Start(context.Background(), "WARN")
	if err != nil {
		return err
	}
	switch mode := os.Getenv("FLOOR_MODE"); mode {
	case "stream":
		q, url := sqs.NewFromConfig(cfg), os.Getenv("FLOOR_QUEUE_URL")
		lambda.Start(func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			var batch []sqstypes.SendMessageBatchRequestEntry
			flush := func() error {
				if len(batch) == 0 {
					return nil
				}
				_, err := q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: batch})
				batch = batch[:0]
				return err
			}
			for i, r := range ev.Records {
				if r.EventName != "INSERT" {
					continue
				}
				batch = append(batch, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(r.Change.NewImage["id"].String())})
				if len(batch) == 10 {
					if err := flush(); err != nil {
						return events.DynamoDBEventResponse{}, err
					}
				}
			}
			return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}, flush()
		})
	case "sqs":
		target := os.Getenv("FLOOR_TARGET")
		client := &http.Client{}
		lambda.Start(func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			var wg sync.WaitGroup
			for _, m := range ev.Records {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp, err := client.Post(target, "text/plain", bytes.NewReader([]byte(m.Body))); err == nil {
						resp.Body.Close()
					}
				}()
			}
			wg.Wait()
			return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}, nil
		})
	case "api":
		// The API floor: an HTTP API route's handler that does nothing.
		lambda.Start(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusAccepted, Headers: map[string]string{"Content-Type": "application/json"}, Body: "{}"}, nil
		})
	default:
		return fmt.Errorf("FLOOR_MODE %q: want stream, sqs or api", mode)
	}
	return nil
}
