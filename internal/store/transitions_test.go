package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/stretchr/testify/require"
)

// stored reads an item of the fake table as it is.
func stored(db *dynamofake.DB, k map[string]types.AttributeValue) map[string]types.AttributeValue {
	return db.Item(k)
}

// depthKeys are the keys of every item of a tenant's DLQ depth counter: its
// shards, and the counter of the versions before the shards.
func depthKeys(tenant string) []map[string]types.AttributeValue {
	ks := []map[string]types.AttributeValue{legacyDepthKey(tenant)}
	for n := range depthShards {
		ks = append(ks, depthShardKey(tenant, n))
	}
	return ks
}

// isDepthKey reports whether k is the key of an item of tenant's counter.
func isDepthKey(tenant string, k map[string]types.AttributeValue) bool {
	for _, d := range depthKeys(tenant) {
		if dynamofake.ItemKey(d) == dynamofake.ItemKey(k) {
			return true
		}
	}
	return false
}

// depthItems are the items of a tenant's counter as they are, nil for each
// absent one.
func depthItems(db *dynamofake.DB, tenant string) []map[string]types.AttributeValue {
	var items []map[string]types.AttributeValue
	for _, k := range depthKeys(tenant) {
		items = append(items, stored(db, k))
	}
	return items
}

// counter reads a tenant's DLQ depth counter straight from the fake table:
// the sum of its items.
func counter(t *testing.T, db *dynamofake.DB, tenant string) int {
	t.Helper()
	sum := 0
	for _, item := range depthItems(db, tenant) {
		if item == nil {
			continue
		}
		n, err := strconv.Atoi(item["depth"].(*types.AttributeValueMemberN).Value)
		require.NoError(t, err)
		sum += n
	}
	return sum
}

// indexedDead counts a tenant's entries in the dead index and in gsi1's
// legacy dead partition (a delivery in both counts twice).
func indexedDead(db *dynamofake.DB, tenant string) int {
	n := 0
	for _, item := range db.Items() {
		if dynamofake.String(item, AttrDeadPK) == DeadPK(tenant, dynamofake.String(item, "delivery_id")) {
			n++
		}
		if dynamofake.String(item, "gsi1pk") == keys.TenantIndex(tenant, "DEAD") {
			n++
		}
	}
	return n
}

func newDelivery(tenant, event string) domain.Delivery {
	return domain.Delivery{DeliveryID: domain.DeliveryID(tenant, event, "ep_1", time.Time{}), TenantID: tenant, EndpointID: "ep_1", EventID: event, EventType: "order.created"}
}

// read returns a delivery as deliver reads it: the record, or the ids alone
// when there is none.
func read(t *testing.T, s *Store, d domain.Delivery) domain.Delivery {
	t.Helper()
	cur, err := s.Delivery(context.Background(), d.DeliveryID)
	if errors.Is(err, ErrNotFound) {
		return d
	}
	require.NoError(t, err)
	return cur
}

var errThrottled = errors.New("throttled")

// Every move of a delivery into or out of dead moves its tenant's DLQ depth
// in the same write: a failure of either write (here the counter's,
// injected) leaves both as they were, so the counter can never drift from
// the dead index. Done again without the failure, the move counts once.
func TestDeadTransitionsMoveTheCounterInTheSameWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dead := domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: `{"m":1}`}
	at := func(s *Store) domain.Attempt {
		return domain.Attempt{Number: 2, At: s.Now(), Status: 400, Error: "http_400"}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, s *Store, d domain.Delivery)
		move  func(s *Store, d domain.Delivery) error
		depth int // the tenant's depth after the move
	}{
		{"a first attempt kills it", nil,
			func(s *Store, d domain.Delivery) error { return s.RecordAttempt(ctx, d, at(s), dead) }, 1},
		{"an attempt kills a pending delivery", pending,
			func(s *Store, d domain.Delivery) error { return s.RecordAttempt(ctx, d, at(s), dead) }, 1},
		{"recorded dead before its last attempt", pending,
			func(s *Store, d domain.Delivery) error {
				return s.MarkDeadBeforeLastAttempt(ctx, d, "attempts_exhausted", `{"m":1}`, s.Now())
			}, 1},
		{"a success after a death", killed,
			func(s *Store, d domain.Delivery) error {
				return s.RecordAttempt(ctx, d, domain.Attempt{Number: 3, At: s.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered})
			}, 0},
		{"another copy retried after a death", killed,
			func(s *Store, d domain.Delivery) error {
				return s.RecordAttempt(ctx, d, domain.Attempt{Number: 3, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending})
			}, 0},
		{"a replay claims it", killed,
			func(s *Store, d domain.Delivery) error {
				_, err := claimByID(ctx, s, d.DeliveryID, d.TenantID, "rj_1", time.Minute)
				return err
			}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := newFakeDB()
			s := newTestStore(db)
			d := newDelivery("t1", "evt_1")
			if c.setup != nil {
				c.setup(t, s, d)
			}
			before, depthBefore := stored(db, deliveryKey(d.DeliveryID)), depthItems(db, "t1")
			d = read(t, s, d)

			db.Fault = func(_ string, k map[string]types.AttributeValue) error {
				if isDepthKey("t1", k) {
					return errThrottled
				}
				return nil
			}
			require.Error(t, c.move(s, d), "the counter's write failed: so did the move")
			require.Equal(t, before, stored(db, deliveryKey(d.DeliveryID)), "the delivery is as it was")
			require.Equal(t, depthBefore, depthItems(db, "t1"), "and so is the counter")

			db.Fault = nil
			require.NoError(t, c.move(s, d))
			require.Equal(t, c.depth, counter(t, db, "t1"))
			require.Equal(t, c.depth, indexedDead(db, "t1"), "the counter is the dead index's count")
		})
	}
}

func pending(t *testing.T, s *Store, d domain.Delivery) {
	t.Helper()
	require.NoError(t, s.RecordAttempt(context.Background(), d, domain.Attempt{Number: 1, At: s.Now(), Status: 503, Error: "http_503"}, domain.Outcome{State: domain.StatePending}))
}

func killed(t *testing.T, s *Store, d domain.Delivery) {
	t.Helper()
	pending(t, s, d)
	require.NoError(t, s.RecordAttempt(context.Background(), read(t, s, d), domain.Attempt{Number: 2, At: s.Now(), Status: 400, Error: "http_400"},
		domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: `{"m":1}`}))
	require.Equal(t, 1, counter(t, s.db.(indexReadiness).DynamoDB.(*dynamofake.DB), d.TenantID))
}

// Two copies of a delivery attempted at once (SQS delivers at least once)
// both read the record before either records its attempt: both attempts
// are kept in the log and counted, whichever writes first.
func TestConcurrentDuplicateAttemptsAreAllLogged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("the second writes between the first's read and its write", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		d := newDelivery("t1", "evt_1")
		pending(t, s, d)
		stale := read(t, s, d)
		interleaved := false
		db.BeforeWrite = func(_ string, keys []map[string]types.AttributeValue) {
			if !interleaved {
				interleaved = true
				require.NoError(t, s.RecordAttempt(ctx, stale, domain.Attempt{Number: 3, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
			}
		}
		require.NoError(t, s.RecordAttempt(ctx, stale, domain.Attempt{Number: 2, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		got := read(t, s, d)
		require.Equal(t, 3, got.Attempts)
		require.ElementsMatch(t, []int{1, 2, 3}, numbers(got.AttemptLog), "no entry lost")
	})
	t.Run("two writers at once", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		for i := range 50 {
			d := newDelivery("t1", fmt.Sprintf("evt_%d", i))
			pending(t, s, d)
			stale := read(t, s, d)
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for w := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[w] = s.RecordAttempt(ctx, stale, domain.Attempt{Number: 2 + w, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending})
				}()
			}
			wg.Wait()
			require.NoError(t, errors.Join(errs...))
			got := read(t, s, d)
			require.Equal(t, 3, got.Attempts, "delivery %d", i)
			require.ElementsMatch(t, []int{1, 2, 3}, numbers(got.AttemptLog), "delivery %d", i)
		}
	})
	t.Run("at the cap, the newest are kept", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		d := newDelivery("t1", "evt_cap")
		for i := 1; i <= MaxAttemptLog; i++ {
			require.NoError(t, s.RecordAttempt(ctx, read(t, s, d), domain.Attempt{Number: i, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		}
		stale := read(t, s, d)
		interleaved := false
		db.BeforeWrite = func(string, []map[string]types.AttributeValue) {
			if !interleaved {
				interleaved = true
				require.NoError(t, s.RecordAttempt(ctx, stale, domain.Attempt{Number: MaxAttemptLog + 2, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
			}
		}
		require.NoError(t, s.RecordAttempt(ctx, stale, domain.Attempt{Number: MaxAttemptLog + 1, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		got := read(t, s, d)
		require.Equal(t, MaxAttemptLog+2, got.Attempts)
		require.Len(t, got.AttemptLog, MaxAttemptLog)
		require.Subset(t, numbers(got.AttemptLog), []int{MaxAttemptLog + 1, MaxAttemptLog + 2})
		require.NotContains(t, numbers(got.AttemptLog), 1, "the oldest two went")
		require.NotContains(t, numbers(got.AttemptLog), 2)
	})
	t.Run("a duplicate that kills it while the other delivers it", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		d := newDelivery("t1", "evt_race")
		pending(t, s, d)
		stale := read(t, s, d)
		interleaved := false
		db.BeforeWrite = func(string, []map[string]types.AttributeValue) {
			if !interleaved {
				interleaved = true
				require.NoError(t, s.RecordAttempt(ctx, stale, domain.Attempt{Number: 2, At: s.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
			}
		}
		require.NoError(t, s.RecordAttempt(ctx, stale, domain.Attempt{Number: 3, At: s.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: "{}"}))
		got := read(t, s, d)
		require.Equal(t, domain.StateDelivered, got.State, "delivered never moves back")
		require.Zero(t, counter(t, db, "t1"))
		require.Zero(t, indexedDead(db, "t1"))
	})
}

func numbers(log []domain.Attempt) []int {
	out := make([]int, len(log))
	for i, a := range log {
		out[i] = a.Number
	}
	return out
}

// A replay's claim gives the record Retention again from the claim: a
// delivery replayed near the end of its record's life does not expire in
// flight (its retries, its listing, its next death).
func TestClaimForReplayExtendsTheExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	d := newDelivery("t1", "evt_1")
	killed(t, s, d)
	died := s.Now()
	require.Equal(t, strconv.FormatInt(died.Add(s.Retention).Unix(), 10), stored(db, deliveryKey(d.DeliveryID))["expires_at"].(*types.AttributeValueMemberN).Value)

	later := died.Add(14 * 24 * time.Hour)
	s.Now = func() time.Time { return later }
	_, err := claimByID(ctx, s, d.DeliveryID, "t1", "rj_1", time.Minute)
	require.NoError(t, err)
	require.Equal(t, strconv.FormatInt(later.Add(s.Retention).Unix(), 10), stored(db, deliveryKey(d.DeliveryID))["expires_at"].(*types.AttributeValueMemberN).Value)
}

// deadOnes is a store on a fake table holding n deliveries of tenant t1,
// dead after a first failed attempt, and those deliveries as read and
// their ids.
func deadOnes(t *testing.T, n int) (*Store, *dynamofake.DB, []domain.Delivery, []string) {
	t.Helper()
	db := newFakeDB()
	s := newTestStore(db)
	tenant := "t1"
	var reads []domain.Delivery
	var ids []string
	for i := range n {
		d := newDelivery(tenant, fmt.Sprintf("evt_%02d", i))
		pending(t, s, d)
		require.NoError(t, s.RecordAttempt(context.Background(), read(t, s, d), domain.Attempt{Number: 2, At: s.Now(), Status: 400, Error: "http_400"},
			domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400", Message: `{"m":1}`}))
		reads, ids = append(reads, read(t, s, d)), append(ids, d.DeliveryID)
	}
	return s, db, reads, ids
}

// A replay's chunk of claims is one transaction, with no read: the
// deliveries as the caller read them, each claimed on that condition, the
// tenant's DLQ depth moved once a counter shard. What cannot be claimed as
// read (another job's claim, a delivered one, another tenant's) is
// answered in its place with no write; 60 claims are three transactions
// (25 a transaction, within DynamoDB's 100 members with their shards).
func TestClaimsAreOneTransactionAChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, reads, _ := deadOnes(t, 60)
	require.Equal(t, 60, counter(t, db, "t1"))
	other := newDelivery("t2", "evt_other")
	killed(t, s, other)
	done := newDelivery("t1", "evt_done")
	pending(t, s, done)
	require.NoError(t, s.RecordAttempt(ctx, read(t, s, done), domain.Attempt{Number: 2, At: s.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))

	chunk := append(slices.Clone(reads[:10]), read(t, s, other), read(t, s, done))
	gets, txs := db.Calls("GetItem"), db.Calls("TransactWriteItems")
	got, errs := s.ClaimForReplay(ctx, chunk, "t1", "rj_1", time.Minute)
	require.Equal(t, gets, db.Calls("GetItem"), "no read: the deliveries as read")
	require.Equal(t, txs+1, db.Calls("TransactWriteItems"), "ten claims, one transaction")
	for i := range 10 {
		require.NoError(t, errs[i])
		require.Equal(t, domain.StatePending, got[i].State)
		require.Equal(t, "rj_1", got[i].ReplayClaimedBy)
		require.Equal(t, `{"m":1}`, got[i].Message)
		require.Equal(t, domain.StatePending, read(t, s, reads[i]).State)
	}
	require.ErrorIs(t, errs[10], ErrNotFound, "another tenant's")
	require.ErrorIs(t, errs[11], ErrNotDead)
	require.Equal(t, 50, counter(t, db, "t1"), "the depth moved by ten")
	require.Equal(t, 1, counter(t, db, "t2"))

	// One changed since it was read (another job claimed it): the
	// transaction is cancelled, and each is claimed on its own, read again.
	_, err := claimByID(ctx, s, reads[12].DeliveryID, "t1", "rj_other", time.Minute)
	require.NoError(t, err)
	got, errs = s.ClaimForReplay(ctx, reads[10:20], "t1", "rj_1", time.Minute)
	for i := range 10 {
		if i == 2 {
			require.ErrorIs(t, errs[i], ErrReplayInFlight)
			continue
		}
		require.NoError(t, errs[i])
		require.Equal(t, "rj_1", got[i].ReplayClaimedBy)
	}
	require.Equal(t, 40, counter(t, db, "t1"), "nine more out, and the other job's one")

	txs = db.Calls("TransactWriteItems")
	_, errs = s.ClaimForReplay(ctx, reads[20:], "t1", "rj_1", time.Minute)
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, txs+2, db.Calls("TransactWriteItems"), "40 claims, two transactions of at most 25")
	require.Equal(t, 0, counter(t, db, "t1"))
	require.Equal(t, 0, indexedDead(db, "t1"))

	// Claimed again by the same job (a step resumed): answered as claimed.
	got, errs = s.ClaimForReplay(ctx, []domain.Delivery{read(t, s, reads[0])}, "t1", "rj_1", time.Minute)
	require.NoError(t, errs[0])
	require.Equal(t, "rj_1", got[0].ReplayClaimedBy)
	require.Equal(t, 0, counter(t, db, "t1"), "a claim of a claimed one moves no depth")
}

// A chunk's releases are one transaction; one whose claim another job took
// over (stale) cancels it, and each is then released on its own: that one
// left to the other job, the rest released.
func TestReleasesAreOneTransactionAChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db, reads, ids := deadOnes(t, 10)
	_, errs := s.ClaimForReplay(ctx, reads, "t1", "rj_1", time.Minute)
	require.NoError(t, errors.Join(errs...))

	txs, updates := db.Calls("TransactWriteItems"), db.Calls("UpdateItem")
	require.NoError(t, s.ReleaseReplay(ctx, ids[:5], "rj_1"))
	require.Equal(t, txs+1, db.Calls("TransactWriteItems"), "five releases, one transaction")
	require.Equal(t, updates, db.Calls("UpdateItem"))
	for _, id := range ids[:5] {
		d, err := s.Delivery(ctx, id)
		require.NoError(t, err)
		require.Equal(t, "rj_1", d.ReplayedBy)
		require.Empty(t, d.ReplayClaimedBy)
	}

	// rj_1's claim on ids[7] went stale and another job took it over.
	later := s.Now().Add(2 * time.Minute)
	s.Now = func() time.Time { return later }
	_, err := claimByID(ctx, s, ids[7], "t1", "rj_2", time.Minute)
	require.NoError(t, err)
	require.NoError(t, s.ReleaseReplay(ctx, ids[5:], "rj_1"))
	for _, id := range ids[5:] {
		d, err := s.Delivery(ctx, id)
		require.NoError(t, err)
		if id == ids[7] {
			require.Equal(t, "rj_2", d.ReplayClaimedBy, "the other job's claim stands")
			continue
		}
		require.Equal(t, "rj_1", d.ReplayedBy)
		require.Empty(t, d.ReplayClaimedBy)
	}
}

// What the sweep needs when it records a death from a DLQ message: the
// write happens only on the record as the sweep read it. A record read as
// missing, and made meanwhile (a copy of the delivery attempted at that
// moment), is not overwritten: the sweep is told, and reads it again.
func TestRecordAttemptIfUnchangedWritesOnlyOnTheRecordAsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	death := domain.Outcome{State: domain.StateDead, DeadReason: "attempts_exhausted", Message: `{"m":1}`}
	cases := []struct {
		name      string
		setup     func(t *testing.T, s *Store, d domain.Delivery)
		meanwhile func(t *testing.T, s *Store, d domain.Delivery)
		written   bool
	}{
		{"read as missing, still missing", nil, nil, true},
		{"read as missing, created meanwhile", nil, pending, false},
		{"read as missing, delivered meanwhile", nil, func(t *testing.T, s *Store, d domain.Delivery) {
			require.NoError(t, s.RecordAttempt(ctx, d, domain.Attempt{Number: 1, At: s.Now(), Status: 200}, domain.Outcome{State: domain.StateDelivered}))
		}, false},
		{"read as pending, unchanged", pending, nil, true},
		{"read as pending, attempted meanwhile", pending, func(t *testing.T, s *Store, d domain.Delivery) {
			require.NoError(t, s.RecordAttempt(ctx, read(t, s, d), domain.Attempt{Number: 2, At: s.Now(), Status: 503}, domain.Outcome{State: domain.StatePending}))
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			db := newFakeDB()
			s := newTestStore(db)
			d := newDelivery("t1", "evt_1")
			if c.setup != nil {
				c.setup(t, s, d)
			}
			seen := read(t, s, d)
			if c.meanwhile != nil {
				c.meanwhile(t, s, d)
			}
			before := stored(db, deliveryKey(d.DeliveryID))
			err := s.RecordAttemptIfUnchanged(ctx, seen, domain.Attempt{Number: seen.Attempts + 1, At: s.Now(), Error: "death_not_recorded"}, death)
			if !c.written {
				require.ErrorIs(t, err, ErrConflict)
				require.Equal(t, before, stored(db, deliveryKey(d.DeliveryID)), "the record made meanwhile is left as it is")
				require.Zero(t, counter(t, db, "t1"))
				return
			}
			require.NoError(t, err)
			got := read(t, s, d)
			require.Equal(t, domain.StateDead, got.State)
			require.Equal(t, 1, counter(t, db, "t1"))
			require.Equal(t, "death_not_recorded", got.AttemptLog[len(got.AttemptLog)-1].Error)
		})
	}
}

// A burst of deaths of one tenant contends on its counter: a transaction
// cancelled for colliding with another is tried again, and counts once.
func TestATransactionThatCollidesIsTriedAgain(t *testing.T) {
	t.Parallel()
	db := newFakeDB()
	s := newTestStore(db)
	d := newDelivery("t1", "evt_1")
	collisions := 0
	db.Fault = func(op string, k map[string]types.AttributeValue) error {
		if op == "TransactWriteItems" && isDepthKey("t1", k) && collisions < 3 {
			collisions++
			return dynamofake.ErrTransactionConflict
		}
		return nil
	}
	require.NoError(t, s.RecordAttempt(context.Background(), d, domain.Attempt{Number: 1, At: s.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400"}))
	require.Equal(t, 3, collisions)
	require.Equal(t, 1, counter(t, db, "t1"))
	require.Equal(t, 1, read(t, s, d).Attempts)

	db.Fault = func(op string, k map[string]types.AttributeValue) error {
		if isDepthKey("t1", k) {
			return dynamofake.ErrTransactionConflict
		}
		return nil
	}
	d2 := newDelivery("t1", "evt_2")
	err := s.RecordAttempt(context.Background(), d2, domain.Attempt{Number: 1, At: s.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400"})
	var tce *types.TransactionCanceledException
	require.ErrorAs(t, err, &tce, "a collision that does not clear is an error, not a loop")
	require.Nil(t, stored(db, deliveryKey(d2.DeliveryID)))
}

// setCounter writes a tenant's counter as an earlier version left it: one
// item (no shards), its depth moved in a write of its own (no moves, no
// moved_at).
func setCounter(db *dynamofake.DB, tenant string, depth int) {
	for _, k := range depthKeys(tenant) {
		db.RemoveItem(k)
	}
	db.SetItem(withKey(map[string]types.AttributeValue{
		"depth":     &types.AttributeValueMemberN{Value: strconv.Itoa(depth)},
		"tenant_id": &types.AttributeValueMemberS{Value: tenant},
		"gsi1pk":    &types.AttributeValueMemberS{Value: keys.DepthSK},
		"gsi1sk":    &types.AttributeValueMemberS{Value: tenant},
	}, legacyDepthKey(tenant)))
}

// Counters written by earlier versions, which moved the counter in a
// second write, may be off for good (a crash between the two writes). The
// reconciliation recounts the dead index and corrects them; it trusts the
// index, which is eventually consistent, only once the counter has stood
// still, and never overwrites a move made while it counted.
func TestReconcileDLQDepth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	kill := func(t *testing.T, s *Store, event string) {
		t.Helper()
		require.NoError(t, s.RecordAttempt(ctx, newDelivery("t1", event), domain.Attempt{Number: 1, At: s.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400"}))
	}
	t.Run("a counter left off by the old crash is corrected", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		kill(t, s, "evt_1")
		kill(t, s, "evt_2")
		setCounter(db, "t1", 3) // a death counted, its delivery's write lost
		check, err := s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, DepthCheck{TenantID: "t1", Counter: 3, Indexed: 2, Corrected: true, Migrated: true}, check)
		require.Equal(t, 2, counter(t, db, "t1"))

		check, err = s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, DepthCheck{TenantID: "t1", Counter: 2, Indexed: 2}, check, "right now: nothing to do")
	})
	t.Run("a death never counted, not even a counter", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		kill(t, s, "evt_1")
		for _, k := range depthKeys("t1") {
			db.RemoveItem(k)
		}
		check, err := s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.True(t, check.Corrected)
		require.Equal(t, 1, counter(t, db, "t1"))
		depths, err := s.DLQDepths(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"t1": 1}, depths, "listed again")
	})
	t.Run("an index that has not caught up with a move is not trusted", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		db.LagIndex = true
		db.Propagate()
		kill(t, s, "evt_1") // counted at once; not yet in the index
		check, err := s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, DepthCheck{TenantID: "t1", Counter: 1, Deferred: true}, check)
		require.Equal(t, 1, counter(t, db, "t1"))

		// A minute later the index shows it.
		later := s.Now().Add(s.DepthSettle)
		s.Now = func() time.Time { return later }
		db.Propagate()
		check, err = s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, DepthCheck{TenantID: "t1", Counter: 1, Indexed: 1}, check)
	})
	t.Run("a move while it counts is not overwritten", func(t *testing.T) {
		db := newFakeDB()
		s := newTestStore(db)
		kill(t, s, "evt_1")
		setCounter(db, "t1", 5)
		moved := false
		db.BeforeWrite = func(_ string, keys []map[string]types.AttributeValue) {
			if !moved && isDepthKey("t1", keys[0]) {
				moved = true
				kill(t, s, "evt_2") // between the count and the correction
			}
		}
		check, err := s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.True(t, check.Deferred)
		require.False(t, check.Corrected)
		require.Equal(t, 6, counter(t, db, "t1"), "the move stands; the next reconciliation corrects")

		later := s.Now().Add(s.DepthSettle)
		s.Now = func() time.Time { return later }
		check, err = s.ReconcileDLQDepth(ctx, "t1")
		require.NoError(t, err)
		require.True(t, check.Corrected)
		require.Equal(t, 2, counter(t, db, "t1"))
	})
}

// An upgrade from the versions before the shards: the tenant's counter is
// one item (TENANT#<t> / DLQDEPTH, under gsi1 DLQDEPTH), moved in the
// deaths' transactions (moves, moved_at). It is summed in with the shards
// the new version moves, and the reconciliation folds it into them once it
// stood still, neither losing nor doubling a death; a move meanwhile
// defers the fold.
func TestDLQDepthUpgradeFromOneCounter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newFakeDB()
	s := newTestStore(db)
	kill := func(event string) {
		t.Helper()
		require.NoError(t, s.RecordAttempt(ctx, newDelivery("t1", event), domain.Attempt{Number: 1, At: s.Now(), Status: 400}, domain.Outcome{State: domain.StateDead, DeadReason: "rejected_400"}))
	}
	kill("evt_1")
	kill("evt_2")
	setCounter(db, "t1", 2) // as the old version left it ...
	old := stored(db, legacyDepthKey("t1"))
	old["moves"] = &types.AttributeValueMemberN{Value: "2"} // ... moved in the deaths' transactions
	old["moved_at"] = timeValue(s.Now())
	db.SetItem(old)
	setCounter(db, "t2", 4) // and another tenant's, untouched here

	kill("evt_3") // the new version: on a shard
	require.Equal(t, 3, counter(t, db, "t1"))
	depths, err := s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"t1": 3, "t2": 4}, depths, "the old counter summed in")

	check, err := s.ReconcileDLQDepth(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, DepthCheck{TenantID: "t1", Counter: 3, Deferred: true}, check, "just moved")

	later := s.Now().Add(s.DepthSettle)
	s.Now = func() time.Time { return later }
	moved := false
	db.BeforeWrite = func(_ string, keys []map[string]types.AttributeValue) {
		if !moved && isDepthKey("t1", keys[0]) {
			moved = true
			kill("evt_4") // between the count and the fold
		}
	}
	check, err = s.ReconcileDLQDepth(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, DepthCheck{TenantID: "t1", Counter: 3, Indexed: 3, Deferred: true}, check, "a move meanwhile: not folded")
	require.NotNil(t, stored(db, legacyDepthKey("t1")))
	require.Equal(t, 4, counter(t, db, "t1"), "the move stands")

	later = later.Add(s.DepthSettle)
	check, err = s.ReconcileDLQDepth(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, DepthCheck{TenantID: "t1", Counter: 4, Indexed: 4, Migrated: true}, check, "folded, nothing to correct")
	require.Nil(t, stored(db, legacyDepthKey("t1")), "the old counter is deleted")
	require.Equal(t, 4, counter(t, db, "t1"))
	check, err = s.ReconcileDLQDepth(ctx, "t1")
	require.NoError(t, err)
	require.Equal(t, DepthCheck{TenantID: "t1", Counter: 4, Indexed: 4}, check, "once")
	depths, err = s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"t1": 4, "t2": 4}, depths)

	for i := 1; i <= 4; i++ { // replays take each out, on its shard
		_, err := claimByID(ctx, s, newDelivery("t1", fmt.Sprintf("evt_%d", i)).DeliveryID, "t1", "rj_1", time.Minute)
		require.NoError(t, err)
	}
	require.Equal(t, 0, counter(t, db, "t1"))
	require.Equal(t, 0, indexedDead(db, "t1"))
	// The fold put the old counter's 2 on shard 0 while evt_1 and evt_2
	// left their own shards: a shard alone means nothing, only the sum.
	depths, err = s.DLQDepths(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"t1": 0, "t2": 4}, depths)
}

// claimByID reads delivery id strongly, as a replay step does, and claims
// it for job alone (store.ClaimForReplay with one delivery).
func claimByID(ctx context.Context, s *Store, id, tenantID, job string, stale time.Duration) (domain.Delivery, error) {
	d, err := s.Delivery(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return d, err
	}
	d.DeliveryID = id
	ds, errs := s.ClaimForReplay(ctx, []domain.Delivery{d}, tenantID, job, stale)
	return ds[0], errs[0]
}
