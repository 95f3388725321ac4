package messagelog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fanout"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// A listing of the sharded index by_tenant_shard reads each of the
// tenant's outbox.LogShards shards newest first and merges them: it lists
// the newest item at the head of any shard, as long as no shard it has
// read to the end of what it fetched (but not to the end of the shard)
// could still hold a newer one; else it fetches again, every shard that
// needs it at once, at most maxQueries rounds.
//
// Each shard has a position: it holds nothing more to list at or after it.
// Merged newest first, every shard's position is at most the log key of
// the last item listed, so a cursor names that key once (SK), the shards
// read to their end (Done), and only the shards a filter read further
// than SK without listing anything (At, an occurred_at: so that a page
// that lists nothing still moves on). That keeps a cursor within the
// API's bound whatever the shards: positions of 16 full log keys would not.

// parallelQueries bounds the shard queries a listing runs at once.
const parallelQueries = 4

// shard is one shard's state in a listing.
type shard struct {
	key  string // its log_pk
	from string // its position in the cursor read
	hi   string // its position, a log key or LogKey(t)[:30]+"$" ("" none)
	buf  []map[string]types.AttributeValue
	last string // the log key of the last item its last query read
	end  bool   // its last query read its last item
	done bool   // nothing more to list
}

// take lists the shard's head.
func (s *shard) take() map[string]types.AttributeValue {
	item := s.buf[0]
	s.buf, s.hi = s.buf[1:], LogKey(item)
	s.settle()
	return item
}

// settle moves an emptied shard to the end of what it read.
func (s *shard) settle() {
	if len(s.buf) > 0 {
		return
	}
	if s.end {
		s.done = true
	} else {
		s.hi = s.last
	}
}

// listShards is ListEvents from the sharded index by_tenant_shard.
func (r *Reader) listShards(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error) {
	fp := fingerprint(f)
	c := cursorKey{F: fp}
	if cursor != "" {
		var err error
		if c, err = decodeKey(cursor, fp); err != nil {
			return nil, "", err
		}
	}
	shards := openShards(tenantID, c)
	var out []domain.Event
	for range maxQueries {
		if err := r.fill(ctx, f, limit-len(out), shards); err != nil {
			return nil, "", fmt.Errorf("list events of tenant %s: %w", tenantID, err)
		}
		for _, item := range merge(shards, limit-len(out)) {
			e, err := eventOf(item)
			if err != nil {
				return nil, "", err
			}
			e.Payload, e.Sequence = nil, nil // not projected
			e.TenantID = tenantID            // not projected: log_pk is the key
			out = append(out, e)
			c.SK = LogKey(item)
		}
		if len(out) == limit || allDone(shards) {
			break
		}
	}
	return out, nextCursor(shards, c.SK, fp), nil
}

// openShards are the tenant's shards at cursor c's positions.
func openShards(tenantID string, c cursorKey) []*shard {
	shards := make([]*shard, outbox.LogShards)
	for n := range shards {
		s := &shard{key: outbox.LogShardKey(tenantID, n), hi: c.SK, done: c.Done&(1<<n) != 0}
		if at, ok := c.At[n]; ok {
			s.hi = atKey(at)
		}
		if k, ok := c.Keys[n]; ok {
			s.hi = k
		}
		s.from = s.hi
		shards[n] = s
	}
	return shards
}

// atKey is the position of a shard with nothing to list at or after the
// Unix nanosecond at: after every log key of at ("$" sorts after "#").
func atKey(at int64) string {
	return outbox.LogKey(time.Unix(0, at), "")[:30] + "$"
}

// fill queries, at most parallelQueries at once, every shard that is not
// done and has nothing left of what it read.
func (r *Reader) fill(ctx context.Context, f domain.EventFilter, want int, shards []*shard) error {
	return fanout.Each(len(shards), parallelQueries, func(n int) error {
		if s := shards[n]; !s.done && len(s.buf) == 0 {
			return r.readShard(ctx, f, want, s)
		}
		return nil
	})
}

// readShard reads the next items of s, up to want+1 (100 under a type
// filter, which drops some of them).
func (r *Reader) readShard(ctx context.Context, f domain.EventFilter, want int, s *shard) error {
	if lo, _ := bounds(f); s.hi != "" && s.hi < lo {
		s.done = true // DynamoDB refuses a BETWEEN whose bounds are reversed
		return nil
	}
	q := r.query(outbox.IndexByTenantShard, outbox.AttrLogShard, s.key, f, s.hi)
	q.Limit = aws.Int32(int32(want + 1))
	if f.Type != "" {
		q.Limit = aws.Int32(100)
	}
	page, err := r.DB.Query(ctx, q)
	if err != nil {
		return store.IndexNotReady(err, outbox.IndexByTenantShard)
	}
	s.buf = s.buf[:0]
	for _, item := range page.Items {
		if LogKey(item) != s.hi { // the upper bound is inclusive; the item there is listed
			s.buf = append(s.buf, item)
		}
	}
	s.end, s.last = page.LastEvaluatedKey == nil, LogKey(page.LastEvaluatedKey)
	s.settle()
	return nil
}

// merge takes up to n items from the shards' heads, newest first, while no
// shard emptied before its end could hold a newer one.
func merge(shards []*shard, n int) []map[string]types.AttributeValue {
	var out []map[string]types.AttributeValue
	for len(out) < n {
		var best *shard
		for _, s := range shards {
			if len(s.buf) > 0 && (best == nil || LogKey(s.buf[0]) > LogKey(best.buf[0])) {
				best = s
			}
		}
		if best == nil || blocked(shards, LogKey(best.buf[0])) {
			break
		}
		out = append(out, best.take())
	}
	return out
}

// blocked reports whether a shard emptied before its end may hold an item
// newer than head.
func blocked(shards []*shard, head string) bool {
	for _, s := range shards {
		if !s.done && len(s.buf) == 0 && head < s.hi {
			return true
		}
	}
	return false
}

func allDone(shards []*shard) bool {
	for _, s := range shards {
		if !s.done {
			return false
		}
	}
	return true
}

// nextCursor is the cursor after a page whose last listed item (or the
// previous cursor's) has log key sk: "" when every shard is done.
func nextCursor(shards []*shard, sk, fp string) string {
	c := cursorKey{SK: sk, F: fp}
	for n, s := range shards {
		switch {
		case s.done:
			c.Done |= 1 << n
		case s.hi == "" || len(s.buf) > 0 || (sk != "" && s.hi >= sk):
			// at sk
		case (sk == "" || s.hi[:30] < sk[:30]) && (s.from == "" || s.hi[:30] < s.from[:30]):
			at, _ := time.Parse(time.RFC3339Nano, s.hi[:30])
			c.At = setShard(c.At, n, at.UnixNano())
		default: // within one nanosecond: the whole key, to move on
			c.Keys = setShard(c.Keys, n, s.hi)
		}
	}
	if c.Done == 1<<outbox.LogShards-1 {
		return ""
	}
	return encodeKey(c)
}

func setShard[V any](m map[int]V, n int, v V) map[int]V {
	if m == nil {
		m = map[int]V{}
	}
	m[n] = v
	return m
}

// checkShards refuses a cursor's shard positions that no listing makes.
func checkShards(c cursorKey) error {
	if c.Done >= 1<<outbox.LogShards {
		return errors.New("no such shard")
	}
	for n := range c.At {
		if n < 0 || n >= outbox.LogShards {
			return errors.New("no such shard")
		}
	}
	for n, k := range c.Keys {
		if n < 0 || n >= outbox.LogShards || !isKey(k) {
			return errors.New("no such shard position")
		}
	}
	return nil
}
