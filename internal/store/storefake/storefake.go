// Package storefake is the real store (package store) on the one fake
// DynamoDB (package dynamofake), for the unit tests of the store's
// consumers: they run the keys, expressions, transactions and indexes
// production runs, under DynamoDB's rules as the fake holds them. A test
// injects faults on the fake (DB.Fault, DB.BeforeWrite, DB.LagIndex), not
// in a second store. The message log is likewise package messagelog's
// reader on a fake outbox table.
//
// Invariants: the fake tables have the indexes the stack builds
// (infra/hookline/tables.go); nothing here writes a key of its own but
// through package store or package outbox.
package storefake

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fakes/dynamofake"
	"github.com/hookline/hookline/internal/messagelog"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/hookline/hookline/outbox"
)

// Table is the fake state table's name.
const Table = "state"

// Store is the real store on a fake state table, with what a test reads
// straight from the table.
type Store struct {
	*store.Store
	// DB is the fake table under the store: a test sets its Fault,
	// BeforeWrite or LagIndex, or reads its calls.
	DB *dynamofake.DB
}

// NewDB is an empty fake state table with the stack's indexes: gsi1 (all
// attributes), the dead index (DeadIndexAttributes) and the delivery log
// (LogIndexAttributes).
func NewDB() *dynamofake.DB {
	db := dynamofake.NewDB(store.IndexTenant)
	db.AddIndex(store.IndexDead, store.AttrDeadPK, store.AttrDeadSK, store.DeadIndexAttributes...)
	db.AddIndex(store.IndexLog, store.AttrLogPK, store.AttrLogSK, store.LogIndexAttributes...)
	return db
}

// New returns the store on an empty fake state table, on the wall clock
// (set Now to inject one). Its query pages end where DynamoDB's would for
// these tests' small tables: at 1 MB (dynamofake.MaxPageBytes), which no
// page of items of a byte or more reaches before that many items; a test
// of the store's own paging sets DB.PageSize lower.
func New() *Store {
	db := NewDB()
	db.PageSize = dynamofake.MaxPageBytes
	return &Store{Store: store.New(db, Table), DB: db}
}

// PutDelivery writes a delivery's record as given, for a test to start
// from (store.PutDeliveryRecord); it panics on a failure, which only a
// fault the test set can cause.
func (s *Store) PutDelivery(d domain.Delivery) {
	if err := store.PutDeliveryRecord(context.Background(), s.Store, d); err != nil {
		panic(fmt.Sprintf("storefake: %v", err))
	}
}

// items decodes every item of the table whose sort key is sk and whose
// partition key starts with prefix.
func items[T any](s *Store, prefix, sk string) []T {
	var out []T
	for _, it := range s.DB.Items() {
		if dynamofake.String(it, "sk") != sk || !strings.HasPrefix(dynamofake.String(it, "pk"), prefix) {
			continue
		}
		var v T
		if err := attributevalue.UnmarshalMap(it, &v); err != nil {
			panic(fmt.Sprintf("storefake: %T: %v", v, err))
		}
		out = append(out, v)
	}
	return out
}

// Deliveries returns every delivery, by id: its record, else its row of
// an outcome page (store.OutcomeRows: delivered at its first attempt).
func (s *Store) Deliveries() map[string]domain.Delivery {
	out := map[string]domain.Delivery{}
	for _, it := range s.DB.Items() {
		rows, err := store.OutcomeRows(it)
		if err != nil {
			panic(fmt.Sprintf("storefake: outcome page: %v", err))
		}
		for _, d := range rows {
			out[d.DeliveryID] = d
		}
	}
	for _, it := range s.DB.Items() {
		pk := dynamofake.String(it, "pk")
		if !strings.HasPrefix(pk, keys.RecordsPrefix) && (!strings.HasPrefix(pk, keys.DeliveryPrefix) || dynamofake.String(it, "sk") != keys.DeliverySK) {
			continue
		}
		var d domain.Delivery
		if err := attributevalue.UnmarshalMap(it, &d); err != nil {
			panic(fmt.Sprintf("storefake: delivery: %v", err))
		}
		out[d.DeliveryID] = d
	}
	return out
}

// InDeadIndex reports whether delivery id's record is in the dead index.
func (s *Store) InDeadIndex(id string) bool {
	pk, sk := keys.Delivery(id), keys.DeliverySK
	if rpk, ok := store.RecordsPK(id); ok {
		pk, sk = rpk, id
	}
	it := s.DB.Item(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}})
	return dynamofake.String(it, store.AttrDeadPK) != ""
}

// APIKeys returns every API key stored.
func (s *Store) APIKeys() []domain.APIKey {
	return items[domain.APIKey](s, keys.APIKey(""), keys.APIKeySK)
}

// Rejections returns every rejection recorded, by key.
func (s *Store) Rejections() map[string]domain.Rejection {
	out := map[string]domain.Rejection{}
	for _, r := range items[domain.Rejection](s, keys.Rejected(""), keys.RejectedSK) {
		out[r.Key] = r
	}
	return out
}

// MessageLog is package messagelog's reader on a fake outbox table with
// the stack's message log indexes (by_tenant_shard, and by_tenant, which
// Legacy reads) and the message log's pages on a fake state table.
type MessageLog struct {
	*messagelog.Reader
	// Table is the fake outbox table.
	Table *dynamofake.Table
	// State is the fake state table of the pages.
	State *dynamofake.DB
}

// NewMessageLog returns the reader of an empty fake outbox table.
func NewMessageLog() *MessageLog {
	f := dynamofake.New("outbox", outbox.AttrID)
	include := []string{outbox.AttrType, outbox.AttrOccurredAt, outbox.AttrEndpointID}
	f.AddIndex(outbox.IndexByTenant, outbox.AttrTenantID, outbox.AttrLogKey, include...)
	f.AddIndex(outbox.IndexByTenantShard, outbox.AttrLogShard, outbox.AttrLogKey, include...)
	state := dynamofake.NewDB(store.IndexTenant)
	pages := &messagelog.Pages{DB: state, Table: "state"}
	return &MessageLog{Reader: &messagelog.Reader{DB: f, Table: "outbox", Pages: pages}, Table: f, State: state}
}

// Put writes e as a producer's outbox item (outbox.Event.Item) and lists
// it in the message log's pages, as enqueue does. An event without a
// payload gets {}. Put an id once: the fake outbox table adds, it does not
// replace.
func (l *MessageLog) Put(e domain.Event) {
	l.Table.Put(l.item(e))
	entry := messagelog.Entry{ID: e.ID, TenantID: e.TenantID, Type: e.Type, EndpointID: e.EndpointID, OccurredAt: e.OccurredAt}
	if err := l.Pages.Write(context.Background(), []messagelog.Entry{entry}); err != nil {
		panic(fmt.Sprintf("storefake: event %s: %v", e.ID, err))
	}
}

// PutIndexed writes e as a producer library before the message log's
// pages did: with its index keys (log_sk, log_pk), listed by the index.
func (l *MessageLog) PutIndexed(e domain.Event) {
	item := l.item(e)
	item[outbox.AttrLogKey] = &types.AttributeValueMemberS{Value: outbox.LogKey(e.OccurredAt, e.ID)}
	item[outbox.AttrLogShard] = &types.AttributeValueMemberS{Value: outbox.LogShard(e.TenantID, e.ID)}
	l.Table.Put(item)
}

func (l *MessageLog) item(e domain.Event) map[string]types.AttributeValue {
	payload := e.Payload
	if payload == nil {
		payload = json.RawMessage(`{}`)
	}
	item, err := outbox.Event{
		ID: e.ID, TenantID: e.TenantID, Type: e.Type, Payload: payload, OccurredAt: e.OccurredAt,
		EndpointID: e.EndpointID, Sequence: e.Sequence, TraceParent: e.TraceParent, NoExpiry: true,
	}.Item()
	if err != nil {
		panic(fmt.Sprintf("storefake: event %s: %v", e.ID, err))
	}
	return item
}
