package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/stretchr/testify/require"
)

// hotKeyHorizon is the rate up to which each hot path is driven: a path
// that one tenant's traffic throttles below it must be a known hot key.
const hotKeyHorizon = 10_000

// knownHotKeys are the store's hot keys today, by design: for each hot path
// (hotPaths), the partition key value that first refuses when one busy
// tenant drives it within one second, and the rate at which it does (the
// fake's 1,000 WCU / 3,000 RCU per key value a second). This is a ratchet:
// TestHotKeys fails when a path throttles below hotKeyHorizon without an
// entry here, or at another key or rate than its entry says, or no longer
// throttles at all. A change that spreads a key updates its entry (the
// next key to refuse, or none); one that adds a hot key must justify it
// here.
var knownHotKeys = map[string]struct {
	index, key string // index "" is the table
	cap        int    // events a second at which the key first refuses
}{
	// A death writes its delivery's entry into one of DeadShards (16)
	// shards of the dead index (by_dead, TENANT#<t>#DEAD#<n>, n of the
	// delivery id: 1 WCU whatever the event's size,
	// TestDeadIndexEntryIsOneWriteUnit), and moves one of 32 shards of the
	// DLQ depth counter (2 WCU): one tenant's deaths take 16,000 a second
	// on the index and 16,000 on the counter (one key value,
	// TENANT#<t>#DEAD, took 1,000); their records are what refuses first
	// ("death (200 B message)" and "death (4 KB message)" below).

	// One UpdateItem per deliver batch on one of the 8 shards of the
	// endpoint's hour item (STATS#<t>#<e>#<n> / <hour>, n the store's
	// writes in turn): 8,000 batches a second of one endpoint (80,000
	// events with batches of 10; here batches of one), shard 0 first (a
	// new store's first write). (One item, as before, took 1,000.)
	// Spread: more shards (each costs every stats read another Query), or
	// per-instance aggregation (each deliver instance adds its counts for
	// a few seconds and writes once).
	"endpoint stats write": {"", "STATS#t1#ep_1#0", 8000},
	// Each TakeSlots is one conditional UpdateItem of one of the 8 shards
	// of the endpoint's second (RATE#<t>#<e>#<j> / <second>, a limit of
	// 80 or more; j the store's calls in turn), refused or not: 8,000
	// calls a second, shard 0 first (a new store's first call). (One item,
	// as before, took 1,000; a window of a limit below 20 still is one.)
	// Spread: more shards (each a smaller part of the limit), or slots
	// taken by the batch (fewer, larger calls).
	"rate slot": {"", "RATE#t1#ep_1#0", 8000},
	// deliver reads a batch's deliveries and its endpoints' gates strongly
	// consistent (LoadWith with NoRecords): 1 RCU on the endpoint's gate
	// (GATE#<t>#<e>) a batch, 3,000 batches a second of one endpoint
	// (30,000 events with batches of 10; here batches of one), each of a
	// tenant's endpoints on its own key. Spread: read the gate eventually
	// consistent (its fast_until is a hint; TakeGate, a conditional write,
	// decides) for 6,000, or keep it in the instance a moment.
	"deliver's batch read (LoadWith)": {"", "GATE#t1#ep_1", 3000},
	// The endpoint's item and its tenant's tombstone, read eventually
	// consistent (0.5 RCU each, on TENANT#<t>) when deliver's per-instance
	// cache has no copy younger than domain.DefaultEndpointCacheTTL (1 s):
	// 3,000 cache misses a second of one tenant, at most one a second per
	// deliver instance and endpoint, however many batches. (Read strongly
	// for every batch, as before, they capped a tenant's batches, of all
	// its endpoints together, at 1,500 a second.) Spread: a longer TTL.
	"endpoint read (cache miss)": {"", "TENANT#t1", 3000},
	// A page of 50 dead deliveries (the API's default) queries each of the
	// tenant's DeadShards (16) shards of the dead index (entries of about
	// 300 B, whatever the messages' size), and the first page also gsi1's
	// legacy dead partition (empty here), which a cursor skips once it is
	// read to its end. Here (100 deaths, about 6 a shard) each query is
	// half a unit: 6,000 pages a second on every shard's key (from 1,500
	// on the one key, 2 RCU a page), but a page costs 8.5 RCU in all (17
	// queries) where it cost 2. A shard is queried for up to the page's 50
	// entries (any shard may hold the 50 oldest), so with 800 or more
	// deaths a page reads 2 RCU a shard, 32 in all, and the keys take
	// 1,500 pages a second again. Spread: a short-lived cache of the first
	// page; cheaper: smaller shard queries refilled in rounds, as the
	// message log's listing does.
	"DLQ listing (50 a page)": {IndexDead, "TENANT#t1#DEAD#0", 6000},
	// A page of 50 of the delivery log (GET /v1/deliveries' default)
	// queries each of the tenant's LogShards (16) shards of records
	// (RECORDS#<tenant hash>#<n>, whole records of about 700 B, more for a
	// dead one, which keeps its message) and each of the 16 shards of
	// by_log, where records of legacy ids are listed (empty here): with
	// 100 deliveries, about 6 a shard, 1 RCU a shard of records, 1,500
	// pages a second on every shard's key (6,000 while the page read
	// by_log's entries of about 300 B instead of the records: the price of
	// writing no index entry per attempt). Every attempt writes its record
	// in one of the 16 shards (16,000 one-unit attempts a second of one
	// tenant: "attempt (pending)" and "attempt (delivered)" are no
	// entries). Spread and cheaper: smaller shard queries refilled in
	// rounds, as the message log's listing does.
	"delivery log listing (50 a page)": {"", "RECORDS#ca5kjmbd#0", 1500},
	// A death writes its record, message kept, in one of the tenant's 16
	// shards of records (RECORDS#<tenant hash>#<n>, n of the delivery
	// id; "ca5kjmbd" is t1's hash): 1,000 WCU a second a shard. With a
	// 200 B message a death is a unit or two and the first shard refuses
	// at 7,632 deaths a second; with a 4 KB one, five units, at 1,308 (the
	// ids' hashes fill the shards unevenly within a second). Before the
	// records moved into their tenant's shards (each in a partition of its
	// own) no key refused below 10,000. On AWS adaptive capacity splits a
	// busy partition by sort key over minutes; the dead index's entries
	// and the DLQ depth's shards still take 16,000 a second. Spread: more
	// shards of records (each costs every listing page another query).
	"death (200 B message)": {"", "RECORDS#ca5kjmbd#8", 7632},
	"death (4 KB message)":  {"", "RECORDS#ca5kjmbd#9", 1308},
	// DLQDepths queries each of the 32 index keys of the counters'
	// shards (DLQDEPTH#<m>) and the one of the counters of before the
	// shards (DLQDEPTH): half a unit each for a few, 6,000 reads a second
	// on every key (it runs once a minute, and the operator's stats on
	// demand). Spread: more index keys do not (each read queries them
	// all); a short-lived cache of the depths would.
	"DLQ depth read": {"gsi1", "DLQDEPTH#0", 6000},
}

// hotKeyProbe is how many events of a path show what each costs.
const hotKeyProbe = 500

// nearLimits reports whether a key value that consumed c in n events would
// refuse below twice hotKeyHorizon at that cost an event.
func nearLimits(c []dynamofake.Consumed, n int) bool {
	if len(c) == 0 {
		return false
	}
	l := dynamofake.DynamoDBLimits()
	share := max(c[0].WCU/l.WCU, c[0].RCU/l.RCU) // Hottest's first is nearest
	return share*2*hotKeyHorizon/float64(n) >= 1
}

// hotPath is one of the store's hot paths as one busy tenant (t1, to its
// endpoint ep_1) drives it: setup writes what it reads (with no
// accounting), event makes its i-th event.
type hotPath struct {
	name  string
	setup func(t *testing.T, db *dynamofake.DB, s *Store)
	event func(ctx context.Context, s *Store, i int) error
}

// hotT0 is the second every event of TestHotKeys happens in.
var hotT0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func hotDelivery(tenant string, i int) domain.Delivery {
	ev := fmt.Sprintf("evt_%d", i)
	return domain.Delivery{DeliveryID: domain.DeliveryID(tenant, ev, "ep_1", time.Time{}), TenantID: tenant, EndpointID: "ep_1", EventID: ev, EventType: "order.created"}
}

// attempt records the first attempt of delivery i of tenant, with outcome o.
func attempt(ctx context.Context, s *Store, tenant string, i int, o domain.Outcome) error {
	a := domain.Attempt{Number: 1, At: hotT0, Status: 500, Error: "HTTP 500", LatencyMS: 120}
	if o.State == domain.StateDelivered {
		a.Status, a.Error = 200, ""
	}
	return s.RecordAttempt(ctx, hotDelivery(tenant, i), a, o)
}

func dead(message int) domain.Outcome {
	return domain.Outcome{State: domain.StateDead, DeadReason: domain.DeadReason("max_attempts"), Message: strings.Repeat("m", message)}
}

func hotPaths() []hotPath {
	none := func(*testing.T, *dynamofake.DB, *Store) {}
	return []hotPath{
		{"attempt (pending)", none, func(ctx context.Context, s *Store, i int) error {
			return attempt(ctx, s, "t1", i, domain.Outcome{State: domain.StatePending})
		}},
		{"attempt (delivered)", none, func(ctx context.Context, s *Store, i int) error {
			return attempt(ctx, s, "t1", i, domain.Outcome{State: domain.StateDelivered})
		}},
		{"death (200 B message)", none, func(ctx context.Context, s *Store, i int) error { return attempt(ctx, s, "t1", i, dead(200)) }},
		{"death (4 KB message)", none, func(ctx context.Context, s *Store, i int) error { return attempt(ctx, s, "t1", i, dead(4096)) }},
		{"death (1,000 tenants)", none, func(ctx context.Context, s *Store, i int) error {
			return attempt(ctx, s, fmt.Sprintf("t%d", i%1000), i, dead(200))
		}},
		{"DLQ depth move (the counter alone)", none, func(ctx context.Context, s *Store, i int) error {
			_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Update: s.depthMove("t1", hotDelivery("t1", i).DeliveryID, 1, hotT0)},
			}})
			return err
		}},
		{"endpoint stats write", none, func(ctx context.Context, s *Store, i int) error {
			var st domain.AttemptStats
			st.Count(domain.ClassDelivered, 120*time.Millisecond, hotT0, 200, "")
			return s.AddEndpointStats(ctx, "t1", "ep_1", hotT0, st)
		}},
		{"rate slot", none, func(ctx context.Context, s *Store, i int) error {
			_, err := s.TakeSlots(ctx, "t1", "ep_1", hotT0, 1, 100_000)
			return err
		}},
		{"deliver's batch read (LoadWith)", setupGate, func(ctx context.Context, s *Store, i int) error {
			_, err := s.LoadWith(ctx, LoadOptions{NoRecords: true}, []string{hotDelivery("t1", i).DeliveryID}, []EndpointRef{{"t1", "ep_1"}})
			return err
		}},
		{"endpoint read (cache miss)", func(t *testing.T, _ *dynamofake.DB, s *Store) { putEndpoint(t, s, "t1", "ep_1") },
			func(ctx context.Context, s *Store, i int) error {
				_, err := s.LoadWith(ctx, LoadOptions{Eventual: true, NoGates: true}, nil, []EndpointRef{{"t1", "ep_1"}})
				return err
			}},
		{"DLQ listing (50 a page)", seedDead(100), func(ctx context.Context, s *Store, i int) error {
			_, _, err := s.ListDead(ctx, "t1", domain.DeadFilter{}, 50, "") // the API's default page
			return err
		}},
		{"delivery log listing (50 a page)", seedDead(100), func(ctx context.Context, s *Store, i int) error {
			_, _, err := s.ListDeliveries(ctx, "t1", domain.DeliveryFilter{}, 50, "") // the API's default page
			return err
		}},
		{"DLQ depth read", seedDead(1), func(ctx context.Context, s *Store, i int) error {
			_, err := s.DLQDepths(ctx)
			return err
		}},
	}
}

// setupGate writes ep_1's endpoint and its gate, shown fast.
func setupGate(t *testing.T, _ *dynamofake.DB, s *Store) {
	putEndpoint(t, s, "t1", "ep_1")
	fast := hotT0.Add(5 * time.Second)
	require.NoError(t, s.MarkGate(context.Background(), "t1", "ep_1", &fast))
}

// seedDead records n deaths of t1 (messages of 1 KB): the listing's and
// the depth's items.
func seedDead(n int) func(*testing.T, *dynamofake.DB, *Store) {
	return func(t *testing.T, _ *dynamofake.DB, s *Store) {
		for i := range n {
			require.NoError(t, attempt(context.Background(), s, "t1", i, dead(1024)))
		}
	}
}

// TestHotKeys drives each hot path of the store as one busy tenant would,
// every event in one second, on the fake table with DynamoDB's
// per-partition limits, until the fake first refuses or hotKeyHorizon
// events have passed, and holds the result to knownHotKeys. To stay fast,
// a path is driven past hotKeyProbe events only while what they consumed
// shows a key value that would refuse below twice hotKeyHorizon (every
// event of a path costs its key values alike).
func TestHotKeys(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, p := range hotPaths() {
		seen[p.name] = true
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			n, refused, hot := driveHotPath(t, p)
			for _, c := range hot[:min(3, len(hot))] {
				t.Logf("%s", c)
			}
			known, listed := knownHotKeys[p.name]
			if refused == nil {
				require.False(t, listed, "%s no longer throttles below %d a second (it was %d/s on %q): remove its knownHotKeys entry",
					p.name, hotKeyHorizon, known.cap, known.key)
				return
			}
			require.True(t, listed, "a new hot key: %s is refused at %d events a second on %s; spread it, or add it to knownHotKeys with what spreading it takes",
				p.name, n, refused)
			require.Equal(t, known.index+" "+known.key, refused.Index+" "+refused.Key, "%s: the key that first refuses", p.name)
			require.Equal(t, known.cap, n, "%s: the events a second at which %s first refuses", p.name, refused)
		})
	}
	for name := range knownHotKeys {
		require.True(t, seen[name], "knownHotKeys names %q, which is no hot path", name)
	}
}

// driveHotPath runs p's events until the fake refuses one or hotKeyHorizon
// have passed: how many passed, the key value refused (nil: none) and what
// each key value consumed.
func driveHotPath(t *testing.T, p hotPath) (int, *dynamofake.Consumed, []dynamofake.Consumed) {
	ctx := context.Background()
	db := newFakeDB()
	db.PageSize = 1 << 20 // DynamoDB's 1 MB pages, for these items
	s := newTestStore(db)
	s.Now = func() time.Time { return hotT0 }
	db.Now = s.Now
	p.setup(t, db, s)
	db.Limits = dynamofake.DynamoDBLimits()
	for i := range hotKeyHorizon {
		if i == hotKeyProbe && !nearLimits(db.Hottest(), hotKeyProbe) {
			return hotKeyHorizon, nil, db.Hottest()
		}
		err := p.event(ctx, s, i)
		if err == nil {
			continue
		}
		require.True(t, dynamofake.Throttled(err), "event %d of %s: %v", i, p.name, err)
		hot := db.Hottest()
		for _, c := range hot {
			if c.Refused > 0 {
				return i, &c, hot
			}
		}
		t.Fatalf("%s: refused with no key value refusing: %v", p.name, err)
	}
	return hotKeyHorizon, nil, db.Hottest()
}
