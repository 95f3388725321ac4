package erasure

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

func TestOutboxTableFindsTheTenantsItemsThroughEveryShard(t *testing.T) {
	t.Parallel()
	f := dynamofake.New("outbox", outbox.AttrID)
	include := []string{outbox.AttrType, outbox.AttrOccurredAt, outbox.AttrEndpointID}
	f.AddIndex(outbox.IndexByTenant, outbox.AttrTenantID, outbox.AttrLogKey, include...)
	f.AddIndex(outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.AttrLogKey, include...)
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	want := map[string]bool{}
	for i := range 100 {
		e := outbox.Event{ID: fmt.Sprintf("evt_%03d", i), TenantID: "acme", Type: "a", Payload: []byte(`{}`), OccurredAt: at.Add(time.Duration(i) * time.Second)}
		if i%10 == 0 {
			e.EndpointID = "ep_1"
		}
		f.Put(indexed(t, e))
		want[e.ID] = true
	}
	f.Put(indexed(t, outbox.Event{ID: "evt_other", TenantID: "other", Type: "a", Payload: []byte(`{}`), OccurredAt: at}))
	for _, legacy := range []bool{false, true} {
		o := &OutboxTable{DB: noDelete{f}, Table: "outbox", Legacy: legacy}
		evs, err := o.TenantEvents(context.Background(), "acme", 1000)
		require.NoError(t, err)
		found := map[string]bool{}
		for _, ev := range evs {
			require.False(t, found[ev.ID], ev.ID)
			found[ev.ID] = true
			require.Equal(t, ev.ID[len(ev.ID)-1] == '0', ev.EndpointID == "ep_1", ev.ID)
		}
		require.Equal(t, want, found, "legacy=%v: every item of the tenant, none of another", legacy)
		page, err := o.TenantEvents(context.Background(), "acme", 7)
		require.NoError(t, err)
		require.Len(t, page, 7, "legacy=%v: a page of the limit", legacy)
	}
}

// indexed is e's item as a producer library before the message log's pages
// wrote it: with its index keys.
func indexed(t *testing.T, e outbox.Event) map[string]types.AttributeValue {
	t.Helper()
	item, err := e.Item()
	require.NoError(t, err)
	item[outbox.AttrLogKey] = &types.AttributeValueMemberS{Value: outbox.LogKey(e.OccurredAt, e.ID)}
	item[outbox.AttrLogShard] = &types.AttributeValueMemberS{Value: outbox.LogShard(e.TenantID, e.ID)}
	return item
}

func TestOutboxTableErasesTheItemsOfTheIndexThenOfThePages(t *testing.T) {
	t.Parallel()
	f := dynamofake.New("outbox", outbox.AttrID)
	f.AddIndex(outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.AttrLogKey, outbox.AttrType, outbox.AttrOccurredAt, outbox.AttrEndpointID)
	state := dynamofake.NewDB("gsi1")
	pages := &messagelog.Pages{DB: state, Table: "state"}
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var entries []messagelog.Entry
	for i := range 350 {
		tenant := "acme"
		if i%7 == 0 {
			tenant = "other"
		}
		e := outbox.Event{ID: fmt.Sprintf("evt_%03d", i), TenantID: tenant, Type: "a", Payload: []byte(`{}`), OccurredAt: at.Add(time.Duration(i%5) * time.Second)}
		if i < 50 {
			f.Put(indexed(t, e))
			continue
		}
		item, err := e.Item()
		require.NoError(t, err)
		f.Put(item)
		entries = append(entries, messagelog.Entry{ID: e.ID, TenantID: tenant, Type: "a", OccurredAt: e.OccurredAt})
	}
	require.NoError(t, pages.Write(context.Background(), entries))
	o := &OutboxTable{DB: f, Table: "outbox", Pages: pages}
	ctx := context.Background()
	for step := 0; ; step++ {
		require.Less(t, step, 20)
		evs, err := o.TenantEvents(ctx, "acme", 100)
		require.NoError(t, err)
		if len(evs) == 0 {
			break
		}
		require.LessOrEqual(t, len(evs), 200, "the limit, and at most a page more")
		for _, ev := range evs {
			_, err := o.DeleteEvent(ctx, ev.ID)
			require.NoError(t, err)
		}
		require.NoError(t, o.DeletePages(ctx, evs))
	}
	for _, it := range f.Items() {
		require.Equal(t, "other", dynamofake.String(it, outbox.AttrTenantID), "every item of acme deleted, none of other")
	}
	require.Len(t, f.Items(), 50)
	for _, it := range state.Items() {
		require.Equal(t, "other", dynamofake.String(it, "tenant_id"), "every page of acme deleted, none of other")
	}
	require.NotEmpty(t, state.Items())
}

// noDelete is the fake outbox table as an OutboxDB that deletes nothing.
type noDelete struct{ *dynamofake.Table }

func (noDelete) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return nil, errors.New("not here")
}
