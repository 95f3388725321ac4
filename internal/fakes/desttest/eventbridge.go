package desttest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/require"
)

// EventBridge's cases, for Target.Forgives.
const (
	CaseEventBridgePut          = "PutEventsReachesTheBusRule"
	CaseEventBridgeEntryCount   = "PutEventsAtMost10Entries"
	CaseEventBridgeEntryBytes   = "PutEventsEntryAtMost256KiB"
	CaseEventBridgeBytesCounted = "PutEventsRequestAtMost256KiBCountedAsAWSCounts"
	CaseEventBridgeDetailObject = "PutEventsDetailIsAJSONObject"
	CaseEventBridgeRequired     = "PutEventsSourceDetailTypeDetailRequired"
	CaseEventBridgeAWSSource    = "PutEventsSourceAWSIsRefused"
	CaseEventBridgeMissingBus   = "PutEventsToAMissingBusIsAccepted"
)

// EventBridge's answers and limits (PutEvents API Reference; "Calculating
// Amazon EventBridge PutEvents event entry size").
const (
	ebValidation       = "ValidationException"
	ebMalformedDetail  = "entry MalformedDetail"
	ebInvalidArgument  = "entry InvalidArgument"
	ebNotAuthorized    = "entry NotAuthorizedForSourceException"
	ebMaxEntries       = 10
	ebMaxBytes         = 262_144
	ebTimeBytes        = 14 // a Time counts 14 bytes
	ebSource, ebDetail = "desttest", "desttest.case"
)

// EventBridgeClient is the EventBridge the suite drives;
// *eventbridge.Client fits.
type EventBridgeClient interface {
	PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// EventBridgeBundle is what one EventBridge case runs on: a client allowed
// to put events and a custom bus of the case's own.
type EventBridgeBundle struct {
	Client EventBridgeClient
	// BusARN is the bus, named by ARN as the sender names it.
	BusARN string
	// Arrived, if set, returns the "webhook-id" of the detail of each event
	// with source "hookline" that reached the bus's rule target (an SQS
	// queue on the local cloud; the bus itself in the fake, which models no
	// rule), waiting up to wait for n of them.
	Arrived func(ctx context.Context, t *testing.T, n int, wait time.Duration) []string
}

// RunEventBridge runs EventBridge's cases on tg, each in parallel on a
// bundle of its own.
func RunEventBridge(t *testing.T, tg Target[EventBridgeBundle]) {
	run(t, tg, []testCase[EventBridgeBundle]{
		{CaseEventBridgePut, ebPut},
		{CaseEventBridgeEntryCount, func(c *Check, b *EventBridgeBundle) {
			ten := make([]types.PutEventsRequestEntry, ebMaxEntries)
			for i := range ten {
				ten[i] = ebEntry(b, `{"n":`+strconv.Itoa(i)+`}`)
			}
			c.Answer("10 entries", Accepted, put(b, ten...))
			c.Answer("11 entries", ebValidation, put(b, append(ten, ebEntry(b, `{}`))...))
		}},
		{CaseEventBridgeEntryBytes, func(c *Check, b *EventBridgeBundle) {
			// An entry counts its Source, DetailType and Detail in bytes.
			fits := `{"a":"` + strings.Repeat("x", ebMaxBytes-len(ebSource)-len(ebDetail)-len(`{"a":""}`)) + `"}`
			c.Answer("an entry of 256 KiB", Accepted, put(b, ebEntry(b, fits)))
			c.Answer("an entry of 256 KiB + 1", ebValidation, put(b, ebEntry(b, fits[:len(fits)-2]+`x"}`)))
		}},
		{CaseEventBridgeBytesCounted, ebBytesCounted},
		{CaseEventBridgeDetailObject, func(c *Check, b *EventBridgeBundle) {
			for _, d := range []string{`[1]`, `"s"`, `1`, `not json`} {
				c.Answer("a Detail of "+d, ebMalformedDetail, put(b, ebEntry(b, d)))
			}
		}},
		{CaseEventBridgeRequired, func(c *Check, b *EventBridgeBundle) {
			for field, drop := range map[string]func(*types.PutEventsRequestEntry){
				"Source":     func(e *types.PutEventsRequestEntry) { e.Source = nil },
				"DetailType": func(e *types.PutEventsRequestEntry) { e.DetailType = nil },
				"Detail":     func(e *types.PutEventsRequestEntry) { e.Detail = nil },
			} {
				e := ebEntry(b, `{}`)
				drop(&e)
				c.Answer("an entry without "+field, ebInvalidArgument, put(b, e))
			}
		}},
		{CaseEventBridgeAWSSource, func(c *Check, b *EventBridgeBundle) {
			e := ebEntry(b, `{}`)
			e.Source = aws.String("aws.s3")
			c.Answer("an entry of source aws.s3", ebNotAuthorized, put(b, e))
		}},
		{CaseEventBridgeMissingBus, func(c *Check, b *EventBridgeBundle) {
			e := ebEntry(b, `{}`)
			e.EventBusName = aws.String(b.BusARN + "-missing")
			c.Answer("an entry for a bus that does not exist", Accepted, put(b, e))
		}},
	})
}

func ebEntry(b *EventBridgeBundle, detail string) types.PutEventsRequestEntry {
	return types.PutEventsRequestEntry{Source: aws.String(ebSource), DetailType: aws.String(ebDetail), Detail: &detail, EventBusName: &b.BusARN}
}

// put is the answer to one PutEvents: Accepted, the call's error code, or
// "entry CODE" for the first failed entry.
func put(b *EventBridgeBundle, es ...types.PutEventsRequestEntry) string {
	out, err := b.Client.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: es})
	if err != nil || out.FailedEntryCount == 0 {
		return Code(err)
	}
	for _, e := range out.Entries {
		if e.ErrorCode != nil {
			return "entry " + aws.ToString(e.ErrorCode)
		}
	}
	return "entry failed without a code"
}

// ebPut: the sender's path. Accepted with an event id, and, where the
// target tells, the event reaches the bus's rule target.
func ebPut(c *Check, b *EventBridgeBundle) {
	const id = "msg_desttest_eb"
	e := ebEntry(b, `{"webhook-id":"`+id+`","body":"{}"}`)
	e.Source, e.DetailType = aws.String("hookline"), aws.String("order.created")
	out, err := b.Client.PutEvents(c.Context(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{e}})
	c.Answer("an entry to the bus", Accepted, Code(err))
	require.NoError(c, err)
	require.Zero(c, out.FailedEntryCount)
	require.Len(c, out.Entries, 1)
	require.NotEmpty(c, aws.ToString(out.Entries[0].EventId))
	if b.Arrived != nil {
		require.Equal(c, []string{id}, b.Arrived(c.Context(), c.T, 1, 15*time.Second), "the bus's rule target got the event")
	}
}

// ebBytesCounted: the 256 KiB are the request's, each entry counted as AWS
// counts it: Source, DetailType, Detail and each Resource in UTF-8 bytes,
// 14 for a Time.
func ebBytesCounted(c *Check, b *EventBridgeBundle) {
	detail := func(n int) string { return `{"a":"` + strings.Repeat("x", n-len(`{"a":""}`)) + `"}` }
	rest := ebMaxBytes - len(ebSource) - len(ebDetail)
	timed := ebEntry(b, detail(rest-ebTimeBytes))
	timed.Time = aws.Time(time.Unix(1764748800, 0))
	c.Answer("an entry of 256 KiB with its Time", Accepted, put(b, timed))
	timed.Detail = aws.String(detail(rest - ebTimeBytes + 1))
	c.Answer("an entry of 256 KiB + 1 with its Time", ebValidation, put(b, timed))
	const res = "arn:aws:sqs:us-east-1:222222222222:ré" // é is 2 bytes
	withRes := ebEntry(b, detail(rest-len(res)))
	withRes.Resources = []string{res}
	c.Answer("an entry of 256 KiB with a Resource", Accepted, put(b, withRes))
	withRes.Detail = aws.String(detail(rest - len(res) + 1))
	c.Answer("an entry of 256 KiB + 1 with a Resource", ebValidation, put(b, withRes))
	// Two entries: 256 KiB together, Source and DetailType counted twice.
	first := (rest - len(ebSource) - len(ebDetail)) / 2
	second := rest - len(ebSource) - len(ebDetail) - first
	c.Answer("two entries of 256 KiB together", Accepted, put(b, ebEntry(b, detail(first)), ebEntry(b, detail(second))))
	c.Answer("two entries of 256 KiB + 1 together", ebValidation, put(b, ebEntry(b, detail(first)), ebEntry(b, detail(second+1))))
}
