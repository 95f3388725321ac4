//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fault"
	"github.com/hookline/hookline/internal/signing"
	"github.com/hookline/hookline/internal/streamreprocess"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// Batches the stream mapping gave up on are reprocessed by the operator's
// command, with enqueue failures injected all along:
//
//  1. The enqueue function cannot reach its delivery queue, so every
//     invocation fails, and the mapping's age cap is lowered to 60 s (the
//     least Lambda accepts; 20 h when deployed): the local cloud parks the
//     batch on the enqueue failure queue as Lambda does, a failure record
//     naming the shard and sequence numbers.
//  2. The function is repaired, with enqueue_fail injected at rate 1: every
//     invocation that sends messages fails after its first request. The
//     command reads the batch back from the stream, invokes enqueue with it
//     until an invocation succeeds, and deletes the message: every event is
//     delivered, signed, and the queue is empty.
//  3. A parked batch whose records the stream no longer has (its sequence
//     numbers are before the shard's first record: trimmed) is kept by the
//     command; with -outbox-fallback its events are read from the outbox
//     table and delivered, and the message deleted. Its events were
//     processed by the stream before their tenant had an endpoint (recorded
//     rejected), so nothing but the fallback can deliver them.
//
// Not parallel: it breaks the enqueue function for a minute. make test
// (scripts/test.sh) runs it alone, beside the unit tests, before the others.
func TestParkedStreamBatchesAreReprocessed(t *testing.T) {
	ctx := context.Background()
	bin := buildReprocess(t)
	require.Zero(t, queueDepth(t, env.out.EnqueueFailureQueueURL), "the enqueue failure queue must start empty")
	streamARN, shardID := outboxStream(t)

	// 1. Park a batch.
	rcvA := newReceiver(t, status(http.StatusOK))
	tnA := newTenant(t, rcvA.URL)
	restoreAge := setMaxRecordAge(t, 60)
	setEnqueueEnv := enqueueEnv(t)
	setEnqueueEnv(func(v map[string]string) {
		v["HOOKLINE_DELIVERY_QUEUE_URL"] = env.out.DeliveryQueueURL + "-does-not-exist"
		// The tenant lane too, so that no send of the batch can succeed
		// whatever the lane threshold.
		if lane := v["HOOKLINE_LANE_QUEUE_URL"]; lane != "" {
			v["HOOKLINE_LANE_QUEUE_URL"] = lane + "-does-not-exist"
		}
		// And the deferred fan-out queue, which a send past a tenant's
		// share would otherwise reach.
		if fanOut := v["HOOKLINE_FANOUT_QUEUE_URL"]; fanOut != "" {
			v["HOOKLINE_FANOUT_QUEUE_URL"] = fanOut + "-does-not-exist"
		}
	})
	var evsA []outbox.Event
	for i := 0; i < 12; i++ {
		ev := event(tnA, fmt.Sprintf("evt_parked_%d_%s", i, tnA.ID), "invoice.paid", fmt.Sprintf(`{"n":%d}`, i))
		write(t, ev)
		evsA = append(evsA, ev)
	}
	parked := waitParked(t, len(evsA), 4*time.Minute)
	for _, p := range parked {
		require.Equal(t, streamARN, p.Batch.StreamARN)
		require.Equal(t, shardID, p.Batch.ShardID)
	}
	restoreAge()
	require.Empty(t, rcvA.requests(), "nothing is delivered while enqueue fails")

	// 2. Repair the function, inject enqueue failures, reprocess.
	setEnqueueEnv(func(v map[string]string) { v[fault.Env] = fault.EnqueueFail + ":1" })
	code, rep, stderr := runReprocess(t, bin, "-attempts", "10")
	require.Equal(t, 0, code, "the command failed:\n%s", stderr)
	require.Equal(t, len(parked), rep.Deleted)
	require.Zero(t, rep.Kept)
	require.Positive(t, rep.Retries, "the injected failures made the command invoke again")
	records := 0
	for _, res := range rep.Results {
		require.Equal(t, streamreprocess.Reprocessed, res.Outcome, res.Error)
		records += res.Records
	}
	// The parked batches hold tenant A's events and whatever else was
	// written to the outbox meanwhile: hookline's own operational events
	// (the delivery.dead summaries of earlier tests' deaths) among them.
	require.GreaterOrEqual(t, records, len(evsA))
	requireDelivered(t, rcvA, tnA, evsA)
	require.Zero(t, queueDepth(t, env.out.EnqueueFailureQueueURL), "every reprocessed message is deleted")

	// 3. A batch gone from the stream: kept, then reprocessed from the outbox.
	rcvB := newReceiver(t, status(http.StatusOK))
	tnB := tenant{ID: "t_gone_" + strconv.FormatInt(time.Now().UnixNano(), 10)}
	var evsB []outbox.Event
	var first, last time.Time
	for i := 0; i < 4; i++ {
		ev := event(tnB, fmt.Sprintf("evt_gone_%d_%s", i, tnB.ID), "invoice.paid", fmt.Sprintf(`{"n":%d}`, i))
		at := write(t, ev)
		if i == 0 {
			first = at
		}
		last = at
		evsB = append(evsB, ev)
	}
	for _, ev := range evsB {
		require.Eventually(t, func() bool {
			_, err := env.store.Rejection(ctx, ev.ID)
			return err == nil
		}, 30*time.Second, 200*time.Millisecond, "the stream processed %s (no endpoint yet)", ev.ID)
	}
	secret, err := signing.NewSecret(rand.Reader)
	require.NoError(t, err)
	tnB.Endpoint = domain.Endpoint{TenantID: tnB.ID, EndpointID: "ep_1", URL: rcvB.URL, Secrets: []string{secret}}
	tnB.Secret = secret // a plaintext secret of an endpoint written before sealing: it still signs
	require.NoError(t, env.store.PutEndpoint(ctx, tnB.Endpoint))

	var gone streamreprocess.FailureRecord
	gone.RequestContext.Condition = "RetryAttemptsExhausted"
	gone.Version = "1.0"
	gone.Timestamp = time.Now().UTC()
	gone.Batch = streamreprocess.BatchInfo{
		ShardID: shardID, StreamARN: streamARN, StartSequenceNumber: "1", EndSequenceNumber: "4", BatchSize: len(evsB),
		FirstArrival: first.UTC().Truncate(time.Second), LastArrival: last.UTC().Truncate(time.Second),
	}
	body, err := json.Marshal(gone)
	require.NoError(t, err)
	_, err = env.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &env.out.EnqueueFailureQueueURL, MessageBody: aws.String(string(body))})
	require.NoError(t, err)

	code, rep, stderr = runReprocess(t, bin, "-attempts", "10")
	require.Equal(t, 1, code, "a batch gone from the stream is kept:\n%s", stderr)
	require.Len(t, rep.Results, 1)
	require.Equal(t, streamreprocess.Gone, rep.Results[0].Outcome)
	require.Contains(t, rep.Results[0].Error, "TrimmedDataAccessException")
	require.Contains(t, stderr, "-outbox-fallback")
	require.Equal(t, 1, queueDepth(t, env.out.EnqueueFailureQueueURL), "kept")

	code, rep, stderr = runReprocess(t, bin, "-attempts", "10", "-outbox-fallback", "-outbox-table", env.out.OutboxTableName, "-outbox-margin", "30s")
	require.Equal(t, 0, code, "the command failed:\n%s", stderr)
	require.Len(t, rep.Results, 1)
	require.Equal(t, streamreprocess.ReprocessedFromOutbox, rep.Results[0].Outcome, rep.Results[0].Error)
	require.GreaterOrEqual(t, rep.OutboxEvents, len(evsB))
	requireDelivered(t, rcvB, tnB, evsB)
	require.Zero(t, queueDepth(t, env.out.EnqueueFailureQueueURL))
}

// requireDelivered waits until the receiver got every event, each request
// signed with the endpoint's secret; a delivery may arrive more than once
// (at least once), always with the same webhook-id.
func requireDelivered(t *testing.T, rcv *receiver, tn tenant, evs []outbox.Event) {
	t.Helper()
	// newTenant's endpoint holds its secret sealed (tn.Secret is the plain
	// one); an endpoint written here in plaintext holds it in Secrets.
	secrets := tn.Endpoint.Secrets
	if tn.Secret != "" {
		secrets = append([]string{tn.Secret}, secrets...)
	}
	v, err := signing.NewVerifier(secrets...)
	require.NoError(t, err)
	want := map[string]string{}
	for _, ev := range evs {
		want[ev.ID] = domain.DeliveryID(ev.TenantID, ev.ID, tn.Endpoint.EndpointID, ev.OccurredAt)
	}
	got := map[string]bool{}
	require.Eventually(t, func() bool {
		for _, r := range rcv.requests() {
			got[r.Header.Get("X-Event-Id")] = true
		}
		return len(got) >= len(want)
	}, 60*time.Second, 200*time.Millisecond, "delivered %d of %d events", len(got), len(want))
	for _, r := range rcv.requests() {
		require.NoError(t, v.VerifyRequest(r.Header, r.Body), "signature")
		id := r.Header.Get("X-Event-Id")
		require.Contains(t, want, id, "an event of another batch")
		require.Equal(t, want[id], r.Header.Get("webhook-id"))
	}
	for _, ev := range evs {
		waitDelivery(t, want[ev.ID], 15*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
	}
}

// buildReprocess builds the operator's command once for the test.
func buildReprocess(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "enqueuereprocess")
	out, err := exec.Command("go", "build", "-o", bin, "../scripts/enqueuereprocess").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// runReprocess runs the command against the deployed stack and returns its
// exit code, its report and what it printed on stderr.
func runReprocess(t *testing.T, bin string, args ...string) (int, streamreprocess.Report, string) {
	t.Helper()
	args = append([]string{"-queue-url", env.out.EnqueueFailureQueueURL, "-function", env.out.EnqueueFunctionName}, args...)
	cmd := exec.Command(bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	var rep streamreprocess.Report
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "stdout: %s\nstderr: %s", stdout.String(), stderr.String())
	t.Logf("enqueuereprocess %v: exit %d\n%s", args[4:], code, stderr.String())
	return code, rep, stderr.String()
}

// outboxStream is the outbox table's stream and its shard.
func outboxStream(t *testing.T) (streamARN, shardID string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := env.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &env.out.OutboxTableName})
	require.NoError(t, err)
	streamARN = aws.ToString(tbl.Table.LatestStreamArn)
	desc, err := dynamodbstreams.NewFromConfig(env.cfg).DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &streamARN})
	require.NoError(t, err)
	require.NotEmpty(t, desc.StreamDescription.Shards)
	return streamARN, aws.ToString(desc.StreamDescription.Shards[len(desc.StreamDescription.Shards)-1].ShardId)
}

// enqueueEnv returns a function that changes the enqueue function's
// environment; the test's cleanup puts the deployed one back.
func enqueueEnv(t *testing.T) func(change func(map[string]string)) {
	t.Helper()
	cfg, err := env.lambda.GetFunctionConfiguration(context.Background(), &lambda.GetFunctionConfigurationInput{FunctionName: &env.out.EnqueueFunctionName})
	require.NoError(t, err)
	deployed := map[string]string{}
	if cfg.Environment != nil {
		deployed = cfg.Environment.Variables
	}
	t.Cleanup(func() { updateEnqueueEnv(t, deployed) })
	return func(change func(map[string]string)) {
		vars := map[string]string{}
		for k, v := range deployed {
			vars[k] = v
		}
		change(vars)
		updateEnqueueEnv(t, vars)
	}
}

func updateEnqueueEnv(t *testing.T, vars map[string]string) {
	t.Helper()
	ctx := context.Background()
	_, err := env.lambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{
		FunctionName: &env.out.EnqueueFunctionName, Environment: &lambdatypes.Environment{Variables: vars},
	})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		cfg, err := env.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: &env.out.EnqueueFunctionName})
		return err == nil && cfg.LastUpdateStatus == lambdatypes.LastUpdateStatusSuccessful
	}, 30*time.Second, 100*time.Millisecond, "the enqueue function's update did not complete")
}

// setMaxRecordAge sets the stream mapping's MaximumRecordAgeInSeconds and
// returns the function that restores the deployed value (the test's
// cleanup calls it too).
func setMaxRecordAge(t *testing.T, seconds int32) func() {
	t.Helper()
	ctx := context.Background()
	out, err := env.lambda.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: &env.out.EnqueueFunctionName})
	require.NoError(t, err)
	// Enqueue's one stream mapping (the other, when the stack defers
	// fan-outs, is the fan-out queue's).
	var streams []lambdatypes.EventSourceMappingConfiguration
	for _, m := range out.EventSourceMappings {
		if strings.Contains(aws.ToString(m.EventSourceArn), ":dynamodb:") {
			streams = append(streams, m)
		}
	}
	require.Len(t, streams, 1, "enqueue has one mapping on the outbox stream")
	m := streams[0]
	deployed := aws.ToInt32(m.MaximumRecordAgeInSeconds)
	require.Equal(t, int32(72000), deployed, "the deployed age cap")
	update := func(v int32) {
		_, err := env.lambda.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: m.UUID, MaximumRecordAgeInSeconds: aws.Int32(v)})
		require.NoError(t, err)
	}
	update(seconds)
	restored := false
	restore := func() {
		if !restored {
			restored = true
			update(deployed)
		}
	}
	t.Cleanup(restore)
	return restore
}

// waitParked waits until the batches parked on the enqueue failure queue
// hold n records, peeking at them (they stay on the queue), and returns
// their failure records.
func waitParked(t *testing.T, n int, timeout time.Duration) []streamreprocess.FailureRecord {
	t.Helper()
	seen := map[string]streamreprocess.FailureRecord{}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		out, err := env.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			// 1 s: a VisibilityTimeout of 0 is not sent, and the queue's
			// default (30 s) would hide the message from the command.
			QueueUrl: &env.out.EnqueueFailureQueueURL, MaxNumberOfMessages: 10, VisibilityTimeout: 1, WaitTimeSeconds: 1,
		})
		require.NoError(t, err)
		for _, m := range out.Messages {
			rec, err := streamreprocess.ParseFailureRecord(aws.ToString(m.Body))
			require.NoError(t, err, "the local cloud parked a message that is not a failure record: %s", aws.ToString(m.Body))
			seen[aws.ToString(m.MessageId)] = rec
		}
		total := 0
		for _, r := range seen {
			total += r.Batch.BatchSize
		}
		if total >= n {
			time.Sleep(2 * time.Second) // visible again
			var recs []streamreprocess.FailureRecord
			for _, r := range seen {
				recs = append(recs, r)
			}
			return recs
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("the stream mapping parked %d batches in %s, not %d records", len(seen), timeout, n)
	return nil
}

// queueDepth is how many messages a queue holds, visible or not.
func queueDepth(t *testing.T, url string) int {
	t.Helper()
	out, err := env.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	require.NoError(t, err)
	n := 0
	for _, k := range []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		v, err := strconv.Atoi(out.Attributes[string(k)])
		require.NoError(t, err)
		n += v
	}
	return n
}
