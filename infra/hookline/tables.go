package hookline

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
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
	// outbox items in one table keyed pk/sk (S/S), with a sparse GSI for
	// per-tenant listings (gsi1pk/gsi1sk, all attributes) and one of dead
	// deliveries (store.IndexDead: dead_pk/dead_sk, the listed attributes
	// only; gsi1 holds those of earlier versions), and the delivery log
	// (store.IndexLog: log_pk/log_sk, the listed attributes only). TTL attribute:
	// expires_at. The deliveries of an event need no index: their ids
	// derive from the event's and the tenant's endpoints' ids
	// (store.DeliveriesOfEvent).
	State awsdynamodb.Table
	// MessageLog is whether the outbox has the message log's index
	// (outbox.IndexByTenantShard): Props.DisableMessageLog unset.
	MessageLog bool
	// LegacyIndex is whether it also has the unsharded index by_tenant
	// (outbox.IndexByTenant), which the log is read from then:
	// Props.KeepLegacyMessageLogIndex set.
	LegacyIndex bool
}

// MessageLogTable is the outbox table when it carries the message log's index,
// nil when the message log is off: the api function reads it then.
func (t tableSet) MessageLogTable() awsdynamodb.ITable {
	if !t.MessageLog {
		return nil
	}
	return t.Outbox
}

// stateIndexName is the state table's per-tenant listing index.
const stateIndexName = store.IndexTenant

// stateIndexes are the state table's indexes a function that queries the
// table's indexes (store.Call.Index) may query: the per-tenant listing and
// the dead-letter list, which the readers of the dead read together; the
// delivery log.
var stateIndexes = []string{stateIndexName, store.IndexDead, store.IndexLog}

// newTables creates the outbox and state tables, on-demand, with point-in-time
// recovery, retained when the stack is deleted or a change replaces them
// (they hold customers' events), and deleted when the stack's first
// create fails and rolls back (they are empty then): dataRemovalPolicy.
// messageLog adds the outbox's by_tenant_shard index, the message log: one
// index write per event (tooling/perf/cost); legacy keeps by_tenant beside
// it (one more). deliveryLog adds the state table's by_log index (unset:
// the first deploy of an upgrade that adds by_dead, Props.DeferDeliveryLogIndex).
func newTables(scope constructs.Construct, id string, messageLog, legacy, deliveryLog bool) tableSet {
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
		RemovalPolicy:                    dataRemovalPolicy,
		DeletionProtection:               jsii.Bool(true), // tableDeletionProtection
	})
	// The message log: a tenant's events, newest first, without their
	// payloads (read from the item itself). by_tenant first: an upgraded
	// stack's index, kept while items without log_pk may be left.
	logIndex := func(name, partition string) {
		outbox.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:        jsii.String(name),
			PartitionKey:     str(partition),
			SortKey:          str(outboxpkg.AttrLogKey),
			ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
			NonKeyAttributes: jsii.Strings(outboxpkg.AttrType, outboxpkg.AttrOccurredAt, outboxpkg.AttrEndpointID),
		})
	}
	if messageLog && legacy {
		logIndex(outboxpkg.IndexByTenant, outboxpkg.AttrTenantID)
	}
	if messageLog {
		logIndex(outboxpkg.IndexByTenantShard, outboxpkg.AttrLogShard)
	}
	state := newStateTable(c, pitr, deliveryLog)
	return tableSet{Outbox: outbox, State: state, MessageLog: messageLog, LegacyIndex: messageLog && legacy}
}

// stringAttr is a string key attribute of a table or index.
func stringAttr(name string) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
}

// newStateTable creates the state table and its indexes: gsi1, the dead
// index and, with deliveryLog, the delivery log.
func newStateTable(c constructs.Construct, pitr *awsdynamodb.PointInTimeRecoverySpecification, deliveryLog bool) awsdynamodb.Table {
	str := stringAttr
	state := awsdynamodb.NewTable(c, jsii.String("State"), &awsdynamodb.TableProps{
		PartitionKey:                     str("pk"),
		SortKey:                          str("sk"),
		BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute:              jsii.String("expires_at"),
		PointInTimeRecoverySpecification: pitr,
		RemovalPolicy:                    dataRemovalPolicy,
		DeletionProtection:               jsii.Bool(true), // tableDeletionProtection
	})
	state.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:    jsii.String(stateIndexName),
		PartitionKey: str("gsi1pk"),
		SortKey:      str("gsi1sk"),
	})
	// The dead-letter list: a death's entry holds the listed attributes,
	// not the message nor the attempt log (one write unit a death, whatever
	// the event's size). Added beside gsi1, whose projection cannot change
	// in place; a stack of an earlier version adds it in one update.
	state.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:        jsii.String(store.IndexDead),
		PartitionKey:     str(store.AttrDeadPK),
		SortKey:          str(store.AttrDeadSK),
		ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
		NonKeyAttributes: jsii.Strings(store.DeadIndexAttributes...),
	})
	// The delivery log: every delivery with a record, newest first per
	// tenant, with the attributes its listing shows and filters on (one
	// index write unit per write of a delivery). A stack of an earlier
	// version adds it in one update (CloudFormation adds one index an
	// update: a stack with gsi1 only defers it to the deploy after
	// by_dead's, Props.DeferDeliveryLogIndex).
	if !deliveryLog {
		return state
	}
	state.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:        jsii.String(store.IndexLog),
		PartitionKey:     str(store.AttrLogPK),
		SortKey:          str(store.AttrLogSK),
		ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
		NonKeyAttributes: jsii.Strings(store.LogIndexAttributes...),
	})
	return state
}

// The tables have DynamoDB's deletion protection on
// (DeletionProtectionEnabled): DeleteTable is refused, by the console, the
// CLI or a script, until it is turned off. With dataRemovalPolicy,
// deleting the stack leaves the tables anyway; protection guards them
// from everything else. To remove them for good (docs/deploying.md,
// "Deleting a stack"): delete the stack, then `aws dynamodb update-table
// --table-name NAME --no-deletion-protection-enabled` and `aws dynamodb
// delete-table`. A first create that fails and rolls back deletes the
// empty tables by dataRemovalPolicy; protection may make that deletion
// fail (not seen here: the local cloud does not enforce it) and leave the
// stack ROLLBACK_FAILED: turn protection off on the tables, delete them as
// above, and delete the stack.

// dataRemovalPolicy is the removal policy of the tables and of the signing
// secrets' key: RETAIN_ON_UPDATE_OR_DELETE, which CDK renders
// DeletionPolicy RetainExceptOnCreate and UpdateReplacePolicy Retain. A
// stack deletion, or a change that replaces one, leaves it in the account
// (customers' events, deliveries, the key that opens their signing
// secrets); a first create that fails and rolls back deletes it (it holds
// nothing yet; KMS schedules a key's deletion, after its waiting period),
// where Retain would leave both tables and the key behind, for the next
// deploy to start beside them.
const dataRemovalPolicy = awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE
