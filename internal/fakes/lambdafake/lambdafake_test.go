package lambdafake_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/hookline/hookline/internal/fakes/lambdafake"
	"github.com/stretchr/testify/require"
)

type event struct {
	N   int    `json:"n"`
	Pad string `json:"pad"`
}

func newFunction() *lambdafake.Function {
	return lambdafake.New("fn", func(_ context.Context, ev event) (event, error) {
		if ev.N < 0 {
			return ev, errors.New("negative")
		}
		return ev, nil
	})
}

func invoke(f *lambdafake.Function, name, payload string) (*lambda.InvokeOutput, error) {
	return f.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String(name), Payload: []byte(payload)})
}

func TestInvokeAnswersAsLambda(t *testing.T) {
	t.Parallel()
	f := newFunction()
	out, err := invoke(f, "fn", `{"n":1}`)
	require.NoError(t, err)
	require.Nil(t, out.FunctionError)
	require.JSONEq(t, `{"n":1,"pad":""}`, string(out.Payload))

	out, err = invoke(f, "fn", `{"n":-1}`)
	require.NoError(t, err, "a function error is an answer, not an error")
	require.Equal(t, "Unhandled", aws.ToString(out.FunctionError))
	require.JSONEq(t, `{"errorMessage":"negative","errorType":"errorString"}`, string(out.Payload))

	out, err = invoke(f, "fn", `not json`)
	require.NoError(t, err)
	require.Equal(t, "Unhandled", aws.ToString(out.FunctionError), "a payload the function cannot decode fails in it")
	require.Equal(t, 3, f.Calls())
}

func TestInvokeRefusals(t *testing.T) {
	t.Parallel()
	f := newFunction()
	var notFound *types.ResourceNotFoundException
	_, err := invoke(f, "other", `{}`)
	require.True(t, errors.As(err, &notFound), "unknown function: %v", err)

	_, err = f.Invoke(context.Background(), &lambda.InvokeInput{FunctionName: aws.String("fn"), Payload: []byte(`{}`), InvocationType: types.InvocationTypeEvent})
	require.Error(t, err, "only synchronous invocations run")

	big := `{"pad":"` + strings.Repeat("a", lambdafake.MaxSyncPayload-9) + `"}`
	var tooLarge *types.RequestTooLargeException
	_, err = invoke(f, "fn", big)
	require.True(t, errors.As(err, &tooLarge), "a request over 6 MB: %v", err)
	require.Zero(t, f.Calls())

	// exactly 6 MB
	fits := `{"pad":"` + strings.Repeat("a", lambdafake.MaxSyncPayload-10) + `"}`
	out, err := invoke(f, "fn", fits)
	require.NoError(t, err)
	require.Equal(t, len(fits), f.LargestPayload())
	require.Equal(t, "Unhandled", aws.ToString(out.FunctionError), "its answer, with an empty n added, passes 6 MB")
	require.Contains(t, string(out.Payload), "Function.ResponseSizeTooLarge")
}
