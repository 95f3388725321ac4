package deliver

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// idsOf are the delivery ids batchOf(prefix, n) names.
func idsOf(prefix string, n int) []string {
	var ids []string
	for i := range n {
		ids = append(ids, pid(fmt.Sprintf("%s%d", prefix, i)))
	}
	return ids
}

// pid is the delivery id named name: an id of tenant t1's endpoint ep_1
// that carries a time (domain.DeliveryID), so that its first attempt
// delivered is packed in an outcome page (a legacy id is recorded on its
// own).
func pid(name string) string {
	return domain.DeliveryID("t1", "evt_"+name, "ep_1", time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC))
}

// A clean batch (a fast endpoint, no failure, warm caches, its counters
// kept for the instance's interval) makes two DynamoDB calls, one after
// the other: the batch's read and its records' write (issue 37; it was
// eleven: a record write per message). The counters' two writes come once
// per interval (StatsFlushEvery), and the failure-count reset only after
// failures.
func TestACleanBatchIsTwoDynamoDBCalls(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	f.h.Config.StatsFlushEvery = 10 * time.Second
	require.Empty(t, f.run(t, batchOf(t, f, "warm", 10)...)) // the endpoint cached, the counters written
	f.store.DB.ResetCalls()
	f.now = f.now.Add(500 * time.Millisecond) // within the endpoint cache's second
	require.Empty(t, f.run(t, batchOf(t, f, "clean", 10)...))
	require.Equal(t, map[string]int{"BatchGetItem": 1, "BatchWriteItem": 1}, dynamoCalls(f), "the batch's read, then its records: nothing else")
	requireDelivered(t, f, idsOf("clean", 10), 1)
}

// requireDelivered asserts each of ids' records delivered after attempts.
func requireDelivered(t *testing.T, f *fixture, ids []string, attempts int) {
	t.Helper()
	for _, id := range ids {
		d, err := f.store.Delivery(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, d.State, id)
		require.Equal(t, attempts, d.Attempts, id)
	}
}

// When the batch's records cannot be written at once, each is recorded
// alone, as before: a delivered delivery is never left unrecorded for
// want of the batched write.
func TestFirstAttemptsFallBackToOneAtATime(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) })
	f.store.failFirsts = true
	require.Empty(t, f.run(t, batchOf(t, f, "fb", 3)...))
	require.Equal(t, 1, f.store.firstBatches)
	requireDelivered(t, f, idsOf("fb", 3), 1) // recorded by RecordAttempt
}

// dynamoCalls is every DynamoDB call the fixture's table has taken.
func dynamoCalls(f *fixture) map[string]int {
	calls := map[string]int{}
	for _, op := range []string{"GetItem", "BatchGetItem", "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem", "Query", "Scan"} {
		if n := f.store.DB.Calls(op); n > 0 {
			calls[op] = n
		}
	}
	return calls
}

// On the cost model's workload (one endpoint, batches of ten, 5% of
// deliveries failing their first attempt (drawn with a fixed seed) and
// delivered by their retry in the next batch, an instance's batches back
// to back at 120 ms each, its endpoint copy kept a second, its counters
// 10 s), deliver's DynamoDB calls a batch
// are counted: a clean batch makes two (its read, its first attempts'
// records); a failure adds its record, the endpoint's failure count and
// the endpoint's gate; a retry's success adds its record and the
// endpoint's reset (the instance patches its copy of the endpoint with
// both, and reads it again only when it cannot know the result). About
// 4.1 a batch (4.09-4.15 over ten runs: the order of a batch's concurrent
// attempts varies); it was 4.66 while every count and reset was read
// again, about 13 while each record was a write of its own. Issue 37 asks
// for 4: held here at 4.3, so that a regression fails.
func TestDynamoDBCallsPerBatchOnTheModelsWorkload(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	failFirst := map[string]bool{}
	f := newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if id := r.Header.Get("webhook-id"); failFirst[id] {
			delete(failFirst, id)
			w.WriteHeader(503)
			return
		}
		w.WriteHeader(200)
	})
	f.h.Config.StatsFlushEvery = 10 * time.Second
	f.h.Config.Policy.Schedule = []time.Duration{0, 100 * time.Millisecond, 10 * time.Second} // a retry waits in its own visibility
	require.Empty(t, f.run(t, batchOf(t, f, "warm", 10)...))
	f.store.DB.ResetCalls()
	const rounds = 100
	rnd := rand.New(rand.NewPCG(37, 1))
	var retries []events.SQSMessage
	var failedIDs []string
	deliveries := 0
	for round := range rounds {
		f.now = f.now.Add(120 * time.Millisecond)
		msgs := retries
		retries = nil
		fails := map[string]bool{}
		for i := 0; len(msgs) < 10; i++ {
			id := pid(fmt.Sprintf("r%d_%d", round, i))
			if rnd.Float64() < 0.05 {
				mu.Lock()
				failFirst[id] = true
				mu.Unlock()
				fails[id] = true
				failedIDs = append(failedIDs, id)
			}
			msgs = append(msgs, sqsMessage(t, id, "1", f.now))
			deliveries++
		}
		failed := f.run(t, msgs...)
		require.Len(t, failed, len(fails), "round %d: the failed ones wait in their visibility", round)
		for _, m := range msgs {
			if slices.Contains(failed, m.MessageId) {
				again := m
				again.Attributes = map[string]string{"ApproximateReceiveCount": "2"}
				retries = append(retries, again)
			}
		}
	}
	total := 0
	calls := dynamoCalls(f)
	for _, n := range calls {
		total += n
	}
	perBatch := float64(total) / rounds
	t.Logf("%d batches of 10 (%d new deliveries, %d failed once): %v, %.2f calls a batch", rounds, deliveries, len(failedIDs), calls, perBatch)
	kinds := map[string]int{}
	for _, u := range f.store.DB.Updates() {
		pk := u.Key["pk"].(*types.AttributeValueMemberS).Value
		kinds[pk[:min(len(pk), 9)]+" "+(*u.UpdateExpression)[:min(len(*u.UpdateExpression), 40)]]++
	}
	for k, n := range kinds {
		t.Logf("%3d %s", n, k)
	}
	require.LessOrEqual(t, perBatch, 4.0, "issue 37: at most 4 on the model's workload")
	requireDelivered(t, f, failedIDs, 2)
}

// A request that takes long does not hold the batch's other first
// attempts' records: they are written FirstAttemptsWait after the first of
// them, while it is still out, and its own at the batch's end.
func TestFirstAttemptsAreNotHeldBySlowRequests(t *testing.T) {
	t.Parallel()
	fast, slow := pid("fast"), pid("slow")
	f, release := holdingFixture(t, slow)
	done := make(chan []string)
	go func() { done <- f.run(t, sqsMessage(t, fast, "1", f.now), sqsMessage(t, slow, "1", f.now)) }()
	require.Eventually(t, func() bool {
		d, err := f.store.Store.Delivery(t.Context(), fast)
		return err == nil && d.State == domain.StateDelivered
	}, 5*time.Second, 20*time.Millisecond, "the fast one's record while the slow one is out")
	_, err := f.store.Store.Delivery(t.Context(), slow)
	require.Error(t, err, "not recorded yet: still out")
	close(release)
	require.Empty(t, <-done)
	requireDelivered(t, f, []string{fast, slow}, 1)
	require.Equal(t, 2, f.store.DB.Calls("BatchWriteItem"), "one write each")
}

// holdingFixture is a fixture whose receiver answers 200 at once but to
// the request of webhook-id held, which it answers once release is closed.
func holdingFixture(t *testing.T, held string) (*fixture, chan struct{}) {
	release := make(chan struct{})
	return newFixture(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("webhook-id") == held {
			<-release
		}
		w.WriteHeader(200)
	}), release
}

// A message of a delivery delivered at its first attempt (packed in an
// outcome page: no record) that SQS delivers again is dropped as a
// duplicate, as its record dropped it before the pages: the batch that
// holds it reads its page (one read more, its records and pages at once);
// a first receive reads none.
func TestARedeliveredMessageOfAPackedDeliveryIsDropped(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	posts := 0
	f := newFixture(t, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		posts++
		mu.Unlock()
		w.WriteHeader(200)
	})
	id := pid("again")
	f.store.DB.ResetCalls()
	require.Empty(t, f.run(t, sqsMessage(t, id, "1", f.now)))
	require.Zero(t, f.store.DB.Calls("Query"), "a first receive reads no page")
	d, err := f.store.Store.Delivery(t.Context(), id)
	require.NoError(t, err)
	require.True(t, d.Packed, "delivered at its first attempt: a row, no record")
	f.store.DB.ResetCalls()
	require.Empty(t, f.run(t, sqsMessage(t, id, "2", f.now)), "dropped, not returned")
	mu.Lock()
	require.Equal(t, 1, posts, "not sent again")
	mu.Unlock()
	require.Equal(t, 1, f.store.DB.Calls("Query"), "its page read")
	requireDelivered(t, f, []string{id}, 1)
}
