package hookline

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/internal/api"
	"github.com/hookline/hookline/internal/background"
	"github.com/hookline/hookline/internal/deliver"
	"github.com/hookline/hookline/internal/enqueue"
	"github.com/hookline/hookline/internal/fnenv"
	"github.com/hookline/hookline/internal/jobs"
	"github.com/hookline/hookline/internal/sealing"
	"github.com/hookline/hookline/internal/store"
	outboxpkg "github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// methods are the method names of the interface T.
func methods[T any]() []string {
	typ := reflect.TypeFor[T]()
	var out []string
	for i := range typ.NumMethod() {
		out = append(out, typ.Method(i).Name)
	}
	return out
}

// portMethods are the store methods a handler of type typ can reach: the
// methods of every store port it holds, that is of each interface-typed
// field whose methods are store methods (a handler's Store is one
// interface composed of small ports: its methods are theirs), its
// struct-typed fields' included, so that a port held in one is seen too.
// An interface that mixes store methods with others fails the test: a
// store method would hide in it.
func portMethods(t *testing.T, typ reflect.Type) []string {
	t.Helper()
	var out []string
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			switch f.Type.Kind() {
			case reflect.Struct:
				walk(f.Type, path+"."+f.Name)
			case reflect.Interface:
				var ours, others []string
				for m := range f.Type.NumMethod() {
					name := f.Type.Method(m).Name
					if _, ok := store.Calls[name]; ok {
						ours = append(ours, name)
					} else {
						others = append(others, name)
					}
				}
				require.True(t, len(ours) == 0 || len(others) == 0, "%s.%s mixes store methods %v with others %v", path, f.Name, ours, others)
				out = append(out, ours...)
			}
		}
	}
	walk(typ, typ.String())
	slices.Sort(out)
	return slices.Compact(out)
}

// storeMethods are the store methods each function calls: those of the
// store ports its handler holds (what the handler can reach). The api
// function also runs jobs.Starter.Start, whose starter it gives the
// jobs.Records and jobs.Slots ports (functions/api).
func storeMethods(t *testing.T) map[string][]string {
	return map[string][]string{
		"deliver": portMethods(t, reflect.TypeFor[deliver.Handler]()),
		"enqueue": portMethods(t, reflect.TypeFor[enqueue.Handler]()),
		"replay":  portMethods(t, reflect.TypeFor[background.Worker]()),
		"api":     append(portMethods(t, reflect.TypeFor[api.Server]()), append(methods[jobs.Records](), methods[jobs.Slots]()...)...),
	}
}

// grantSet is a role's permissions as a set: for each resource (and
// condition), the sorted actions allowed on it.
type grantSet map[string][]string

func grantKey(resource, condition any) string {
	b, _ := json.Marshal(struct{ Resource, Condition any }{resource, condition})
	return string(b)
}

func (g grantSet) add(resource, condition any, actions ...string) {
	k := grantKey(resource, condition)
	for _, a := range actions {
		if !slices.Contains(g[k], a) {
			g[k] = append(g[k], a)
		}
	}
	slices.Sort(g[k])
}

// grantsOf is what a function's role allows, from its inline policies.
func (s *synthesized) grantsOf(t *testing.T, fnID string) grantSet {
	t.Helper()
	g := grantSet{}
	for _, st := range s.rolePolicy(t, fnID) {
		if st.Effect == "Deny" && slices.Equal(st.Actions, []string{"sts:AssumeRole"}) {
			continue // the own account's and hookline's roles (TestDestinationRoles)
		}
		require.Equal(t, "Allow", st.Effect)
		for _, r := range st.Resource {
			g.add(roundTripAny(t, r), roundTripAny(t, st.Condition), st.Actions...)
		}
	}
	return g
}

func roundTripAny(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// stateGrants are the state table grants the methods need, from
// store.Calls: item actions on the table, Query on the index where a method
// queries it.
func stateGrants(t *testing.T, g grantSet, s *synthesized, names []string) {
	t.Helper()
	table := getAtt(s.stateTable, "Arn")
	for _, m := range names {
		calls, ok := store.Calls[m]
		require.True(t, ok, "store.Calls does not list %s", m)
		for _, c := range calls {
			if c.Index {
				for _, ix := range []string{store.IndexTenant, store.IndexDead, store.IndexLog} {
					g.add(obj{"Fn::Join": arr{"", arr{table, "/index/" + ix}}}, nil, "dynamodb:"+c.Action)
				}
			} else if c.Action == "BatchWriteItem" {
				g.add(table, obj{"ForAllValues:StringLike": obj{"dynamodb:LeadingKeys": roundTripAny(t, outcomePages)}}, "dynamodb:"+c.Action) // outcome pages only
			} else {
				g.add(table, nil, "dynamodb:"+c.Action)
			}
		}
	}
}

// Each function's role allows exactly what its code calls: the state
// table's actions follow from the store methods it calls (store.Calls,
// which the store's tests hold to the code); the queue, stream, secret and
// key grants are listed here. An action added to a role, or a resource,
// fails this test, and so does one the code needs and the role lacks.
func TestLeastPrivilege(t *testing.T) {
	s := synth(t, Props{})
	keyOut := dig(t, s.json, "Outputs", "SecretsKeyARN", "Value", "Fn::GetAtt").(arr)
	key := getAtt(keyOut[0].(string), "Arn")
	purpose := obj{"StringEquals": obj{"kms:EncryptionContext:purpose": sealing.Purpose}}
	arn := func(id string) obj { return getAtt(id, "Arn") }
	// What an SQS event source mapping needs of its queue (CDK's
	// grantConsumeMessages; deliver and replay also call
	// ChangeMessageVisibility themselves).
	consume := []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}

	want := map[string]func(g grantSet){
		"deliver": func(g grantSet) {
			g.add(arn(s.deliveryQueue), nil, consume...)
			g.add(arn(s.deadLetter), nil, "sqs:SendMessage")    // permanent failures
			g.add(arn(s.deliveryQueue), nil, "sqs:SendMessage") // waiting messages sent again, delayed
			g.add(arn(s.laneQueue), nil, consume...)            // the tenant lane, its second mapping
			g.add(arn(s.laneQueue), nil, "sqs:SendMessage")     // waits from the lane, tenant_busy moved to it
			g.add(key, purpose, "kms:Decrypt")                  // signing secrets opened
			g.add(arn(s.outboxTable), nil, "dynamodb:PutItem")  // operational events
			g.add(arn(s.replayOps), nil, "sqs:SendMessage")     // delivery.dead windows' notices
			// The customers' roles, for the AWS destinations (Props.DestinationRoles).
			g.add(obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":iam::*:role/hookline-*"}}}, nil, "sts:AssumeRole")
		},
		"enqueue": func(g grantSet) {
			g.add(arn(s.deliveryQueue), nil, "sqs:SendMessage") // SendMessageBatch
			g.add(arn(s.laneQueue), nil, "sqs:SendMessage")     // a tenant's messages past laneAfter
			g.add(arn(s.fanOutQueue), nil, "sqs:SendMessage")   // a record's fan-out past its tenant's share, deferred
			g.add(arn(s.fanOutQueue), nil, consume...)          // the deferred fan-outs, its second mapping
			g.add(arn(s.operatorBus), nil, "events:PutEvents")  // operational events, to the operator's bus only
			// The message log's pages, in batches, and nothing else.
			g.add(arn(s.stateTable), obj{"ForAllValues:StringLike": obj{"dynamodb:LeadingKeys": arr{"TENANT#*#EVENTS#*"}}}, "dynamodb:BatchWriteItem")
			// The stream mapping (CDK's grantStreamRead) and its on-failure
			// destination (CDK's grantSendMessages), where enqueue also
			// parks the operational events the bus kept refusing.
			g.add("*", nil, "dynamodb:ListStreams")
			g.add(getAtt(s.outboxTable, "StreamArn"), nil, "dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator")
			g.add(arn(s.enqueueFails), nil, "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:SendMessage")
		},
		"api": func(g grantSet) {
			g.add(arn(s.jobsQueue), nil, "sqs:SendMessage")                   // jobs started
			g.add(arn(s.replayOps), nil, "sqs:SendMessage")                   // the operator's redrive
			g.add(refTo(s.operatorKey), nil, "secretsmanager:GetSecretValue") // the operator key
			g.add(key, purpose, "kms:Encrypt")                                // secrets sealed, never opened
			// The message log: Query on the outbox's message log index
			// only (by_tenant too while it is kept:
			// TestKeepLegacyMessageLogIndex).
			g.add(obj{"Fn::Join": arr{"", arr{arn(s.outboxTable), "/index/" + outboxpkg.IndexByTenantShard}}}, nil, "dynamodb:Query")
			// Published and test events; GetItem: a publish repeated, an
			// event of the message log.
			g.add(arn(s.outboxTable), nil, "dynamodb:GetItem", "dynamodb:PutItem")
			g.add(arn(s.deliveryQueue), nil, "sqs:SendMessage") // resends of delivered deliveries
			// The operator console's alarms: the stack's own only, by name
			// ("<stack>.Default.<path>": nameAlarms).
			g.add(obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":cloudwatch:", obj{"Ref": "AWS::Region"}, ":",
				obj{"Ref": "AWS::AccountId"}, ":alarm:", obj{"Ref": "AWS::StackName"}, ".Default.*"}}}, nil, "cloudwatch:DescribeAlarms")
		},
		"replay": func(g grantSet) {
			g.add(arn(s.deliveryQueue), nil, "sqs:SendMessage")
			g.add(arn(s.deadLetter), nil, "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage") // sweep, redrive, erasure
			g.add(arn(s.deadLetter), nil, "sqs:SendMessage")                                                                                  // the arrivals moved in
			g.add(arn(s.arrivals), nil, "sqs:DeleteMessage", "sqs:ReceiveMessage")                                                            // ... from their queue
			g.add(arn(s.jobsQueue), nil, consume...)
			g.add(arn(s.jobsQueue), nil, "sqs:SendMessage") // the next step
			g.add(arn(s.replayOps), nil, consume...)
			g.add(arn(s.replayOps), nil, "sqs:SendMessage")                                                                           // a redrive's next step, recovered jobs
			g.add(arn(s.outboxTable), nil, "dynamodb:PutItem", "dynamodb:DeleteItem")                                                 // delivery.dead summaries; an erased tenant's items
			g.add(arn(s.outboxTable), nil, "dynamodb:GetItem")                                                                        // a replay since a time rebuilds deliveries from their events
			g.add(obj{"Fn::Join": arr{"", arr{arn(s.outboxTable), "/index/" + outboxpkg.IndexByTenantShard}}}, nil, "dynamodb:Query") // an erased tenant's items, a replay's or a cancel's events: by the message log's index only
		},
	}
	fns := map[string]string{"deliver": s.deliverFn, "enqueue": s.enqueueFn, "api": s.apiFn, "replay": s.replayFn}
	storeMethods := storeMethods(t)
	t.Run("each function's store ports are seen", func(t *testing.T) {
		// Spelled out, so that a port the walk misses fails here.
		require.Equal(t, []string{"AddDeath", "AddEndpointStats", "AddEndpointTypeStats", "Delivery", "DisableEndpoint", "Endpoint", "EndpointStats", "Erased", "LoadWith", "MarkDeadBeforeLastAttempt", "MarkEndpointDegraded", "MarkGate", "RecordAttempt", "RecordEndpointHealth", "RecordFirstAttempts", "RecordResendAttempt", "ReleaseGate", "TakeGate", "TakeSlots"}, storeMethods["deliver"])
		require.Contains(t, storeMethods["api"], "EndpointTypeStats", "api.Stats (group_by=event_type)")
		require.Contains(t, storeMethods["replay"], "DeadWindow", "Store.DeadWindows")
		require.Equal(t, []string{"LoadWith", "PutRejection", "Tenant", "TenantEndpoints"}, storeMethods["enqueue"])
		require.Contains(t, storeMethods["replay"], "EraseTenantItems", "Worker.Erasures")
		require.Contains(t, storeMethods["replay"], "DLQDepths", "Worker.Depths")
		require.Contains(t, storeMethods["replay"], "ReconcileDLQDepth", "Worker.Reconciler")
		require.Contains(t, storeMethods["api"], "SaveJob", "jobs.Starter.Start")
	})
	for _, name := range slices.Sorted(maps.Keys(fns)) {
		t.Run(name+": exactly what it calls", func(t *testing.T) {
			expected := grantSet{}
			stateGrants(t, expected, s, storeMethods[name])
			want[name](expected)
			// Its own log group, and no other (no AWSLambdaBasicExecutionRole).
			logGroup := dig(t, s.resource(t, fns[name], "AWS::Lambda::Function"), "Properties", "LoggingConfig", "LogGroup", "Ref").(string)
			expected.add(arn(logGroup), nil, "logs:CreateLogStream", "logs:PutLogEvents") // its streams (<group ARN>:*)
			expected.add(obj{"Fn::Join": arr{"", arr{"arn:", obj{"Ref": "AWS::Partition"}, ":logs:", obj{"Ref": "AWS::Region"}, ":",
				obj{"Ref": "AWS::AccountId"}, ":log-group:", obj{"Ref": logGroup}}}}, nil, "logs:CreateLogStream", "logs:PutLogEvents") // the group
			got := s.grantsOf(t, fns[name])
			require.Equal(t, expected, got)
			t.Logf("%s role:\n%s", name, got)
		})
	}

	t.Run("deliver's state table actions", func(t *testing.T) {
		// Spelled out, so that the figure in the report is checked too.
		g := s.grantsOf(t, s.deliverFn)
		require.Equal(t, []string{"dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"}, g[grantKey(getAtt(s.stateTable, "Arn"), nil)])
		// Writes in batches: outcome pages only (a batch write's puts and
		// deletes cannot be told apart in IAM): no record, endpoint, key
		// or counter.
		cond := obj{"ForAllValues:StringLike": obj{"dynamodb:LeadingKeys": arr{"OUTCOMES#*"}}}
		require.Equal(t, []string{"dynamodb:BatchWriteItem"}, g[grantKey(getAtt(s.stateTable, "Arn"), cond)])
	})

	t.Run("no function role has a managed policy", func(t *testing.T) {
		for name, fn := range fns {
			role := dig(t, s.resource(t, fn, "AWS::Lambda::Function"), "Properties", "Role", "Fn::GetAtt").(arr)[0].(string)
			_, has := dig(t, s.resource(t, role, "AWS::IAM::Role"), "Properties").(obj)["ManagedPolicyArns"]
			require.False(t, has, "%s's role %s", name, role)
		}
	})

	t.Run("no role may Scan, write in batches but deliver's outcome pages and enqueue's message log pages, or use a wildcard action", func(t *testing.T) {
		var policies *map[string]*map[string]any
		check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::IAM::Policy"), nil) })
		require.NotEmpty(t, *policies)
		for id, p := range *policies {
			for _, raw := range dig(t, roundTrip(t, p), "Properties", "PolicyDocument", "Statement").(arr) {
				doc, _ := json.Marshal(raw.(obj)["Action"])
				for _, banned := range []string{"dynamodb:Scan", "dynamodb:PartiQL", ":*\"", "\"*\""} {
					require.NotContains(t, string(doc), banned, "policy %s", id)
				}
				if strings.Contains(string(doc), "dynamodb:BatchWriteItem") {
					require.Equal(t, `"dynamodb:BatchWriteItem"`, string(doc), "policy %s: a statement of its own", id)
					if strings.HasPrefix(id, "PipelineEnqueueRole") {
						require.Equal(t, obj{"ForAllValues:StringLike": obj{"dynamodb:LeadingKeys": arr{"TENANT#*#EVENTS#*"}}}, roundTripAny(t, raw.(obj)["Condition"]), "policy %s", id)
						continue
					}
					require.Equal(t, obj{"ForAllValues:StringLike": obj{"dynamodb:LeadingKeys": arr{"OUTCOMES#*"}}}, roundTripAny(t, raw.(obj)["Condition"]), "policy %s", id)
					require.True(t, strings.HasPrefix(id, "PipelineDeliverRole"), "policy %s: only deliver and enqueue write in batches", id)
				}
			}
		}
	})

	t.Run("only deliver may decrypt, only the api function encrypt", func(t *testing.T) {
		var policies *map[string]*map[string]any
		check(t, func() { policies = s.tpl.FindResources(jsii.String("AWS::IAM::Policy"), nil) })
		deliverRole := dig(t, s.resource(t, s.deliverFn, "AWS::Lambda::Function"), "Properties", "Role", "Fn::GetAtt").(arr)[0].(string)
		apiRole := dig(t, s.resource(t, s.apiFn, "AWS::Lambda::Function"), "Properties", "Role", "Fn::GetAtt").(arr)[0].(string)
		for id, p := range *policies {
			doc := roundTrip(t, p)
			roles := fmt.Sprint(dig(t, doc, "Properties", "Roles"))
			var actions []string
			for _, raw := range dig(t, doc, "Properties", "PolicyDocument", "Statement").(arr) {
				switch a := raw.(obj)["Action"].(type) {
				case string:
					actions = append(actions, a)
				case arr:
					for _, x := range a {
						actions = append(actions, x.(string))
					}
				}
			}
			if slices.Contains(actions, "kms:Decrypt") {
				require.Equal(t, fmt.Sprint(arr{refTo(deliverRole)}), roles, "policy %s lets another role decrypt", id)
			}
			if slices.Contains(actions, "kms:Encrypt") {
				require.Equal(t, fmt.Sprint(arr{refTo(apiRole)}), roles, "policy %s lets another role encrypt", id)
			}
			for _, a := range actions {
				if strings.HasPrefix(a, "kms:") {
					require.Contains(t, []string{"kms:Decrypt", "kms:Encrypt"}, a, "policy %s", id)
				}
			}
		}
	})

	t.Run("roles carry no managed policy but the basic execution role", func(t *testing.T) {
		for name, fn := range fns {
			role := dig(t, s.resource(t, fn, "AWS::Lambda::Function"), "Properties", "Role", "Fn::GetAtt").(arr)[0].(string)
			managed, _ := dig(t, s.resource(t, role, "AWS::IAM::Role"), "Properties").(obj)["ManagedPolicyArns"].(arr)
			for _, m := range managed {
				require.Contains(t, fmt.Sprint(m), ":iam::aws:policy/service-role/AWSLambdaBasicExecutionRole", "%s role", name)
			}
		}
	})

	t.Run("the signing secrets' key: rotated, kept (RETAIN_ON_UPDATE_OR_DELETE), named to the functions that use it", func(t *testing.T) {
		id := keyOut[0].(string)
		requireKeptData(t, s, id, "AWS::KMS::Key")
		s.hasProperties(t, "AWS::KMS::Key", id, obj{"EnableKeyRotation": true, "KeySpec": assertions.Match_Absent()})
		for _, fn := range []string{s.apiFn, s.deliverFn} {
			s.hasProperties(t, "AWS::Lambda::Function", fn, obj{
				"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{fnenv.VarSecretsKeyARN: key})},
			})
		}
		for _, fn := range []string{s.enqueueFn, s.replayFn} {
			s.hasProperties(t, "AWS::Lambda::Function", fn, obj{
				"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{fnenv.VarSecretsKeyARN: assertions.Match_Absent()})},
			})
		}
	})
}

// String renders a grant set one resource a line, for the test log.
func (g grantSet) String() string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(g)) {
		fmt.Fprintf(&b, "  %s: %s\n", k, strings.Join(g[k], ", "))
	}
	return b.String()
}

// The retention props reach the template: the DLQ's MessageRetentionPeriod
// (at most SQS's 14 days, which setRetentionDefaults holds it to) and every
// function's records' retention.
func TestRetentionInTheTemplate(t *testing.T) {
	for _, tc := range []struct {
		props          Props
		dlqSeconds     float64
		deliveryVarEnv string
	}{
		{Props{}, 14 * 24 * 3600, "360h0m0s"},
		{Props{DLQRetention: 3 * 24 * time.Hour, DeliveryRetention: 30 * 24 * time.Hour}, 3 * 24 * 3600, "720h0m0s"},
	} {
		s := synth(t, tc.props)
		dlq := s.resource(t, s.deadLetter, "AWS::SQS::Queue")["Properties"].(obj)
		require.Equal(t, tc.dlqSeconds, dlq["MessageRetentionPeriod"])
		require.LessOrEqual(t, dlq["MessageRetentionPeriod"].(float64), float64(14*24*3600), "SQS keeps a message at most 14 days")
		for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
			vars := dig(t, s.resource(t, fn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
			require.Equal(t, tc.deliveryVarEnv, vars["HOOKLINE_DELIVERY_RETENTION"], fn)
		}
	}
}

// With the message log off the outbox has no index, and the api function
// is not told the log is there (the message log routes answer 503): every
// grant it keeps is the log-on role's less the index Query and the resends'
// queue; it still publishes into the outbox.
func TestMessageLogOff(t *testing.T) {
	on, off := synth(t, Props{}), synth(t, Props{DisableMessageLog: true})
	outbox := off.resource(t, off.outboxTable, "AWS::DynamoDB::Table")["Properties"].(obj)
	require.NotContains(t, outbox, "GlobalSecondaryIndexes")
	vars := dig(t, off.resource(t, off.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.Equal(t, obj{"Ref": off.outboxTable}, vars["HOOKLINE_OUTBOX_TABLE"])
	require.NotContains(t, vars, "HOOKLINE_MESSAGE_LOG")
	onVars := dig(t, on.resource(t, on.apiFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.Equal(t, "sharded", onVars["HOOKLINE_MESSAGE_LOG"])
	want := on.grantsOf(t, on.apiFn)
	delete(want, grantKey(obj{"Fn::Join": arr{"", arr{getAtt(on.outboxTable, "Arn"), "/index/" + outboxpkg.IndexByTenantShard}}}, nil))
	delete(want, grantKey(getAtt(on.deliveryQueue, "Arn"), nil))
	require.Equal(t, "", vars["HOOKLINE_DELIVERY_QUEUE_URL"])
	require.Equal(t, roundTripAny(t, want), roundTripAny(t, off.grantsOf(t, off.apiFn)))

	// The erasure cannot find the tenant's outbox items without the index:
	// the replay worker loses its Query on it, and is told so.
	wantReplay := on.grantsOf(t, on.replayFn)
	delete(wantReplay, grantKey(obj{"Fn::Join": arr{"", arr{getAtt(on.outboxTable, "Arn"), "/index/" + outboxpkg.IndexByTenantShard}}}, nil))
	require.Equal(t, roundTripAny(t, wantReplay), roundTripAny(t, off.grantsOf(t, off.replayFn)))
	replayVars := dig(t, off.resource(t, off.replayFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.NotContains(t, replayVars, "HOOKLINE_MESSAGE_LOG")

	// enqueue writes no pages: neither told to nor allowed to.
	wantEnqueue := on.grantsOf(t, on.enqueueFn)
	delete(wantEnqueue, grantKey(getAtt(on.stateTable, "Arn"), obj{"ForAllValues:StringLike": obj{"dynamodb:LeadingKeys": arr{"TENANT#*#EVENTS#*"}}}))
	require.Equal(t, roundTripAny(t, wantEnqueue), roundTripAny(t, off.grantsOf(t, off.enqueueFn)))
	require.NotContains(t, dig(t, off.resource(t, off.enqueueFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj), "HOOKLINE_MESSAGE_LOG")
	require.Equal(t, "on", dig(t, on.resource(t, on.enqueueFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables", "HOOKLINE_MESSAGE_LOG"))
}

// TestKeepLegacyMessageLogIndex: by default the outbox has the sharded
// index alone, read by the api and the erasure ("sharded"); the upgrade's
// first step keeps by_tenant beside it, one index added (CloudFormation
// changes one index per update), and reads from it: the api and the erasure
// are granted by_tenant too, their environment says "on". The upgrade's
// last step is the default again: one index removed.
func TestKeepLegacyMessageLogIndex(t *testing.T) {
	on, dropped := synth(t, Props{KeepLegacyMessageLogIndex: true}), synth(t, Props{})
	gsis := dropped.resource(t, dropped.outboxTable, "AWS::DynamoDB::Table")["Properties"].(obj)["GlobalSecondaryIndexes"].(arr)
	require.Len(t, gsis, 1)
	require.Equal(t, outboxpkg.IndexByTenantShard, gsis[0].(obj)["IndexName"])
	kept := on.resource(t, on.outboxTable, "AWS::DynamoDB::Table")["Properties"].(obj)["GlobalSecondaryIndexes"].(arr)
	require.Len(t, kept, 2)
	require.ElementsMatch(t, []any{outboxpkg.IndexByTenant, outboxpkg.IndexByTenantShard}, []any{kept[0].(obj)["IndexName"], kept[1].(obj)["IndexName"]})
	legacy := obj{"Fn::Join": arr{"", arr{getAtt(on.outboxTable, "Arn"), "/index/" + outboxpkg.IndexByTenant}}}
	for _, fn := range []struct{ on, dropped string }{{on.apiFn, dropped.apiFn}, {on.replayFn, dropped.replayFn}} {
		want := on.grantsOf(t, fn.on)
		delete(want, grantKey(legacy, nil))
		require.Equal(t, roundTripAny(t, want), roundTripAny(t, dropped.grantsOf(t, fn.dropped)))
		vars := dig(t, dropped.resource(t, fn.dropped, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		require.Equal(t, "sharded", vars["HOOKLINE_MESSAGE_LOG"])
		onVars := dig(t, on.resource(t, fn.on, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
		require.Equal(t, "on", onVars["HOOKLINE_MESSAGE_LOG"], "by_tenant kept: read from it")
	}
}
