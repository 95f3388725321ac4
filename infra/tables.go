package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/store"
)

// Tables are hookline's two DynamoDB tables.
type Tables struct {
	// Outbox receives producers' events; its NEW_IMAGE stream feeds enqueue.
	// Key: id (S). TTL attribute: expires_at.
	Outbox awsdynamodb.Table
	// State holds tenants, API keys, endpoints, deliveries and rejected
	// outbox items in one table keyed pk/sk (S/S), with sparse GSIs for
	// per-tenant listings (gsi1pk/gsi1sk, all attributes) and the deliveries
	// of an event (gsi2pk/gsi2sk, keys only). TTL attribute: expires_at.
	State awsdynamodb.Table
}

// StateIndexName is the state table's per-tenant listing index.
const StateIndexName = store.IndexTenant

// StateEventIndexName is the state table's deliveries-of-an-event index.
const StateEventIndexName = store.IndexEvent

// NewTables creates the outbox and state tables, on-demand, with point-in-time
// recovery, retained when the stack is deleted (they hold customers' events).
func NewTables(scope constructs.Construct, id string) Tables {
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
	state := awsdynamodb.NewTable(c, jsii.String("State"), &awsdynamodb.TableProps{
		PartitionKey:                     str("pk"),
		SortKey:                          str("sk"),
		BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute:              jsii.String("expires_at"),
		PointInTimeRecoverySpecification: pitr,
	})
	state.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:    jsii.String(StateIndexName),
		PartitionKey: str("gsi1pk"),
		SortKey:      str("gsi1sk"),
	})
	// Keys only: an update of a delivery (each attempt) changes no key of
	// this index, so it writes nothing to it; with all attributes projected
	// every update of a delivery would be written twice. The API reads the
	// keys here and the deliveries from the table (store.DeliveriesOfEvent).
	// CloudFormation cannot change the projection of an existing index: a
	// stack deployed with gsi2 projecting all attributes needs one deploy
	// without the index and one with it (docs/operations.md).
	state.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(StateEventIndexName),
		PartitionKey:   str("gsi2pk"),
		SortKey:        str("gsi2sk"),
		ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
	})
	return Tables{Outbox: outbox, State: state}
}
