package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/retry"
	"github.com/hookline/hookline/internal/store"
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
	enqueueFn, deliverFn, apiFn, replayFn   string
	replayJobs                              string
	dlqAlarm                                string
	operatorKey                             string
}

// synth builds the stack with props (AssetDir set to a temp dir holding two
// distinguishable bootstraps) and returns its template.
func synth(t *testing.T, props HooklineStackProps) *synthesized {
	t.Helper()
	assets := t.TempDir()
	for _, fn := range []string{"enqueue", "deliver", "api", "replay"} {
		require.NoError(t, os.MkdirAll(filepath.Join(assets, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(assets, fn, "bootstrap"), []byte(fn+" binary"), 0o755))
	}
	props.AssetDir = assets
	outdir := t.TempDir()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outdir)})
	stack, err := NewHooklineStack(app, "HooklineTest", &props)
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
	s.deadLetter = ref("DeadLetterQueueURL")
	s.enqueueFails = ref("EnqueueFailureQueueURL")
	s.enqueueFn = ref("EnqueueFunctionName")
	s.deliverFn = ref("DeliverFunctionName")
	s.dlqAlarm = ref("DLQDepthAlarmName")
	s.apiFn = ref("ApiFunctionName")
	s.operatorKey = ref("OperatorKeySecretARN")
	s.replayFn = ref("ReplayFunctionName")
	s.replayJobs = ref("ReplayJobsQueueURL")
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
	Effect   string
	Actions  []string
	Resource []any
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
	maxConcurrency       int
	reserved             int // 0: no ReservedConcurrentExecutions
	alarmThreshold       int
	allowCIDRs           string
	tenantThreshold      int
	enqueueFailThreshold int
}

func stackChecks(t *testing.T, s *synthesized, w want) {
	t.Run("outbox table: id key, NEW_IMAGE stream, TTL, on-demand, PITR", func(t *testing.T) {
		s.hasProperties(t, "AWS::DynamoDB::Table", s.outboxTable, obj{
			"KeySchema":            assertions.Match_ArrayEquals(&arr{obj{"AttributeName": "id", "KeyType": "HASH"}}),
			"AttributeDefinitions": assertions.Match_ArrayEquals(&arr{obj{"AttributeName": "id", "AttributeType": "S"}}),
			"StreamSpecification":  obj{"StreamViewType": "NEW_IMAGE"},
			"TimeToLiveSpecification": obj{
				"AttributeName": "expires_at",
				"Enabled":       true,
			},
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
		})
		// Customers' events survive a stack deletion.
		require.Equal(t, "Retain", s.resource(t, s.outboxTable, "AWS::DynamoDB::Table")["DeletionPolicy"])
	})

	t.Run("state table: pk/sk keys, one index (gsi1, all attributes), TTL", func(t *testing.T) {
		s.hasProperties(t, "AWS::DynamoDB::Table", s.stateTable, obj{
			"KeySchema": assertions.Match_ArrayEquals(&arr{
				obj{"AttributeName": "pk", "KeyType": "HASH"},
				obj{"AttributeName": "sk", "KeyType": "RANGE"},
			}),
			// Only the keys of the table and of gsi1: the event index
			// (gsi2) is gone, its attributes with it.
			"AttributeDefinitions": assertions.Match_ArrayEquals(&arr{
				obj{"AttributeName": "pk", "AttributeType": "S"},
				obj{"AttributeName": "sk", "AttributeType": "S"},
				obj{"AttributeName": "gsi1pk", "AttributeType": "S"},
				obj{"AttributeName": "gsi1sk", "AttributeType": "S"},
			}),
			"GlobalSecondaryIndexes": assertions.Match_ArrayEquals(&arr{
				assertions.Match_ObjectLike(&obj{
					"IndexName": StateIndexName,
					"KeySchema": assertions.Match_ArrayEquals(&arr{
						obj{"AttributeName": "gsi1pk", "KeyType": "HASH"},
						obj{"AttributeName": "gsi1sk", "KeyType": "RANGE"},
					}),
					// The DLQ listing reads whole deliveries from the index.
					"Projection": obj{"ProjectionType": "ALL"},
				}),
			}),
			"TimeToLiveSpecification":          obj{"AttributeName": "expires_at", "Enabled": true},
			"BillingMode":                      "PAY_PER_REQUEST",
			"PointInTimeRecoverySpecification": obj{"PointInTimeRecoveryEnabled": true},
		})
		require.Equal(t, "gsi1", StateIndexName)
	})

	t.Run("delivery queue: redrive to DLQ after one receive per schedule step", func(t *testing.T) {
		target := assertions.NewCapture(nil)
		s.hasProperties(t, "AWS::SQS::Queue", s.deliveryQueue, obj{
			"RedrivePolicy": obj{
				"deadLetterTargetArn": target,
				"maxReceiveCount":     len(w.schedule),
			},
		})
		require.Equal(t, getAtt(s.deadLetter, "Arn"), roundTrip(t, target.AsObject()))
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

	t.Run("functions: each deploys its own bootstrap from AssetDir", func(t *testing.T) {
		require.Equal(t, "enqueue binary", s.stagedBootstrap(t, s.enqueueFn))
		require.Equal(t, "deliver binary", s.stagedBootstrap(t, s.deliverFn))
		require.Equal(t, "api binary", s.stagedBootstrap(t, s.apiFn))
	})

	t.Run("HTTP API: one route per api.Routes() entry and $default, all to the api function, payload 2.0", func(t *testing.T) {
		routes := api.Routes()
		check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Api"), jsii.Number(1)) })
		check(t, func() {
			s.tpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(float64(len(routes)+1)))
		})
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

	t.Run("replay: jobs queue with its own DLQ, worker grants, the API starts jobs", func(t *testing.T) {
		arn := func(id string) obj { return obj{"Fn::GetAtt": arr{id, "Arn"}} }
		s.hasProperties(t, "AWS::SQS::Queue", s.replayJobs, obj{
			"RedrivePolicy":     assertions.Match_ObjectLike(&obj{"maxReceiveCount": 5}),
			"VisibilityTimeout": 1800,
		})
		s.hasProperties(t, "AWS::Lambda::Function", s.replayFn, obj{
			"Timeout": 300,
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_REPLAY_QUEUE_URL":   refTo(s.replayJobs),
				"HOOKLINE_DELIVERY_QUEUE_URL": refTo(s.deliveryQueue),
				"HOOKLINE_DLQ_URL":            refTo(s.deadLetter),
				"HOOKLINE_REPLAY_RATE":        "10",
			})},
		})
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
				"FunctionName":          refTo(s.replayFn),
				"EventSourceArn":        arn(s.replayJobs),
				"BatchSize":             1,
				"FunctionResponseTypes": arr{"ReportBatchItemFailures"},
			})
		})
		replay := s.rolePolicy(t, s.replayFn)
		require.True(t, allows(replay, "sqs:SendMessage", arn(s.deliveryQueue)), "the worker sends replayed messages")
		require.True(t, allows(replay, "sqs:ReceiveMessage", arn(s.deadLetter)), "the worker reads the DLQ (sweep, redrive)")
		require.True(t, allows(replay, "sqs:DeleteMessage", arn(s.deadLetter)))
		require.True(t, allows(replay, "sqs:SendMessage", arn(s.replayJobs)), "the worker schedules its next step")
		apiFn := s.rolePolicy(t, s.apiFn)
		require.True(t, allows(apiFn, "sqs:SendMessage", arn(s.replayJobs)), "the API starts jobs")
		require.False(t, mentions(apiFn, arn(s.deliveryQueue)), "the API never sends deliveries itself")
		require.False(t, mentions(s.rolePolicy(t, s.enqueueFn), arn(s.replayJobs)))
	})

	t.Run("operations: every alarm notifies the topic, on ALARM and OK", func(t *testing.T) {
		topic := dig(t, s.json, "Outputs", "AlarmTopicARN", "Value", "Ref").(string)
		var alarms *map[string]*map[string]any
		check(t, func() { alarms = s.tpl.FindResources(jsii.String("AWS::CloudWatch::Alarm"), nil) })
		// DLQ, enqueue failures, replay jobs stuck, per-tenant DLQ, oldest
		// delivery, iterator age, rejected items, errors and throttles of 4 functions.
		require.Len(t, *alarms, 3+4+2*4)
		for id, a := range *alarms {
			props := roundTrip(t, a)["Properties"].(obj)
			require.Contains(t, fmt.Sprint(props["AlarmActions"]), topic, "alarm %s notifies the topic", id)
			require.Contains(t, fmt.Sprint(props["OKActions"]), topic, "alarm %s tells when it is OK again", id)
			require.NotEmpty(t, props["AlarmDescription"], "alarm %s says what to do", id)
		}
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

	t.Run("operations: queue age, iterator age, rejected items, function errors and throttles", func(t *testing.T) {
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

	t.Run("operations: depth gauges scheduled every minute onto the jobs queue; dashboard", func(t *testing.T) {
		check(t, func() {
			s.tpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), obj{
				"ScheduleExpression": "rate(1 minute)",
				"Targets": assertions.Match_ArrayWith(&arr{assertions.Match_ObjectLike(&obj{
					"Arn":   obj{"Fn::GetAtt": arr{s.replayJobs, "Arn"}},
					"Input": `{"gauges":true}`,
				})}),
			})
		})
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

	t.Run("deliver environment: retry schedule, queues, state table, allowlist", func(t *testing.T) {
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
	})

	t.Run("enqueue environment: delivery queue and state table", func(t *testing.T) {
		s.hasProperties(t, "AWS::Lambda::Function", s.enqueueFn, obj{
			"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{
				"HOOKLINE_DELIVERY_QUEUE_URL": refTo(s.deliveryQueue),
				"HOOKLINE_STATE_TABLE":        refTo(s.stateTable),
				"HOOKLINE_DLQ_URL":            assertions.Match_Absent(),
			})},
		})
	})

	t.Run("stream mapping: outbox stream to enqueue, partial failures, parked on failure", func(t *testing.T) {
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
			"FunctionResponseTypes":      assertions.Match_ArrayEquals(&arr{"ReportBatchItemFailures"}),
			"BisectBatchOnFunctionError": true,
			"MaximumRetryAttempts":       10,
			"MaximumRecordAgeInSeconds":  86400,
			"DestinationConfig":          obj{"OnFailure": obj{"Destination": dest}},
		})
		require.Equal(t, getAtt(s.enqueueFails, "Arn"), roundTrip(t, dest.AsObject()))
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
		})
		check(t, func() { s.tpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(3)) })
	})

	t.Run("deliver reserved concurrency", func(t *testing.T) {
		var reserved any = assertions.Match_Absent()
		if w.reserved != 0 {
			reserved = w.reserved
		}
		s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{"ReservedConcurrentExecutions": reserved})
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
			"DeadLetterQueueARN", "EnqueueFailureQueueURL", "EnqueueFunctionName",
			"DeliverFunctionName", "DLQDepthAlarmName", "MaxReceiveCount",
		} {
			require.Contains(t, outputs, name)
		}
		// The Refs behind the outputs point at resources of the right type.
		s.resource(t, s.outboxTable, "AWS::DynamoDB::Table")
		s.resource(t, s.stateTable, "AWS::DynamoDB::Table")
		for _, q := range []string{s.deliveryQueue, s.deadLetter, s.enqueueFails} {
			s.resource(t, q, "AWS::SQS::Queue")
		}
		s.resource(t, s.enqueueFn, "AWS::Lambda::Function")
		s.resource(t, s.deliverFn, "AWS::Lambda::Function")
		s.resource(t, s.dlqAlarm, "AWS::CloudWatch::Alarm")
		require.Len(t, map[string]bool{s.deliveryQueue: true, s.deadLetter: true, s.enqueueFails: true}, 3)
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
		require.False(t, allows(deliver, "sqs:SendMessage", getAtt(s.deliveryQueue, "Arn")), "deliver may send to the delivery queue")

		for name, stmts := range map[string][]statement{"deliver": deliver, "enqueue": enqueue} {
			for _, st := range stmts {
				for _, a := range st.Actions {
					require.Falsef(t, a == "*" || strings.HasSuffix(a, ":*"), "%s role allows wildcard action %q", name, a)
				}
			}
		}
	})
}

func TestStackDefaults(t *testing.T) {
	start := time.Now()
	s := synth(t, HooklineStackProps{})
	t.Logf("synthesized default stack in %s", time.Since(start).Round(time.Millisecond))
	require.Len(t, retry.DefaultSchedule, 8)
	stackChecks(t, s, want{
		schedule:        retry.DefaultSchedule,
		arch:            "arm64",
		deliverTimeout:  60 * time.Second,
		maxConcurrency:  10,
		alarmThreshold:  100,
		allowCIDRs:      "",
		tenantThreshold: 100,
	})
}

func TestStackCustom(t *testing.T) {
	schedule := []time.Duration{0, 10 * time.Second, time.Minute}
	start := time.Now()
	s := synth(t, HooklineStackProps{
		Architecture:               "x86_64",
		Retry:                      retry.Policy{Schedule: schedule},
		DeliverTimeout:             90 * time.Second,
		DeliverMaxConcurrency:      5,
		DeliverReservedConcurrency: 20,
		AllowCIDRs:                 []string{"127.0.0.0/8", "10.0.0.0/8"},
		DLQAlarmThreshold:          7,
		TenantDLQAlarmThreshold:    250,
		EnqueueFailuresThreshold:   3,
	})
	t.Logf("synthesized custom stack in %s", time.Since(start).Round(time.Millisecond))
	stackChecks(t, s, want{
		schedule:             schedule,
		arch:                 "x86_64",
		deliverTimeout:       90 * time.Second,
		maxConcurrency:       5,
		reserved:             20,
		alarmThreshold:       7,
		allowCIDRs:           "127.0.0.0/8,10.0.0.0/8",
		tenantThreshold:      250,
		enqueueFailThreshold: 3,
	})
}

func TestPropsValidation(t *testing.T) {
	refused := func(t *testing.T, p HooklineStackProps, wantErr string) {
		t.Helper()
		_, err := p.withDefaults()
		require.ErrorContains(t, err, wantErr)
	}
	accepted := func(t *testing.T, p HooklineStackProps) HooklineStackProps {
		t.Helper()
		got, err := p.withDefaults()
		require.NoError(t, err)
		return got
	}

	t.Run("zero value gets the documented defaults", func(t *testing.T) {
		p := accepted(t, HooklineStackProps{})
		require.Equal(t, "arm64", p.Architecture)
		require.Equal(t, "dist/arm64", p.AssetDir)
		require.Equal(t, 15*time.Second, p.RequestTimeout)
		require.Equal(t, 60*time.Second, p.DeliverTimeout)
		require.Equal(t, 10, p.DeliverMaxConcurrency)
		require.Equal(t, 0, p.DeliverReservedConcurrency)
		require.Equal(t, 100, p.DLQAlarmThreshold)
		require.Equal(t, "INFO", p.LogLevel)
		require.Equal(t, 8, p.Retry.Attempts())
	})
	t.Run("schedule step over 12h refused", func(t *testing.T) {
		refused(t, HooklineStackProps{Retry: retry.Policy{Schedule: []time.Duration{0, 12*time.Hour + time.Second}}}, "12h")
		accepted(t, HooklineStackProps{Retry: retry.Policy{Schedule: []time.Duration{0, 12 * time.Hour}}})
	})
	t.Run("reserved concurrency not above max concurrency refused", func(t *testing.T) {
		refused(t, HooklineStackProps{DeliverReservedConcurrency: 10}, "reserved concurrency 10 must exceed max concurrency 10")
		refused(t, HooklineStackProps{DeliverMaxConcurrency: 50, DeliverReservedConcurrency: 20}, "reserved concurrency")
		accepted(t, HooklineStackProps{DeliverReservedConcurrency: 11})
	})
	t.Run("max concurrency outside 2..1000 refused", func(t *testing.T) {
		refused(t, HooklineStackProps{DeliverMaxConcurrency: 1}, "max concurrency 1")
		refused(t, HooklineStackProps{DeliverMaxConcurrency: 1001}, "max concurrency 1001")
	})
	t.Run("bad architecture refused", func(t *testing.T) {
		for _, a := range []string{"amd64", "aarch64", "host", "ARM64"} {
			refused(t, HooklineStackProps{Architecture: a}, fmt.Sprintf("architecture %q", a))
		}
		require.Equal(t, "dist/x86_64", accepted(t, HooklineStackProps{Architecture: "x86_64"}).AssetDir)
	})
	t.Run("deliver timeout must exceed request timeout by 5s", func(t *testing.T) {
		refused(t, HooklineStackProps{DeliverTimeout: 19 * time.Second}, "deliver timeout 19s must exceed request timeout 15s")
		refused(t, HooklineStackProps{RequestTimeout: 60 * time.Second}, "deliver timeout 1m0s must exceed request timeout 1m0s")
		accepted(t, HooklineStackProps{DeliverTimeout: 20 * time.Second})
		refused(t, HooklineStackProps{DeliverTimeout: 16 * time.Minute}, "15m")
	})
	t.Run("bad AllowCIDRs refused", func(t *testing.T) {
		for _, c := range []string{"127.0.0.1", "10.0.0.0/33", "localhost", ""} {
			app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
			_, err := NewHooklineStack(app, "Bad", &HooklineStackProps{AllowCIDRs: []string{"127.0.0.0/8", c}})
			require.ErrorContains(t, err, fmt.Sprintf("allow CIDR %q", c))
		}
	})
}

func TestPropsFromContext(t *testing.T) {
	from := func(ctx map[string]string) (*HooklineStackProps, string, error) {
		return propsFromContext(func(k string) string { return ctx[k] })
	}

	t.Run("empty context: defaults", func(t *testing.T) {
		p, name, err := from(nil)
		require.NoError(t, err)
		require.Equal(t, "Hookline", name)
		require.Empty(t, p.Architecture)
		require.Nil(t, p.Retry.Schedule)
		require.Nil(t, p.AllowCIDRs)
	})
	t.Run("host maps to the machine architecture", func(t *testing.T) {
		p, _, err := from(map[string]string{"architecture": "host"})
		require.NoError(t, err)
		wantArch := map[string]string{"amd64": "x86_64", "arm64": "arm64"}[runtime.GOARCH]
		if wantArch == "" {
			t.Skipf("no Lambda architecture for GOARCH %s", runtime.GOARCH)
		}
		require.Equal(t, wantArch, p.Architecture)
	})
	t.Run("explicit architecture passes through", func(t *testing.T) {
		p, _, err := from(map[string]string{"architecture": "x86_64", "assetDir": "somewhere", "stackName": "Local"})
		require.NoError(t, err)
		require.Equal(t, "x86_64", p.Architecture)
		require.Equal(t, "somewhere", p.AssetDir)
	})
	t.Run("retrySchedule, maxAge and allowCIDRs parsed", func(t *testing.T) {
		p, name, err := from(map[string]string{
			"retrySchedule": "0s, 5s,1m",
			"maxAge":        "2h",
			"allowCIDRs":    "127.0.0.0/8, 10.0.0.0/8",
			"stackName":     "Local",
		})
		require.NoError(t, err)
		require.Equal(t, "Local", name)
		require.Equal(t, []time.Duration{0, 5 * time.Second, time.Minute}, p.Retry.Schedule)
		require.Equal(t, 2*time.Hour, p.Retry.MaxAge)
		require.Equal(t, []string{"127.0.0.0/8", "10.0.0.0/8"}, p.AllowCIDRs)
		d, err := p.withDefaults()
		require.NoError(t, err)
		require.Equal(t, 3, d.Retry.Attempts())
	})
	t.Run("invalid retrySchedule names the context key", func(t *testing.T) {
		for _, s := range []string{"0s,13h", "0s,soon", "0s,,5s"} {
			_, _, err := from(map[string]string{"retrySchedule": s})
			require.ErrorContains(t, err, "context retrySchedule")
		}
		_, _, err := from(map[string]string{"retrySchedule": "0s,13h"})
		require.ErrorContains(t, err, "12h")
	})
	t.Run("invalid maxAge names the context key", func(t *testing.T) {
		_, _, err := from(map[string]string{"maxAge": "a day"})
		require.ErrorContains(t, err, "context maxAge")
	})
}

func TestMaxAgeBoundedByQueueRetention(t *testing.T) {
	_, err := HooklineStackProps{Retry: retry.Policy{MaxAge: 14 * 24 * time.Hour}}.withDefaults()
	require.ErrorContains(t, err, "expire silently")
	_, err = HooklineStackProps{Retry: retry.Policy{MaxAge: MaxEventAge}}.withDefaults()
	require.NoError(t, err)
}

func TestFaultsOnlyWhenAsked(t *testing.T) {
	_, err := HooklineStackProps{Faults: "disk_full:1"}.withDefaults()
	require.ErrorContains(t, err, "unknown fault point")
	props, name, err := propsFromContext(func(k string) string {
		return map[string]string{"faults": "deliver_crash:0.01", "deliverTimeout": "20s"}[k]
	})
	require.NoError(t, err)
	require.Equal(t, "Hookline", name)
	require.Equal(t, "deliver_crash:0.01", props.Faults)
	require.Equal(t, 20*time.Second, props.DeliverTimeout)
	env := deliverEnv(HooklineStackProps{})
	require.NotContains(t, env, "HOOKLINE_FAULTS", "no fault configuration unless asked")
}
