// Package lambdafake is one in-memory Lambda for tests of any package: a
// function run in process, invoked as Lambda invokes it synchronously. It
// holds an invocation to the rules that matter to hookline's invokers
// (package streamreprocess):
//
//   - an unknown function name is a ResourceNotFoundException;
//   - only a synchronous invocation (RequestResponse, the default) runs;
//   - a request payload over 6 MB (MaxSyncPayload) is refused
//     (RequestEntityTooLargeException); a response over it is a function
//     error of type Function.ResponseSizeTooLarge;
//   - the payload is decoded by aws-lambda-go's handler, the production
//     decoding, so a payload the function cannot take fails as on Lambda;
//   - a function error answers status 200 with FunctionError "Unhandled"
//     and the {"errorMessage","errorType"} payload, not an error.
package lambdafake

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	awslambda "github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// MaxSyncPayload is Lambda's limit on the request and on the response
// payload of a synchronous invocation: 6 MB (6,291,456 bytes).
const MaxSyncPayload = 6 * 1024 * 1024

// Function is one fake Lambda function. Safe for concurrent use (the
// handler runs under the function's lock: one invocation at a time).
type Function struct {
	name    string
	handler awslambda.Handler
	mu      sync.Mutex
	calls   int
	largest int
}

// New returns the function name running handler, any handler
// aws-lambda-go's lambda.NewHandler takes (func(ctx, event) (out, error)).
func New(name string, handler any) *Function {
	return &Function{name: name, handler: awslambda.NewHandler(handler)}
}

// Calls is how many invocations ran the handler.
func (f *Function) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// LargestPayload is the largest request payload that ran, in bytes.
func (f *Function) LargestPayload() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.largest
}

// Invoke runs the function on the payload (see the package's rules).
func (f *Function) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if aws.ToString(in.FunctionName) != f.name {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Function not found: " + aws.ToString(in.FunctionName))}
	}
	if in.InvocationType != "" && in.InvocationType != types.InvocationTypeRequestResponse {
		return nil, fmt.Errorf("InvalidParameterValueException: the fake runs RequestResponse invocations only, not %s", in.InvocationType)
	}
	if len(in.Payload) > MaxSyncPayload {
		return nil, &types.RequestTooLargeException{Message: aws.String(fmt.Sprintf("RequestEntityTooLargeException: request payload %d bytes exceeds %d", len(in.Payload), MaxSyncPayload))}
	}
	f.calls++
	f.largest = max(f.largest, len(in.Payload))
	out, err := f.handler.Invoke(ctx, in.Payload)
	if err != nil {
		return functionError(err.Error(), "errorString"), nil
	}
	if len(out) > MaxSyncPayload {
		return functionError(fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).", len(out), MaxSyncPayload), "Function.ResponseSizeTooLarge"), nil
	}
	return &lambda.InvokeOutput{StatusCode: 200, Payload: out}, nil
}

// functionError is Lambda's answer to an invocation whose function failed.
func functionError(message, typ string) *lambda.InvokeOutput {
	body, _ := json.Marshal(map[string]string{"errorMessage": message, "errorType": typ})
	return &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: body}
}
