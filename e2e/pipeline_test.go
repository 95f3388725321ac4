//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// (a) An outbox insert arrives at the receiver with the documented body and
// headers, and its signature verifies.
func TestDeliversSignedWebhook(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusNoContent))
	tn := newTenant(t, rcv.URL)
	seq := int64(42)
	ev := event(tn, "evt_signed_"+tn.ID, "payment.succeeded", `{"amount":1250,"currency":"eur","note":"café"}`)
	ev.Sequence = &seq
	write(t, ev)

	got := rcv.waitFor(t, 1, 30*time.Second)[0]
	id := domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt)

	v, err := signing.NewVerifier(tn.Secret)
	require.NoError(t, err)
	require.NoError(t, v.VerifyRequest(got.Header, got.Body), "the signature must verify with the endpoint's secret")

	require.Equal(t, "application/json", got.Header.Get("Content-Type"))
	require.Equal(t, id, got.Header.Get("webhook-id"))
	require.Equal(t, id, got.Header.Get("Idempotency-Key"))
	require.Equal(t, id, got.Header.Get("X-Idempotency-Key"))
	require.Equal(t, ev.ID, got.Header.Get("X-Event-Id"))
	require.Equal(t, "payment.succeeded", got.Header.Get("X-Event-Type"))
	require.Equal(t, "1", got.Header.Get("X-Attempt"))
	require.Regexp(t, `^hookline/\S+`, got.Header.Get("User-Agent"))
	ts, err := strconv.ParseInt(got.Header.Get("webhook-timestamp"), 10, 64)
	require.NoError(t, err)
	require.InDelta(t, time.Now().Unix(), ts, 60)

	var body struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		Timestamp time.Time       `json:"timestamp"`
		Data      json.RawMessage `json:"data"`
		Sequence  *int64          `json:"sequence"`
	}
	require.NoError(t, json.Unmarshal(got.Body, &body))
	require.Equal(t, ev.ID, body.ID)
	require.Equal(t, ev.Type, body.Type)
	require.WithinDuration(t, ev.OccurredAt, body.Timestamp, time.Millisecond)
	require.JSONEq(t, string(ev.Payload), string(body.Data))
	require.NotNil(t, body.Sequence)
	require.Equal(t, seq, *body.Sequence)

	d := waitDelivery(t, id, 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	require.Equal(t, 1, d.Attempts)
	require.Equal(t, http.StatusNoContent, d.LastStatus)
	require.Len(t, d.AttemptLog, 1)
}

// (b) A receiver answering 500 is retried with growing delays on the short
// schedule the local deploy configures; after the last attempt SQS's redrive
// policy moves the message to the DLQ and the delivery is dead.
func TestRetriesWithBackoffThenDeadLetters(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusInternalServerError))
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_500_"+tn.ID, "order.created", `{"order":7}`)
	write(t, ev)
	id := domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt)
	attempts := env.out.MaxReceiveCount
	require.GreaterOrEqual(t, attempts, 3, "the local schedule must allow a few retries")

	got := rcv.waitFor(t, attempts, 90*time.Second)
	for i, r := range got {
		require.Equal(t, strconv.Itoa(i+1), r.Header.Get("X-Attempt"), "attempt %d", i+1)
		require.Equal(t, id, r.Header.Get("webhook-id"), "every attempt carries the same idempotency key")
	}
	var gaps []time.Duration
	for i := 1; i < len(got); i++ {
		gaps = append(gaps, got[i].At.Sub(got[i-1].At))
	}
	t.Logf("gaps between attempts: %v", gaps)
	for i := 1; i < len(gaps); i++ {
		require.Greater(t, gaps[i], gaps[i-1], "delays must grow: %v", gaps)
	}

	// The record says dead from just before the last attempt (so that a
	// process stopping during it leaves the death recorded); the last
	// attempt's own outcome follows.
	d := waitDelivery(t, id, 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead && d.Attempts == attempts })
	require.Equal(t, "attempts_exhausted", string(d.DeadReason))
	require.Equal(t, "http_500", d.LastError)
	require.Len(t, d.AttemptLog, attempts, "every attempt is logged")
	for i, a := range d.AttemptLog {
		require.Equal(t, i+1, a.Number)
		require.Equal(t, http.StatusInternalServerError, a.Status)
	}
	msg := waitInDLQ(t, id, 60*time.Second)
	require.Equal(t, ev.ID, msg.EventID)

	time.Sleep(3 * time.Second)
	require.Len(t, rcv.requests(), attempts, "no attempt after the message was dead-lettered")
}

// (c) A 400 goes dead at once: one attempt, explicit DLQ send.
func TestPermanentFailureGoesDeadAtOnce(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusBadRequest))
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_400_"+tn.ID, "order.created", `{"order":8}`)
	write(t, ev)
	id := domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt)

	rcv.waitFor(t, 1, 30*time.Second)
	d := waitDelivery(t, id, 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	require.Equal(t, "rejected_400", string(d.DeadReason))
	require.Equal(t, 1, d.Attempts)
	waitInDLQ(t, id, 30*time.Second)
	time.Sleep(3 * time.Second)
	require.Len(t, rcv.requests(), 1, "a permanent failure is not retried")
}

// (d) The same stream record processed twice yields one delivery: the
// enqueue function is invoked again with the record the stream delivered.
func TestSameStreamRecordTwiceYieldsOneDelivery(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusOK))
	tn := newTenant(t, rcv.URL)
	ev := event(tn, "evt_dup_"+tn.ID, "invoice.paid", `{"invoice":"in_1"}`)
	write(t, ev)
	id := domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt)
	rcv.waitFor(t, 1, 30*time.Second)
	waitDelivery(t, id, 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	// enqueue reads which deliveries exist eventually consistent, its
	// outcome page included (delivered at its first attempt, it has no
	// record): wait until such a read sees this one (at once in the local cloud; within
	// about a second on AWS). A read that missed it would send the message
	// again, which deliver drops (the delivery is delivered), so even then
	// the receiver would not see it twice.
	require.Eventually(t, func() bool {
		snap, err := env.store.LoadWith(context.Background(), store.LoadOptions{Eventual: true, Packed: true}, []string{id}, nil)
		return err == nil && len(snap.Deliveries) == 1
	}, 10*time.Second, 200*time.Millisecond)

	record := streamInsert(t, ev)
	for i := 0; i < 2; i++ {
		out, err := env.lambda.Invoke(context.Background(), lambdaInvoke(env.out.EnqueueFunctionName, record))
		require.NoError(t, err)
		require.Nil(t, out.FunctionError, "enqueue failed: %s", out.Payload)
		require.JSONEq(t, `{"batchItemFailures":[]}`, string(out.Payload))
	}
	time.Sleep(5 * time.Second)
	require.Len(t, rcv.requests(), 1, "a replayed stream record must not deliver again")
	d, err := env.store.Delivery(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 1, d.Attempts)
}

// (e) A malformed outbox item is recorded as rejected and the items after it
// are still delivered.
func TestMalformedItemIsRejectedAndStreamFlows(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, status(http.StatusOK))
	tn := newTenant(t, rcv.URL)
	bad := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: "evt_bad_" + tn.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: tn.ID},
		outbox.AttrType:       &types.AttributeValueMemberS{Value: "order.created"},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: `{"not json`},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}
	wrongType := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: "evt_badtype_" + tn.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: tn.ID},
		outbox.AttrType:       &types.AttributeValueMemberN{Value: "7"},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: `{}`},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}
	missing := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: "evt_missing_" + tn.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: tn.ID},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: `{}`},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}
	unknownTenant := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: "evt_nobody_" + tn.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: "nobody_" + tn.ID},
		outbox.AttrType:       &types.AttributeValueMemberS{Value: "order.created"},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: `{}`},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}
	tooLarge := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: "evt_large_" + tn.ID},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: tn.ID},
		outbox.AttrType:       &types.AttributeValueMemberS{Value: "order.created"},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: `"` + strings.Repeat("x", outbox.MaxPayloadBytes) + `"`},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339)},
	}
	for _, item := range []map[string]types.AttributeValue{bad, wrongType, missing, unknownTenant, tooLarge} {
		_, err := env.ddb.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &env.out.OutboxTableName, Item: item})
		require.NoError(t, err)
	}
	var good []outbox.Event
	for i := 0; i < 3; i++ {
		ev := event(tn, fmt.Sprintf("evt_after_bad_%d_%s", i, tn.ID), "order.created", fmt.Sprintf(`{"n":%d}`, i))
		write(t, ev)
		good = append(good, ev)
	}
	rcv.waitFor(t, len(good), 45*time.Second)
	for _, ev := range good {
		waitDelivery(t, domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt), 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
	for key, reason := range map[string]domain.RejectReason{
		"evt_bad_" + tn.ID: outbox.ReasonInvalidJSON, "evt_badtype_" + tn.ID: outbox.ReasonWrongType,
		"evt_missing_" + tn.ID: outbox.ReasonMissingField, "evt_nobody_" + tn.ID: domain.RejectUnknownTenant,
		"evt_large_" + tn.ID: outbox.ReasonTooLarge,
	} {
		r, err := env.store.Rejection(context.Background(), key)
		require.NoError(t, err, "rejection of %s", key)
		require.Equal(t, reason, r.Reason, key)
		require.NotEmpty(t, r.Detail)
	}
	require.Len(t, rcv.requests(), len(good), "rejected items are never delivered")
	_ = aws.String
}
