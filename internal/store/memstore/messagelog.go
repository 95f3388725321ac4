package memstore

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/outbox"
)

// MessageLog is the in-memory message log: the outbox table's events as
// package messagelog reads them (listing by the sharded index
// by_tenant_shard, or with Legacy by_tenant, newest first, without payload
// or sequence; one event by id with both). The zero value is empty and
// ready.
type MessageLog struct {
	// Legacy lists from by_tenant, as messagelog.Reader.Legacy: the
	// events put without their log_pk (PutWithoutShard) too.
	Legacy bool

	mu      sync.Mutex
	events  map[string]domain.Event
	noShard map[string]bool
}

// Put writes e as the outbox item of a producer that set its log key and
// its log shard would (outbox.Event.Item; replacing one of the same id).
func (l *MessageLog) Put(e domain.Event) { l.put(e, false) }

// PutWithoutShard writes e as a producer library before log_pk did: with
// its log key but no log shard, so that by_tenant_shard lacks it.
func (l *MessageLog) PutWithoutShard(e domain.Event) { l.put(e, true) }

func (l *MessageLog) put(e domain.Event, noShard bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.events == nil {
		l.events, l.noShard = map[string]domain.Event{}, map[string]bool{}
	}
	l.events[e.ID], l.noShard[e.ID] = e, noShard
}

// Event reads tenantID's event id, store.ErrNotFound when it is missing or
// another tenant's.
func (l *MessageLog) Event(_ context.Context, tenantID, id string) (domain.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.events[id]
	if !ok || e.TenantID != tenantID {
		return domain.Event{}, fmt.Errorf("event %s: %w", id, store.ErrNotFound)
	}
	return e, nil
}

// ListEvents lists tenantID's events that f selects, newest first, as
// messagelog.Reader.ListEvents does (its cursors are this fake's own).
func (l *MessageLog) ListEvents(_ context.Context, tenantID string, f domain.EventFilter, limit int, cursor string) ([]domain.Event, string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fp := f.Type + "|" + f.Since.UTC().Format(time.RFC3339Nano) + "|" + f.Until.UTC().Format(time.RFC3339Nano)
	after := ""
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		parts := strings.SplitN(string(b), "\n", 2)
		if err != nil || len(parts) != 2 {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrBadCursor)
		}
		if parts[0] != fp {
			return nil, "", fmt.Errorf("cursor: %w", store.ErrCursorMismatch)
		}
		after = parts[1]
	}
	var keys []string
	byKey := map[string]domain.Event{}
	for _, e := range l.events {
		k := outbox.LogKey(e.OccurredAt, e.ID)
		if e.TenantID != tenantID || (l.noShard[e.ID] && !l.Legacy) || (f.Type != "" && e.Type != f.Type) || (!f.Since.IsZero() && e.OccurredAt.Before(f.Since)) ||
			(!f.Until.IsZero() && e.OccurredAt.After(f.Until)) || (after != "" && k >= after) {
			continue
		}
		keys = append(keys, k)
		byKey[k] = e
	}
	slices.Sort(keys)
	slices.Reverse(keys)
	var out []domain.Event
	for _, k := range keys {
		e := byKey[k]
		e.Payload, e.Sequence, e.TraceParent = nil, nil, "" // the index projects none of them
		out = append(out, e)
		if len(out) == limit {
			return out, base64.RawURLEncoding.EncodeToString([]byte(fp + "\n" + k)), nil
		}
	}
	return out, "", nil
}
