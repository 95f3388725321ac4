package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/stretchr/testify/require"
)

// putDead writes a dead delivery straight into the fake table, indexed as
// RecordAttempt indexes one: in its tenant's partition of the dead index,
// by time (its shard of the dead index).
func putDead(t *testing.T, db *dynamofake.DB, tenant, id, endpoint, typ string, at time.Time) {
	t.Helper()
	putDeadIn(t, db, AttrDeadPK, AttrDeadSK, tenant, id, endpoint, typ, at)
}

// putLegacyDead writes a dead delivery as earlier versions indexed one: in
// gsi1's dead partition of its tenant, whole.
func putLegacyDead(t *testing.T, db *dynamofake.DB, tenant, id, endpoint, typ string, at time.Time) {
	t.Helper()
	putDeadIn(t, db, "gsi1pk", "gsi1sk", tenant, id, endpoint, typ, at)
}

func putDeadIn(t *testing.T, db *dynamofake.DB, pkAttr, skAttr, tenant, id, endpoint, typ string, at time.Time) {
	t.Helper()
	d := domain.Delivery{DeliveryID: id, TenantID: tenant, EndpointID: endpoint, EventID: "evt_" + id, EventType: typ, State: domain.StateDead, DeadAt: &at,
		Message: `{"payload":"` + id + `"}`, Attempts: 3, AttemptLog: []domain.Attempt{{Number: 3, At: at, Status: 503, Excerpt: "busy"}}}
	item, err := attributevalue.MarshalMap(d)
	require.NoError(t, err)
	pk := DeadPK(tenant, id) // the dead index's shard
	if pkAttr == "gsi1pk" {
		pk = keys.TenantIndex(tenant, "DEAD") // gsi1's legacy partition
	}
	item[pkAttr] = &types.AttributeValueMemberS{Value: pk}
	item[skAttr] = &types.AttributeValueMemberS{Value: sortableTime(at) + "#" + id}
	db.SetItem(withKey(item, deliveryKey(id)))
}

// listAll pages through ListDead, limit at a time.
func listAll(t *testing.T, s *Store, tenant string, f domain.DeadFilter, limit int) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for range 100 {
		ds, next, err := s.ListDead(context.Background(), tenant, f, limit, cursor)
		require.NoError(t, err)
		for _, d := range ds {
			ids = append(ids, d.DeliveryID)
		}
		if cursor = next; cursor == "" {
			return ids
		}
	}
	t.Fatal("ListDead did not finish in 100 pages")
	return nil
}

// DynamoDB refuses a key range whose upper bound is below its lower one,
// and a start key outside the range (ValidationException, which the API
// would answer 500): ListDead never sends either. The fake table refuses
// both as DynamoDB does.
func TestListDeadNeverSendsAQueryDynamoDBRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	t0 := time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)
	for i := range 6 {
		typ := "order.created"
		if i%2 == 1 {
			typ = "payment.failed"
		}
		put := putDead
		if i%2 == 1 {
			put = putLegacyDead // the payment.failed ones are of an earlier version
		}
		put(t, db, "t1", fmt.Sprintf("msg_%d", i), "ep_1", typ, t0.Add(time.Duration(i)*time.Minute))
	}
	putDead(t, db, "t2", "msg_other", "ep_9", "order.created", t0)
	all := []string{"msg_0", "msg_1", "msg_2", "msg_3", "msg_4", "msg_5"}

	t.Run("pages hold every dead delivery once, in time order", func(t *testing.T) {
		require.Equal(t, all, listAll(t, s, "t1", domain.DeadFilter{}, 2))
		require.Equal(t, []string{"msg_1", "msg_3", "msg_5"}, listAll(t, s, "t1", domain.DeadFilter{EventType: "payment.failed"}, 1))
		require.Equal(t, []string{"msg_2", "msg_3"}, listAll(t, s, "t1", domain.DeadFilter{Since: t0.Add(2 * time.Minute), Until: t0.Add(3 * time.Minute)}, 1))
	})
	t.Run("times far apart, within what the keys hold", func(t *testing.T) {
		far := time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC)
		ds, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{Since: far}, 10, "")
		require.NoError(t, err, "a since past the old upper bound (\"9\") is an empty range, not an invalid one")
		require.Empty(t, ds)
		last := time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
		require.Equal(t, all, listAll(t, s, "t1", domain.DeadFilter{Since: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), Until: last}, 4))
	})
	t.Run("a filter the keys cannot hold is ErrBadFilter", func(t *testing.T) {
		for name, f := range map[string]domain.DeadFilter{
			"until before since":  {Since: t0.Add(time.Minute), Until: t0},
			"since in year 10000": {Since: time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -3600))},
			"until in year -1":    {Until: time.Date(0, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600))},
		} {
			_, _, err := s.ListDead(ctx, "t1", f, 10, "")
			require.ErrorIs(t, err, ErrBadFilter, name)
		}
	})
	t.Run("a cursor of another query is ErrCursorMismatch", func(t *testing.T) {
		_, cursor, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 2, "")
		require.NoError(t, err)
		require.NotEmpty(t, cursor)
		_, filtered, err := s.ListDead(ctx, "t1", domain.DeadFilter{EventType: "order.created"}, 1, "")
		require.NoError(t, err)
		require.NotEmpty(t, filtered)
		for name, tc := range map[string]struct {
			f      domain.DeadFilter
			cursor string
		}{
			// The cursor's position (msg_1, a minute in) is below this range.
			"reused with a later since": {domain.DeadFilter{Since: t0.Add(3 * time.Minute)}, cursor},
			// Above this one.
			"reused with an earlier until": {domain.DeadFilter{Until: t0}, cursor},
			// Inside the range, but made for another filter.
			"reused with another filter": {domain.DeadFilter{EventType: "payment.failed"}, cursor},
			"another filter's":           {domain.DeadFilter{}, filtered},
			// A cursor without its query (as made before it had one) is
			// still checked against the range.
			"no query, outside the range": {domain.DeadFilter{Since: t0.Add(3 * time.Minute)}, deadCursorFor("msg_1", t0.Add(time.Minute), "")},
		} {
			_, _, err := s.ListDead(ctx, "t1", tc.f, 2, tc.cursor)
			require.ErrorIs(t, err, ErrCursorMismatch, name)
		}
		ds, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 10, deadCursorFor("msg_1", t0.Add(time.Minute), ""))
		require.NoError(t, err, "a cursor without its query, inside the range")
		require.Len(t, ds, 4)
	})
	t.Run("a cursor this store did not make is ErrBadCursor", func(t *testing.T) {
		enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
		for name, cursor := range map[string]string{
			"not base64":          "!!!",
			"not JSON":            enc("msg_1"),
			"no id":               enc(`{"SK":"2026-11-30T01:01:00.000000000Z#"}`),
			"no such partition":   enc(`{"SK":"2026-11-30T01:01:00.000000000Z#msg_1","X":131072}`),
			"no position":         enc(`{"ID":"msg_1"}`),
			"position not a time": enc(`{"ID":"msg_1","SK":"9#msg_1"}`),
			"another id":          enc(`{"ID":"msg_1","SK":"2026-11-30T01:01:00.000000000Z#msg_2"}`),
			"a short time":        enc(`{"ID":"msg_1","SK":"2026-11-30T01:01:00Z#msg_1"}`),
		} {
			_, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 2, cursor)
			require.ErrorIs(t, err, ErrBadCursor, name)
			require.NotErrorIs(t, err, ErrCursorMismatch, name)
		}
	})
	t.Run("a cursor cannot reach another tenant", func(t *testing.T) {
		ds, _, err := s.ListDead(ctx, "t2", domain.DeadFilter{}, 10, deadCursorFor("msg_0", t0.Add(-time.Minute), ""))
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, "msg_other", ds[0].DeliveryID)
	})
}

func deadCursorFor(id string, at time.Time, query string) string {
	return EncodeDeadCursor(DeadCursor{ID: id, SK: sortableTime(at) + "#" + id, Q: query})
}

func TestKeyTime(t *testing.T) {
	t.Parallel()
	require.True(t, KeyTime(time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)))
	require.True(t, KeyTime(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)))
	require.False(t, KeyTime(time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -3600))))
	require.False(t, KeyTime(time.Date(-1, 12, 31, 23, 59, 59, 0, time.UTC)))
	// What KeyTime accepts sorts as strings in time order.
	times := []time.Time{time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)}
	for i := 1; i < len(times); i++ {
		require.Less(t, sortableTime(times[i-1]), sortableTime(times[i]))
	}
	require.Less(t, "0", sortableTime(times[0]), "the lowest bound is below every key")
	require.Less(t, sortableTime(times[len(times)-1])+"#msg_x", "~", "the highest bound is above every key")
}

// A job save that the SDK sent twice (its first answer lost after the
// write) is not refused by the second, which finds the first's item:
// concurrent operator redrives answered 500 for it ("replay job rj_...:
// conflicting change"). A save that finds another's write is still refused.
func TestJobSaveIsNotRefusedByItsOwnRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := New(retriedPuts{db}, "state")
	now := time.Date(2026, 11, 30, 1, 2, 3, 4, time.UTC)
	s.Now = func() time.Time { return now }

	j := domain.Job{JobID: "rj_1", Kind: domain.KindRedrive, Status: domain.StatusQueued}
	require.NoError(t, s.CreateJob(ctx, &j, 3), "an operator job: one conditional put, sent twice")
	require.Equal(t, 1, j.Version)
	now = now.Add(time.Second)
	j.Status = domain.StatusRunning
	require.NoError(t, s.SaveJob(ctx, &j), "an update, sent twice")
	require.Equal(t, 2, j.Version)
	require.Equal(t, 4, db.Calls("PutItem"), "each put was sent twice")

	now = now.Add(time.Nanosecond)
	other := domain.Job{JobID: "rj_1", Kind: domain.KindRedrive, Status: domain.StatusQueued}
	require.ErrorIs(t, s.CreateJob(ctx, &other, 3), ErrConflict, "another job of the same id")
	stale := j
	stale.Version = 1
	require.ErrorIs(t, s.SaveJob(ctx, &stale), ErrConflict, "a save from a stale read")
	got, err := s.Job(ctx, "rj_1")
	require.NoError(t, err)
	require.Equal(t, domain.StatusRunning, got.Status)
	require.Equal(t, 2, got.Version)
}
