package enqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/internal/filter"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/hookline/hookline/tooling/perf/ratio"
)

// BenchmarkEnqueueVsDecode measures the enqueue path for one stream record
// (decode, validate, fan out, build and send the messages) against decoding
// the same record alone, in the same run, alternating blocks of each so that
// machine noise hits both alike. Both sides start from the same raw Lambda
// event JSON: the enqueue side unmarshals it and runs Handler.Handle with
// in-memory fakes for the store and the queue (sqsfake, which applies
// SQS's rules to each request); the baseline unmarshals it and
// runs decodeImage on the record. It reports time-x (CPU time per record,
// enqueue / decode) and allocs-x (allocations per record). Target: time-x
// <= 2 with one endpoint. Printed, never asserted.
func BenchmarkEnqueueVsDecode(b *testing.B) {
	for _, endpoints := range []int{1, 2} {
		b.Run(fmt.Sprintf("endpoints=%d", endpoints), func(b *testing.B) {
			raw := benchEventJSON(b)
			ratio.Compare(b, "enqueue", enqueueOp(b, raw, endpoints, ""), "decode", decodeOp(b, raw))
		})
	}
}

// benchFilter is a filter the bench payload matches, of the size a
// tenant's would be.
const benchFilter = `{"currency":["eur"],"amount":[{"numeric":[">=",1000]}],"customer":{"address":{"country":["GB","DE"]}},"metadata":{"channel":[{"anything-but":"test"}]}}`

// BenchmarkEnqueueFiltered is BenchmarkEnqueueVsDecode with one endpoint
// whose payload filter matches (benchFilter): filters parsed once per warm
// instance (cached), and parsed for every event (uncached), each against
// decoding the record alone.
func BenchmarkEnqueueFiltered(b *testing.B) {
	for _, cached := range []bool{true, false} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			if !cached {
				defer func(p func(string) (*filter.Filter, error)) { parseFilter = p }(parseFilter)
				parseFilter = func(s string) (*filter.Filter, error) { return filter.Parse([]byte(s)) }
			}
			raw := benchEventJSON(b)
			ratio.Compare(b, "enqueue", enqueueOp(b, raw, 1, benchFilter), "decode", decodeOp(b, raw))
		})
	}
}

// enqueueOp returns one invocation of the handler on raw: unmarshal the
// Lambda event, then Handle it, sending one message per endpoint.
func enqueueOp(b *testing.B, raw []byte, endpoints int, flt string) func() {
	return enqueueOpWith(b, raw, endpoints, flt, nil)
}

// enqueueOpWith is enqueueOp with an event-type catalog (nil: none).
func enqueueOpWith(b *testing.B, raw []byte, endpoints int, flt string, schemas Schemas) func() {
	s := &benchStore{}
	for i := range endpoints {
		s.endpoints = append(s.endpoints, endpoint("tenant_bench", fmt.Sprintf("ep_%d", i)))
		s.endpoints[i].Filter = flt
	}
	q := benchQueue()
	h := &Handler{Store: s, Queue: q, Config: Config{QueueURL: testQueueURL}, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
	if schemas != nil {
		h.Schemas = schemas
	}
	ctx := context.Background()
	return func() {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			b.Fatal(err)
		}
		before := q.Sent(testQueueURL)
		if _, err := h.Handle(ctx, ev); err != nil {
			b.Fatal(err)
		}
		if n := q.Sent(testQueueURL) - before; n != endpoints {
			b.Fatalf("sent %d messages, want %d", n, endpoints)
		}
	}
}

// decodeOp returns the baseline: unmarshal the same Lambda event and decode
// its record.
func decodeOp(b *testing.B, raw []byte) func() {
	return func() {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(raw, &ev); err != nil {
			b.Fatal(err)
		}
		if _, err := decodeImage(ev.Records[0].Change.NewImage); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEventJSON returns the Lambda event of one INSERT whose NEW_IMAGE is
// the item outbox.Event.Item writes, with a payload of about 1 KB.
func benchEventJSON(b *testing.B) []byte {
	seq := int64(42)
	e := outbox.Event{
		ID: "evt_01JQ7Z8N4K2M5P6R7S8T9V0W1X", TenantID: "tenant_bench", Type: "payment.succeeded",
		Payload: benchPayload(), OccurredAt: time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC),
		Sequence: &seq, ExpiresAt: time.Date(2026, 4, 14, 15, 9, 26, 0, time.UTC),
	}
	item, err := e.Item()
	if err != nil {
		b.Fatal(err)
	}
	img := make(map[string]events.DynamoDBAttributeValue, len(item))
	for name, v := range item {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			img[name] = events.NewStringAttribute(v.Value)
		case *types.AttributeValueMemberN:
			img[name] = events.NewNumberAttribute(v.Value)
		default:
			b.Fatalf("attribute %s: unexpected type %T", name, v)
		}
	}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{
		EventID: "c4ca4238a0b923820dcc509a6f75849b", EventName: "INSERT", EventVersion: "1.1",
		EventSource: "aws:dynamodb", AWSRegion: "us-east-1",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/Outbox/stream/2026-03-14T00:00:00.000",
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: e.OccurredAt.Truncate(time.Second)},
			Keys:                        map[string]events.DynamoDBAttributeValue{outbox.AttrID: img[outbox.AttrID]},
			NewImage:                    img,
			SequenceNumber:              "111100000000000000001",
			SizeBytes:                   1400,
			StreamViewType:              "NEW_IMAGE",
		},
	}}}
	raw, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// benchPayload is a realistic event payload of about 1 KB.
func benchPayload() json.RawMessage {
	p, _ := json.Marshal(map[string]any{
		"object": "payment", "id": "pay_3NqLk2Hx9FzT1aBc", "amount": 125000, "amount_received": 125000,
		"currency": "eur", "status": "succeeded", "capture_method": "automatic", "livemode": false,
		"customer": map[string]any{
			"id": "cus_Q8w7e6R5t4Y3", "email": "ada.lovelace@example.com", "name": "Ada Lovelace",
			"address": map[string]any{"line1": "12 Analytical Engine Street", "city": "London", "postal_code": "NW1 6XE", "country": "GB"},
		},
		"payment_method": map[string]any{
			"type": "card", "card": map[string]any{"brand": "visa", "last4": "4242", "exp_month": 12, "exp_year": 2029, "funding": "credit", "country": "FR"},
		},
		"lines": []any{
			map[string]any{"sku": "SKU-10042", "description": "Difference engine, assembled", "quantity": 1, "unit_amount": 100000},
			map[string]any{"sku": "SKU-20017", "description": "Punched cards, box of 500", "quantity": 5, "unit_amount": 5000},
		},
		"metadata":    map[string]any{"order_id": "ord_8841", "channel": "web", "campaign": "spring-2026"},
		"description": "Order ord_8841: " + strings.Repeat("é", 40),
		"created":     1773500966,
	})
	return p
}

// benchStore is the store for the benchmark: the tenant exists with fixed
// endpoints, no delivery exists, and nothing is copied, so that the ratio
// measures the handler and not the fake table (the tests use storefake).
type benchStore struct{ endpoints []domain.Endpoint }

func (s *benchStore) TenantEndpoints(context.Context, string) ([]domain.Endpoint, bool, error) {
	return s.endpoints, false, nil
}

func (s *benchStore) LoadWith(context.Context, store.LoadOptions, []string, []store.EndpointRef) (store.Snapshot, error) {
	return store.Snapshot{}, nil
}

func (s *benchStore) PutRejection(_ context.Context, r domain.Rejection) error {
	return fmt.Errorf("unexpected rejection: %s %s", r.Reason, r.Detail)
}

func (s *benchStore) Tenant(_ context.Context, id string) (domain.Tenant, error) {
	return domain.Tenant{TenantID: id}, nil
}

// benchQueue is the one fake SQS (sqsfake), keeping no message, only a
// count, and holding each to having a group (cheap: the tests check the
// group is the tenant's).
func benchQueue() *sqsfake.Queue {
	return sqsfake.New(sqsfake.Config{Discard: true, CheckSend: func(_, _ string, in *sqs.SendMessageInput) error {
		if in.MessageGroupId == nil {
			return errors.New("delivery message sent without a MessageGroupId")
		}
		return nil
	}})
}
