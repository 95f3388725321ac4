package enqueue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// recordedLog is a MessageLog that keeps each Write's entries, or fails
// with err.
type recordedLog struct {
	mu     sync.Mutex
	writes [][]messagelog.Entry
	err    error
}

func (l *recordedLog) Write(_ context.Context, entries []messagelog.Entry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes = append(l.writes, entries)
	return l.err
}

func TestStreamBatchListsItsEventsInOneMessageLogWrite(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("acme", "ep_1"), endpoint("beta", "ep_2"))
	s.addTenant("gone")
	require.NoError(t, s.Tombstone(context.Background(), "gone"))
	q := &fakeQueue{}
	log := &recordedLog{}
	h := newHandler(s, q)
	h.MessageLog = log
	expires := events.NewNumberAttribute("1798000000")
	_, err := h.Handle(context.Background(), streamEvent(
		image("evt_1", "acme", map[string]events.DynamoDBAttributeValue{outbox.AttrExpiresAt: expires}),
		image("evt_2", "beta", map[string]events.DynamoDBAttributeValue{outbox.AttrEndpointID: events.NewStringAttribute("ep_2")}),
		// an earlier producer library's item: its index entry lists it
		image("evt_3", "acme", map[string]events.DynamoDBAttributeValue{outbox.AttrLogShard: events.NewStringAttribute("acme#3")}),
		image("evt_4", "gone", nil),   // a tenant being erased: dropped
		image("", "acme", nil),        // malformed: rejected
		image("evt_5", "nobody", nil), // no endpoints: rejected as unrouted, still an event
		image("evt_6", "acme", map[string]events.DynamoDBAttributeValue{outbox.AttrExpiresAt: events.NewStringAttribute("x")}),
	))
	require.NoError(t, err)
	require.Len(t, log.writes, 1, "one write a stream batch")
	require.Equal(t, []messagelog.Entry{
		{ID: "evt_1", TenantID: "acme", Type: "order.created", OccurredAt: imageAt, ExpiresAt: time.Unix(1798000000, 0)},
		{ID: "evt_2", TenantID: "beta", Type: "order.created", OccurredAt: imageAt, EndpointID: "ep_2"},
		{ID: "evt_5", TenantID: "nobody", Type: "order.created", OccurredAt: imageAt},
		{ID: "evt_6", TenantID: "acme", Type: "order.created", OccurredAt: imageAt},
	}, log.writes[0])
	require.Len(t, q.sent(), 4, "evt_1, evt_2, evt_3 and evt_6 sent")

	// A batch with nothing to list writes nothing.
	_, err = h.Handle(context.Background(), streamEvent(image("evt_7", "acme", map[string]events.DynamoDBAttributeValue{outbox.AttrLogShard: events.NewStringAttribute("acme#1")})))
	require.NoError(t, err)
	require.Len(t, log.writes, 1)
}

func TestMessageLogWriteFailureFailsTheInvocation(t *testing.T) {
	t.Parallel()
	s := newFakeStore(endpoint("acme", "ep_1"))
	q := &fakeQueue{}
	log := &recordedLog{err: errors.New("throttled")}
	h := newHandler(s, q)
	h.MessageLog = log
	batch := streamEvent(image("evt_1", "acme", nil), image("evt_2", "acme", nil))
	_, err := h.Handle(context.Background(), batch)
	require.ErrorContains(t, err, "throttled")
	require.ErrorContains(t, err, "records 900000000000000000000 to 900000000000000000001", "the stream tries the batch again")
	// Tried again, the pages are written over (the same keys) and what was
	// sent is sent again with the same ids (at least once).
	log.err = nil
	_, err = h.Handle(context.Background(), batch)
	require.NoError(t, err)
	require.Equal(t, log.writes[0], log.writes[1])
}

func TestMessageLogPagesOfARetriedBatchAreWrittenOver(t *testing.T) {
	t.Parallel()
	db := dynamofake.NewDB("gsi1")
	pages := &messagelog.Pages{DB: db, Table: "state"}
	s := newFakeStore(endpoint("acme", "ep_1"))
	h := newHandler(s, &fakeQueue{})
	h.MessageLog = pages
	batch := streamEvent(image("evt_1", "acme", nil), image("evt_2", "acme", nil), image("evt_3", "acme", nil))
	for range 2 {
		_, err := h.Handle(context.Background(), batch)
		require.NoError(t, err)
	}
	require.Len(t, db.Items(), 1, "one tenant, one second: one page, written over")
	require.Equal(t, 2, db.Calls("BatchWriteItem"))
	ob := dynamofake.New("outbox", outbox.AttrID)
	ob.AddIndex(outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.AttrLogKey)
	r := &messagelog.Reader{DB: ob, Table: "outbox", Pages: pages}
	evs, next, err := r.ListEvents(context.Background(), "acme", domain.EventFilter{}, 10, "")
	require.NoError(t, err)
	require.Empty(t, next)
	require.Len(t, evs, 3)
	require.Equal(t, "evt_3", evs[0].ID, "one second: ties by id, newest first")
}
