// Command hello is the baseline of the cold-start measurement: the smallest
// Go Lambda function, built the way the hookline functions are.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(ctx context.Context, ev json.RawMessage) (string, error) { return "hello", nil })
}
