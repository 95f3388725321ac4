package hookline_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/hookline/hookline/infra/hookline"
	"github.com/stretchr/testify/require"
)

type obj = map[string]any

// builtFunctions is a folder of stand-in bootstraps, one per function, as
// `make build` would leave them (the template does not run them).
func builtFunctions(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, fn := range []string{"enqueue", "deliver", "api", "replay"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, fn), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, fn, "bootstrap"), []byte(fn), 0o755))
	}
	return dir
}

// TestConsumerApp builds an app as a user writes one: a stack of their
// own, a producer Lambda of their own granted outbox write, and two
// hookline instances with non-default props in that one stack. It holds
// the producer's grant to exactly the outbox write on its instance's table,
// each instance's functions to their own tables and queues, and every
// physical name in the template to be unique.
func TestConsumerApp(t *testing.T) {
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	stack := awscdk.NewStack(app, jsii.String("Shop"), nil)
	producer := awslambda.NewFunction(stack, jsii.String("OrdersProducer"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_NODEJS_22_X(),
		Handler: jsii.String("index.handler"),
		Code:    awslambda.Code_FromInline(jsii.String("exports.handler = async () => ({})")),
	})
	code := hookline.CodeFromDir(builtFunctions(t))

	ordersProps := &hookline.Props{
		Code: code, AllowHTTP: false, AlarmEmail: "oncall@example.com",
		APIRateLimit: 5, APIBurstLimit: 10, DeliverReservedConcurrency: -1, APIReservedConcurrency: -1, ReplayReservedConcurrency: -1,
	}
	ordersProps.Retry = hookline.RetryPolicy{Schedule: []time.Duration{0, 10 * time.Second, time.Minute}, Mode: hookline.JitterNone}
	orders, err := hookline.New(stack, "Orders", ordersProps)
	require.NoError(t, err)
	billing, err := hookline.New(stack, "Billing", &hookline.Props{Code: code, AllowHTTP: true, DisableMessageLog: true})
	require.NoError(t, err)
	grant := orders.GrantWriteOutbox(producer)
	require.True(t, *grant.Success())
	operator := awsiam.NewRole(stack, jsii.String("Operator"), &awsiam.RoleProps{AssumedBy: awsiam.NewAccountRootPrincipal()})
	require.True(t, *billing.GrantOperatorKeyRead(operator).Success())
	billing.GrantEnqueueReprocess(operator)

	tpl := assertions.Template_FromStack(stack, nil)
	var doc struct {
		Resources map[string]struct {
			Type       string
			Properties obj
		}
	}
	b, err := json.Marshal(tpl.ToJSON())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	logicalID := func(el awscdk.CfnElement) string { return *stack.GetLogicalId(el) }
	outboxOf := func(h *hookline.Hookline) string {
		return logicalID(h.OutboxTable.Node().DefaultChild().(awscdk.CfnElement))
	}

	t.Run("the producer may PutItem on its instance's outbox table, and nothing else", func(t *testing.T) {
		role := logicalID(producer.Role().Node().DefaultChild().(awscdk.CfnElement))
		var statements []any
		for _, r := range doc.Resources {
			if r.Type != "AWS::IAM::Policy" || !slices.ContainsFunc(r.Properties["Roles"].([]any), func(v any) bool {
				return v.(obj)["Ref"] == role
			}) {
				continue
			}
			statements = append(statements, r.Properties["PolicyDocument"].(obj)["Statement"].([]any)...)
		}
		require.Equal(t, []any{obj{
			"Action": "dynamodb:PutItem", "Effect": "Allow",
			"Resource": obj{"Fn::GetAtt": []any{outboxOf(orders), "Arn"}},
		}}, statements)
		require.NotEqual(t, outboxOf(orders), outboxOf(billing))
	})

	t.Run("the operator's role reads Billing's operator key and holds its reprocess policy", func(t *testing.T) {
		secret := logicalID(billing.OperatorKey.Node().DefaultChild().(awscdk.CfnElement))
		role := logicalID(operator.Node().DefaultChild().(awscdk.CfnElement))
		check(t, func() {
			tpl.HasResourceProperties(jsii.String("AWS::IAM::Policy"), obj{
				"Roles": []any{obj{"Ref": role}},
				"PolicyDocument": obj{"Statement": []any{obj{
					"Action": []any{"secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"}, "Effect": "Allow", "Resource": obj{"Ref": secret},
				}}},
			})
		})
		policy := logicalID(billing.EnqueueReprocessPolicy.Node().DefaultChild().(awscdk.CfnElement))
		require.Equal(t, []any{obj{"Ref": policy}}, doc.Resources[role].Properties["ManagedPolicyArns"])
	})

	t.Run("each instance's functions point at their own tables and queues", func(t *testing.T) {
		for prefix, h := range map[string]*hookline.Hookline{"Orders": orders, "Billing": billing} {
			fns := []awslambda.Function{h.Functions.Enqueue, h.Functions.Deliver, h.Functions.API, h.Functions.Replay}
			for _, fn := range fns {
				fnID := logicalID(fn.Node().DefaultChild().(awscdk.CfnElement))
				require.True(t, strings.HasPrefix(fnID, prefix), "%s is under %s", fnID, prefix)
				vars := doc.Resources[fnID].Properties["Environment"].(obj)["Variables"].(obj)
				refs := referenced(vars)
				require.NotEmpty(t, refs, "%s's environment names resources", fnID)
				for _, ref := range refs {
					require.Truef(t, strings.HasPrefix(ref, prefix), "%s's environment refers to %s, not a resource of its own instance", fnID, ref)
				}
				require.Contains(t, refs, logicalID(h.StateTable.Node().DefaultChild().(awscdk.CfnElement)))
			}
			// The alarm list of the console: the instance's alarms only.
			api := doc.Resources[logicalID(h.Functions.API.Node().DefaultChild().(awscdk.CfnElement))]
			require.Equal(t, obj{"Fn::Join": []any{"", []any{obj{"Ref": "AWS::StackName"}, "." + prefix + "."}}},
				api.Properties["Environment"].(obj)["Variables"].(obj)["HOOKLINE_ALARM_NAME_PREFIX"])
			// Every alarm under the instance is named with it, and no
			// other's is.
			for id, r := range doc.Resources {
				if r.Type != "AWS::CloudWatch::Alarm" {
					continue
				}
				b, err := json.Marshal(r.Properties["AlarmName"])
				require.NoError(t, err)
				name := string(b)
				require.Equal(t, strings.HasPrefix(id, prefix), strings.Contains(name, `"`+"."+prefix+"."), "alarm %s: %s", id, name)
			}
		}
		queue := doc.Resources[logicalID(orders.DeliveryQueue.Node().DefaultChild().(awscdk.CfnElement))]
		require.EqualValues(t, 3, queue.Properties["RedrivePolicy"].(obj)["maxReceiveCount"], "Orders' own retry schedule")
		require.Equal(t, 3, orders.MaxReceiveCount)
		require.Equal(t, 8, billing.MaxReceiveCount, "Billing's default schedule")
		deliver := doc.Resources[logicalID(orders.Functions.Deliver.Node().DefaultChild().(awscdk.CfnElement))]
		require.Equal(t, "none", deliver.Properties["Environment"].(obj)["Variables"].(obj)["HOOKLINE_RETRY_JITTER_MODE"], "Orders' own jitter")
	})

	t.Run("no physical name is set twice", func(t *testing.T) {
		// Each resource type's own name property: set, it is the physical
		// name, which must be unique (in the account, for most types).
		nameKey := map[string]string{
			"AWS::DynamoDB::Table": "TableName", "AWS::SQS::Queue": "QueueName", "AWS::Lambda::Function": "FunctionName",
			"AWS::Events::EventBus": "Name", "AWS::Events::Rule": "Name", "AWS::CloudWatch::Alarm": "AlarmName",
			"AWS::SecretsManager::Secret": "Name", "AWS::Logs::LogGroup": "LogGroupName", "AWS::SNS::Topic": "TopicName",
			"AWS::IAM::Role": "RoleName", "AWS::CloudWatch::Dashboard": "DashboardName", "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
			"AWS::IAM::Policy": "PolicyName", "AWS::ApiGatewayV2::Api": "Name", "AWS::KMS::Alias": "AliasName",
		}
		seen := map[string]string{}
		named := map[string]int{}
		for logical, r := range doc.Resources {
			v, ok := r.Properties[nameKey[r.Type]]
			if !ok {
				continue
			}
			name, err := json.Marshal(v)
			require.NoError(t, err)
			key := r.Type + " " + string(name)
			require.NotContainsf(t, seen, key, "%s and %s have the same %s", seen[key], logical, nameKey[r.Type])
			seen[key] = logical
			named[r.Type]++
		}
		require.Equal(t, 2, named["AWS::ApiGatewayV2::Api"], "an HTTP API always has a name: the two differ")
		require.Positive(t, named["AWS::IAM::Policy"], "the walk found the functions' policies")
	})

	t.Run("a subscription to each alarm topic only where asked", func(t *testing.T) {
		tpl.ResourcePropertiesCountIs(jsii.String("AWS::SNS::Subscription"), obj{"Protocol": "email", "Endpoint": "oncall@example.com"}, jsii.Number(1))
	})
}

// check runs a jsii assertion, which panics on failure, as a test failure.
func check(t *testing.T, assert func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatal(r)
		}
	}()
	assert()
}

// referenced is the logical IDs a value refers to (Ref, Fn::GetAtt), at any
// depth; pseudo parameters (AWS::...) left out.
func referenced(v any) []string {
	var out []string
	switch x := v.(type) {
	case obj:
		if ref, ok := x["Ref"].(string); ok && !strings.HasPrefix(ref, "AWS::") {
			out = append(out, ref)
		}
		if att, ok := x["Fn::GetAtt"].([]any); ok {
			out = append(out, att[0].(string))
		}
		for _, e := range x {
			out = append(out, referenced(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, referenced(e)...)
		}
	}
	return out
}
