package deliver

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/stretchr/testify/require"
)

// idsOf are the delivery ids batchOf(prefix, n) names.
func idsOf(prefix string, n int) []string {
	var ids []string
	for i := range n {
		ids = append(ids, fmt.Sprintf("%s%d", prefix, i))
	}
	return ids
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
	db := f.store.DB
	db.ResetCalls()
	f.now = f.now.Add(500 * time.Millisecond) // within the endpoint cache's second
	require.Empty(t, f.run(t, batchOf(t, f, "clean", 10)...))
	calls := map[string]int{}
	total := 0
	for _, op := range []string{"GetItem", "BatchGetItem", "PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem", "Query", "Scan"} {
		if n := db.Calls(op); n > 0 {
			calls[op] = n
			total += n
		}
	}
	require.Equal(t, map[string]int{"BatchGetItem": 1, "BatchWriteItem": 1}, calls, "the batch's read, then its records")
	require.Equal(t, 2, total)
	for _, id := range idsOf("clean", 10) {
		d, err := f.store.Delivery(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, d.State)
		require.Equal(t, 1, d.Attempts)
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
	for _, id := range idsOf("fb", 3) {
		d, err := f.store.Delivery(t.Context(), id)
		require.NoError(t, err)
		require.Equal(t, domain.StateDelivered, d.State, "recorded by RecordAttempt")
		require.Equal(t, 1, d.Attempts)
	}
}
