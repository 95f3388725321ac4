package store

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/tooling/perf/cost"
	"github.com/stretchr/testify/require"
)

// TestStatsItemIsOneWriteUnit holds the cost model's StatsWRU to the item
// AddEndpointStats writes at its largest: the longest tenant id (64), an
// endpoint id as long as the API makes, every counter and histogram bucket
// in the millions, a last success and a last failure with the longest
// error kept. Under 1 KB, each write of it is one write unit.
func TestStatsItemIsOneWriteUnit(t *testing.T) {
	t.Parallel()
	db := dynamofake.NewDB(IndexTenant)
	s := New(db, "state")
	tenant, endpoint := strings.Repeat("t", 64), "ep_abcdefghijklmnop"
	hour := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	at := hour.Add(59*time.Minute + 59*time.Second + 999999999)
	st := domain.AttemptStats{
		Attempts: 99_999_999, Delivered: 99_999_999, Failures: map[domain.AttemptClass]int64{},
		LastSuccessAt: &at,
		LastFailure:   &domain.AttemptFailure{At: at, Status: 599, Error: strings.Repeat("e", domain.MaxFailureErrorBytes)},
	}
	for _, c := range domain.FailureClasses {
		st.Failures[c] = 99_999_999
	}
	for i := range st.Latency {
		st.Latency[i] = 99_999_999
	}
	require.NoError(t, s.AddEndpointStats(context.Background(), tenant, endpoint, hour, st))
	item := stored(db, key(statsPK(tenant, endpoint), hour.Format(hourFormat)))
	size := cost.ItemSize(item)
	t.Logf("largest stats item: %d bytes", size)
	require.Equal(t, cost.InitialAssumptions.StatsWRU, cost.WriteUnits(size))

	got, err := s.EndpointStats(context.Background(), tenant, endpoint, hour, hour.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, st.Latency, got[0].Latency, "every bucket read back")
	require.Equal(t, st.Failures, got[0].Failures)
	require.Equal(t, &types.AttributeValueMemberN{Value: strconv.FormatInt(hour.Add(DefaultStatsRetention).Unix(), 10)}, item["expires_at"], "kept 35 days from its hour")
}
