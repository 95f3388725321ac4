package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
)

// Window is the batching window of enqueue's mapping on the outbox stream
// (hookline.Props.BatchingWindow). A benchmark sets it for a run and sets
// it back after.
type Window struct {
	fn      *lambda.Client
	mapping string
	orig    int32
}

// FindWindow finds the enqueue function's stream mapping and its window now.
func FindWindow(ctx context.Context, fn *lambda.Client, enqueue string) (*Window, error) {
	out, err := fn.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: &enqueue})
	if err != nil {
		return nil, fmt.Errorf("the mappings of %s: %w", enqueue, err)
	}
	for _, m := range out.EventSourceMappings {
		if strings.Contains(aws.ToString(m.EventSourceArn), ":dynamodb:") {
			return &Window{fn: fn, mapping: aws.ToString(m.UUID), orig: aws.ToInt32(m.MaximumBatchingWindowInSeconds)}, nil
		}
	}
	return nil, fmt.Errorf("no stream mapping of %s found", enqueue)
}

// Set gives the mapping a window of seconds.
func (w *Window) Set(ctx context.Context, seconds int32) error {
	_, err := w.fn.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{
		UUID: &w.mapping, MaximumBatchingWindowInSeconds: aws.Int32(seconds),
	})
	if err != nil {
		return fmt.Errorf("the batching window of mapping %s: %w", w.mapping, err)
	}
	return nil
}

// Restore sets the window back to what FindWindow found.
func (w *Window) Restore(ctx context.Context) error { return w.Set(ctx, w.orig) }
