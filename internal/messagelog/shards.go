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
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
)

// A listing reads each of the tenant's shards newest first and merges them:
// the outbox.LogShards shards of the sharded index by_tenant_shard (or, on
// a stack that keeps the unsharded by_tenant, that index as shard 0 and
// the others done), then the PageShards shards of the message log's pages
// (pages.go). It lists the newest item at the head of any shard, as long
// as no shard it has read to the end of what it fetched (but not to the
// end of the shard) could still hold a newer one; else it fetches again,
// every shard that needs it at once, at most maxQueries rounds. An event
// on two pages (a stream batch tried again, split differently) is listed
// once: merged in log key order, its copies come one after the other.
//
// Each shard has a position: it holds nothing more to list at or after it.
// Merged newest first, every shard's position is at most the log key of
// the last item listed, so a cursor names that key once (SK), the shards
// read to their end (Done), and only the shards a filter read further
// than SK without listing anything (At, an occurred_at: so that a page
// that lists nothing still moves on). That keeps a cursor within the
// API's bound whatever the shards: positions of 20 full log keys would not.

// allShards is how many shards a listing merges: the index's, then the pages'.
const allShards = outbox.LogShards + PageShards

// parallelQueries bounds the shard queries a listing runs at once.
const parallelQueries = 4

// shard is one shard's state in a listing.
type shard struct {
	tenant string
	// index is the outbox index it reads, pk that index's partition key
	// attribute; a page shard (pages.go) has neither.
	index, pk string
	key       string // its partition key value
	from      string // its position in the cursor read
	hi        string // its position, a log key or LogKey(t)[:30]+"$" ("" none)
	buf       []map[string]types.AttributeValue
	last      string // the log key of the last item its last query read
	end       bool   // its last query read its last item
	done      bool   // nothing more to list
	// absent: the stack has no such shard (openShards).
	absent bool
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

// list is ListEvents.
func (r *Reader) list(ctx context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error) {
	fp := fingerprint(f)
	c := cursorKey{F: fp}
	if cursor != "" {
		var err error
		if c, err = decodeKey(cursor, fp); err != nil {
			return nil, "", err
		}
	}
	shards := r.openShards(tenantID, c)
	var out []domain.Event
	for range maxQueries {
		if err := r.fill(ctx, f, limit-len(out), shards); err != nil {
			return nil, "", fmt.Errorf("list events of tenant %s: %w", tenantID, err)
		}
		for _, item := range merge(shards, limit-len(out)) {
			if LogKey(item) == c.SK {
				continue // the same event on another page
			}
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

// openShards are the tenant's shards at cursor c's positions. A shard the
// stack does not have (the pages without Reader.Pages; with Reader.Legacy,
// index shards 1 to 15, by_tenant being shard 0) is absent: done, and left
// out of the next cursor, so that a reader that has it starts it at the
// cursor's key. A cursor read with Legacy starts by_tenant, which holds
// every shard's items, at the highest position of the shards not done.
func (r *Reader) openShards(tenantID string, c cursorKey) []*shard {
	shards := make([]*shard, allShards)
	for n := range shards {
		s := &shard{tenant: tenantID, hi: c.SK, done: c.Done&(1<<n) != 0}
		if at, ok := c.At[n]; ok {
			s.hi = atKey(at)
		}
		if k, ok := c.Keys[n]; ok {
			s.hi = k
		}
		switch {
		case n >= outbox.LogShards:
			s.key = keys.EventPages(tenantID, n-outbox.LogShards)
			s.absent = r.Pages == nil
		case r.Legacy:
			s.index, s.pk, s.key, s.absent = outbox.IndexByTenant, outbox.AttrTenantID, tenantID, n > 0
		default:
			s.index, s.pk, s.key = outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.LogShardKey(tenantID, n)
		}
		shards[n] = s
	}
	if r.Legacy {
		all := shards[0]
		for _, s := range shards[1:outbox.LogShards] {
			switch {
			case all.done:
				all.done, all.hi = s.done, s.hi
			case !s.done && s.hi > all.hi:
				all.hi = s.hi
			}
		}
	}
	for _, s := range shards {
		s.done = s.done || s.absent
		s.from = s.hi
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
		switch s := shards[n]; {
		case s.done || len(s.buf) > 0:
		case s.index == "":
			return r.readPages(ctx, f, s)
		default:
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
	q := r.query(s.index, s.pk, s.key, f, s.hi)
	q.Limit = aws.Int32(int32(want + 1))
	if f.Type != "" {
		q.Limit = aws.Int32(100)
	}
	page, err := r.DB.Query(ctx, q)
	if err != nil {
		return store.IndexNotReady(err, s.index)
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
	if allDone(shards) {
		return ""
	}
	for n, s := range shards {
		switch {
		case s.absent:
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
	if c.Done >= 1<<allShards {
		return errors.New("no such shard")
	}
	for n := range c.At {
		if n < 0 || n >= allShards {
			return errors.New("no such shard")
		}
	}
	for n, k := range c.Keys {
		if n < 0 || n >= allShards || !isKey(k) {
			return errors.New("no such shard position")
		}
	}
	return nil
}
