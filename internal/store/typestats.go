package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
	"github.com/hookline/hookline/internal/store/keys"
)

// An endpoint's counters by event type are an item per hour and type in
// each of StatsShards partitions of their own (STATSTYPE#<t>#<e>#<n> /
// <hour>#<type>), not in the hour items' STATS partitions: LastAttempts
// reads those newest first without a sort-key bound and would page
// through every type's items, and the stats and health reads would pay for
// items they do not want. Each item holds the hour item's counters
// (attempts, delivered, f_<class>, l00..l27) and expires_at, not the
// newest success and failure. At its largest (a 64-byte tenant id, an
// event type of outbox.MaxIDBytes, 256 bytes, every counter in the
// millions) it is 747 bytes: under 1 KB, one write unit
// (TestTypeStatsItemIsOneWriteUnit).
//
// Cost: deliver writes one UpdateItem (1 WCU) per endpoint, hour and event
// type a batch attempted, besides the hour item's; a read of an endpoint's
// range is StatsShards Queries (0.5 RCU each per 4 KB read: a day of 5
// types is 120 items of about 300 bytes, about 9 KB over the shards, 8
// Queries of 0.5 RCU when spread, more for longer ranges and more types).

// AddEndpointTypeStats adds a batch's attempt counters of one event type
// to an endpoint's item of that type and of the hour that starts at hour,
// in one of its StatsShards shards (statsShard, the same turn as
// AddEndpointStats's): one UpdateItem that ADDs each counter and SETs
// expires_at, StatsRetention after the hour. st's newest success and
// failure are not kept.
func (s *Store) AddEndpointTypeStats(ctx context.Context, tenantID, endpointID, eventType string, hour time.Time, st domain.AttemptStats) error {
	hour = domain.StatsHour(hour)
	vals := map[string]types.AttributeValue{
		":exp": &types.AttributeValueMemberN{Value: strconv.FormatInt(hour.Add(s.statsRetention()).Unix(), 10)},
	}
	expr := "SET expires_at = :exp"
	if add := counterAdds(st, vals); len(add) > 0 {
		expr += " ADD " + strings.Join(add, ", ")
	}
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.table, Key: key(keys.TypeStatsShard(tenantID, endpointID, s.statsShard()), typeStatsSK(hour, eventType)),
		UpdateExpression: &expr, ExpressionAttributeValues: vals,
	})
	if err != nil {
		return fmt.Errorf("add stats of endpoint %s by type: %w", endpointID, err)
	}
	return nil
}

// typeStatsSK is the sort key of an hour and type's item: the hour
// (hourFormat, fixed width), "#", the type.
func typeStatsSK(hour time.Time, eventType string) string {
	return hour.UTC().Format(hourFormat) + "#" + eventType
}

// EndpointTypeStats reads an endpoint's counters by event type of the
// hours that start in [since, until), oldest hour first and by type within
// an hour: a Query of each of its StatsShards partitions
// (typeStatsPartitions), whose items of one hour and type are merged.
func (s *Store) EndpointTypeStats(ctx context.Context, tenantID, endpointID string, since, until time.Time) ([]domain.TypeStatsBucket, error) {
	out := []domain.TypeStatsBucket{}
	if !since.Before(until) {
		return out, nil
	}
	type hourType struct {
		hour time.Time
		typ  string
	}
	merged := map[hourType]*domain.TypeStatsBucket{}
	var mu sync.Mutex
	pks := typeStatsPartitions(tenantID, endpointID)
	err := fanout.Each(len(pks), 0, func(i int) error {
		return s.typeStatsRange(ctx, pks[i], since, until, func(b domain.TypeStatsBucket) {
			mu.Lock()
			defer mu.Unlock()
			if m := merged[hourType{b.Start, b.EventType}]; m != nil {
				m.Merge(b.AttemptStats)
				return
			}
			merged[hourType{b.Start, b.EventType}] = &b
		})
	})
	if err != nil {
		return nil, fmt.Errorf("query stats of endpoint %s by type: %w", endpointID, err)
	}
	for _, b := range merged {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b domain.TypeStatsBucket) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return strings.Compare(a.EventType, b.EventType)
	})
	return out, nil
}

// typeStatsRange calls f with each item of type stats partition pk whose
// hour starts in [since, until) (hourRange: the sort keys of an hour are
// "<hour>#<type>").
func (s *Store) typeStatsRange(ctx context.Context, pk string, since, until time.Time, f func(domain.TypeStatsBucket)) error {
	return hourRange(ctx, s, pk, since, until, "$", decodeTypeStats, func(b domain.TypeStatsBucket) time.Time { return b.Start }, f)
}

// decodeTypeStats reads an hour and type's item.
func decodeTypeStats(item map[string]types.AttributeValue) (domain.TypeStatsBucket, error) {
	var b domain.TypeStatsBucket
	sk, _ := item["sk"].(*types.AttributeValueMemberS)
	if sk == nil {
		return b, fmt.Errorf("type stats item without a sort key")
	}
	hour, typ, ok := strings.Cut(sk.Value, "#")
	if !ok {
		return b, fmt.Errorf("type stats item %q: no type", sk.Value)
	}
	start, err := time.Parse(hourFormat, hour)
	if err != nil {
		return b, fmt.Errorf("type stats item %q: %w", sk.Value, err)
	}
	b.Start, b.EventType, b.AttemptStats = start, typ, decodeCounters(item)
	return b, nil
}
