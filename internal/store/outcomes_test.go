package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// A second of one tenant's outcome pages is read whole, over as many
// queries as it takes, up to maxOutcomeQueries: past it, a listing and a
// read by id are refused with ErrSecondTooLarge rather than read without
// end or answered short.
func TestOutcomePagesOfOneSecondAreReadToTheirEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB() // two items a query page
	s := newTestStore(db)
	at := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	write := func(from, n int) []string {
		var ids []string
		for i := from; i < from+n; i++ { // a page each: one row a call
			f := firstDeliveredAt(s, i, at.Add(time.Duration(i)*time.Microsecond))
			left, err := s.RecordFirstAttempts(ctx, []FirstAttempt{f})
			require.NoError(t, err)
			require.Empty(t, left)
			ids = append(ids, f.Delivery.DeliveryID)
		}
		return ids
	}
	ids := write(0, 10)
	var listed []string
	cursor := ""
	for {
		ds, next, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 3, cursor)
		require.NoError(t, err)
		for _, d := range ds {
			listed = append(listed, d.DeliveryID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	require.ElementsMatch(t, ids, listed, "ten pages of one second, five queries, listed three at a time")
	require.Len(t, listed, len(ids), "each once")

	ids = append(ids, write(10, 2*maxOutcomeQueries*2)...)
	_, _, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 3, "")
	require.True(t, errors.Is(err, ErrSecondTooLarge), "%v", err)
	_, err = s.Delivery(ctx, ids[len(ids)-1])
	require.True(t, errors.Is(err, ErrSecondTooLarge), "%v", err)
}

// A row expires with its page's retention: past it, before TTL deletes the
// page, it is neither read nor listed.
func TestOutcomeRowsPastTheirExpiryAreNotRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	f := firstDelivered(s, 1)
	left, err := s.RecordFirstAttempts(ctx, []FirstAttempt{f})
	require.NoError(t, err)
	require.Empty(t, left)
	_, err = s.Delivery(ctx, f.Delivery.DeliveryID)
	require.NoError(t, err)
	written := s.Now()
	s.Now = func() time.Time { return written.Add(s.Retention + time.Second) }
	_, err = s.Delivery(ctx, f.Delivery.DeliveryID)
	require.True(t, errors.Is(err, ErrNotFound), "%v", err)
	ds, _, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 10, "")
	require.NoError(t, err)
	require.Empty(t, ds)
	require.Len(t, db.Items(), 1, "TTL's to delete")
}

// The largest page (maxOutcomeRows rows of the longest ids, type, error
// and a 1 KB response excerpt each) fits a DynamoDB item (400 KB), which
// the fake refuses past.
func TestTheLargestOutcomePageFitsAnItem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	long := func(c string) string { return strings.Repeat(c, 256) }
	at := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	var firsts []FirstAttempt
	for i := range maxOutcomeRows {
		ev := fmt.Sprintf("%s%03d", long("e")[:253], i)
		d := domain.Delivery{DeliveryID: domain.DeliveryID("t1", ev, long("p"), at), TenantID: "t1", EndpointID: long("p"), EventID: ev, EventType: long("t")}
		firsts = append(firsts, FirstAttempt{Delivery: d, Attempt: domain.Attempt{Number: 1, At: at, Status: 299, LatencyMS: 29999, Error: long("x"), Excerpt: strings.Repeat("\u00e9", 1024/2)}})
	}
	left, err := s.RecordFirstAttempts(ctx, firsts)
	require.NoError(t, err)
	require.Empty(t, left)
	require.Len(t, db.Items(), 1, "one page")
	size := len(stringAttr(db.Items()[0], "rows"))
	t.Logf("the largest page's rows: %d bytes", size)
	require.Greater(t, size, 100*(1024+2*256), "every row whole (its endpoint and type named once a page)")
	require.Less(t, size, 400<<10)
}

// A delivery on two pages (its message delivered again and packed again
// beside others) is listed once, and a page of the listing that its copy
// made short still carries a cursor that reads on (a position at the start
// of a second, which no row holds).
func TestOutcomeRowTwiceIsListedOnceAndPagesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	db.PageSize = 100
	s := newTestStore(db)
	b := time.Date(2026, 11, 30, 1, 0, 1, 0, time.UTC)
	x, y, z := firstDeliveredAt(s, 1, b), firstDeliveredAt(s, 2, b.Add(time.Millisecond)), firstDeliveredAt(s, 3, b.Add(2*time.Millisecond))
	earlier := b.Add(-time.Second)
	for pagePK(firstDeliveredAt(s, 4, earlier)) != pagePK(x) {
		earlier = earlier.Add(-time.Second) // a second of the same shard: read after b's in one query
	}
	a1, a2 := firstDeliveredAt(s, 4, earlier), firstDeliveredAt(s, 5, earlier.Add(time.Millisecond))
	for _, page := range [][]FirstAttempt{{x, y}, {x, z}, {a1, a2}} {
		left, err := s.RecordFirstAttempts(ctx, page)
		require.NoError(t, err)
		require.Empty(t, left)
	}
	var listed []string
	cursor := ""
	for pages := 0; pages < 10; pages++ {
		ds, next, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 4, cursor)
		require.NoError(t, err, "page %d", pages)
		for _, d := range ds {
			listed = append(listed, d.DeliveryID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	require.Equal(t, []string{z.Delivery.DeliveryID, y.Delivery.DeliveryID, x.Delivery.DeliveryID, a2.Delivery.DeliveryID, a1.Delivery.DeliveryID}, listed)
}

// A page's rows read back as written: ids made again from the tenant,
// event, endpoint and time (or kept where they are not so made), endpoints
// and types named once, trailing defaults left out; a row naming an
// endpoint the page does not is refused.
func TestOutcomeRowsRoundTrip(t *testing.T) {
	t.Parallel()
	sec := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	at := sec.Add(250 * time.Millisecond)
	rows := []outcomeRow{
		{ID: domain.DeliveryID("t1", "evt_a", "ep_1", at), Endpoint: "ep_1", Event: "evt_a", Type: "order.created", Number: 1, At: at.Add(time.Second).UnixMilli(), Status: 200, LatencyMS: 12, Expires: 99},
		{ID: domain.DeliveryID("t1", "evt_b", "ep_2", sec), Endpoint: "ep_2", Event: "evt_b", Type: "order.paid", Number: 3, At: at.UnixMilli(), Status: 204, LatencyMS: 7, Error: "", Excerpt: "ok", Expires: 99},
		{ID: domain.DeliveryID("t9", "evt_c", "ep_1", sec), Endpoint: "ep_1", Event: "evt_c", Type: "order.created", Number: 1, At: at.UnixMilli(), Status: 202, Expires: 99}, // not t1's id: kept whole
	}
	b, err := encodeRows("t1", sec, rows)
	require.NoError(t, err)
	t.Logf("%d bytes: %s", len(b), b)
	require.Equal(t, 1, strings.Count(string(b), `"ep_1"`), "an endpoint named once")
	require.Equal(t, 1, strings.Count(string(b), rows[2].ID), "only the id not made again")
	got, err := decodeRows("t1", sec, 99, b)
	require.NoError(t, err)
	require.Equal(t, rows, got)
	_, err = decodeRows("t1", sec, 99, []byte(`{"e":["ep_1"],"t":["x"],"r":[["evt_a",1,0,0,0,200,1]]}`))
	require.Error(t, err, "endpoint 1 of a page naming one")
	_, err = decodeRows("t1", sec, 99, []byte(`{"e":["ep_1"],"t":["x"],"r":[["evt_a",0,0]]}`))
	require.Error(t, err, "a row too short")
}
