package hookline

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/streamreprocess"
	"github.com/stretchr/testify/require"
)

// Every test process starts one node jsii runtime; each configuration below
// is synthesized once, at the top of its test, and shared by its subtests.
// Subtests are not parallel: the jsii runtime is one process.

type obj = map[string]any
type arr = []any

// synthesized is one configuration's template, with the logical IDs of the
// resources the assertions need, read from the stack's outputs (so the tests
// do not depend on CDK's ID hashing).
type synthesized struct {
	tpl    assertions.Template
	json   obj    // the template as plain JSON
	outdir string // cloud assembly, holding the staged assets

	outboxTable, stateTable                 string
	deliveryQueue, deadLetter, enqueueFails string
	arrivals                                string
	laneQueue                               string
	fanOutQueue, fanOutDLQ                  string
	enqueueFn, deliverFn, apiFn, replayFn   string
	jobsQueue, replayOps                    string
	dlqAlarm                                string
	operatorKey                             string
	operatorBus                             string
}

// fakeAssets is an asset directory holding a distinguishable bootstrap for
// each function ("enqueue binary", ...).
func fakeAssets(t *testing.T) string {
	t.Helper()
	assets := t.TempDir()
	for _, fn := range functionNames {
		require.NoError(t, os.MkdirAll(filepath.Join(assets, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(assets, fn, "bootstrap"), []byte(fn+" binary"), 0o755))
	}
	return assets
}

// newApp is a CDK app with the context of the project's cdk.json (its
// feature flags), as `cdk synth` and `cdk deploy` run it, writing its cloud
// assembly to a temp dir.
func newApp(t *testing.T) awscdk.App {
	t.Helper()
	b, err := os.ReadFile("../../cdk.json")
	require.NoError(t, err)
	var cfg struct {
		Context map[string]any `json:"context"`
	}
	require.NoError(t, json.Unmarshal(b, &cfg))
	require.NotEmpty(t, cfg.Context, "cdk.json carries the feature flags")
	return awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: &cfg.Context})
}

// newStack adds hookline with props to a stack of its own, as the
// project's app does (id "Default": the logical IDs and the alarm name
// prefix of a stack that holds hookline alone), with the outputs the
// tests read (named as the app's).
func newStack(app awscdk.App, id string, props *Props) (awscdk.Stack, *Hookline, []nagSuppression, error) {
	stack := awscdk.NewStack(app, &id, nil)
	h, accepted, err := newHookline(stack, "Default", props)
	if err != nil {
		return stack, nil, nil, err
	}
	out := func(name string, value *string) {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: value})
	}
	out("OutboxTableName", h.OutboxTable.TableName())
	out("StateTableName", h.StateTable.TableName())
	out("DeliveryQueueURL", h.DeliveryQueue.QueueUrl())
	out("DeadLetterQueueURL", h.DeadLetterQueue.QueueUrl())
	out("DeadLetterArrivalsQueueURL", h.ArrivalsQueue.QueueUrl())
	out("EnqueueFailureQueueURL", h.EnqueueFailureQueue.QueueUrl())
	out("EnqueueFunctionName", h.Functions.Enqueue.FunctionName())
	out("EnqueueRedrivePolicyARN", h.EnqueueReprocessPolicy.ManagedPolicyArn())
	out("DeliverFunctionName", h.Functions.Deliver.FunctionName())
	out("DLQDepthAlarmName", h.Alarms["DLQDepth"].AlarmName())
	out("ApiFunctionName", h.Functions.API.FunctionName())
	out("ApiAccessLogGroupName", h.APIAccessLogs.LogGroupName())
	out("OperatorKeySecretARN", h.OperatorKey.SecretArn())
	out("SecretsKeyARN", h.SecretsKey.KeyArn())
	out("ReplayJobsQueueURL", h.JobsQueue.QueueUrl())
	out("ReplayOpsQueueURL", h.ReplayOpsQueue.QueueUrl())
	out("ReplayFunctionName", h.Functions.Replay.FunctionName())
	out("AlarmTopicARN", h.AlarmTopic.TopicArn())
	out("OperatorEventBusName", h.OperatorBus.EventBusName())
	out("OperatorEventBusARN", h.OperatorBus.EventBusArn())
	out("TenantDLQAlarmName", h.Alarms["TenantDLQDepth"].AlarmName())
	out("DeadLetterQueueARN", h.DeadLetterQueue.QueueArn())
	out("LaneQueueURL", h.LaneQueue.QueueUrl())
	out("FanOutQueueURL", h.FanOutQueue.QueueUrl())
	out("FanOutDeadLetterQueueURL", h.FanOutDeadLetterQueue.QueueUrl())
	out("MaxReceiveCount", jsii.String(strconv.Itoa(h.MaxReceiveCount)))
	return stack, h, accepted, nil
}

// synth builds the stack with props (Code set to fakeAssets) in an app
// with cdk.json's context, and returns its template.
func synth(t *testing.T, props Props) *synthesized {
	t.Helper()
	props.Code = CodeFromDir(fakeAssets(t))
	app := newApp(t)
	outdir := *app.Outdir()
	stack, _, _, err := newStack(app, "HooklineTest", &props)
	require.NoError(t, err)
	tpl := assertions.Template_FromStack(stack, nil)

	s := &synthesized{tpl: tpl, outdir: outdir}
	s.json = roundTrip(t, tpl.ToJSON())
	ref := func(output string) string {
		t.Helper()
		v := dig(t, s.json, "Outputs", output, "Value", "Ref")
		id, ok := v.(string)
		require.Truef(t, ok, "output %s is not a Ref: %#v", output, v)
		return id
	}
	s.outboxTable = ref("OutboxTableName")
	s.stateTable = ref("StateTableName")
	s.deliveryQueue = ref("DeliveryQueueURL")
	s.laneQueue = ref("LaneQueueURL")
	s.fanOutQueue = ref("FanOutQueueURL")
	s.fanOutDLQ = ref("FanOutDeadLetterQueueURL")
	s.deadLetter = ref("DeadLetterQueueURL")
	s.arrivals = ref("DeadLetterArrivalsQueueURL")
	s.enqueueFails = ref("EnqueueFailureQueueURL")
	s.enqueueFn = ref("EnqueueFunctionName")
	s.deliverFn = ref("DeliverFunctionName")
	s.dlqAlarm = ref("DLQDepthAlarmName")
	s.apiFn = ref("ApiFunctionName")
	s.operatorKey = ref("OperatorKeySecretARN")
	s.operatorBus = ref("OperatorEventBusName")
	s.replayFn = ref("ReplayFunctionName")
	s.jobsQueue = ref("ReplayJobsQueueURL")
	s.replayOps = ref("ReplayOpsQueueURL")
	return s
}

// check runs a jsii assertion, which panics on failure, as a test failure.
func check(t *testing.T, assert func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("template assertion failed: %v", r)
		}
	}()
	assert()
}

// roundTrip turns a jsii value into plain JSON types (map[string]any, []any,
// float64, string, bool).
func roundTrip(t *testing.T, v any) obj {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out obj
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// dig walks nested objects by key.
func dig(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(obj)
		require.Truef(t, ok, "%s is not an object: %#v", strings.Join(keys[:i], "."), v)
		v, ok = m[k]
		require.Truef(t, ok, "%s missing", strings.Join(keys[:i+1], "."))
	}
	return v
}

// resource is the template's resource id, checked to have type typ.
func (s *synthesized) resource(t *testing.T, id, typ string) obj {
	t.Helper()
	r, ok := dig(t, s.json, "Resources", id).(obj)
	require.True(t, ok)
	require.Equal(t, typ, r["Type"], "type of %s", id)
	return r
}

// hasProperties asserts that resource id (of type typ) matches the
// properties pattern (Match.objectLike semantics, matchers allowed).
func (s *synthesized) hasProperties(t *testing.T, typ, id string, props obj) {
	t.Helper()
	var found *map[string]*map[string]any
	check(t, func() {
		found = s.tpl.FindResources(jsii.String(typ), obj{"Properties": props})
	})
	if _, ok := (*found)[id]; !ok {
		actual, _ := json.MarshalIndent(s.resource(t, id, typ)["Properties"], "", "  ")
		t.Fatalf("%s %s does not match the pattern; its properties:\n%s", typ, id, actual)
	}
}

// stagedBootstrap is the content of the bootstrap the function id deploys,
// read from the asset CDK staged for it.
func (s *synthesized) stagedBootstrap(t *testing.T, id string) string {
	t.Helper()
	key, ok := dig(t, s.resource(t, id, "AWS::Lambda::Function"), "Properties", "Code", "S3Key").(string)
	require.True(t, ok)
	hash := strings.TrimSuffix(key, ".zip")
	b, err := os.ReadFile(filepath.Join(s.outdir, "asset."+hash, "bootstrap"))
	require.NoError(t, err)
	return string(b)
}

func getAtt(id, attr string) obj { return obj{"Fn::GetAtt": arr{id, attr}} }
func refTo(id string) obj        { return obj{"Ref": id} }

// statement is one IAM policy statement, Action and Resource as lists.
type statement struct {
	Effect    string
	Actions   []string
	Resource  []any
	Condition any
}

// rolePolicy returns the statements of the inline policies attached to the
// execution role of function fnID.
func (s *synthesized) rolePolicy(t *testing.T, fnID string) []statement {
	t.Helper()
	role := dig(t, s.resource(t, fnID, "AWS::Lambda::Function"), "Properties", "Role", "Fn::GetAtt").(arr)[0].(string)
	var policies *map[string]*map[string]any
	check(t, func() {
		policies = s.tpl.FindResources(jsii.String("AWS::IAM::Policy"), obj{
			"Properties": obj{"Roles": assertions.Match_ArrayWith(&arr{refTo(role)})},
		})
	})
	require.NotEmpty(t, *policies, "no AWS::IAM::Policy attached to %s", role)
	var out []statement
	for _, p := range *policies {
		doc := roundTrip(t, p)
		for _, raw := range dig(t, doc, "Properties", "PolicyDocument", "Statement").(arr) {
			st := raw.(obj)
			var s statement
			s.Effect, _ = st["Effect"].(string)
			s.Condition = st["Condition"]
			switch a := st["Action"].(type) {
			case string:
				s.Actions = []string{a}
			case arr:
				for _, x := range a {
					s.Actions = append(s.Actions, x.(string))
				}
			}
			switch r := st["Resource"].(type) {
			case arr:
				s.Resource = r
			default:
				s.Resource = arr{r}
			}
			out = append(out, s)
		}
	}
	return out
}

// allows reports whether some Allow statement grants action on resource.
func allows(stmts []statement, action string, resource any) bool {
	for _, s := range stmts {
		if s.Effect != "Allow" || !slices.Contains(s.Actions, action) {
			continue
		}
		for _, r := range s.Resource {
			if fmt.Sprint(r) == fmt.Sprint(resource) {
				return true
			}
		}
	}
	return false
}

// mentions reports whether any statement names resource.
func mentions(stmts []statement, resource any) bool {
	for _, s := range stmts {
		for _, r := range s.Resource {
			if strings.Contains(fmt.Sprint(r), fmt.Sprint(resource)) {
				return true
			}
		}
	}
	return false
}

func scheduleString(steps []time.Duration) string {
	return retry.Policy{Schedule: steps}.Env()[retry.EnvSchedule]
}

// commonStackChecks are the assertions that hold for every configuration.
// want describes what the configuration should produce.
type want struct {
	schedule             []time.Duration
	arch                 string
	deliverTimeout       time.Duration
	maxRequestTimeout    time.Duration // the longest an endpoint may set
	maxConcurrency       int
	laneConcurrency      int // the tenant lane mapping's MaximumConcurrency
	reserved             int // deliver's ReservedConcurrentExecutions; 0: none
	apiReserved          int // 0: none
	replayReserved       int // 0: none
	apiRate              float64
	apiBurst             int
	alarmThreshold       int
	allowCIDRs           string
	tenantThreshold      int
	enqueueFailThreshold int
	// The deliver function's isolation: the patient disable, the circuit
	// breaker, the endpoint concurrency gate (slow and fast limits).
	disableAfterFor                   time.Duration
	breaker                           domain.Breaker
	endpointConcurrency, fastParallel int
	// tenantConcurrency is the deliver function's tenant share.
	tenantConcurrency int
	// enqueue's stream mapping's parallelization factor, and its
	// SendMessageBatch requests in flight at once.
	parallelization, sendConcurrency int
	// batchingWindow is the stream mapping's
	// MaximumBatchingWindowInSeconds; 0: the property left out.
	batchingWindow int
}

// windowProp is a mapping's MaximumBatchingWindowInSeconds as the template
// has it: absent for none.
func windowProp(seconds int) any {
	if seconds == 0 {
		return assertions.Match_Absent()
	}
	return seconds
}

func stackChecks(t *testing.T, s *synthesized, w want) {
	t.Run("outbox table: id key, NEW_IMAGE stream, TTL, on-demand, PITR, the message log's index", func(t *testing.T) {
		s.hasProperties(t, "AWS::DynamoDB::Table", s.outboxTable, obj{
			"KeySchema": assertions.Match_ArrayEquals(&arr{obj{"AttributeName": "id", "KeyType": "HASH"}}),
			"AttributeDefinitions": assertions.Match_ArrayEquals(&arr{
				obj{"AttributeName": "id", "AttributeType": "S"},
				obj{"AttributeName": "log_pk", "AttributeType": "S"},
				obj{"AttributeName": "log_sk", "AttributeType": "S"},
			}),
			// A tenant's events newest first, without their payloads: a
			// small index item (one write unit) per event. by_tenant_shard
			// spreads a tenant over 16 key values (outbox.LogShards); the
			// unsharded by_tenant, one a tenant, only with
			// Props.KeepLegacyMessageLogIndex (TestKeepLegacyMessageLogIndex).
			// The name may not change: CloudFormation replaces an index
			// renamed.
			"GlobalSecondaryIndexes": assertions.Match_ArrayEquals(&arr{obj{
				"IndexName": "by_tenant_shard",
				"KeySchema": assertions.Match_ArrayEquals(&arr{
					obj{"AttributeName": "log_pk", "KeyType": "HASH"},
					obj{"AttributeName": "log_sk", "KeyType": "RANGE"},
				}),
				"Projection": obj{"ProjectionType": "INCLUDE", "NonKeyAttributes": assertions.Match_ArrayEquals(&arr{"type", "occurred_at", "endpoint_id"})},
			}}),
			"StreamSpecification": obj{"StreamViewType": "NEW_IMAGE"},
			"TimeToLiveSpecification": obj{
				"AttributeName": "expires_at",
				"Enabled":       true,
			},
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
		})
		// Customers' events survive a stack deletion and a replacement;
		// a failed first create leaves nothing behind.
		requireKeptData(t, s, s.outboxTable, "AWS::DynamoDB::Table")
	})

	t.Run("state table: pk/sk keys, gsi1 (all attributes), the dead index and the delivery log (the listed attributes), TTL", func(t *testing.T) {
		s.hasProperties(t, "AWS::DynamoDB::Table", s.stateTable, obj{
			"KeySchema": assertions.Match_ArrayEquals(&arr{
				obj{"AttributeName": "pk", "KeyType": "HASH"},
				obj{"AttributeName": "sk", "KeyType": "RANGE"},
			}),
			// Only the keys of the table, of gsi1, of the dead index and
			// of the delivery log:
			// the event index (gsi2) is gone, its attributes with it.
			"AttributeDefinitions": assertions.Match_ArrayEquals(&arr{
				obj{"AttributeName": "pk", "AttributeType": "S"},
				obj{"AttributeName": "sk", "AttributeType": "S"},
				obj{"AttributeName": "gsi1pk", "AttributeType": "S"},
				obj{"AttributeName": "gsi1sk", "AttributeType": "S"},
				obj{"AttributeName": "dead_pk", "AttributeType": "S"},
				obj{"AttributeName": "dead_sk", "AttributeType": "S"},
				obj{"AttributeName": "log_pk", "AttributeType": "S"},
				obj{"AttributeName": "log_sk", "AttributeType": "S"},
			}),
			"GlobalSecondaryIndexes": assertions.Match_ArrayEquals(&arr{
				assertions.Match_ObjectLike(&obj{
					"IndexName": stateIndexName,
					"KeySchema": assertions.Match_ArrayEquals(&arr{
						obj{"AttributeName": "gsi1pk", "KeyType": "HASH"},
						obj{"AttributeName": "gsi1sk", "KeyType": "RANGE"},
					}),
					// Every record kind it lists is read whole from it;
					// deaths of earlier versions too.
					"Projection": obj{"ProjectionType": "ALL"},
				}),
				assertions.Match_ObjectLike(&obj{
					"IndexName": "by_dead",
					"KeySchema": assertions.Match_ArrayEquals(&arr{
						obj{"AttributeName": "dead_pk", "KeyType": "HASH"},
						obj{"AttributeName": "dead_sk", "KeyType": "RANGE"},
					}),
					// The DLQ listing's attributes, never the message or the
					// attempt log (TestIndexProjections).
					"Projection": obj{"ProjectionType": "INCLUDE", "NonKeyAttributes": assertions.Match_ArrayEquals(&arr{
						"endpoint_id", "event_id", "event_type", "state", "dead_reason", "attempts", "last_status", "last_error", "replayed_at"})},
				}),
				assertions.Match_ObjectLike(&obj{
					"IndexName": "by_log",
					"KeySchema": assertions.Match_ArrayEquals(&arr{
						obj{"AttributeName": "log_pk", "KeyType": "HASH"},
						obj{"AttributeName": "log_sk", "KeyType": "RANGE"},
					}),
					// The delivery log's listed attributes, never the
					// message or the attempt log (TestIndexProjections).
					"Projection": obj{"ProjectionType": "INCLUDE", "NonKeyAttributes": assertions.Match_ArrayEquals(&arr{
						"endpoint_id", "event_id", "event_type", "state", "attempts", "last_status", "last_error", "dead_reason"})},
				}),
			}),
			"TimeToLiveSpecification":          obj{"AttributeName": "expires_at", "Enabled": true},
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
		})
		require.Equal(t, "gsi1", stateIndexName)
		requireKeptData(t, s, s.stateTable, "AWS::DynamoDB::Table")
	})

	t.Run("tables and key: kept on delete and replacement, not after a failed first create (RETAIN_ON_UPDATE_OR_DELETE)", func(t *testing.T) {
		requireKeptDataEverywhere(t, s)
	})

	t.Run("tables: deletion protection on (DeleteTable refused until it is turned off)", func(t *testing.T) {
		tables := 0
		for id, r := range dig(t, s.json, "Resources").(obj) {
			if r.(obj)["Type"] == "AWS::DynamoDB::Table" {
				tables++
				require.Equal(t, true, dig(t, r, "Properties", "DeletionProtectionEnabled"), "table %s", id)
			}
		}
		require.Equal(t, 2, tables, "the outbox and the state table")
	})

	t.Run("delivery queue: redrive to the DLQ's arrivals after one receive per schedule step", func(t *testing.T) {
		target := assertions.NewCapture(nil)
		s.hasProperties(t, "AWS::SQS::Queue", s.deliveryQueue, obj{
			"RedrivePolicy": obj{
				"deadLetterTargetArn": target,
				"maxReceiveCount":     len(w.schedule),
			},
		})
		require.Equal(t, getAtt(s.arrivals, "Arn"), roundTrip(t, target.AsObject()), "the arrivals, which the sweep moves to the DLQ")
		arrivals := dig(t, s.resource(t, s.arrivals, "AWS::SQS::Queue"), "Properties").(obj)
		require.EqualValues(t, 1209600, arrivals["MessageRetentionPeriod"], "14 days, SQS's most")
		require.Equal(t, true, arrivals["SqsManagedSseEnabled"])
		require.Nil(t, arrivals["RedrivePolicy"])
		// The replay function is told where they are, and an alarm watches
		// that the sweep moves them.
		env := dig(t, s.resource(t, s.replayFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		require.Equal(t, obj{"Ref": s.arrivals}, env["HOOKLINE_DLQ_ARRIVALS_URL"])
		var alarms *map[string]*map[string]any
		check(t, func() { alarms = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), nil) })
		watched := false
		for _, a := range *alarms {
			b, err := json.Marshal(a)
			require.NoError(t, err)
			if strings.Contains(string(b), "ApproximateAgeOfOldestMessage") && strings.Contains(string(b), `GetAtt":["`+s.arrivals+`","QueueName"]`) {
				watched = true
				require.EqualValues(t, 1800, dig(t, roundTrip(t, a), "Properties", "Threshold"), "six of the sweep's 5-minute passes")
			}
		}
		require.True(t, watched, "an alarm on the arrivals' oldest message")
		check(t, func() {
			s.tpl.HasOutput(jsii.String("MaxReceiveCount"), obj{"Value": strconv.Itoa(len(w.schedule))})
			s.tpl.HasOutput(jsii.String("DeadLetterQueueARN"), obj{"Value": getAtt(s.deadLetter, "Arn")})
		})
	})

	t.Run("delivery queue: visibility timeout is 6x the deliver timeout", func(t *testing.T) {
		s.hasProperties(t, "AWS::SQS::Queue", s.deliveryQueue, obj{
			"VisibilityTimeout": 6 * w.deliverTimeout.Seconds(),
		})
		s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{
			"Timeout": w.deliverTimeout.Seconds(),
		})
	})

	t.Run("tenant lane: the delivery queue's twin, dying to the same DLQ after as many receives", func(t *testing.T) {
		props := func(id string) obj {
			return dig(t, s.resource(t, id, "AWS::SQS::Queue"), "Properties").(obj)
		}
		delivery, lane := props(s.deliveryQueue), props(s.laneQueue)
		require.Equal(t, delivery, lane, "every property alike: redrive policy, visibility timeout, retention, encryption")
		require.Equal(t, getAtt(s.arrivals, "Arn"), dig(t, lane, "RedrivePolicy", "deadLetterTargetArn"), "the lane's messages die to the one DLQ, through its arrivals")
		require.EqualValues(t, len(w.schedule), dig(t, lane, "RedrivePolicy", "maxReceiveCount"))
		require.EqualValues(t, 6*w.deliverTimeout.Seconds(), lane["VisibilityTimeout"])
		require.EqualValues(t, 1209600, lane["MessageRetentionPeriod"])
		require.Equal(t, true, lane["SqsManagedSseEnabled"])
		// EnforceSSL: the lane's queue policy denies plain HTTP, as the
		// delivery queue's does.
		var policies *map[string]*map[string]any
		check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::SQS::QueuePolicy"), nil) })
		secure := map[string]bool{}
		for _, p := range *policies {
			b, err := json.Marshal(p)
			require.NoError(t, err)
			for _, q := range []string{s.deliveryQueue, s.laneQueue} {
				if strings.Contains(string(b), `{"Ref":"`+q+`"}`) && strings.Contains(string(b), `"aws:SecureTransport":"false"`) {
					secure[q] = true
				}
			}
		}
		require.Equal(t, map[string]bool{s.deliveryQueue: true, s.laneQueue: true}, secure)
	})

	t.Run("deferred fan-out queue: 14 days, enqueue's timeout, its own DLQ after 60 receives, alarmed above 0, consumed by enqueue at 2", func(t *testing.T) {
		props := func(id string) obj {
			return dig(t, s.resource(t, id, "AWS::SQS::Queue"), "Properties").(obj)
		}
		fanOut, dlq := props(s.fanOutQueue), props(s.fanOutDLQ)
		require.Equal(t, getAtt(s.fanOutDLQ, "Arn"), dig(t, fanOut, "RedrivePolicy", "deadLetterTargetArn"), "its own DLQ, not the deliveries'")
		require.NotEqual(t, s.deadLetter, s.fanOutDLQ)
		require.EqualValues(t, 60, dig(t, fanOut, "RedrivePolicy", "maxReceiveCount"))
		require.EqualValues(t, fanOutMaxReceiveCount, 60)
		enqueueTimeout := dig(t, s.resource(t, s.enqueueFn, "AWS::Lambda::Function"), "Properties", "Timeout").(float64)
		require.EqualValues(t, 60, enqueueTimeout)
		require.EqualValues(t, enqueueTimeout, fanOut["VisibilityTimeout"], "the timeout of the function that consumes it: a crashed fan-out is back within a minute")
		for name, q := range map[string]obj{"fan-out": fanOut, "fan-out DLQ": dlq} {
			require.EqualValues(t, 1209600, q["MessageRetentionPeriod"], name)
			require.Equal(t, true, q["SqsManagedSseEnabled"], name)
		}
		require.Nil(t, dlq["RedrivePolicy"], "the DLQ has no redrive of its own")
		// EnforceSSL on both.
		var policies *map[string]*map[string]any
		check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::SQS::QueuePolicy"), nil) })
		secure := map[string]bool{}
		for _, p := range *policies {
			b, err := json.Marshal(p)
			require.NoError(t, err)
			for _, q := range []string{s.fanOutQueue, s.fanOutDLQ} {
				if strings.Contains(string(b), `{"Ref":"`+q+`"}`) && strings.Contains(string(b), `"aws:SecureTransport":"false"`) {
					secure[q] = true
				}
			}
		}
		require.Equal(t, map[string]bool{s.fanOutQueue: true, s.fanOutDLQ: true}, secure)

		// The alarm: any message on the DLQ for a minute, missing data OK,
		// to the topic (the count of every alarm's actions is above).
		var alarms *map[string]*map[string]any
		check(t, func() {
			alarms = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), obj{"Properties": obj{
				"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
				"Dimensions": arr{obj{"Name": "QueueName", "Value": getAtt(s.fanOutDLQ, "QueueName")}},
				"Statistic":  "Maximum", "Period": 60, "EvaluationPeriods": 1,
				"Threshold": 0, "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
			}})
		})
		require.Len(t, *alarms, 1, "one depth alarm on the fan-out DLQ")
		for _, a := range *alarms {
			require.Contains(t, dig(t, roundTrip(t, a), "Properties", "AlarmDescription"), "docs/operations.md")
		}

		// The mapping: enqueue, batch 10, partial failures, capped at 2.
		var id *string
		check(t, func() {
			id = s.tpl.GetResourceId(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
				"Properties": obj{"EventSourceArn": getAtt(s.fanOutQueue, "Arn")},
			})
		})
		s.hasProperties(t, "AWS::Lambda::EventSourceMapping", *id, obj{
			"FunctionName":          refTo(s.enqueueFn),
			"BatchSize":             10,
			"FunctionResponseTypes": assertions.Match_ArrayEquals(&arr{"ReportBatchItemFailures"}),
			"ScalingConfig":         obj{"MaximumConcurrency": 2},
		})
		caps := sqsMappingCaps(t, s)
		require.Equal(t, float64(fanOutMaxConcurrency), caps[s.enqueueFn+"<-"+s.fanOutQueue])
		for k := range caps {
			if strings.HasPrefix(k, s.enqueueFn+"<-") {
				require.Equal(t, s.enqueueFn+"<-"+s.fanOutQueue, k, "enqueue's one SQS mapping is the fan-out queue's")
			}
		}
		// Enqueue is told of the queue; no other function is.
		s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{"HOOKLINE_FANOUT_QUEUE_URL": refTo(s.fanOutQueue)})},
		})
		for _, fn := range []string{s.deliverFn, s.apiFn, s.replayFn} {
			env := dig(t, s.resource(t, fn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
			require.NotContains(t, env, "HOOKLINE_FANOUT_QUEUE_URL", fn)
		}
		check(t, func() { s.tpl.HasOutput(jsii.String("FanOutQueueURL"), obj{"Value": refTo(s.fanOutQueue)}) })
	})

	t.Run("api function: endpoints' own settings held to the deliver function's and the queue's", func(t *testing.T) {
		env := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		get := func(k string) string { v, _ := env[k].(string); return v }
		require.Equal(t, w.maxRequestTimeout.String(), get("HOOKLINE_MAX_REQUEST_TIMEOUT"))
		// The tenant caps reach the function that enforces them.
		require.Equal(t, strconv.Itoa(domain.DefaultMaxEndpoints), get("HOOKLINE_MAX_ENDPOINTS"))
		require.Equal(t, strconv.Itoa(domain.DefaultMaxEndpointBytes), get("HOOKLINE_MAX_ENDPOINT_BYTES"))
		require.Equal(t, strconv.Itoa(domain.DefaultMaxMetricsEventTypes), get("HOOKLINE_MAX_METRICS_EVENT_TYPES"))
		// The deliver function's timeout is sized for the longest endpoint
		// timeout (one round of attempts and 5 s), and the queue's
		// visibility is six times that.
		fnTimeout := dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Timeout").(float64)
		require.GreaterOrEqual(t, time.Duration(fnTimeout)*time.Second, DeliverTimeoutFor(w.maxRequestTimeout))
		queueVT := dig(t, s.resource(t, s.deliveryQueue, "AWS::SQS::Queue"), "Properties", "VisibilityTimeout").(float64)
		require.Equal(t, 6*fnTimeout, queueVT)
		// An endpoint's schedule is checked against the attempts of the
		// queue's redrive (maxReceiveCount) and the stack's age cap.
		p, err := retry.FromEnv(get)
		require.NoError(t, err)
		require.Equal(t, w.schedule, p.Schedule)
		maxReceives := dig(t, s.resource(t, s.deliveryQueue, "AWS::SQS::Queue"), "Properties", "RedrivePolicy", "maxReceiveCount").(float64)
		require.Equal(t, int(maxReceives), p.Attempts())
	})

	t.Run("deliver function: its retry policy knows the queue's visibility timeout", func(t *testing.T) {
		// The longest retry delay is 12 h less the queue's visibility
		// timeout less a minute: what SQS accepts from a message received
		// up to that timeout ago.
		vt := 6 * w.deliverTimeout
		s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				retry.EnvVisibilityTimeout: vt.String(),
			})},
		})
		env := dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		p, err := retry.FromEnv(func(k string) string { v, _ := env[k].(string); return v })
		require.NoError(t, err)
		require.Equal(t, 12*time.Hour-vt-time.Minute, p.LongestDelay())
		queueVT, ok := dig(t, s.resource(t, s.deliveryQueue, "AWS::SQS::Queue"), "Properties", "VisibilityTimeout").(float64)
		require.True(t, ok)
		require.Equal(t, time.Duration(queueVT)*time.Second, p.VisibilityTimeout, "the function's figure is the queue's")
	})

	t.Run("dead-letter queue: 14 days retention, no redrive of its own", func(t *testing.T) {
		s.hasProperties(t, "AWS::SQS::Queue", s.deadLetter, obj{
			"MessageRetentionPeriod": 1209600,
			"RedrivePolicy":          assertions.Match_Absent(),
		})
		s.hasProperties(t, "AWS::SQS::Queue", s.enqueueFails, obj{"MessageRetentionPeriod": 1209600})
		// A dead delivery's record is kept store.DefaultRetention from its
		// death, when its message enters the DLQ: it must outlive the
		// message (the tenant's listing and a replay read the record).
		period, ok := dig(t, s.resource(t, s.deadLetter, "AWS::SQS::Queue"), "Properties", "MessageRetentionPeriod").(float64)
		require.True(t, ok)
		require.Greater(t, store.DefaultRetention, time.Duration(period)*time.Second, "records expire after the DLQ's messages")
	})

	t.Run("functions: provided.al2023, bootstrap handler, architecture "+w.arch, func(t *testing.T) {
		check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(4)) })
		for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn} {
			s.hasProperties(t, "AWS::Lambda::Function", fn, obj{
				"Runtime":       "provided.al2023",
				"Handler":       "bootstrap",
				"Architectures": assertions.Match_ArrayEquals(&arr{w.arch}),
			})
		}
	})

	t.Run("functions: each deploys its own bootstrap from Code", func(t *testing.T) {
		require.Equal(t, "enqueue binary", s.stagedBootstrap(t, s.enqueueFn))
		require.Equal(t, "deliver binary", s.stagedBootstrap(t, s.deliverFn))
		require.Equal(t, "api binary", s.stagedBootstrap(t, s.apiFn))
	})

	t.Run("HTTP API: one route per api.Routes() and api.ConsoleRoutes() entry and $default, all to the api function, payload 2.0", func(t *testing.T) {
		routes := api.Routes()
		check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(1)) })
		check(t, func() {
			s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(float64(len(routes)+len(api.ConsoleRoutes())+1)))
		})
		for _, key := range api.ConsoleRoutes() {
			check(t, func() {
				s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{"RouteKey": key})
			})
		}
		// A wrong method or an unknown path reaches the function, which
		// answers 405 or 404 as problem documents (API Gateway would answer
		// 404 {"message":"Not Found"} to both), and no route is left
		// without the function's authentication: none has an authorizer,
		// each goes to the one integration.
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{"RouteKey": "$default"})
		})
		check(t, func() {
			s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Integration"), jsii.Number(1))
		})
		for _, rt := range routes {
			check(t, func() {
				s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Route"), obj{"RouteKey": rt.Method + " " + rt.Path})
			})
		}
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Integration"), obj{
				"IntegrationType":      "AWS_PROXY",
				"PayloadFormatVersion": "2.0",
				"IntegrationUri":       obj{"Fn::GetAtt": arr{s.apiFn, "Arn"}},
			})
		})
	})

	t.Run("replay: jobs and operations queues with a DLQ, worker grants, the API starts jobs", func(t *testing.T) {
		arn := func(id string) obj { return obj{"Fn::GetAtt": arr{id, "Arn"}} }
		for _, q := range []string{s.jobsQueue, s.replayOps} {
			s.hasProperties(t, "AWS::SQS::Queue", q, obj{
				"RedrivePolicy":     assertions.Match_ObjectLike(&obj{"maxReceiveCount": 5}),
				"VisibilityTimeout": 1800,
			})
		}
		s.hasProperties(t, "AWS::Lambda::Function", s.replayFn, obj{
			"Timeout": 300,
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_REPLAY_QUEUE_URL":     refTo(s.jobsQueue),
				"HOOKLINE_REPLAY_OPS_QUEUE_URL": refTo(s.replayOps),
				"HOOKLINE_DELIVERY_QUEUE_URL":   refTo(s.deliveryQueue),
				"HOOKLINE_DLQ_URL":              refTo(s.deadLetter),
				"HOOKLINE_REPLAY_RATE":          "10",
				"HOOKLINE_OUTBOX_TABLE":         refTo(s.outboxTable),
				"HOOKLINE_DEAD_NOTICE_WINDOW":   "5m0s",
			})},
		})
		// deliver raises operational events: into the outbox, and the
		// delivery.dead windows' notices to the operations queue.
		s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_OUTBOX_TABLE":         refTo(s.outboxTable),
				"HOOKLINE_REPLAY_OPS_QUEUE_URL": refTo(s.replayOps),
				"HOOKLINE_FAILING_AFTER":        "10",
				"HOOKLINE_DISABLE_AFTER":        "50",
				"HOOKLINE_DEAD_NOTICE_WINDOW":   "5m0s",
				// The endpoints' counters, written once per 10 s per
				// instance and at its shutdown.
				"HOOKLINE_STATS_FLUSH_EVERY": "10s",
			})},
		})
		// Tenants' jobs and the operator's queue each have their own
		// mapping, so no tenant's jobs hold up a redrive, a sweep or a gauge.
		for q, n := range map[string]int{s.jobsQueue: 5, s.replayOps: 2} {
			check(t, func() {
				s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
					"FunctionName":          refTo(s.replayFn),
					"EventSourceArn":        arn(q),
					"BatchSize":             1,
					"FunctionResponseTypes": arr{"ReportBatchItemFailures"},
					"ScalingConfig":         obj{"MaximumConcurrency": n},
				})
			})
		}
		// The api function reads the message log from the outbox table and
		// serves payloads for the payload retention.
		s.hasProperties(t, "AWS::Lambda::Function", s.apiFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_OUTBOX_TABLE":       refTo(s.outboxTable),
				"HOOKLINE_PAYLOAD_RETENTION":  "360h0m0s",
				"HOOKLINE_DELIVERY_QUEUE_URL": refTo(s.deliveryQueue),
			})},
		})
		// The console: the alarms it lists are the stack's (the same
		// prefix its DescribeAlarms grant names), portal links live at
		// least a minute, and no page may frame it unless told.
		s.hasProperties(t, "AWS::Lambda::Function", s.apiFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_ALARM_NAME_PREFIX": obj{"Fn::Join": arr{"", arr{obj{"Ref": "AWS::StackName"}, ".Default."}}},
				"HOOKLINE_PORTAL_MIN_TTL":    "1m0s",
			})},
		})
		// One tenant's expensive requests: 2 s each at most (domain's
		// default), at a rate that holds it to half the reservation (5 a
		// second of 20; 1 of this custom stack's 3).
		s.hasProperties(t, "AWS::Lambda::Function", s.apiFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_API_TENANT_EXPENSIVE_RATE": assertions.Match_AnyValue(),
				"HOOKLINE_API_EXPENSIVE_BUDGET":      "2s",
			})},
		})
		apiVars := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		require.NotContains(t, apiVars, "HOOKLINE_CONSOLE_FRAME_ANCESTORS", "'none' by default")
		s.hasProperties(t, "AWS::Lambda::Function", s.apiFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_REPLAY_QUEUE_URL":     refTo(s.jobsQueue),
				"HOOKLINE_REPLAY_OPS_QUEUE_URL": refTo(s.replayOps),
			})},
		})
		replay := s.rolePolicy(t, s.replayFn)
		require.True(t, allows(replay, "sqs:SendMessage", arn(s.deliveryQueue)), "the worker sends replayed messages")
		require.True(t, allows(replay, "sqs:ReceiveMessage", arn(s.deadLetter)), "the worker reads the DLQ (sweep, redrive)")
		require.True(t, allows(replay, "sqs:DeleteMessage", arn(s.deadLetter)))
		require.True(t, allows(replay, "sqs:SendMessage", arn(s.jobsQueue)), "the worker schedules its next step")
		require.True(t, allows(replay, "sqs:SendMessage", arn(s.replayOps)), "and sweeps, and a redrive's next step")
		apiFn := s.rolePolicy(t, s.apiFn)
		require.True(t, allows(apiFn, "sqs:SendMessage", arn(s.jobsQueue)), "the API starts jobs")
		require.True(t, allows(apiFn, "sqs:SendMessage", arn(s.replayOps)), "and the redrive")
		// The API sends one kind of delivery message itself: the resend of a
		// delivered delivery (POST /v1/deliveries/{id}/resend), SendMessage
		// only; a dead one's resend is a replay job.
		require.True(t, allows(apiFn, "sqs:SendMessage", arn(s.deliveryQueue)), "resends of delivered deliveries")
		require.False(t, allows(apiFn, "sqs:ReceiveMessage", arn(s.deliveryQueue)))
		require.False(t, mentions(s.rolePolicy(t, s.enqueueFn), arn(s.jobsQueue)))
	})

	t.Run("operations: every alarm notifies the topic, on ALARM and OK", func(t *testing.T) {
		topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
		var alarms *map[string]*map[string]any
		check(t, func() { alarms = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), nil) })
		// DLQ, its arrivals' age, enqueue failures, the fan-out DLQ, jobs stuck (ReplayJobsStuck), per-tenant DLQ and its
		// gauge missing, oldest delivery, delivery in flight, the tenant
		// lane's oldest and in flight, iterator age, rejected items, parked
		// operational events, unparsable filters, errors,
		// throttles and recursive loops dropped of 4 functions.
		require.Len(t, *alarms, 5+10+3*4)
		for id, a := range *alarms {
			props := roundTrip(t, a)["Properties"].(obj)
			require.Contains(t, fmt.Sprint(props["AlarmActions"]), topic, "alarm %s notifies the topic", id)
			require.Contains(t, fmt.Sprint(props["OKActions"]), topic, "alarm %s tells when it is OK again", id)
			require.NotEmpty(t, props["AlarmDescription"], "alarm %s says what to do", id)
		}
	})

	t.Run("operations: the alarm topic's policy lets the instance's alarms publish, beside the TLS-only Deny", func(t *testing.T) {
		requireAlarmsPublish(t, s)
	})

	t.Run("operations: one per-tenant DLQ alarm, on the deepest tenant", func(t *testing.T) {
		tenant := dig(t, s.json, "Outputs", "TenantDLQAlarmName", "Value", "Ref").(string)
		s.hasProperties(t, "AWS::CloudWatch::Alarm", tenant, obj{
			"Threshold":          float64(w.tenantThreshold),
			"ComparisonOperator": "GreaterThanThreshold",
			"Namespace":          "Hookline",
			"MetricName":         "MaxTenantDLQDepth",
			"Statistic":          "Maximum",
			"Period":             60,
		})
		require.True(t, strings.Contains(fmt.Sprint(s.json["Resources"]), "SELECT MAX(TenantDLQDepth) FROM SCHEMA("), "the dashboard graphs the deepest tenant by name")
	})

	t.Run("operations: an alarm on one of our gauges never reads missing data as OK, and a companion fires when the gauge stops", func(t *testing.T) {
		var alarms *map[string]*map[string]any
		check(t, func() { alarms = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), nil) })
		gauges := 0
		for id, a := range *alarms {
			props := roundTrip(t, a)["Properties"].(obj)
			if props["Namespace"] != metrics.Namespace || props["Statistic"] == "SampleCount" {
				continue
			}
			name, _ := props["MetricName"].(string)
			spec, ok := metrics.Catalog[name]
			require.True(t, ok, "alarm %s watches %s, which is not in metrics.Catalog", id, name)
			if !spec.Gauge {
				// A count: no value means nothing happened.
				require.Equal(t, "notBreaching", props["TreatMissingData"], "alarm %s on the count %s", id, name)
				continue
			}
			gauges++
			require.NotEqual(t, "notBreaching", props["TreatMissingData"], "alarm %s on the gauge %s reads missing data as OK", id, name)
			require.NotContains(t, []any{nil, "missing"}, props["TreatMissingData"], "alarm %s on the gauge %s leaves ALARM when the gauge stops", id, name)
			companions := 0
			for _, b := range *alarms {
				cp := roundTrip(t, b)["Properties"].(obj)
				if cp["Namespace"] == metrics.Namespace && cp["MetricName"] == name && cp["Statistic"] == "SampleCount" {
					companions++
					require.Equal(t, "breaching", cp["TreatMissingData"], "the companion of %s fires on missing data", id)
					require.Equal(t, "LessThanThreshold", cp["ComparisonOperator"])
					require.EqualValues(t, 1, cp["Threshold"], "fewer than one value: none")
					require.Nil(t, cp["Dimensions"], "the companion watches the gauge %s as published, without dimensions", name)
					period, periods := cp["Period"].(float64), cp["EvaluationPeriods"].(float64)
					require.Equal(t, gaugeMissingAfter, time.Duration(period*periods)*time.Second)
					require.Greater(t, gaugeMissingAfter, 5*time.Minute, "longer than a replay step the gauge step may wait behind")
				}
			}
			require.Equal(t, 1, companions, "the gauge %s has one companion alarm", name)
		}
		require.Equal(t, 1, gauges, "the per-tenant DLQ alarm is the one alarm on a gauge of ours")
		tenant := dig(t, s.json, "Outputs", "TenantDLQAlarmName", "Value", "Ref").(string)
		s.hasProperties(t, "AWS::CloudWatch::Alarm", tenant, obj{"TreatMissingData": "ignore"})
	})

	t.Run("operations: queue age, iterator age, rejected items, parked operational events, function errors and throttles", func(t *testing.T) {
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"MetricName": "ApproximateAgeOfOldestMessage", "Namespace": "AWS/SQS", "Threshold": 900, "EvaluationPeriods": 5,
				"Dimensions": arr{obj{"Name": "QueueName", "Value": obj{"Fn::GetAtt": arr{s.deliveryQueue, "QueueName"}}}},
			})
		})
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"MetricName": "IteratorAge", "Namespace": "AWS/Lambda", "Threshold": 300000,
				"Dimensions": arr{obj{"Name": "FunctionName", "Value": refTo(s.enqueueFn)}},
			})
		})
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"MetricName": "RejectedOutboxItems", "Namespace": "Hookline", "Statistic": "Sum", "Threshold": 0,
			})
		})
		// Any operational event parked (the operator's bus kept refusing
		// it) alarms; enqueue knows where to park them.
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"MetricName": metrics.OperatorEventsParked, "Namespace": "Hookline", "Statistic": "Sum", "Threshold": 0,
				"Period": 300, "EvaluationPeriods": 1, "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
			})
		})
		// Any delivery created past a stored filter enqueue could not
		// parse alarms: the endpoint is getting events it filtered out.
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"MetricName": metrics.FilterErrors, "Namespace": "Hookline", "Statistic": "Sum", "Threshold": 0,
				"Period": 300, "EvaluationPeriods": 1, "ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching",
			})
		})
		s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
			"HOOKLINE_ENQUEUE_FAILURE_QUEUE_URL": refTo(s.enqueueFails),
		})}})
		for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
			for _, m := range []string{"Errors", "Throttles"} {
				check(t, func() {
					s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
						"MetricName": m, "Namespace": "AWS/Lambda",
						"Dimensions": arr{obj{"Name": "FunctionName", "Value": refTo(fn)}},
					})
				})
			}
		}
	})

	t.Run("operations: the delivery queue's in-flight messages alarm well below SQS's ~120,000 per standard queue", func(t *testing.T) {
		// Past the limit a receive gets nothing and no error; the local
		// cloud has no AWS/SQS metrics, so the template holds the alarm.
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), obj{
				"MetricName": "ApproximateNumberOfMessagesNotVisible", "Namespace": "AWS/SQS",
				"Dimensions": arr{obj{"Name": "QueueName", "Value": getAtt(s.deliveryQueue, "QueueName")}},
				"Statistic":  "Maximum", "Period": 300, "EvaluationPeriods": 1,
				"Threshold": 60000, "ComparisonOperator": "GreaterThanThreshold",
				"TreatMissingData": "notBreaching",
			})
		})
		require.Equal(t, 60000, deliveryInFlightThreshold)
		require.LessOrEqual(t, deliveryInFlightThreshold, 120000/2, "well below the in-flight limit")
	})

	t.Run("deliver and replay, and they alone, run their chains of sends to their own queues (RecursiveLoop Allow); RecursiveInvocationsDropped alarms", func(t *testing.T) {
		requireRecursionBounded(t, s)
	})

	t.Run("operations: gauges, sweeps and job recovery scheduled onto the operations queue; dashboard", func(t *testing.T) {
		for input, rate := range map[string]string{`{"kind":"gauges"}`: "rate(1 minute)", `{"kind":"sweep_reconcile"}`: "rate(5 minutes)", `{"kind":"recover"}`: "rate(5 minutes)"} {
			check(t, func() {
				s.tpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
					"ScheduleExpression": rate,
					"Targets": assertions.Match_ArrayWith(&arr{assertions.Match_ObjectLike(&obj{
						"Arn":   obj{"Fn::GetAtt": arr{s.replayOps, "Arn"}},
						"Input": input,
					})}),
				})
			})
		}
		var rules *map[string]*map[string]any
		check(t, func() { rules = s.tpl.FindResources(jsii.String("AWS::Events::Rule"), nil) })
		for id, r := range *rules {
			require.NotContains(t, fmt.Sprint(roundTrip(t, r)["Properties"]), s.jobsQueue, "rule %s must not queue behind tenants' jobs", id)
		}
		check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::CloudWatch::Dashboard"), jsii.Number(1)) })
	})

	t.Run("operator key: a generated secret only the api function reads", func(t *testing.T) {
		s.hasProperties(t, "AWS::SecretsManager::Secret", s.operatorKey, obj{
			"GenerateSecretString": assertions.Match_ObjectLike(&obj{"PasswordLength": 48}),
		})
		s.hasProperties(t, "AWS::Lambda::Function", s.apiFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_OPERATOR_KEY_SECRET_ARN": refTo(s.operatorKey),
				"HOOKLINE_STATE_TABLE":             refTo(s.stateTable),
			})},
		})
		require.True(t, allows(s.rolePolicy(t, s.apiFn), "secretsmanager:GetSecretValue", refTo(s.operatorKey)))
		for _, fn := range []string{s.enqueueFn, s.deliverFn} {
			require.False(t, mentions(s.rolePolicy(t, fn), refTo(s.operatorKey)), "only the api function may read the operator key")
		}
		require.False(t, mentions(s.rolePolicy(t, s.apiFn), obj{"Fn::GetAtt": arr{s.deadLetter, "Arn"}}), "the api function has no business with the DLQ yet")
	})

	t.Run("deliver environment: retry schedule, queues, state table, allowlist, isolation (breaker, disable, concurrency gate)", func(t *testing.T) {
		s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				retry.EnvSchedule:             scheduleString(w.schedule),
				"HOOKLINE_DLQ_URL":            refTo(s.deadLetter),
				"HOOKLINE_DELIVERY_QUEUE_URL": refTo(s.deliveryQueue),
				"HOOKLINE_STATE_TABLE":        refTo(s.stateTable),
				"HOOKLINE_ALLOW_CIDRS":        w.allowCIDRs,
			})},
		})
		// The function reads the schedule back with retry.FromEnv: it must
		// parse to the same steps that set maxReceiveCount.
		env := dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		vars := map[string]string{}
		for k, v := range env {
			if str, ok := v.(string); ok {
				vars[k] = str
			}
		}
		p, err := retry.FromEnv(func(k string) string { return vars[k] })
		require.NoError(t, err)
		require.Equal(t, len(w.schedule), p.Attempts())
		steps, err := retry.ParseSchedule(vars[retry.EnvSchedule])
		require.NoError(t, err)
		require.Equal(t, w.schedule, steps)
		// The function accepts the whole environment (the references
		// resolved to stand-ins) and reads the isolation settings back.
		for k, v := range env {
			if _, ok := v.(string); !ok {
				vars[k] = "resolved-at-deploy"
			}
		}
		cfg, err := fnenv.LoadDeliver(func(k string) string { return vars[k] })
		require.NoError(t, err)
		require.Equal(t, w.disableAfterFor, cfg.DisableAfterFor)
		require.Equal(t, w.breaker, cfg.Breaker)
		require.Equal(t, w.endpointConcurrency, cfg.EndpointConcurrency)
		require.Equal(t, w.fastParallel, cfg.FastConcurrency)
		require.Equal(t, w.maxConcurrency, cfg.FastConcurrency, "an endpoint answering fast may have the whole mapping's concurrency")
		require.Less(t, cfg.EndpointConcurrency, w.maxConcurrency, "one slow endpoint never holds the whole pool")
		require.Equal(t, w.tenantConcurrency, cfg.TenantConcurrency)
		require.Less(t, cfg.TenantConcurrency, w.maxConcurrency, "one slow tenant never holds the whole pool")
		require.GreaterOrEqual(t, cfg.DisableAfterFor, retry.Policy{Schedule: w.schedule}.Span(), "no outage the schedule rides out disables an endpoint")
	})

	t.Run("enqueue environment: delivery queue and state table", func(t *testing.T) {
		s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_DELIVERY_QUEUE_URL":       refTo(s.deliveryQueue),
				"HOOKLINE_STATE_TABLE":              refTo(s.stateTable),
				"HOOKLINE_DLQ_URL":                  assertions.Match_Absent(),
				"HOOKLINE_ENQUEUE_SEND_CONCURRENCY": strconv.Itoa(w.sendConcurrency),
			})},
		})
	})

	t.Run("stream mapping: outbox stream to enqueue, retried until the age cap, bisected, parked on failure", func(t *testing.T) {
		dest := assertions.NewCapture(nil)
		var id *string
		check(t, func() {
			id = s.tpl.GetResourceId(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
				"Properties": obj{"StartingPosition": "TRIM_HORIZON"},
			})
		})
		s.hasProperties(t, "AWS::Lambda::EventSourceMapping", *id, obj{
			"EventSourceArn":             getAtt(s.outboxTable, "StreamArn"),
			"FunctionName":               refTo(s.enqueueFn),
			"BatchSize":                  100,
			"ParallelizationFactor":      w.parallelization,
			"FunctionResponseTypes":      assertions.Match_ArrayEquals(&arr{"ReportBatchItemFailures"}),
			"BisectBatchOnFunctionError": true,
			// -1: no limit on retries; the age cap alone ends them.
			"MaximumRetryAttempts":      -1,
			"MaximumRecordAgeInSeconds": 72000,
			"DestinationConfig":         obj{"OnFailure": obj{"Destination": dest}},
			// Lambda takes 0 to 300 s (Props.BatchingWindow).
			"MaximumBatchingWindowInSeconds": windowProp(w.batchingWindow),
		})
		require.Equal(t, getAtt(s.enqueueFails, "Arn"), roundTrip(t, dest.AsObject()))

		// What Lambda accepts: MaximumRetryAttempts -1 to 10,000;
		// MaximumRecordAgeInSeconds -1 or 60 to 604,800; BatchSize up to
		// 10,000 for a DynamoDB stream. The age cap must also fall inside
		// the stream's 24 h retention, or the parked batch can no longer be
		// read back from the stream.
		props := dig(t, s.resource(t, *id, "AWS::Lambda::EventSourceMapping"), "Properties").(obj)
		retries := props["MaximumRetryAttempts"].(float64)
		require.True(t, retries >= -1 && retries <= 10000, "MaximumRetryAttempts %v", retries)
		age := props["MaximumRecordAgeInSeconds"].(float64)
		require.True(t, age == -1 || (age >= 60 && age <= 604800), "MaximumRecordAgeInSeconds %v", age)
		require.Positive(t, age, "with no age cap the batch is parked only after the stream trimmed it")
		require.Less(t, time.Duration(age)*time.Second, streamRetention, "the parked batch must still be in the stream")
		require.Equal(t, 24*time.Hour, streamRetention)
		batch := props["BatchSize"].(float64)
		require.True(t, batch >= 1 && batch <= 10000, "BatchSize %v", batch)
		// Reprocessing invokes enqueue with at most a batch's records.
		require.Equal(t, streamBatchSize, streamreprocess.MaxInvokeRecords)
	})

	t.Run("SQS mapping: delivery queue to deliver, batch 10, partial failures, capped concurrency", func(t *testing.T) {
		var id *string
		check(t, func() {
			id = s.tpl.GetResourceId(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
				"Properties": obj{"EventSourceArn": getAtt(s.deliveryQueue, "Arn")},
			})
		})
		s.hasProperties(t, "AWS::Lambda::EventSourceMapping", *id, obj{
			"FunctionName":          refTo(s.deliverFn),
			"BatchSize":             10,
			"FunctionResponseTypes": assertions.Match_ArrayEquals(&arr{"ReportBatchItemFailures"}),
			"ScalingConfig":         obj{"MaximumConcurrency": w.maxConcurrency},
			// No window: deliver receives together what enqueue gathered
			// and sent together (Props.BatchingWindow).
			"MaximumBatchingWindowInSeconds": assertions.Match_Absent(),
		})
		// The stream and the deferred fan-out queue to enqueue, the
		// delivery queue and the tenant lane to deliver, and the two replay
		// queues.
		check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(6)) })
	})

	t.Run("tenant lane: a second SQS mapping to deliver, as the delivery queue's, capped at laneMaxConcurrency", func(t *testing.T) {
		var id *string
		check(t, func() {
			id = s.tpl.GetResourceId(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
				"Properties": obj{"EventSourceArn": getAtt(s.laneQueue, "Arn")},
			})
		})
		s.hasProperties(t, "AWS::Lambda::EventSourceMapping", *id, obj{
			"FunctionName":          refTo(s.deliverFn),
			"BatchSize":             10,
			"FunctionResponseTypes": assertions.Match_ArrayEquals(&arr{"ReportBatchItemFailures"}),
			"ScalingConfig":         obj{"MaximumConcurrency": w.laneConcurrency},
		})
		// Deliver has exactly these two SQS mappings: the delivery queue's
		// and the lane's.
		caps := sqsMappingCaps(t, s)
		var deliverCaps []float64
		for k, c := range caps {
			if strings.HasPrefix(k, s.deliverFn+"<-") {
				deliverCaps = append(deliverCaps, c)
			}
		}
		require.ElementsMatch(t, []float64{float64(w.maxConcurrency), float64(w.laneConcurrency)}, deliverCaps)
		require.Equal(t, float64(w.maxConcurrency), caps[s.deliverFn+"<-"+s.deliveryQueue])
		require.Equal(t, float64(w.laneConcurrency), caps[s.deliverFn+"<-"+s.laneQueue])
		if w.reserved != 0 {
			require.Greater(t, w.reserved, w.maxConcurrency+w.laneConcurrency, "deliver's reservation exceeds both mappings together")
		}
		// Both functions are told of the lane.
		for _, fn := range []string{s.enqueueFn, s.deliverFn} {
			s.hasProperties(t, "AWS::Lambda::Function", fn, obj{
				"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{"HOOKLINE_LANE_QUEUE_URL": refTo(s.laneQueue)})},
			})
		}
		s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{"HOOKLINE_LANE_AFTER": "60"})},
		})
	})

	t.Run("reserved concurrency: deliver, api and replay", func(t *testing.T) {
		for fn, n := range map[string]int{s.deliverFn: w.reserved, s.apiFn: w.apiReserved, s.replayFn: w.replayReserved} {
			var reserved any = assertions.Match_Absent()
			if n != 0 {
				reserved = n
			}
			s.hasProperties(t, "AWS::Lambda::Function", fn, obj{"ReservedConcurrentExecutions": reserved})
		}
		// Enqueue's concurrency is bounded by the outbox stream's shards.
		s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{"ReservedConcurrentExecutions": assertions.Match_Absent()})
	})

	t.Run("a throttled invocation never burns an SQS receive: every SQS mapping's function reserves more than the mapping's cap", func(t *testing.T) {
		if w.reserved == 0 {
			t.Skip("this configuration reserves nothing, by choice")
		}
		sqsMappingsReserveAboveCap(t, s, 5)
	})

	t.Run("HTTP API stage: throttled, JSON access log with a retention, no Authorization header", func(t *testing.T) {
		group := dig(t, s.json, "Outputs", "ApiAccessLogGroupName", "Value", "Ref").(string)
		s.hasProperties(t, "AWS::Logs::LogGroup", group, obj{"RetentionInDays": 30})
		var stages *map[string]*map[string]any
		check(t, func() { stages = s.tpl.FindResources(jsii.String("AWS::ApiGatewayV2::Stage"), nil) })
		require.Len(t, *stages, 1, "one stage, $default")
		for id := range *stages {
			s.hasProperties(t, "AWS::ApiGatewayV2::Stage", id, obj{
				"StageName":  "$default",
				"AutoDeploy": true,
				"DefaultRouteSettings": obj{
					"ThrottlingRateLimit":  w.apiRate,
					"ThrottlingBurstLimit": w.apiBurst,
				},
			})
			settings := dig(t, s.resource(t, id, "AWS::ApiGatewayV2::Stage"), "Properties", "AccessLogSettings").(obj)
			// The destination is the access log group, by its ARN without ":*".
			require.Contains(t, fmt.Sprint(settings["DestinationArn"]), ":log-group:")
			require.Contains(t, fmt.Sprint(settings["DestinationArn"]), "Ref:"+group)
			require.NotContains(t, fmt.Sprint(settings["DestinationArn"]), ":*")
			format, ok := settings["Format"].(string)
			require.True(t, ok)
			var line map[string]string
			require.NoError(t, json.Unmarshal([]byte(format), &line), "the access log line is JSON")
			for _, field := range []string{"requestId", "ip", "requestTime", "httpMethod", "routeKey", "status", "protocol", "responseLength", "integrationError"} {
				require.Contains(t, line, field)
				require.True(t, strings.HasPrefix(line[field], "$context."), "%s is a $context variable", field)
			}
			require.Equal(t, "$context.requestId", line["requestId"], "API Gateway requires the request id in the format")
			require.NotContains(t, strings.ToLower(format), "authorization", "the access log never holds the Authorization header")
			require.NotContains(t, format, "$context.path", "nor a path, which a credential could be part of")
			require.NotContains(t, format, "$request.", "nor any request header or parameter")
		}
	})

	t.Run("alarms: DLQ depth and enqueue failures", func(t *testing.T) {
		visible := func(queue string, threshold int) obj {
			return obj{
				"Namespace":          "AWS/SQS",
				"MetricName":         "ApproximateNumberOfMessagesVisible",
				"Dimensions":         assertions.Match_ArrayWith(&arr{obj{"Name": "QueueName", "Value": getAtt(queue, "QueueName")}}),
				"Threshold":          threshold,
				"ComparisonOperator": "GreaterThanThreshold",
			}
		}
		s.hasProperties(t, "AWS::CloudWatch::Alarm", s.dlqAlarm, visible(s.deadLetter, w.alarmThreshold))
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), visible(s.enqueueFails, w.enqueueFailThreshold))
		})
	})

	t.Run("outputs exist", func(t *testing.T) {
		outputs := dig(t, s.json, "Outputs").(obj)
		for _, name := range []string{
			"OutboxTableName", "StateTableName", "DeliveryQueueURL", "DeadLetterQueueURL",
			"EnqueueFailureQueueURL", "EnqueueFunctionName",
			"DeliverFunctionName", "DLQDepthAlarmName", "LaneQueueURL", "FanOutQueueURL",
		} {
			require.Contains(t, outputs, name)
		}
		// The Refs behind the outputs point at resources of the right type.
		s.resource(t, s.outboxTable, "AWS::DynamoDB::Table")
		s.resource(t, s.stateTable, "AWS::DynamoDB::Table")
		for _, q := range []string{s.deliveryQueue, s.laneQueue, s.deadLetter, s.enqueueFails, s.fanOutQueue, s.fanOutDLQ} {
			s.resource(t, q, "AWS::SQS::Queue")
		}
		s.resource(t, s.enqueueFn, "AWS::Lambda::Function")
		s.resource(t, s.deliverFn, "AWS::Lambda::Function")
		s.resource(t, s.dlqAlarm, "AWS::CloudWatch::Alarm")
		require.Len(t, map[string]bool{s.deliveryQueue: true, s.laneQueue: true, s.deadLetter: true, s.enqueueFails: true, s.fanOutQueue: true, s.fanOutDLQ: true}, 6)
	})

	t.Run("operator reprocess policy: exactly what reprocessing calls, attached to no function", func(t *testing.T) {
		ref, ok := dig(t, s.json, "Outputs", "EnqueueRedrivePolicyARN", "Value", "Ref").(string)
		require.True(t, ok)
		policy := s.resource(t, ref, "AWS::IAM::ManagedPolicy")
		props := dig(t, policy, "Properties").(obj)
		// An upgrade keeps the policy, attached where operators attached it,
		// only with its earlier logical id and description (IAM cannot
		// change a policy's description: a new one replaces the policy).
		require.Equal(t, "EnqueueRedrivePolicy911A777B", ref)
		require.Equal(t, "Re-drive the outbox stream batches and operational events parked on the hookline enqueue failure queue (docs/operations.md).", props["Description"])
		for _, k := range []string{"Roles", "Users", "Groups"} {
			require.NotContains(t, props, k, "an operator attaches the policy; the stack attaches it to nobody")
		}
		got := map[string]any{}
		for _, raw := range dig(t, props, "PolicyDocument", "Statement").(arr) {
			st := raw.(obj)
			require.Equal(t, "Allow", st["Effect"])
			var actions []string
			switch a := st["Action"].(type) {
			case string:
				actions = []string{a}
			case arr:
				for _, x := range a {
					actions = append(actions, x.(string))
				}
			}
			slices.Sort(actions)
			got[strings.Join(actions, " ")] = st["Resource"]
		}
		// The actions are the methods of the Reprocessor's ports, one for one
		// (Lambda's Invoke is the action lambda:InvokeFunction).
		port := func(service string, iface reflect.Type) string {
			var actions []string
			for i := range iface.NumMethod() {
				action := service + ":" + iface.Method(i).Name
				if action == "lambda:Invoke" {
					action = "lambda:InvokeFunction"
				}
				actions = append(actions, action)
			}
			slices.Sort(actions)
			return strings.Join(actions, " ")
		}
		want := map[string]any{
			port("sqs", reflect.TypeFor[streamreprocess.Queue]()):        getAtt(s.enqueueFails, "Arn"),
			port("dynamodb", reflect.TypeFor[streamreprocess.Streams]()): getAtt(s.outboxTable, "StreamArn"),
			port("lambda", reflect.TypeFor[streamreprocess.Invoker]()):   getAtt(s.enqueueFn, "Arn"),
			port("dynamodb", reflect.TypeFor[streamreprocess.Scanner]()): getAtt(s.outboxTable, "Arn"),
			port("events", reflect.TypeFor[streamreprocess.Bus]()):       getAtt(s.operatorBus, "Arn"),
		}
		require.Equal(t, want, got)
	})

	t.Run("least privilege: only deliver may dead-letter", func(t *testing.T) {
		dlqArn := getAtt(s.deadLetter, "Arn")
		deliver := s.rolePolicy(t, s.deliverFn)
		enqueue := s.rolePolicy(t, s.enqueueFn)

		require.True(t, allows(deliver, "sqs:SendMessage", dlqArn), "deliver cannot send to the DLQ: %+v", deliver)
		require.True(t, allows(deliver, "sqs:ChangeMessageVisibility", getAtt(s.deliveryQueue, "Arn")), "deliver cannot reschedule on the delivery queue: %+v", deliver)
		require.True(t, allows(enqueue, "sqs:SendMessage", getAtt(s.deliveryQueue, "Arn")), "enqueue cannot send to the delivery queue: %+v", enqueue)
		require.True(t, allows(enqueue, "sqs:SendMessage", getAtt(s.enqueueFails, "Arn")), "enqueue mapping cannot park failed batches: %+v", enqueue)

		require.False(t, allows(enqueue, "sqs:SendMessage", dlqArn), "enqueue may send to the DLQ")
		require.False(t, mentions(enqueue, s.deadLetter), "enqueue's policy names the DLQ: %+v", enqueue)
		// deliver sends the messages that wait (rate limit, breaker, busy
		// endpoint) to its own queue again, delayed.
		require.True(t, allows(deliver, "sqs:SendMessage", getAtt(s.deliveryQueue, "Arn")), "deliver cannot send a waiting message again: %+v", deliver)
		// The tenant lane: enqueue sends a tenant's messages past
		// laneAfter to it, deliver sends its waits back to it and moves
		// tenant_busy messages to it; no other function may send there.
		lane := getAtt(s.laneQueue, "Arn")
		require.True(t, allows(enqueue, "sqs:SendMessage", lane), "enqueue cannot send to the tenant lane: %+v", enqueue)
		require.True(t, allows(deliver, "sqs:SendMessage", lane), "deliver cannot send to the tenant lane: %+v", deliver)
		require.True(t, allows(deliver, "sqs:ChangeMessageVisibility", lane), "deliver cannot reschedule on the tenant lane: %+v", deliver)
		for _, fn := range []string{s.apiFn, s.replayFn} {
			require.False(t, mentions(s.rolePolicy(t, fn), s.laneQueue), "%s's policy names the tenant lane", fn)
		}
		// The deferred fan-out queue: enqueue sends to it and consumes it
		// (its mapping); no other function names it or its DLQ, which
		// only SQS's redrive and the operator reach.
		fanOut := getAtt(s.fanOutQueue, "Arn")
		require.True(t, allows(enqueue, "sqs:SendMessage", fanOut), "enqueue cannot defer a fan-out: %+v", enqueue)
		require.True(t, allows(enqueue, "sqs:ReceiveMessage", fanOut), "enqueue cannot consume the fan-out queue: %+v", enqueue)
		require.True(t, allows(enqueue, "sqs:DeleteMessage", fanOut))
		require.False(t, mentions(enqueue, s.fanOutDLQ), "enqueue's policy names the fan-out DLQ: %+v", enqueue)
		for _, fn := range []string{s.deliverFn, s.apiFn, s.replayFn} {
			require.False(t, mentions(s.rolePolicy(t, fn), s.fanOutQueue), "%s's policy names the fan-out queue", fn)
			require.False(t, mentions(s.rolePolicy(t, fn), s.fanOutDLQ), "%s's policy names the fan-out DLQ", fn)
		}

		for name, stmts := range map[string][]statement{"deliver": deliver, "enqueue": enqueue} {
			for _, st := range stmts {
				for _, a := range st.Actions {
					require.Falsef(t, a == "*" || strings.HasSuffix(a, ":*"), "%s role allows wildcard action %q", name, a)
				}
			}
		}
	})
}

// sqsMappingsReserveAboveCap asserts that each of the template's SQS event
// source mappings (want of them) has a MaximumConcurrency, and that its
// function reserves more concurrency than its mappings' caps together: Lambda
// never throttles an invocation of a mapping, so no receive, which SQS counts
// towards the queue's maxReceiveCount, is spent on a throttle.
func sqsMappingsReserveAboveCap(t *testing.T, s *synthesized, want int) {
	t.Helper()
	var mappings *map[string]*map[string]any
	check(t, func() { mappings = s.tpl.FindResources(jsii.String("AWS::Lambda::EventSourceMapping"), nil) })
	n := 0
	caps := map[string]float64{}
	for id, m := range *mappings {
		props := roundTrip(t, m)["Properties"].(obj)
		source, ok := props["EventSourceArn"].(obj)["Fn::GetAtt"].(arr)
		if !ok || dig(t, s.json, "Resources", source[0].(string), "Type") != "AWS::SQS::Queue" {
			continue
		}
		n++
		limit, ok := dig(t, props, "ScalingConfig", "MaximumConcurrency").(float64)
		require.True(t, ok, "mapping %s has a MaximumConcurrency", id)
		fn := dig(t, props, "FunctionName", "Ref").(string)
		if fn == s.enqueueFn {
			// The exception: enqueue reserves nothing (its stream
			// executions, shards x parallelization, are not capped by a
			// reservation), so a throttle of its fan-out mapping (2) may
			// spend a receive. A deferred fan-out then parks only after
			// fanOutMaxReceiveCount receives a visibility timeout apart
			// (about an hour of throttles), on a DLQ that alarms and
			// moves back: late, never lost.
			require.EqualValues(t, fanOutMaxConcurrency, limit, "enqueue's mapping is the fan-out queue's")
			require.GreaterOrEqual(t, time.Duration(fanOutMaxReceiveCount-1)*fanOutVisibilityTimeout, 50*time.Minute)
			continue
		}
		caps[fn] += limit
	}
	for fn, limit := range caps {
		reserved, ok := dig(t, s.resource(t, fn, "AWS::Lambda::Function"), "Properties").(obj)["ReservedConcurrentExecutions"].(float64)
		require.True(t, ok, "function %s of an SQS mapping reserves concurrency", fn)
		require.Greater(t, reserved, limit, "function %s reserves more than its mappings' caps together", fn)
	}
	require.Equal(t, want, n, "SQS event source mappings")
}

func TestStackDefaults(t *testing.T) {
	start := time.Now()
	s := synth(t, Props{})
	t.Logf("synthesized default stack in %s", time.Since(start).Round(time.Millisecond))
	require.Len(t, retry.DefaultSchedule, 8)
	stackChecks(t, s, want{
		schedule:          retry.DefaultSchedule,
		arch:              "arm64",
		deliverTimeout:    20 * time.Second,
		maxRequestTimeout: 15 * time.Second,
		maxConcurrency:    25,
		laneConcurrency:   6,
		reserved:          32,
		apiReserved:       60,
		replayReserved:    replayMaxConcurrency + 1,
		apiRate:           50,
		apiBurst:          DefaultAPIBurstLimit,
		alarmThreshold:    100,
		allowCIDRs:        "",
		tenantThreshold:   100,
		disableAfterFor:   5 * 24 * time.Hour,
		breaker:           domain.Breaker{Cooldown: 10 * time.Second, MaxCooldown: 10 * time.Minute},
		// 3 of the 25: a slow endpoint holds at most 12% of the pool.
		endpointConcurrency: 3, fastParallel: 25,
		// 6 of the 25: a slow tenant, however many endpoints, holds at
		// most a quarter of the pool.
		tenantConcurrency: 6,
		parallelization:   DefaultEnqueueParallelization, sendConcurrency: domain.DefaultEnqueueSendConcurrency,
	})
	accessChecks(t, s, accessWant{publishRate: DefaultAPIPublishRateLimit, publishBurst: DefaultAPIPublishBurstLimit, adminRate: DefaultAPIAdminRateLimit, adminBurst: DefaultAPIAdminBurstLimit})
}

func TestStackCustom(t *testing.T) {
	schedule := []time.Duration{0, 10 * time.Second, time.Minute}
	start := time.Now()
	s := synth(t, Props{
		Architecture:               "x86_64",
		Retry:                      retry.Policy{Schedule: schedule},
		MaxRequestTimeout:          85 * time.Second, // the deliver function's 90 s derived from it
		DeliverMaxConcurrency:      5,
		DeliverReservedConcurrency: 20,
		APIReservedConcurrency:     40,
		ReplayReservedConcurrency:  9,
		APIRateLimit:               2.5,
		APIBurstLimit:              7,
		AllowCIDRs:                 []string{"127.0.0.0/8", "10.0.0.0/8"},
		DLQAlarmThreshold:          7,
		TenantDLQAlarmThreshold:    250,
		EnqueueFailuresThreshold:   3,
		DisableAfterFor:            2 * time.Minute,
		BreakerCooldown:            time.Second,
		BreakerMaxCooldown:         4 * time.Second,
		EndpointConcurrency:        4,
		APIPublishRateLimit:        7.5,
		APIPublishBurstLimit:       15,
		APIAdminRateLimit:          0.5,
		APIAdminBurstLimit:         1,
		EnqueueParallelization:     10,
		EnqueueSendConcurrency:     7,
		BatchingWindow:             5 * time.Second,
	})
	t.Logf("synthesized custom stack in %s", time.Since(start).Round(time.Millisecond))
	stackChecks(t, s, want{
		schedule:             schedule,
		arch:                 "x86_64",
		deliverTimeout:       90 * time.Second,
		maxRequestTimeout:    85 * time.Second,
		maxConcurrency:       5,
		laneConcurrency:      5, // min(6, the pool of 5)
		reserved:             20,
		apiReserved:          40,
		replayReserved:       9,
		apiRate:              2.5,
		apiBurst:             7,
		alarmThreshold:       7,
		allowCIDRs:           "127.0.0.0/8,10.0.0.0/8",
		tenantThreshold:      250,
		enqueueFailThreshold: 3,
		disableAfterFor:      2 * time.Minute,
		breaker:              domain.Breaker{Cooldown: time.Second, MaxCooldown: 4 * time.Second},
		endpointConcurrency:  4, fastParallel: 5,
		tenantConcurrency: 4, // the default, below the pool of 5
		parallelization:   10, sendConcurrency: 7,
		batchingWindow: 5,
	})
	accessChecks(t, s, accessWant{publishRate: 7.5, publishBurst: 15, adminRate: 0.5, adminBurst: 1})
}

// TestStackNoReservations is the deployment for an account whose
// concurrency limit cannot spare a reservation: nothing reserved, by choice,
// and the mappings still capped.
func TestStackNoReservations(t *testing.T) {
	s := synth(t, Props{DeliverReservedConcurrency: -1, APIReservedConcurrency: -1, ReplayReservedConcurrency: -1})
	for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
		s.hasProperties(t, "AWS::Lambda::Function", fn, obj{"ReservedConcurrentExecutions": assertions.Match_Absent()})
	}
	check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"FunctionName": refTo(s.deliverFn), "ScalingConfig": obj{"MaximumConcurrency": domain.DefaultDeliverMaxConcurrency},
		})
	})
}

func TestMissingBinaries(t *testing.T) {
	partial := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(partial, "enqueue"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(partial, "enqueue", "bootstrap"), []byte("x"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(partial, "deliver", "bootstrap"), 0o755)) // a folder is no binary

	t.Run("CodeFromDir names the first missing bootstrap and how to build it", func(t *testing.T) {
		_, err := functionCode(CodeFromDir(fakeAssets(t)), "arm64")
		require.NoError(t, err)
		empty := t.TempDir()
		_, err = functionCode(CodeFromDir(empty), "arm64")
		require.EqualError(t, err, filepath.Join(empty, "enqueue", "bootstrap")+" is missing: run `make build ARCH=arm64` first")
		_, err = functionCode(CodeFromDir(partial), "x86_64")
		require.EqualError(t, err, filepath.Join(partial, "deliver", "bootstrap")+" is missing: run `make build ARCH=x86_64` first")
		require.NotContains(t, err.Error(), "\n", "one sentence")
		t.Chdir(t.TempDir())
		_, err = functionCode(CodeFromDir(""), "x86_64")
		require.EqualError(t, err, "dist/x86_64/enqueue/bootstrap is missing: run `make build ARCH=x86_64` first", "empty: dist/<architecture>")
	})
	t.Run("New refuses before creating anything", func(t *testing.T) {
		app := newApp(t)
		stack := awscdk.NewStack(app, jsii.String("NoBinaries"), nil)
		_, err := New(stack, "Hookline", &Props{Code: CodeFromDir(partial)})
		require.ErrorContains(t, err, "deliver/bootstrap is missing: run `make build ARCH=arm64` first")
		require.Empty(t, *stack.Node().Children(), "no construct was added")
	})
	t.Run("BuildFromSource: a build that fails says which and why", func(t *testing.T) {
		notAModule := t.TempDir()
		_, err := BuildFromSource(notAModule).FunctionCode("enqueue", "arm64")
		require.ErrorContains(t, err, "go build github.com/hookline/hookline/functions/enqueue for linux/arm64 in "+notAModule)
		require.ErrorContains(t, err, "or set Props.Code")
	})
	t.Run("BuildFromSource: no go command", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := BuildFromSource(t.TempDir()).FunctionCode("api", "x86_64")
		require.ErrorContains(t, err, "building the hookline api function from source needs the go command on PATH")
	})
}

func TestPropsValidation(t *testing.T) {
	refused := func(t *testing.T, p Props, wantErr string) {
		t.Helper()
		_, err := p.withDefaults()
		require.ErrorContains(t, err, wantErr)
	}
	accepted := func(t *testing.T, p Props) Props {
		t.Helper()
		got, err := p.withDefaults()
		require.NoError(t, err)
		return got
	}

	t.Run("zero value gets the documented defaults", func(t *testing.T) {
		p := accepted(t, Props{})
		require.Equal(t, "arm64", p.Architecture)
		require.Equal(t, BuildFromSource(""), p.Code)
		require.Equal(t, 15*time.Second, p.RequestTimeout)
		require.Equal(t, 20*time.Second, p.DeliverTimeout)
		require.Equal(t, 25, p.DeliverMaxConcurrency)
		require.Equal(t, 6, p.LaneMaxConcurrency)
		require.Equal(t, 60, p.LaneAfter)
		require.Equal(t, 32, p.DeliverReservedConcurrency)
		require.Equal(t, 60, p.APIReservedConcurrency)
		require.Equal(t, 8, p.ReplayReservedConcurrency)
		require.Equal(t, 50.0, p.APIRateLimit)
		require.Equal(t, 10, p.APIBurstLimit)
		require.Equal(t, 100, p.DLQAlarmThreshold)
		require.Equal(t, "INFO", p.LogLevel)
		require.Equal(t, 8, p.Retry.Attempts())
	})
	t.Run("the retry policy gets the queue's visibility timeout", func(t *testing.T) {
		require.Equal(t, 2*time.Minute, accepted(t, Props{}).Retry.VisibilityTimeout)
		require.Equal(t, 9*time.Minute, accepted(t, Props{DeliverTimeout: 90 * time.Second}).Retry.VisibilityTimeout)
		again := accepted(t, accepted(t, Props{DeliverTimeout: 90 * time.Second}))
		require.Equal(t, 9*time.Minute, again.Retry.VisibilityTimeout, "defaults applied twice agree")
		refused(t, Props{Retry: retry.Policy{VisibilityTimeout: time.Minute}}, "retry visibility timeout 1m0s: the stack sets it")
	})
	t.Run("schedule step over 12h refused", func(t *testing.T) {
		refused(t, Props{Retry: retry.Policy{Schedule: []time.Duration{0, 12*time.Hour + time.Second}}}, "12h")
		accepted(t, Props{Retry: retry.Policy{Schedule: []time.Duration{0, 12 * time.Hour}}})
	})
	t.Run("enqueue parallelization and send concurrency: 1 to 10", func(t *testing.T) {
		refused(t, Props{EnqueueParallelization: 11}, "enqueue parallelization 11: a stream mapping's parallelization factor is 1 to 10")
		refused(t, Props{EnqueueParallelization: -1}, "enqueue parallelization -1")
		refused(t, Props{EnqueueSendConcurrency: 11}, "enqueue send concurrency 11: want 1 to 10")
		refused(t, Props{EnqueueSendConcurrency: -2}, "enqueue send concurrency -2")
		p := accepted(t, Props{EnqueueParallelization: 10, EnqueueSendConcurrency: 1})
		require.Equal(t, 10, p.EnqueueParallelization)
		require.Equal(t, 1, p.EnqueueSendConcurrency)
		p = accepted(t, Props{})
		require.Equal(t, 2, p.EnqueueParallelization)
		require.Equal(t, 4, p.EnqueueSendConcurrency)
		require.Equal(t, 1, accepted(t, Props{SmallAccount: true}).EnqueueParallelization, "the small-account profile keeps one invocation per shard")
		require.Equal(t, 3, accepted(t, Props{SmallAccount: true, EnqueueParallelization: 3}).EnqueueParallelization)
	})
	t.Run("batching window: whole seconds, 0 to 300", func(t *testing.T) {
		refused(t, Props{BatchingWindow: 301 * time.Second}, "batching window 5m1s: a mapping's batching window is whole seconds, 0 to 5m0s")
		refused(t, Props{BatchingWindow: 1500 * time.Millisecond}, "batching window 1.5s: a mapping's batching window is whole seconds")
		refused(t, Props{BatchingWindow: -time.Second}, "batching window -1s")
		require.Equal(t, 300*time.Second, accepted(t, Props{BatchingWindow: 300 * time.Second}).BatchingWindow)
		require.Equal(t, time.Second, accepted(t, Props{BatchingWindow: time.Second}).BatchingWindow)
		require.Zero(t, accepted(t, Props{}).BatchingWindow, "none by default")
	})
	t.Run("reserved concurrency not above max concurrency refused", func(t *testing.T) {
		refused(t, Props{DeliverReservedConcurrency: 31}, "deliver reserved concurrency 31 must exceed its two mappings' max concurrency together, 31 (delivery queue 25 + tenant lane 6)")
		refused(t, Props{DeliverReservedConcurrency: 26}, "must exceed") // the old default: above the delivery queue's mapping alone
		refused(t, Props{DeliverMaxConcurrency: 50, DeliverReservedConcurrency: 20}, "reserved concurrency")
		accepted(t, Props{DeliverReservedConcurrency: 32})
		require.Equal(t, 57, accepted(t, Props{DeliverMaxConcurrency: 50}).DeliverReservedConcurrency, "the default follows the caps: 50 + 6 + 1")
		require.Equal(t, 61, accepted(t, Props{DeliverMaxConcurrency: 50, LaneMaxConcurrency: 10}).DeliverReservedConcurrency, "50 + 10 + 1")
		require.Equal(t, -1, accepted(t, Props{DeliverReservedConcurrency: -1}).DeliverReservedConcurrency, "negative: none, by choice")
		refused(t, Props{ReplayReservedConcurrency: replayMaxConcurrency}, "replay reserved concurrency 7 must exceed its mappings' max concurrency 7")
		accepted(t, Props{ReplayReservedConcurrency: replayMaxConcurrency + 1, APIReservedConcurrency: -1})
	})
	t.Run("API throttling within API Gateway's account limits", func(t *testing.T) {
		refused(t, Props{APIRateLimit: -1}, "API rate limit -1")
		refused(t, Props{APIRateLimit: 10001}, "API rate limit 10001")
		refused(t, Props{APIBurstLimit: -5}, "API burst limit -5")
		refused(t, Props{APIBurstLimit: 5001}, "API burst limit 5001")
		p := accepted(t, Props{APIRateLimit: 0.5, APIBurstLimit: 5000, APIReservedConcurrency: -1})
		require.Equal(t, 0.5, p.APIRateLimit)
	})
	t.Run("tenant lane: its cap 2..1000, as wide as a tenant's share by default; its threshold at least 1", func(t *testing.T) {
		refused(t, Props{LaneMaxConcurrency: 1}, "lane max concurrency 1: SQS event sources take 2 to 1000")
		refused(t, Props{LaneMaxConcurrency: 1001}, "lane max concurrency 1001")
		refused(t, Props{LaneMaxConcurrency: -3}, "lane max concurrency -3")
		refused(t, Props{LaneAfter: -1}, "lane after -1")
		require.Equal(t, 6, accepted(t, Props{}).LaneMaxConcurrency, "domain.DefaultTenantConcurrency")
		require.Equal(t, 3, accepted(t, Props{DeliverMaxConcurrency: 3}).LaneMaxConcurrency, "no wider than the delivery queue's mapping")
		require.Equal(t, 2, accepted(t, Props{DeliverMaxConcurrency: 2}).LaneMaxConcurrency, "at least what SQS takes")
		require.Equal(t, 2, accepted(t, Props{SmallAccount: true}).LaneMaxConcurrency, "the small-account profile: 2")
		require.Equal(t, 2, accepted(t, Props{SmallAccount: true, DeliverMaxConcurrency: 5}).LaneMaxConcurrency)
		require.Equal(t, 40, accepted(t, Props{LaneMaxConcurrency: 40}).LaneMaxConcurrency)
		require.Equal(t, 7, accepted(t, Props{LaneAfter: 7}).LaneAfter)
		p := accepted(t, Props{DeliverMaxConcurrency: 3})
		require.Greater(t, p.DeliverReservedConcurrency, p.DeliverMaxConcurrency+p.LaneMaxConcurrency)
	})
	t.Run("max concurrency outside 2..1000 refused", func(t *testing.T) {
		refused(t, Props{DeliverMaxConcurrency: 1}, "max concurrency 1")
		refused(t, Props{DeliverMaxConcurrency: 1001}, "max concurrency 1001")
	})
	t.Run("bad architecture refused", func(t *testing.T) {
		for _, a := range []string{"amd64", "aarch64", "host", "ARM64"} {
			refused(t, Props{Architecture: a}, fmt.Sprintf("architecture %q", a))
		}
		require.Equal(t, "x86_64", accepted(t, Props{Architecture: "x86_64"}).Architecture)
	})
	t.Run("deliver timeout covers one round of attempts and 5s", func(t *testing.T) {
		refused(t, Props{DeliverTimeout: 19 * time.Second}, "deliver timeout 19s must be at least 20s: one round of attempts (the longest request timeout an endpoint may set, 15s)")
		refused(t, Props{RequestTimeout: 60 * time.Second, DeliverTimeout: time.Minute}, "deliver timeout 1m0s must be at least 1m5s")
		require.Equal(t, 65*time.Second, accepted(t, Props{RequestTimeout: 60 * time.Second}).DeliverTimeout, "derived from the request timeout")
		require.Equal(t, 8*time.Second, accepted(t, Props{RequestTimeout: 3 * time.Second}).DeliverTimeout, "the local cloud's")
		accepted(t, Props{DeliverTimeout: 20 * time.Second})
		refused(t, Props{DeliverTimeout: 16 * time.Minute}, "15m")
		// Sized for the longest timeout an endpoint may set.
		p := accepted(t, Props{MaxRequestTimeout: 40 * time.Second})
		require.Equal(t, 45*time.Second, p.DeliverTimeout)
		require.Equal(t, 270*time.Second, p.Retry.VisibilityTimeout, "the queue's, six times the function's")
		require.Equal(t, 15*time.Second, p.RequestTimeout, "the stack's own stays")
		require.Equal(t, 15*time.Second, accepted(t, Props{}).MaxRequestTimeout, "the request timeout by default")
		refused(t, Props{MaxRequestTimeout: 40 * time.Second, DeliverTimeout: 30 * time.Second}, "deliver timeout 30s must be at least 45s")
		refused(t, Props{RequestTimeout: 20 * time.Second, MaxRequestTimeout: 10 * time.Second}, "max request timeout 10s is below the request timeout 20s")
		refused(t, Props{MaxRequestTimeout: 15 * time.Minute}, "15m")
	})
	t.Run("a crashed batch is retried within two minutes with the defaults", func(t *testing.T) {
		p := accepted(t, Props{})
		// The queue's visibility timeout (6x the function's, stackChecks holds
		// the template to it) is how long a crash victim waits.
		require.LessOrEqual(t, 6*p.DeliverTimeout, 2*time.Minute)
		require.GreaterOrEqual(t, p.DeliverTimeout, p.RequestTimeout+5*time.Second)
	})
	t.Run("operational events' thresholds", func(t *testing.T) {
		p := accepted(t, Props{})
		require.Equal(t, 50, p.DisableAfter)
		require.Equal(t, 10, p.FailingAfter)
		require.Equal(t, 5*time.Minute, p.DeadNoticeWindow)
		refused(t, Props{FailingAfter: 50}, "failing threshold 50 must be below the disable threshold 50")
		refused(t, Props{FailingAfter: 7, DisableAfter: 6}, "must be below")
		refused(t, Props{DeadNoticeWindow: 16 * time.Minute}, "SQS delays a message at most 900 s")
		refused(t, Props{DeadNoticeWindow: time.Millisecond}, "dead notice window")
		accepted(t, Props{FailingAfter: 60, DisableAfter: -1})
		accepted(t, Props{FailingAfter: -1, DisableAfter: 3, DeadNoticeWindow: 15 * time.Minute})
	})
	t.Run("the endpoints' counters: written every 10 s by default, at most 5 min, negative every batch", func(t *testing.T) {
		require.Equal(t, 10*time.Second, accepted(t, Props{}).StatsFlushEvery)
		require.Equal(t, -time.Second, accepted(t, Props{StatsFlushEvery: -time.Second}).StatsFlushEvery)
		refused(t, Props{StatsFlushEvery: 6 * time.Minute}, "stats flush interval 6m0s: at most 5m0s")
	})
	t.Run("the API's per-tenant limit of expensive requests", func(t *testing.T) {
		p := accepted(t, Props{})
		require.Equal(t, domain.DefaultAPITenantExpensiveRate, p.APITenantExpensiveRate)
		require.Equal(t, domain.DefaultAPIExpensiveBudget, p.APIExpensiveBudget)
		require.Less(t, float64(p.APITenantExpensiveRate)*p.APIExpensiveBudget.Seconds(), float64(p.APIReservedConcurrency),
			"one tenant cannot hold every reserved execution")
		refused(t, Props{APITenantExpensiveRate: 30}, "lets one tenant hold 60 executions")
		refused(t, Props{APIExpensiveBudget: 15 * time.Second}, "below the api function's timeout")
		refused(t, Props{APIExpensiveBudget: time.Millisecond}, "API expensive budget")
		refused(t, Props{APITenantExpensiveRate: 5000}, "API tenant expensive rate")
		accepted(t, Props{APITenantExpensiveRate: -1})
		accepted(t, Props{APITenantExpensiveRate: 10, APIReservedConcurrency: -1})
		accepted(t, Props{APITenantExpensiveRate: 2, APIExpensiveBudget: 5 * time.Second})
		// A small reservation fits the route throttles only with fast
		// requests and small bursts (checkAPICapacity): buckets of 1 + 1 +
		// 12 × 1, and 174 a second at 10 ms, 1.74.
		small := Props{APIRequestDuration: 10 * time.Millisecond, APIBurstLimit: 1, APIPublishBurstLimit: 1}
		small.APIReservedConcurrency = 16
		require.Equal(t, 4, accepted(t, small).APITenantExpensiveRate, "the default, lowered to half a small reservation: 8 executions of 2 s")
		small.APIReservedConcurrency = 20
		require.Equal(t, 5, accepted(t, small).APITenantExpensiveRate)
		require.Equal(t, 5, accepted(t, Props{APIReservedConcurrency: -1}).APITenantExpensiveRate, "no reservation: the default")
	})
	t.Run("isolation: patient disable, circuit breaker, endpoint concurrency", func(t *testing.T) {
		p := accepted(t, Props{})
		require.Equal(t, domain.DefaultDisableAfterFor, p.DisableAfterFor)
		require.Equal(t, 5*24*time.Hour, p.DisableAfterFor)
		require.Equal(t, 10*time.Second, p.BreakerCooldown)
		require.Equal(t, 10*time.Minute, p.BreakerMaxCooldown)
		require.Equal(t, 3, p.EndpointConcurrency)
		require.Equal(t, 25, p.fastConcurrency(), "the deliver mapping's max concurrency")

		// The patient disable outlasts the schedule's whole span.
		refused(t, Props{DisableAfterFor: 22 * time.Hour}, "DisableAfterFor 22h0m0s must be at least the retry schedule's whole span 22h35m35s (the sum of its delays): an outage the schedule rides out must never disable an endpoint")
		accepted(t, Props{DisableAfterFor: 22*time.Hour + 35*time.Minute + 35*time.Second})
		local := retry.Policy{Schedule: []time.Duration{0, time.Second, 4 * time.Second, 10 * time.Second}}
		accepted(t, Props{Retry: local, DisableAfterFor: 30 * time.Second})
		refused(t, Props{Retry: local, DisableAfterFor: 14 * time.Second}, "whole span 15s")
		refused(t, Props{DisableAfterFor: -time.Hour}, "DisableAfterFor -1h0m0s")

		// The breaker: open at most as long as SQS can delay a message.
		p = accepted(t, Props{BreakerCooldown: time.Second, BreakerMaxCooldown: 4 * time.Second})
		require.Equal(t, [2]time.Duration{time.Second, 4 * time.Second}, [2]time.Duration{p.BreakerCooldown, p.BreakerMaxCooldown})
		p = accepted(t, Props{BreakerCooldown: 12 * time.Minute})
		require.Equal(t, 12*time.Minute, p.BreakerMaxCooldown, "the default maximum follows a longer cooldown")
		accepted(t, Props{BreakerMaxCooldown: 15 * time.Minute})
		refused(t, Props{BreakerMaxCooldown: 16 * time.Minute}, "want at most 15m0s (a delivery waiting for the breaker is sent again delayed, and SQS delays a message at most 900 s)")
		refused(t, Props{BreakerCooldown: 16 * time.Minute}, "breaker cooldown 16m0s")
		refused(t, Props{BreakerCooldown: time.Minute, BreakerMaxCooldown: 30 * time.Second}, "breaker max cooldown 30s must be at least the breaker cooldown 1m0s")
		refused(t, Props{BreakerMaxCooldown: 5 * time.Second}, "must be at least the breaker cooldown 10s")
		refused(t, Props{BreakerCooldown: -time.Second}, "want positive durations")

		// The concurrency gate: below the pool, so one slow endpoint
		// never holds all of it.
		refused(t, Props{EndpointConcurrency: 25}, "endpoint concurrency 25: want at least 1, at most 100, and below the deliver max concurrency 25")
		refused(t, Props{EndpointConcurrency: -1}, "endpoint concurrency -1")
		refused(t, Props{DeliverMaxConcurrency: 500, EndpointConcurrency: 101}, "at most 100")
		require.Equal(t, 24, accepted(t, Props{EndpointConcurrency: 24}).EndpointConcurrency)
		require.Equal(t, 1, accepted(t, Props{DeliverMaxConcurrency: 2}).EndpointConcurrency, "the default stays below a small pool")
		p = accepted(t, Props{DeliverMaxConcurrency: 500, EndpointConcurrency: 100})
		require.Equal(t, 100, p.fastConcurrency(), "the fast limit is at most 100")

		// A tenant's share: below the pool, so one slow tenant spread over
		// many endpoints never holds all of it.
		require.Equal(t, domain.DefaultTenantConcurrency, accepted(t, Props{}).TenantConcurrency)
		require.Equal(t, 6, accepted(t, Props{}).TenantConcurrency)
		require.Equal(t, 1, accepted(t, Props{DeliverMaxConcurrency: 2}).TenantConcurrency, "the default stays below a small pool")
		require.Equal(t, 24, accepted(t, Props{TenantConcurrency: 24}).TenantConcurrency)
		refused(t, Props{TenantConcurrency: 25}, "tenant concurrency 25: want at least 1, at most 100, and below the deliver max concurrency 25, so that one slow tenant can never hold the whole pool")
		refused(t, Props{TenantConcurrency: -1}, "tenant concurrency -1")
		refused(t, Props{DeliverMaxConcurrency: 500, TenantConcurrency: 101}, "at most 100")
		env, err := deliverEnv(p)
		require.NoError(t, err)
		_, err = fnenv.LoadDeliver(lookupVars(env.Vars(), map[string]string{
			"HOOKLINE_STATE_TABLE": "s", "HOOKLINE_DELIVERY_QUEUE_URL": "q", "HOOKLINE_DLQ_URL": "d", "HOOKLINE_SECRETS_KEY_ARN": "k",
		}))
		require.NoError(t, err, "what the props accept, the function accepts")
	})
	t.Run("delivery and DLQ retention", func(t *testing.T) {
		p := accepted(t, Props{})
		require.Equal(t, 15*24*time.Hour, p.DeliveryRetention)
		require.Equal(t, 14*24*time.Hour, p.DLQRetention)
		require.Equal(t, store.DefaultRetention, fnenv.DefaultDeliveryRetention, "one default, written twice")
		refused(t, Props{DLQRetention: 15 * 24 * time.Hour}, "SQS keeps a message at most 14 days")
		refused(t, Props{DLQRetention: time.Second}, "DLQ retention 1s")
		refused(t, Props{DeliveryRetention: 14 * 24 * time.Hour}, "a dead delivery's record must outlive its DLQ message")
		refused(t, Props{DLQRetention: 7 * 24 * time.Hour, DeliveryRetention: 7*24*time.Hour + time.Hour}, "at least the DLQ retention 168h0m0s + 1 day")
		accepted(t, Props{DLQRetention: 7 * 24 * time.Hour, DeliveryRetention: 8 * 24 * time.Hour})
	})
	t.Run("payload retention", func(t *testing.T) {
		require.Equal(t, 15*24*time.Hour, accepted(t, Props{}).PayloadRetention)
		require.Equal(t, api.DefaultPayloadRetention, fnenv.DefaultPayloadRetention, "one default, written twice")
		require.Equal(t, 16*24*time.Hour, accepted(t, Props{PayloadRetention: 16 * 24 * time.Hour}).PayloadRetention)
		refused(t, Props{PayloadRetention: 17 * 24 * time.Hour}, "the outbox items expire 384h0m0s after they occurred")
		refused(t, Props{PayloadRetention: time.Minute}, "payload retention 1m0s: want 1h")
	})
	t.Run("tenant caps", func(t *testing.T) {
		p := accepted(t, Props{})
		require.Equal(t, []int{domain.DefaultMaxEndpoints, domain.DefaultMaxEndpointBytes, domain.DefaultMaxMetricsEventTypes},
			[]int{p.MaxEndpoints, p.MaxEndpointBytes, p.MaxMetricsEventTypes})
		p = accepted(t, Props{MaxEndpoints: 5, MaxEndpointBytes: fnenv.MinMaxEndpointBytes, MaxMetricsEventTypes: 1})
		require.Equal(t, []int{5, fnenv.MinMaxEndpointBytes, 1}, []int{p.MaxEndpoints, p.MaxEndpointBytes, p.MaxMetricsEventTypes})
		refused(t, Props{MaxEndpoints: -1}, "max endpoints -1: want at least 1")
		refused(t, Props{MaxEndpointBytes: 4096}, "max endpoint bytes 4096: want at least 8192")
		refused(t, Props{MaxMetricsEventTypes: -3}, "max metrics event types -3")
	})
	t.Run("console frame ancestors and portal link life", func(t *testing.T) {
		p := accepted(t, Props{ConsoleFrameAncestors: []string{"'self'", "https://app.example.com"}})
		require.Equal(t, []string{"'self'", "https://app.example.com"}, p.ConsoleFrameAncestors)
		require.Equal(t, fnenv.DefaultPortalMinTTL, p.PortalMinTTL)
		refused(t, Props{ConsoleFrameAncestors: []string{"https://app.example.com/embed"}}, "console frame ancestors")
		refused(t, Props{ConsoleFrameAncestors: []string{"*"}}, "console frame ancestors")
		require.Equal(t, time.Second, accepted(t, Props{PortalMinTTL: time.Second}).PortalMinTTL)
		refused(t, Props{PortalMinTTL: 2 * time.Minute}, "portal min TTL 2m0s")
		refused(t, Props{PortalMinTTL: time.Millisecond}, "portal min TTL 1ms")
	})
	t.Run("bad AllowCIDRs refused", func(t *testing.T) {
		for _, c := range []string{"127.0.0.1", "10.0.0.0/33", "localhost", ""} {
			app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
			_, err := New(awscdk.NewStack(app, jsii.String("Bad"), nil), "Default", &Props{Code: CodeFromDir(fakeAssets(t)), AllowCIDRs: []string{"127.0.0.0/8", c}})
			require.ErrorContains(t, err, fmt.Sprintf("allow CIDR %q", c))
		}
	})
}

// lookupVars reads vars, then more, as the environment.
func lookupVars(vars, more map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := vars[k]; ok && v != "" {
			return v
		}
		return more[k]
	}
}

func TestMaxAgeBoundedByQueueRetention(t *testing.T) {
	_, err := Props{Retry: retry.Policy{MaxAge: 14 * 24 * time.Hour}}.withDefaults()
	require.ErrorContains(t, err, "expire silently")
	_, err = Props{Retry: retry.Policy{MaxAge: MaxEventAge}}.withDefaults()
	require.NoError(t, err)
}

func TestFaultsOnlyWhenAsked(t *testing.T) {
	_, err := Props{Faults: "disk_full:1"}.withDefaults()
	require.ErrorContains(t, err, "unknown fault point")
	env, err := deliverEnv(Props{})
	require.NoError(t, err)
	require.NotContains(t, env.Vars(), "HOOKLINE_FAULTS", "no fault configuration unless asked")
}
