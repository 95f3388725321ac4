package hookline

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/store"
	outboxpkg "github.com/hookline/hookline/outbox"
)

// tableSet is hookline's two DynamoDB tables.
type tableSet struct {
	// Outbox receives producers' events; its NEW_IMAGE stream feeds enqueue.
	// Key: id (S). TTL attribute: expires_at.
	Outbox awsdynamodb.Table
	// State holds tenants, API keys, endpoints, deliveries and rejected
	// outbox items in one table keyed pk/sk (S/S), with one sparse GSI for
	// per-tenant listings (gsi1pk/gsi1sk, all attributes). TTL attribute:
	// expires_at. The deliveries of an event need no index: their ids
	// derive from the event's and the tenant's endpoints' ids
	// (store.DeliveriesOfEvent).
	State awsdynamodb.Table
	// MessageLog is whether the outbox has the message log's index
	// (outbox.IndexByTenant): Props.DisableMessageLog unset.
	MessageLog bool
}

// EventLog is the outbox table when it carries the message log's index,
// nil when the message log is off: the api function reads it then.
func (t tableSet) EventLog() awsdynamodb.ITable {
	if !t.MessageLog {
		return nil
	}
	return t.Outbox
}

// stateIndexName is the state table's per-tenant listing index.
const stateIndexName = store.IndexTenant

// newTables creates the outbox and state tables, on-demand, with point-in-time
// recovery, retained when the stack is deleted (they hold customers' events).
// messageLog adds the outbox's by_tenant index, the message log: one index
// write per event (tooling/perf/cost).
func newTables(scope constructs.Construct, id string, messageLog bool) tableSet {
	c := constructs.NewConstruct(scope, &id)
	str := func(name string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
	}
	pitr := &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)}
	outbox := awsdynamodb.NewTable(c, jsii.String("Outbox"), &awsdynamodb.TableProps{
		PartitionKey:                     str("id"),
		BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
		Stream:                           awsdynamodb.StreamViewType_NEW_IMAGE,
		TimeToLiveAttribute:              jsii.String("expires_at"),
		PointInTimeRecoverySpecification: pitr,
	})
	// The message log: a tenant's events, newest first, without their
	// payloads (read from the item itself).
	if messageLog {
		outbox.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:        jsii.String(outboxpkg.IndexByTenant),
			PartitionKey:     str(outboxpkg.AttrTenantID),
			SortKey:          str(outboxpkg.AttrLogKey),
			ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
			NonKeyAttributes: jsii.Strings(outboxpkg.AttrType, outboxpkg.AttrOccurredAt, outboxpkg.AttrEndpointID),
		})
	}
	state := awsdynamodb.NewTable(c, jsii.String("State"), &awsdynamodb.TableProps{
		PartitionKey:                     str("pk"),
		SortKey:                          str("sk"),
		BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute:              jsii.String("expires_at"),
		PointInTimeRecoverySpecification: pitr,
	})
	state.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:    jsii.String(stateIndexName),
		PartitionKey: str("gsi1pk"),
		SortKey:      str("gsi1sk"),
	})
	return tableSet{Outbox: outbox, State: state, MessageLog: messageLog}
}
