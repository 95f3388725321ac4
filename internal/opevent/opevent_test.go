package opevent

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/fakes/sqsfake"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

func TestReservedTypesAreTheOperationalTypesAndTheTestEvent(t *testing.T) {
	t.Parallel()
	require.Equal(t, append(slices.Clone(domain.OpEventTypes), domain.TestEventType), outbox.ReservedTypes, "the producer package refuses exactly hookline's types")
	require.False(t, domain.IsOperational(domain.TestEventType), "the test event is not the operator's: it stays off the bus")
}

func TestIDsDeriveFromWhatTheEventIsAbout(t *testing.T) {
	t.Parallel()
	a := ID(domain.OpEndpointFailing, "t1", "ep_1", "1")
	require.Equal(t, a, ID(domain.OpEndpointFailing, "t1", "ep_1", "1"), "a retried emission has the same id")
	require.NotEqual(t, a, ID(domain.OpEndpointFailing, "t1", "ep_1", "2"), "another episode, another event")
	require.NotEqual(t, a, ID(domain.OpEndpointRecovered, "t1", "ep_1", "1"))
	require.NotEqual(t, ID(domain.OpDeliveryDead, "t1", "ep_12"), ID(domain.OpDeliveryDead, "t1e", "p_12"), "parts do not run together")
	require.True(t, outbox.ValidText(a))
}

func TestItemCarriesTheMarkerAndPassesEveryOtherCheck(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	item, err := Item(Event{ID: "hl_x", TenantID: "t1", Type: domain.OpEndpointDisabled, Payload: domain.OpEndpointEvent{TenantID: "t1"}, At: at})
	require.NoError(t, err)
	require.Equal(t, Origin, item[AttrOrigin].(*types.AttributeValueMemberS).Value)
	require.Equal(t, domain.OpEndpointDisabled, item[outbox.AttrType].(*types.AttributeValueMemberS).Value)
	require.NotEmpty(t, item[outbox.AttrExpiresAt])
	_, err = Item(Event{ID: "hl_x", TenantID: "t1", Type: "order.created", Payload: 1, At: at})
	require.Error(t, err, "only operational types")
	_, err = Item(Event{ID: "", TenantID: "t1", Type: domain.OpDeliveryDead, Payload: 1, At: at})
	require.Error(t, err, "an item that fails another check is refused")
}

// Emit writes an event once: an event already in the outbox table (an
// earlier try's) is taken as written and not replaced; another error is
// the caller's.
func TestEmitWritesOnceAndTakesAnExistingEventAsWritten(t *testing.T) {
	t.Parallel()
	db := dynamofake.New("outbox", outbox.AttrID)
	w := &Writer{DB: db, Table: "outbox"}
	ev := Event{ID: "hl_1", TenantID: "t1", Type: domain.OpEndpointFailing, Payload: domain.OpEndpointEvent{}, At: time.Now()}
	require.NoError(t, w.Emit(context.Background(), ev))
	require.Len(t, db.Items(), 1)
	first := db.Items()[0]
	later := ev
	later.At = ev.At.Add(time.Minute)
	require.NoError(t, w.Emit(context.Background(), later), "already written by an earlier try")
	require.Equal(t, []dynamofake.Item{first}, db.Items(), "the put is conditional: the earlier item stays")
	db.Fail = func(string) error { return errors.New("throttled") }
	require.Error(t, w.Emit(context.Background(), ev))
}

func TestNoticeDelayStaysWithinSQSLimit(t *testing.T) {
	t.Parallel()
	start, end := Window(time.Date(2026, 11, 30, 12, 7, 30, 0, time.UTC), 5*time.Minute)
	require.Equal(t, time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC), start)
	require.Equal(t, start.Add(5*time.Minute), end)
	require.Equal(t, 2*time.Minute+30*time.Second+NoticeGrace, NoticeDelay(time.Date(2026, 11, 30, 12, 7, 30, 0, time.UTC), end))
	_, end = Window(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), MaxNoticeDelay)
	require.Equal(t, MaxNoticeDelay, NoticeDelay(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), end), "clamped to 900 s")
	require.Equal(t, time.Duration(0), NoticeDelay(end.Add(time.Minute), end))
}

type windows struct{ n map[time.Time]int }

func (w *windows) AddDeath(_ context.Context, _, _ string, start, _ time.Time, _ domain.OpDeath) (int, error) {
	w.n[start]++
	return w.n[start], nil
}

// 10,000 deaths over an hour on one endpoint: at most 12 notices at the
// default 5-minute window.
func TestAStormIsBounded(t *testing.T) {
	t.Parallel()
	w, q := &windows{n: map[time.Time]int{}}, sqsfake.New(sqsfake.Config{})
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range 10000 {
		now := t0.Add(time.Duration(i) * time.Hour / 10000)
		require.NoError(t, NoteDeath(context.Background(), w, q, "ops", 5*time.Minute, now, "t1", "ep_1", domain.OpDeath{EventType: "order.created"}))
	}
	require.Equal(t, 12, q.Sent("ops"))
	require.Empty(t, q.Refusals(), "every notice within SQS's rules (DelaySeconds 0..900)")
	require.NoError(t, NoteDeath(context.Background(), w, q, "ops", 5*time.Minute, t0, "t1", "ep_1", domain.OpDeath{EventType: domain.OpDeliveryDead}))
	require.Equal(t, 12, q.Sent("ops"), "an operational event's death is not noted")
}

func TestTestItemNamesItsEndpointAndCarriesTheMarker(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	item, err := TestItem("hl_test_1", "t1", "ep_1", at)
	require.NoError(t, err)
	s := func(k string) string { return item[k].(*types.AttributeValueMemberS).Value }
	require.Equal(t, Origin, s(AttrOrigin))
	require.Equal(t, domain.TestEventType, s(outbox.AttrType))
	require.Equal(t, "ep_1", s(outbox.AttrEndpointID))
	require.NotContains(t, item, outbox.AttrLogKey, "in no index: enqueue lists it in the message log's pages")
	require.NotContains(t, item, outbox.AttrLogShard)
	require.JSONEq(t, `{"tenant_id":"t1","endpoint_id":"ep_1","message":"`+domain.TestEventMessage+`","requested_at":"2026-11-30T12:00:00Z"}`, s(outbox.AttrPayload))
	_, err = TestItem("hl_test_1", "t1", "", at)
	require.Error(t, err, "a test event names its endpoint")
}
