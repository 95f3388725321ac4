package streamreprocess_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/streamreprocess"
	"github.com/stretchr/testify/require"
)

// fakeBus is EventBridge's PutEvents: it refuses what CheckPut refuses,
// and fails the first failures requests (a bus still recovering).
type fakeBus struct {
	mu       sync.Mutex
	failures int
	put      []ebtypes.PutEventsRequestEntry
}

func (b *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := enqueue.CheckPut(in.Entries); err != nil {
		return nil, err
	}
	if b.failures > 0 {
		b.failures--
		return nil, errors.New("AccessDeniedException: an SCP denies events:PutEvents")
	}
	b.put = append(b.put, in.Entries...)
	return &eventbridge.PutEventsOutput{Entries: make([]ebtypes.PutEventsResultEntry, len(in.Entries))}, nil
}

// parked is the body enqueue parks for an operational event the bus kept
// refusing.
func parked(t *testing.T, id string) (string, ebtypes.PutEventsRequestEntry) {
	t.Helper()
	detail, err := json.Marshal(enqueue.OperatorDetail{ID: id, TenantID: "t_1", Type: "endpoint.disabled", OccurredAt: t0, Data: json.RawMessage(`{"endpoint_id":"ep_1"}`)})
	require.NoError(t, err)
	p := enqueue.ParkedEvent{Parked: enqueue.ParkedKind, Bus: "hookline-ops", DetailType: "endpoint.disabled", Time: t0, Detail: detail, Error: "ThrottlingException"}
	body, err := json.Marshal(p)
	require.NoError(t, err)
	return string(body), p.Entry()
}

// A parked operational event on the enqueue failure queue is put on the
// bus it was meant for, the entry enqueue tried, and its message deleted
// ("resent"), beside the stream batches reprocessed as before; without a bus
// client, or while the bus still refuses it, it is kept.
func TestParkedOperationalEventsArePutAgain(t *testing.T) {
	t.Parallel()
	t.Run("resent and deleted, beside a batch", func(t *testing.T) {
		e := newEnv(t, 10, 10)
		bus := &fakeBus{failures: 1}
		e.r.Bus = bus
		body, entry := parked(t, "op_1")
		opID := e.queue.add(body)
		batchID := e.queue.add(failureBody(2, 4))
		rep := e.run(t)
		require.Equal(t, []ebtypes.PutEventsRequestEntry{entry}, bus.put, "the entry enqueue tried, once")
		require.Equal(t, `{"id":"op_1","tenant_id":"t_1","type":"endpoint.disabled","occurred_at":"2026-11-30T01:00:00Z","data":{"endpoint_id":"ep_1"}}`,
			aws.ToString(bus.put[0].Detail))
		for _, id := range []string{opID, batchID} {
			present, _ := e.queue.state(id)
			require.False(t, present)
		}
		require.Equal(t, 2, rep.Deleted)
		require.Zero(t, rep.Kept)
		require.Equal(t, streamreprocess.Resent, rep.Results[0].Outcome)
		require.Equal(t, 1, rep.Results[0].Retries, "the first put failed")
		require.Equal(t, streamreprocess.Reprocessed, rep.Results[1].Outcome)
		require.Equal(t, seqs(2, 4), e.fn.processed())
	})
	t.Run("kept while the bus refuses it", func(t *testing.T) {
		e := newEnv(t, 1, 10)
		e.r.Bus, e.r.Attempts = &fakeBus{failures: 100}, 3
		body, _ := parked(t, "op_2")
		id := e.queue.add(body)
		rep := e.run(t)
		present, visible := e.queue.state(id)
		require.True(t, present && visible, "kept, visible again for the next run")
		require.Equal(t, streamreprocess.Failed, rep.Results[0].Outcome)
		require.Contains(t, rep.Results[0].Error, "after 3 attempts")
		require.Equal(t, []time.Duration{time.Second, 2 * time.Second}, e.sleeps)
	})
	t.Run("kept without a bus client", func(t *testing.T) {
		e := newEnv(t, 1, 10)
		body, _ := parked(t, "op_3")
		id := e.queue.add(body)
		rep := e.run(t)
		present, _ := e.queue.state(id)
		require.True(t, present)
		require.Equal(t, streamreprocess.Failed, rep.Results[0].Outcome)
		require.Equal(t, 1, rep.Kept)
	})
	t.Run("a broken parked message is invalid, and kept", func(t *testing.T) {
		e := newEnv(t, 1, 10)
		e.r.Bus = &fakeBus{}
		e.queue.add(`{"hookline_parked":"operator_event","bus":"b"}`)
		rep := e.run(t)
		require.Equal(t, streamreprocess.Invalid, rep.Results[0].Outcome)
		require.Equal(t, 1, rep.Kept)
	})
}
