package erasure

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/outbox"
)

// OutboxDB is what OutboxTable needs of DynamoDB.
type OutboxDB interface {
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var _ OutboxDB = (*dynamodb.Client)(nil)

// OutboxTable lists a tenant's outbox items through the outbox table's
// message log index, then through the message log's pages (Pages), and
// deletes them: the erasure's access to the outbox table, which it is
// granted Query on that index and DeleteItem for. The index is the sharded
// by_tenant_shard (outbox.IndexByTenantShard), whose shards it reads one
// after another, or with Legacy the unsharded by_tenant
// (outbox.IndexByTenant); it lists the items of producer libraries before
// the pages, the pages every other. Items an outbox library before
// log_pk wrote are not in by_tenant_shard: they expire by their TTL.
type OutboxTable struct {
	DB    OutboxDB
	Table string
	// NoIndex says the outbox has no message log index (the message log
	// is off): no item can be found by its tenant, so TenantEvents lists
	// none and the items, with the deliveries that derive from them,
	// expire by their TTL. Default false.
	NoIndex bool
	// Legacy says the outbox still has the unsharded index by_tenant,
	// which lists every item, those written without log_pk too:
	// TenantEvents reads it. Default false: it reads by_tenant_shard.
	Legacy bool
	// Pages are the message log's pages, which list the items written
	// without log_pk: TenantEvents reads them once the index lists none,
	// and DeletePages deletes each after its events. Nil: none.
	Pages *messagelog.Pages
}

var _ Outbox = (*OutboxTable)(nil)

// TenantEvents returns up to limit of a tenant's outbox items (the index
// is eventually consistent: one deleted a moment ago may be listed again),
// and once the index lists none, those of its message log pages: every
// event of the pages read, limit and at most a page more.
func (o *OutboxTable) TenantEvents(ctx context.Context, tenantID string, limit int) ([]OutboxEvent, error) {
	limit = max(1, limit)
	var evs []OutboxEvent
	var err error
	switch {
	case o.NoIndex:
		return nil, nil
	case o.Legacy:
		evs, err = o.query(ctx, outbox.IndexByTenant, outbox.AttrTenantID, tenantID, limit, nil)
	default:
		for n := 0; n < outbox.LogShards && len(evs) < limit && err == nil; n++ {
			evs, err = o.query(ctx, outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.LogShardKey(tenantID, n), limit-len(evs), evs)
		}
	}
	if err != nil || len(evs) > 0 || o.Pages == nil {
		return evs, err
	}
	pages, err := o.Pages.Tenant(ctx, tenantID, limit)
	for _, pg := range pages {
		for _, e := range pg.Entries {
			evs = append(evs, OutboxEvent{ID: e.ID, EndpointID: e.EndpointID, OccurredAt: e.OccurredAt, page: pg})
		}
	}
	return evs, err
}

// DeletePages deletes the message log pages of evs, events TenantEvents
// returned whose items are deleted: each page once, at its last entry
// (TenantEvents returns a page's entries whole, in order).
func (o *OutboxTable) DeletePages(ctx context.Context, evs []OutboxEvent) error {
	for _, ev := range evs {
		if n := len(ev.page.Entries); n > 0 && ev.page.Entries[n-1].ID == ev.ID {
			if err := o.Pages.Delete(ctx, ev.page); err != nil {
				return err
			}
		}
	}
	return nil
}

// query appends to evs up to limit items of index whose partition key pk
// is key.
func (o *OutboxTable) query(ctx context.Context, index, pk, key string, limit int, evs []OutboxEvent) ([]OutboxEvent, error) {
	out, err := o.DB.Query(ctx, &dynamodb.QueryInput{
		TableName: &o.Table, IndexName: aws.String(index),
		KeyConditionExpression:    aws.String("#t = :t"),
		ExpressionAttributeNames:  map[string]string{"#t": pk},
		ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberS{Value: key}},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("list the outbox items of %s %s: %w", pk, key, err)
	}
	for _, item := range out.Items {
		id, _ := item[outbox.AttrID].(*types.AttributeValueMemberS)
		if id == nil {
			continue
		}
		ev := OutboxEvent{ID: id.Value}
		if ep, _ := item[outbox.AttrEndpointID].(*types.AttributeValueMemberS); ep != nil {
			ev.EndpointID = ep.Value
		}
		if at, _ := item[outbox.AttrOccurredAt].(*types.AttributeValueMemberS); at != nil {
			// Unparsed, it names no delivery: enqueue refused the item.
			ev.OccurredAt, _ = time.Parse(time.RFC3339Nano, at.Value)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// DeleteEvent deletes an outbox item and reports whether it existed.
func (o *OutboxTable) DeleteEvent(ctx context.Context, id string) (bool, error) {
	_, err := o.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                &o.Table,
		Key:                      map[string]types.AttributeValue{outbox.AttrID: &types.AttributeValueMemberS{Value: id}},
		ConditionExpression:      aws.String("attribute_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": outbox.AttrID},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("delete outbox item %s: %w", id, err)
	}
	return true, nil
}
