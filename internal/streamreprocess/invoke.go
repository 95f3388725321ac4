package streamreprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// Invoker invokes the enqueue function.
type Invoker interface {
	Invoke(context.Context, *lambda.InvokeInput, ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ Invoker = (*lambda.Client)(nil)

const (
	// MaxInvokePayload is the largest request payload of a synchronous
	// Lambda invocation: 6 MB (6,291,456 bytes).
	MaxInvokePayload = 6 * 1024 * 1024
	// MaxInvokeRecords is the most records one invocation carries: the
	// stream mapping's batch size, so that an invocation has the work of
	// one batch within the function's timeout.
	MaxInvokeRecords = 100
)

// payloads splits records into the payloads of as few invocations as the
// limits allow (MaxInvokeRecords records, MaxInvokePayload bytes), in
// order. Each is the JSON of an events.DynamoDBEvent.
func payloads(records []events.DynamoDBEventRecord) ([][]byte, error) {
	const head, tail = `{"Records":[`, `]}`
	var out [][]byte
	var cur []byte
	n := 0
	flush := func() {
		if n > 0 {
			out = append(out, append(cur, tail...))
		}
		cur, n = nil, 0
	}
	for _, rec := range records {
		b, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("encode record %s: %w", rec.Change.SequenceNumber, err)
		}
		if len(head)+len(b)+len(tail) > MaxInvokePayload {
			return nil, fmt.Errorf("record %s alone is %d bytes, over the %d a Lambda invocation carries", rec.Change.SequenceNumber, len(b), MaxInvokePayload)
		}
		if n == MaxInvokeRecords || len(cur)+1+len(b)+len(tail) > MaxInvokePayload {
			flush()
		}
		if n == 0 {
			cur = append(cur, head...)
		} else {
			cur = append(cur, ',')
		}
		cur = append(cur, b...)
		n++
	}
	flush()
	return out, nil
}

// errFunction is an invocation the function answered with an error.
var errFunction = errors.New("the enqueue function failed")

// invoke runs the enqueue function on one payload, again after a failure,
// up to Attempts times. It answers how many times it retried.
func (r *Reprocessor) invoke(ctx context.Context, payload []byte) (int, error) {
	for attempt := 1; ; attempt++ {
		err := r.invokeOnce(ctx, payload)
		if err == nil {
			return attempt - 1, nil
		}
		if attempt >= r.attempts() || ctx.Err() != nil {
			return attempt - 1, fmt.Errorf("after %d attempts: %w", attempt, err)
		}
		delay := retryDelay(attempt)
		r.log().WarnContext(ctx, "enqueue invocation failed; retrying", "attempt", attempt, "retry_in", delay.String(), "error", err.Error())
		if err := r.sleep(ctx, delay); err != nil {
			return attempt - 1, err
		}
	}
}

// retryDelay is the pause after the n-th failed invocation: 1 s, doubling,
// at most 30 s.
func retryDelay(n int) time.Duration {
	d := time.Second << min(n-1, 5)
	return min(d, 30*time.Second)
}

func (r *Reprocessor) invokeOnce(ctx context.Context, payload []byte) error {
	out, err := r.Lambda.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(r.FunctionName),
		InvocationType: lambdatypes.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return fmt.Errorf("invoke %s: %w", r.FunctionName, err)
	}
	if out.FunctionError != nil {
		var answer struct {
			Message string `json:"errorMessage"`
		}
		_ = json.Unmarshal(out.Payload, &answer)
		return fmt.Errorf("%w (%s): %s", errFunction, *out.FunctionError, truncate(answer.Message, 300))
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(out.Payload, &resp); err != nil {
		return fmt.Errorf("%w: its answer is not a stream batch response: %s", errFunction, truncate(string(out.Payload), 300))
	}
	if n := len(resp.BatchItemFailures); n > 0 {
		return fmt.Errorf("%w: it reported %d records failed, from %s", errFunction, n, resp.BatchItemFailures[0].ItemIdentifier)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
