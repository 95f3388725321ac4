package deliver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/message"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/sealing/sealingtest"
	"github.com/hookline/hookline/internal/sender"
)

// deliveredSender answers every attempt delivered, at once: what is
// measured is the handler's own work.
type deliveredSender struct{}

func (deliveredSender) Send(context.Context, sender.Request) sender.Result {
	return sender.Result{Outcome: sender.Delivered, Status: 200}
}

// BenchmarkHandleHTTPBatch is one batch of 10 deliveries to an http
// endpoint through the handler (reads, signing, stats, the outcome's
// writes) with a sender that answers at once: the HTTP path's cost in
// deliver, which an AWS destination type must not raise.
func BenchmarkHandleHTTPBatch(b *testing.B) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	kms := sealingtest.New()
	sealed, err := (&sealing.Sealer{KMS: kms, KeyID: sealingtest.KeyARN}).Seal(context.Background(), sealing.Ref{TenantID: "t1", EndpointID: "ep_1"}, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		b.Fatal(err)
	}
	st := newFakeStore(domain.Endpoint{TenantID: "t1", EndpointID: "ep_1", URL: "https://hooks.example.com/x", SealedSecrets: []string{sealed}})
	st.Now = func() time.Time { return now }
	q := newFakeQueue(func() time.Time { return now }, queueVisibility)
	h := &Handler{
		Store: st.ports(), Queue: q, Sender: deliveredSender{},
		Secrets: &sealing.Opener{KMS: kms, KeyID: sealingtest.KeyARN},
		Config: Config{
			QueueURL: "https://sqs.example/q", DLQURL: "https://sqs.example/dlq",
			Policy: retry.Policy{Schedule: []time.Duration{0, 10 * time.Second}, Mode: retry.JitterNone, VisibilityTimeout: queueVisibility},
			Now:    func() time.Time { return now },
		},
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		msgs := make([]events.SQSMessage, 10)
		for j := range msgs {
			id := "d" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
			body, _ := json.Marshal(message.Message{
				DeliveryID: id, TenantID: "t1", EndpointID: "ep_1", EventID: "evt_" + id, EventType: "order.created",
				OccurredAt: now, Payload: json.RawMessage(`{"n":1}`),
			})
			msgs[j] = events.SQSMessage{MessageId: "m_" + id, ReceiptHandle: "rh_" + id, Body: string(body), Attributes: map[string]string{"ApproximateReceiveCount": "1"}}
		}
		q.receive(now, msgs...)
		if _, err := h.Handle(context.Background(), events.SQSEvent{Records: msgs}); err != nil {
			b.Fatal(err)
		}
	}
}
