package ebfake_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/ebfake"
)

const bus = "arn:aws:events:us-east-1:000000000000:event-bus/hooks"

func entry(detail string) types.PutEventsRequestEntry {
	return types.PutEventsRequestEntry{Source: aws.String("hookline"), DetailType: aws.String("order.created"), Detail: aws.String(detail), EventBusName: aws.String(bus)}
}

func TestPutEvents(t *testing.T) {
	t.Parallel()
	f := ebfake.New(ebfake.Config{Authorize: func(key, arn string) bool { return key == "AKIAOK" }})
	f.AddBus(bus)
	srv := awsfake.Serve(t, map[string]http.Handler{"events": f})
	cfg := srv.Config("AKIAOK")
	cfg.RetryMaxAttempts = 1
	c := eventbridge.NewFromConfig(cfg)
	put := func(es ...types.PutEventsRequestEntry) (*eventbridge.PutEventsOutput, string) {
		out, err := c.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: es})
		var ae smithy.APIError
		if errors.As(err, &ae) {
			return nil, ae.ErrorCode()
		}
		require.NoError(t, err)
		return out, ""
	}
	e := entry(`{"a":1}`)
	e.Time = aws.Time(time.Unix(1764748800, 0))
	out, code := put(e)
	require.Empty(t, code)
	require.Zero(t, out.FailedEntryCount)
	got := f.Events(bus)
	require.Len(t, got, 1)
	require.Equal(t, `{"a":1}`, got[0].Detail)
	require.Equal(t, len("hookline")+len("order.created")+len(`{"a":1}`)+14, got[0].Size())

	_, code = put(make([]types.PutEventsRequestEntry, 11)...)
	require.Equal(t, "ValidationException", code)
	fits := `{"a":"` + strings.Repeat("x", ebfake.MaxEntryBytes-len("hookline")-len("order.created")-len(`{"a":""}`)) + `"}`
	_, code = put(entry(fits))
	require.Empty(t, code, "exactly 256 KiB is taken")
	_, code = put(entry(fits[:len(fits)-2] + `x"}`))
	require.Equal(t, "ValidationException", code)

	missing := entry(`{"a":1}`)
	missing.Detail = nil
	reserved := entry(`{"a":1}`)
	reserved.Source = awsString("aws.s3")
	out, code = put(entry(`[1]`), missing, reserved, entry(`{"b":2}`))
	require.Empty(t, code)
	require.EqualValues(t, 3, out.FailedEntryCount)
	require.Equal(t, []string{"MalformedDetail", "InvalidArgument", "NotAuthorizedForSourceException", ""},
		[]string{code0(out, 0), code0(out, 1), code0(out, 2), code0(out, 3)})

	// A bus that does not exist: accepted and dropped, as on AWS.
	gone := entry(`{"a":1}`)
	gone.EventBusName = awsString(bus + "-gone")
	out, code = put(gone)
	require.Empty(t, code)
	require.Zero(t, out.FailedEntryCount)
	require.Equal(t, 1, f.Dropped())

	cfg.Credentials = awsfake.StaticCredentials("AKIAOTHER")
	_, err := eventbridge.NewFromConfig(cfg).PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry(`{}`)}})
	require.ErrorContains(t, err, "AccessDeniedException")
}

func code0(out *eventbridge.PutEventsOutput, i int) string { return awsValue(out.Entries[i].ErrorCode) }

func awsString(s string) *string { return &s }

func awsValue(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
