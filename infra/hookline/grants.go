package hookline

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/store/keys"
	outboxpkg "github.com/hookline/hookline/outbox"
)

// Least privilege: each function is granted the API actions its code
// calls, on the resources it calls them on, and nothing else. table.Grant
// and the grantReadWriteData family are not used on the state table: they
// cover every index (table/index/*) and, for the latter, Scan,
// BatchWriteItem and the rest. The DynamoDB actions of every store method
// are listed in store.Calls (held to the code by the store's tests), and
// TestLeastPrivilege holds each role to the methods its handler can call.

// grantTableItems lets fn call actions on the state table's items (not on
// its index).
func grantTableItems(fn awslambda.Function, table awsdynamodb.Table, actions ...string) {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings(actions...),
		ResourceArns: jsii.Strings(*table.TableArn()),
	})
}

// Writes in batches (BatchWriteItem, which IAM cannot split into its puts
// and deletes) are granted on the state table with a condition on every
// item's partition key (ForAllValues:StringLike dynamodb:LeadingKeys), so
// that a batch write can touch nothing but its one kind of item:
//
//   - outcomePages, deliver's (store.RecordFirstAttempts): a page of
//     deliveries delivered at their first attempt, keys.OutcomesPrefix
//     followed by its tenants' hash and shard; no record, endpoint, key,
//     tenant or counter.
//   - messageLogPages, enqueue's (messagelog.Pages.Write): a page of the
//     message log, TENANT#<tenant>#EVENTS#<n> (keys.EventPages); no delivery
//     record either (a tenant's own partition key, TENANT#<tenant>, does
//     not end in #EVENTS#<n>: a tenant id holds no "#").
var (
	outcomePages    = []string{keys.OutcomesLike()}
	messageLogPages = []string{keys.EventPagesLike()}
)

// grantBatchWrites lets fn write in batches the state table's items whose
// partition keys are like one of leadingKeys, and nothing else in batches.
func grantBatchWrites(fn awslambda.Function, table awsdynamodb.Table, leadingKeys []string) {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings("dynamodb:BatchWriteItem"),
		ResourceArns: jsii.Strings(*table.TableArn()),
		Conditions:   &map[string]*map[string]any{"ForAllValues:StringLike": {"dynamodb:LeadingKeys": leadingKeys}},
	})
}

// grantOutbox lets fn read the message log when it is on: Query on the outbox
// table's message log indexes (messageLogIndexes; not the table, not another
// index) and GetItem on the table (one event with its payload); and PutItem
// on the table (the events it publishes). No Scan, no other write, no stream.
func grantOutbox(fn awslambda.Function, outbox awsdynamodb.ITable, messageLog, legacy bool) {
	if messageLog {
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee: fn, Actions: jsii.Strings("dynamodb:Query"), ResourceArns: messageLogIndexes(outbox, legacy),
		})
	}
	// PutItem: published and test events; GetItem: a publish repeated, and
	// an event of the message log.
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: fn, Actions: jsii.Strings("dynamodb:PutItem", "dynamodb:GetItem"), ResourceArns: jsii.Strings(*outbox.TableArn()),
	})
}

// grantOutboxPut lets fn write operational events into the outbox table
// (PutItem, and nothing else: not its stream, not a read).
func grantOutboxPut(fn awslambda.Function, outbox awsdynamodb.ITable) {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings("dynamodb:PutItem"),
		ResourceArns: jsii.Strings(*outbox.TableArn()),
	})
}

// messageLogIndexes are the ARNs of the outbox table's message log
// indexes: by_tenant_shard, and by_tenant while legacy keeps it (the one
// read then; by_tenant_shard granted already, for the deploy that drops
// by_tenant and moves the readers to it).
func messageLogIndexes(outbox awsdynamodb.ITable, legacy bool) *[]*string {
	arns := []string{*outbox.TableArn() + "/index/" + outboxpkg.IndexByTenantShard}
	if legacy {
		arns = append(arns, *outbox.TableArn()+"/index/"+outboxpkg.IndexByTenant)
	}
	return jsii.Strings(arns...)
}

// grantOutboxErase lets fn (the replay worker, for a tenant's erasure)
// Query the outbox table's message log indexes, and only those, and
// delete outbox items.
func grantOutboxErase(fn awslambda.Function, outbox awsdynamodb.ITable, indexed, legacy bool) {
	if indexed {
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      fn,
			Actions:      jsii.Strings("dynamodb:Query"),
			ResourceArns: messageLogIndexes(outbox, legacy),
		})
	}
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings("dynamodb:DeleteItem"),
		ResourceArns: jsii.Strings(*outbox.TableArn()),
	})
}

// grantNotices lets the deliver function raise operational events: write
// them into the outbox, and send the delivery.dead windows' notices to the
// replay worker's operations queue, whose address it is given here (the
// queue is made after the function).
func grantNotices(deliver awslambda.Function, outbox awsdynamodb.ITable, ops awssqs.IQueue) {
	grantOutboxPut(deliver, outbox)
	ops.Grant(deliver, jsii.String("sqs:SendMessage"))
	deliver.AddEnvironment(jsii.String(fnenv.VarOutboxTable), outbox.TableName(), nil)
	deliver.AddEnvironment(jsii.String(fnenv.VarReplayOpsQueueURL), ops.QueueUrl(), nil)
}

// grantIndexQuery lets fn Query the state table's indexes (stateIndexes),
// and only those.
func grantIndexQuery(fn awslambda.Function, table awsdynamodb.Table) {
	var arns []string
	for _, ix := range stateIndexes {
		arns = append(arns, *table.TableArn()+"/index/"+ix)
	}
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings("dynamodb:Query"),
		ResourceArns: jsii.Strings(arns...),
	})
}

// grantSecrets lets fn call actions (kms:Encrypt for the api function,
// kms:Decrypt for deliver) with the signing secrets' key, only for
// ciphertexts whose encryption context names the signing-secret purpose.
func grantSecrets(fn awslambda.Function, key awskms.IKey, actions ...string) {
	awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      fn,
		Actions:      jsii.Strings(actions...),
		ResourceArns: jsii.Strings(*key.KeyArn()),
		Conditions: &map[string]*map[string]any{
			"StringEquals": {"kms:EncryptionContext:" + sealing.ContextPurpose: sealing.Purpose},
		},
	})
}
