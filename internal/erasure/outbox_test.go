package erasure

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
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
		item, err := e.Item()
		require.NoError(t, err)
		f.Put(item)
		want[e.ID] = true
	}
	other, err := outbox.Event{ID: "evt_other", TenantID: "other", Type: "a", Payload: []byte(`{}`), OccurredAt: at}.Item()
	require.NoError(t, err)
	f.Put(other)
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

// noDelete is the fake outbox table as an OutboxDB that deletes nothing.
type noDelete struct{ *dynamofake.Table }

func (noDelete) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return nil, errors.New("not here")
}
