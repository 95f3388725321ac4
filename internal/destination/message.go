package destination

import (
	"cmp"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/sender"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/trace"
)

// The attributes (SQS, SNS) and detail fields (EventBridge) an attempt
// carries beside its body. The webhook-* ones are Standard Webhooks'
// headers, with the same values an HTTP attempt's headers have.
const (
	AttrID        = signing.HeaderID        // webhook-id: the delivery id
	AttrTimestamp = signing.HeaderTimestamp // webhook-timestamp: unix seconds
	AttrSignature = signing.HeaderSignature // webhook-signature
	AttrEventID   = "hookline-event-id"
	AttrEventType = "hookline-event-type"
	AttrAttempt   = "hookline-attempt"
	// AttrTraceParent is the attempt's W3C trace context (package trace),
	// as an HTTP attempt's traceparent header: the seventh attribute of
	// SQS's and SNS's ten.
	AttrTraceParent = trace.Header
)

// Source is the EventBridge entries' Source.
const Source = "hookline"

// MaxMessageBytes bounds what one attempt sends: SQS and SNS count the body
// and every attribute's name, type and value; EventBridge the entry's
// Source, DetailType, Detail and Time (14 bytes). 256 KiB each.
const MaxMessageBytes = 256 << 10

// values are an attempt's attributes, in a fixed order; one left empty
// (a trace context not given) is not sent.
type values [7][2]string

func attempt(r sender.Request, ts time.Time) values {
	return values{
		{AttrID, r.DeliveryID},
		{AttrTimestamp, strconv.FormatInt(ts.Unix(), 10)},
		{AttrSignature, r.Signer.Sign(r.DeliveryID, ts, r.Body)},
		{AttrEventID, r.EventID},
		{AttrEventType, r.EventType},
		{AttrAttempt, strconv.Itoa(r.Attempt)},
		{AttrTraceParent, r.TraceParent},
	}
}

// call is one prepared send, made once the session's clients are known.
type call func(ctx context.Context, c *clients) sender.Result

func tooLarge(n int) *sender.Result {
	return &sender.Result{Outcome: sender.Dead, Error: "payload_too_large", Reason: domain.ReasonPayloadTooLarge,
		Excerpt: "message of " + strconv.Itoa(n) + " bytes, the destination takes at most " + strconv.Itoa(MaxMessageBytes)}
}

// sqsCall prepares SendMessage of the body with the attributes, refusing
// before any call what SQS would refuse: too large, or characters SQS does
// not take.
func sqsCall(queueURL string, body string, v values) (call, *sender.Result) {
	attrs := make(map[string]sqstypes.MessageAttributeValue, len(v))
	for _, a := range v {
		if a[1] != "" {
			attrs[a[0]] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a[1])}
		}
	}
	in := &sqs.SendMessageInput{QueueUrl: &queueURL, MessageBody: &body, MessageAttributes: attrs}
	if n := message.EntrySize(sqstypes.SendMessageBatchRequestEntry{MessageBody: &body, MessageAttributes: attrs}); n > MaxMessageBytes {
		return nil, tooLarge(n)
	}
	if err := message.CheckText(body); err != nil {
		return nil, &sender.Result{Outcome: sender.Dead, Error: "invalid_characters", Reason: domain.ReasonDestinationRefused, Excerpt: clip(err.Error())}
	}
	return func(ctx context.Context, c *clients) sender.Result {
		out, err := c.sqs.SendMessage(ctx, in)
		if err != nil {
			return classifyCall("sqs", err)
		}
		return sender.Result{Outcome: sender.Delivered, Status: 200, Excerpt: "MessageId " + aws.ToString(out.MessageId)}
	}, nil
}

// snsCall prepares Publish of the body with the attributes.
func snsCall(topicARN string, body string, v values) (call, *sender.Result) {
	attrs := make(map[string]snstypes.MessageAttributeValue, len(v))
	size := len(body)
	for _, a := range v {
		if a[1] != "" {
			attrs[a[0]] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(a[1])}
			size += len(a[0]) + len("String") + len(a[1])
		}
	}
	if size > MaxMessageBytes {
		return nil, tooLarge(size)
	}
	in := &sns.PublishInput{TopicArn: &topicARN, Message: &body, MessageAttributes: attrs}
	return func(ctx context.Context, c *clients) sender.Result {
		out, err := c.sns.Publish(ctx, in)
		if err != nil {
			return classifyCall("sns", err)
		}
		return sender.Result{Outcome: sender.Delivered, Status: 200, Excerpt: "MessageId " + aws.ToString(out.MessageId)}
	}, nil
}

// Detail is the EventBridge entry's detail: the attempt's values, the
// exact signed body as a string (to verify) and the body as JSON (for
// rules to match on).
type Detail struct {
	ID        string `json:"webhook-id"`
	Timestamp string `json:"webhook-timestamp"`
	Signature string `json:"webhook-signature"`
	EventID   string `json:"hookline-event-id,omitempty"`
	EventType string `json:"hookline-event-type,omitempty"`
	Attempt   string `json:"hookline-attempt"`
	// TraceParent is the attempt's trace context, when it has one.
	TraceParent string          `json:"traceparent,omitempty"`
	Body        string          `json:"body"`
	Payload     json.RawMessage `json:"payload"`
}

// ebCall prepares PutEvents of one entry on the bus.
func ebCall(busARN string, body []byte, v values, ts time.Time) (call, *sender.Result) {
	if !json.Valid(body) {
		return nil, &sender.Result{Outcome: sender.Dead, Error: "invalid_json", Reason: domain.ReasonDestinationRefused, Excerpt: "the body is not JSON"}
	}
	d := Detail{ID: v[0][1], Timestamp: v[1][1], Signature: v[2][1], EventID: v[3][1], EventType: v[4][1], Attempt: v[5][1], TraceParent: v[6][1], Body: string(body), Payload: body}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, &sender.Result{Outcome: sender.Dead, Error: "invalid_json", Reason: domain.ReasonDestinationRefused, Excerpt: clip(err.Error())}
	}
	e := ebtypes.PutEventsRequestEntry{Source: aws.String(Source), DetailType: aws.String(cmp.Or(v[4][1], "webhook")),
		Detail: aws.String(string(raw)), EventBusName: &busARN, Time: aws.Time(ts)}
	if n := len(Source) + len(*e.DetailType) + len(raw) + 14; n > MaxMessageBytes {
		return nil, tooLarge(n)
	}
	in := &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{e}}
	return func(ctx context.Context, c *clients) sender.Result {
		out, err := c.eb.PutEvents(ctx, in)
		if err != nil {
			return classifyCall("events", err)
		}
		if out.FailedEntryCount > 0 && len(out.Entries) > 0 {
			return classifyEntry(aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage))
		}
		if out.FailedEntryCount > 0 || len(out.Entries) == 0 {
			return sender.Result{Outcome: sender.Retry, Status: 200, Error: "events:no_entry_result"}
		}
		return sender.Result{Outcome: sender.Delivered, Status: 200, Excerpt: "EventId " + aws.ToString(out.Entries[0].EventId)}
	}, nil
}
