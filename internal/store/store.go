package store

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store/keys"
)

// ErrNotFound is returned when an item does not exist.
var ErrNotFound = errors.New("not found")

// DynamoDB is the part of the DynamoDB client the store uses.
type DynamoDB interface {
	GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	BatchGetItem(context.Context, *dynamodb.BatchGetItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
	BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ DynamoDB = (*dynamodb.Client)(nil)

// Store reads and writes the state table.
type Store struct {
	db    DynamoDB
	table string
	// Retention is how long delivery, rejection and job records
	// live (TTL), counted from their creation and, for a delivery that
	// dies, again from its death. Default 15 days: a day longer than the
	// DLQ keeps a message (14 days from its send, at most), so a dead
	// delivery's record, its listing and its replay outlive its message.
	Retention time.Duration
	// DepthSettle is how long a tenant's DLQ depth counter must have stood
	// still before ReconcileDLQDepth trusts the dead index (eventually
	// consistent) over it. Default one minute.
	DepthSettle time.Duration
	// StatsRetention is how long an endpoint's hour bucket of attempt
	// counters lives (TTL), counted from its hour's start. Default
	// DefaultStatsRetention (35 days).
	StatsRetention time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// statsNext counts this store's AddEndpointStats: the shard each
	// writes to (statsShard).
	statsNext atomic.Uint32
	// rateNext counts this store's TakeSlots: the shard of a window each
	// tries first.
	rateNext atomic.Uint32
}

// DefaultRetention is a new Store's Retention: 15 days.
const DefaultRetention = domain.DefaultDeliveryRetention

// New returns a store on table.
func New(db DynamoDB, table string) *Store {
	return &Store{db: indexReadiness{db}, table: table, Retention: DefaultRetention, DepthSettle: DefaultDepthSettle, StatsRetention: DefaultStatsRetention, Now: time.Now}
}

// sortableFormat is how a time is written into a key or a time attribute
// (keys.TimeFormat), so that times compare as strings in time order.
const sortableFormat = keys.TimeFormat

func sortableTime(t time.Time) string { return keys.Time(t) }

func timeValue(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberS{Value: sortableTime(t)}
}
