package memstore

import (
	"context"
	"strconv"
	"time"

	"github.com/hookline/hookline/internal/store"
)

// rateTries is store.Store's: the shards one TakeSlots writes at most.
const rateTries = 3

// TakeSlots takes up to n of the request slots of an endpoint's
// one-second window (limit in all) that holds at, as store.Store does: the
// window in store.RateWindowShards(limit) shards (store.RateShardPart),
// the shard after the previous call's tried first, then the next ones, at
// most rateTries of them with a slot not past; from one shard as many as
// it has left, at most n; never more than limit between all callers, a
// shard's first taker starting at its first slot not past.
func (s *Store) TakeSlots(_ context.Context, tenantID, endpointID string, at time.Time, n, limit int) (store.Slots, error) {
	if n <= 0 || limit <= 0 {
		return store.Slots{}, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rates == nil {
		s.rates = map[string]int{}
	}
	shards := store.RateWindowShards(limit)
	first := s.rateNext % shards
	s.rateNext++
	for i, tried := 0, 0; i < shards && tried < rateTries; i++ {
		j := (first + i) % shards
		quota, past := store.RateShardPart(at, limit, shards, j)
		if past >= quota {
			continue
		}
		tried++
		k := tenantID + "\x00" + endpointID + "\x00" + at.UTC().Truncate(time.Second).Format(time.RFC3339) + "\x00" + strconv.Itoa(j)
		taken, ok := s.rates[k]
		if !ok {
			taken = past // the first taker starts at the first slot not past
		}
		got := min(n, quota-taken, quota-past)
		if got <= 0 {
			continue
		}
		s.rates[k] = taken + got
		if shards == 1 {
			return store.Slots{First: taken, Granted: got}, nil
		}
		return store.Slots{First: j + taken*shards, Granted: got, Stride: shards}, nil
	}
	return store.Slots{}, nil
}

// TakeAPIRequest takes one of the limit expensive API requests of a
// tenant's one-second window holding at, as store.Store does: false when
// the window has limit already.
func (s *Store) TakeAPIRequest(_ context.Context, tenantID string, at time.Time, limit int) (bool, error) {
	if limit <= 0 {
		return false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rates == nil {
		s.rates = map[string]int{}
	}
	k := "api\x00" + tenantID + "\x00" + at.UTC().Truncate(time.Second).Format(time.RFC3339)
	if s.rates[k] >= limit {
		return false, nil
	}
	s.rates[k]++
	return true, nil
}
