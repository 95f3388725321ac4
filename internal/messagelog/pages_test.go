package messagelog

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// pagedLog is an outbox whose acme events are listed, n of them at times
// spread over a minute (several in one nanosecond), the first fifth by
// the index (put: items of an earlier producer library) and the rest by
// pages, written as enqueue writes them: in stream batches of up to 30,
// one of them written twice, split differently (a retried batch), so that
// some events are on two pages. It returns the readers (of the sharded
// index and of the legacy one) and the events, newest first.
func pagedLog(t *testing.T, n int) (*Reader, *Reader, *dynamofake.DB, []outbox.Event) {
	t.Helper()
	f := newOutbox()
	db := dynamofake.NewDB("gsi1")
	pages := &Pages{DB: db, Table: "state", Now: func() time.Time { return t0 }}
	rnd := rand.New(rand.NewSource(37))
	var evs []outbox.Event
	var entries []Entry
	for i := range n {
		at := t0.Add(time.Duration(rnd.Intn(60_000)) * time.Millisecond)
		if i%7 == 0 && i > 0 {
			at = evs[i-1].OccurredAt
		}
		e := outbox.Event{ID: fmt.Sprintf("evt_%04d", i), TenantID: "acme", Type: string(rune('a' + i%3)), Payload: []byte(`{}`), OccurredAt: at}
		evs = append(evs, e)
		if i < n/5 {
			put(t, f, e)
			continue
		}
		entries = append(entries, Entry{ID: e.ID, TenantID: "acme", Type: e.Type, OccurredAt: at, ExpiresAt: t0.Add(time.Hour)})
		if i%5 == 0 {
			entries = append(entries, Entry{ID: fmt.Sprintf("oth_%04d", i), TenantID: "other", Type: "a", OccurredAt: at})
		}
	}
	ctx := context.Background()
	for batch := range slices.Chunk(entries, 30) {
		require.NoError(t, pages.Write(ctx, batch))
	}
	if len(entries) > 40 {
		require.NoError(t, pages.Write(ctx, entries[10:40])) // retried, split at another record
	}
	slices.SortFunc(evs, func(a, b outbox.Event) int {
		return strings.Compare(outbox.LogKey(b.OccurredAt, b.ID), outbox.LogKey(a.OccurredAt, a.ID))
	})
	return &Reader{DB: f, Table: "outbox", Pages: pages}, &Reader{DB: f, Table: "outbox", Legacy: true, Pages: pages}, db, evs
}

func TestPagesListedBesideTheIndexNewestFirstOnce(t *testing.T) {
	t.Parallel()
	sharded, legacy, _, evs := pagedLog(t, 300)
	filters := map[string]domain.EventFilter{
		"all":    {},
		"type b": {Type: "b"},
		"range":  {Since: t0.Add(10 * time.Second), Until: t0.Add(20 * time.Second)},
		"both":   {Type: "c", Since: t0.Add(30 * time.Second)},
		"until":  {Until: t0.Add(5*time.Second + 500*time.Millisecond)},
		"none":   {Type: "z"},
	}
	for name, flt := range filters {
		want := selected(evs, flt)
		for _, limit := range []int{4, 17, 1000} {
			for _, r := range []*Reader{sharded, legacy} {
				got, _ := listAll(t, r, "acme", flt, limit)
				require.Equal(t, want, got, "%s, limit %d, legacy %v", name, limit, r.Legacy)
			}
		}
	}
	others, _ := listAll(t, sharded, "other", domain.EventFilter{}, 10)
	require.Len(t, others, 48, "another tenant's events, from its own pages only")
	for _, id := range others {
		require.True(t, strings.HasPrefix(id, "oth_"), id)
	}
}

func TestPagesEventsExpireWithTheirOutboxItems(t *testing.T) {
	t.Parallel()
	db := dynamofake.NewDB("gsi1")
	now := t0
	pages := &Pages{DB: db, Table: "state", Now: func() time.Time { return now }}
	require.NoError(t, pages.Write(context.Background(), []Entry{
		{ID: "evt_soon", TenantID: "acme", Type: "a", OccurredAt: t0, ExpiresAt: t0.Add(time.Hour)},
		{ID: "evt_later", TenantID: "acme", Type: "a", OccurredAt: t0.Add(time.Millisecond), ExpiresAt: t0.Add(2 * time.Hour)},
		{ID: "evt_never", TenantID: "acme", Type: "a", OccurredAt: t0.Add(2 * time.Millisecond)},
		{ID: "evt_default", TenantID: "acme", Type: "a", OccurredAt: t0.Add(3 * time.Millisecond), ExpiresAt: t0.Add(3*time.Millisecond + outbox.DefaultRetention)},
	}))
	r := &Reader{DB: newOutbox(), Table: "outbox", Pages: pages}
	got, _ := listAll(t, r, "acme", domain.EventFilter{}, 10)
	require.Equal(t, []string{"evt_default", "evt_never", "evt_later", "evt_soon"}, got)
	now = t0.Add(90 * time.Minute)
	got, _ = listAll(t, r, "acme", domain.EventFilter{}, 10)
	require.Equal(t, []string{"evt_default", "evt_never", "evt_later"}, got, "an event whose outbox item expired is no longer listed")
	now = t0.Add(outbox.DefaultRetention + time.Second)
	got, _ = listAll(t, r, "acme", domain.EventFilter{}, 10)
	require.Equal(t, []string{"evt_never"}, got, "the default retention, written as nothing, read back")
	items := db.Items()
	require.Len(t, items, 1, "one page: one tenant, one second")
	_, ok := items[0]["expires_at"]
	require.False(t, ok, "a page holding an event that never expires does not expire")
	require.Contains(t, dynamofake.String(items[0], "events"), `"evt_default","a","1796040000003000000","",""]`, "the default expiry costs no bytes")
}

func TestPaginateByTenantAndSecond(t *testing.T) {
	t.Parallel()
	var entries []Entry
	for i := range 250 {
		entries = append(entries, Entry{ID: fmt.Sprintf("evt_%03d", i), TenantID: "acme", Type: "a", OccurredAt: t0.Add(time.Duration(i%2) * time.Second)})
	}
	entries = append(entries, Entry{ID: "evt_b", TenantID: "beta", Type: "a", OccurredAt: t0})
	pages := Paginate(entries)
	// acme's 125 of each second: a page of 100 and one of 25 each; beta's one.
	require.Len(t, pages, 5)
	seen := 0
	for _, p := range pages {
		require.LessOrEqual(t, len(p.Entries), maxPageEntries)
		first := p.Entries[0]
		for _, e := range p.Entries {
			require.Equal(t, first.TenantID, e.TenantID)
			require.Equal(t, bucket(first.OccurredAt), bucket(e.OccurredAt))
		}
		require.Equal(t, bucket(first.OccurredAt)+"#"+first.ID, p.SK, "keyed by its first event: a retry writes it over")
		require.True(t, slices.ContainsFunc([]int{0, 1, 2, 3}, func(n int) bool { return p.PK == keys.EventPages(first.TenantID, n) }), p.PK)
		seen += len(p.Entries)
		it, err := p.item()
		require.NoError(t, err)
		back, err := pageOf(it, first.TenantID)
		require.NoError(t, err)
		require.Equal(t, p.Entries, back.Entries, "stored and read back")
		_, err = pageOf(it, "intruder")
		require.Error(t, err, "a page is read for its own tenant only")
	}
	require.Equal(t, len(entries), seen)
	require.Equal(t, Paginate(entries), pages, "deterministic")
}

// unprocessing answers the first n BatchWriteItem requests with every item
// unprocessed, as DynamoDB does a throttled batch.
type unprocessing struct {
	*dynamofake.DB
	n, calls int
}

func (u *unprocessing) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	u.calls++
	if u.n > 0 {
		u.n--
		return &dynamodb.BatchWriteItemOutput{UnprocessedItems: in.RequestItems}, nil
	}
	return u.DB.BatchWriteItem(ctx, in, opts...)
}

func TestPagesWriteAgainWhatIsUnprocessed(t *testing.T) {
	t.Parallel()
	var entries []Entry
	for i := range 60 { // 60 seconds: 60 pages, three requests
		entries = append(entries, Entry{ID: fmt.Sprintf("evt_%02d", i), TenantID: "acme", Type: "a", OccurredAt: t0.Add(time.Duration(i) * time.Second)})
	}
	db := &unprocessing{DB: dynamofake.NewDB("gsi1"), n: 3}
	p := &Pages{DB: db, Table: "state", Backoff: time.Microsecond}
	require.NoError(t, p.Write(context.Background(), entries))
	require.Len(t, db.Items(), 60)
	require.Equal(t, 6, db.calls, "three refused, then three of at most 25")

	db = &unprocessing{DB: dynamofake.NewDB("gsi1"), n: 100}
	p = &Pages{DB: db, Table: "state", Backoff: time.Microsecond}
	err := p.Write(context.Background(), entries[:1])
	require.ErrorContains(t, err, "1 pages unprocessed", "bounded: the stream tries the batch again")
}

func TestPagesOfOneSecondReadToItsEnd(t *testing.T) {
	t.Parallel()
	// 30 pages in one second of one shard (DynamoDB's answers cut short:
	// the fake's two items a query, 15 queries), then one more a second
	// before: a listing of one reads the whole second before it lists its
	// newest. A second of more pages than maxBucketQueries queries answer
	// is refused, not read without end.
	db := dynamofake.NewDB("gsi1")
	p := &Pages{DB: db, Table: "state", Now: func() time.Time { return t0 }}
	var want []string
	for i := range 30 {
		e := Entry{ID: fmt.Sprintf("evt_%02d", i), TenantID: "acme", Type: "a", OccurredAt: t0.Add(time.Duration(40-i) * time.Millisecond)}
		it, err := Page{PK: keys.EventPages("acme", 1), SK: bucket(e.OccurredAt) + "#" + e.ID, Entries: []Entry{e}}.item()
		require.NoError(t, err)
		db.SetItem(it)
		want = append(want, e.ID)
	}
	early := Entry{ID: "evt_early", TenantID: "acme", Type: "a", OccurredAt: t0.Add(-time.Second)}
	require.NoError(t, p.Write(context.Background(), []Entry{early}))
	r := &Reader{DB: newOutbox(), Table: "outbox", Pages: p}
	got, pages := listAll(t, r, "acme", domain.EventFilter{}, 1)
	require.Equal(t, append(want, "evt_early"), got)
	require.Len(t, got, pages, "one a page")

	for i := 30; i < 40; i++ {
		e := Entry{ID: fmt.Sprintf("evt_%02d", i), TenantID: "acme", Type: "a", OccurredAt: t0.Add(time.Millisecond)}
		it, err := Page{PK: keys.EventPages("acme", 1), SK: bucket(e.OccurredAt) + "#" + e.ID, Entries: []Entry{e}}.item()
		require.NoError(t, err)
		db.SetItem(it)
	}
	_, _, err := r.ListEvents(context.Background(), "acme", domain.EventFilter{}, 1, "")
	require.ErrorIs(t, err, errBucketTooLarge)
}

// One tenant's events at 10,000 a second, in stream batches of 100 (the
// stack's batch size) of 30-character ids, paged into a state table with
// DynamoDB's per-key limits: no page write is refused, and the hottest of
// the tenant's PageShards partitions stays far below its 1,000 write
// units a second (docs/capacity.md).
func TestOneTenantsEventsAt10000PerSecondPaged(t *testing.T) {
	t.Parallel()
	second := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	db := dynamofake.NewDB("gsi1")
	db.Limits, db.Now = dynamofake.DynamoDBLimits(), func() time.Time { return second }
	p := &Pages{DB: db, Table: "state", Backoff: time.Microsecond}
	var batch []Entry
	for i := range 10_000 {
		at := second.Add(time.Duration(i) * 100 * time.Microsecond)
		batch = append(batch, Entry{ID: fmt.Sprintf("evt_01jexample%018d", i), TenantID: "acme", Type: "order.created", OccurredAt: at, ExpiresAt: at.Add(outbox.DefaultRetention)})
		if len(batch) == 100 {
			require.NoError(t, p.Write(context.Background(), batch))
			batch = batch[:0]
		}
	}
	hot := db.Hottest()
	require.NotEmpty(t, hot)
	for _, c := range hot {
		require.Zero(t, c.Refused, "%v", c)
		require.Less(t, c.WCU, 500.0, "%v", c)
	}
	require.LessOrEqual(t, len(hot), PageShards)
	t.Logf("hottest page shard: %v", hot[0])
}

// A page of the largest entries the outbox accepts (ids, type and
// endpoint of outbox.MaxIDBytes each) stays within DynamoDB's 400 KB item,
// which the fake refuses past.
func TestTheLargestPageFitsAnItem(t *testing.T) {
	t.Parallel()
	long := func(c string, i int) string { return fmt.Sprintf("%s%0*d", c, outbox.MaxIDBytes-1, i) }
	var entries []Entry
	for i := range 2 * maxPageEntries {
		entries = append(entries, Entry{ID: long("e", i), TenantID: long("t", 0), Type: long("y", i), EndpointID: long("p", i), OccurredAt: t0})
	}
	db := dynamofake.NewDB("gsi1")
	require.NoError(t, (&Pages{DB: db, Table: "state"}).Write(context.Background(), entries))
	require.Len(t, db.Items(), 2)
}
