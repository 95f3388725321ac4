package hookline

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/require"
)

// AWS rules the local cloud does not enforce (docs/local-cloud.md), held by
// the template: the account's concurrency pool and the removal policies of
// the stack's data.

// requireKeptData asserts that resource id of type typ is kept on a stack
// deletion and on a replacement but not after a failed first create:
// RemovalPolicy RETAIN_ON_UPDATE_OR_DELETE, which CDK renders as below. A
// plain Retain would leave the tables and the key behind when the first
// deploy rolls back, and the next deploy would fail on them or start
// beside them.
func requireKeptData(t *testing.T, s *synthesized, id, typ string) {
	t.Helper()
	r := s.resource(t, id, typ)
	require.Equal(t, "RetainExceptOnCreate", r["DeletionPolicy"], "%s %s", typ, id)
	require.Equal(t, "Retain", r["UpdateReplacePolicy"], "%s %s", typ, id)
}

// requireKeptDataEverywhere applies requireKeptData to both tables and
// the signing secrets' key.
func requireKeptDataEverywhere(t *testing.T, s *synthesized) {
	t.Helper()
	requireKeptData(t, s, s.outboxTable, "AWS::DynamoDB::Table")
	requireKeptData(t, s, s.stateTable, "AWS::DynamoDB::Table")
	key := dig(t, s.json, "Outputs", "SecretsKeyARN", "Value", "Fn::GetAtt").(arr)[0].(string)
	requireKeptData(t, s, key, "AWS::KMS::Key")
	var tables, keys *map[string]*map[string]any
	check(t, func() {
		tables = s.tpl.FindResources(jsii.String("AWS::DynamoDB::Table"), nil)
		keys = s.tpl.FindResources(jsii.String("AWS::KMS::Key"), nil)
	})
	require.Len(t, *tables, 2)
	require.Len(t, *keys, 1)
}

// sqsMappingCaps are the MaximumConcurrency of the template's SQS event
// source mappings, by function and queue.
func sqsMappingCaps(t *testing.T, s *synthesized) map[string]float64 {
	t.Helper()
	var mappings *map[string]*map[string]any
	check(t, func() { mappings = s.tpl.FindResources(jsii.String("AWS::Lambda::EventSourceMapping"), nil) })
	caps := map[string]float64{}
	for id, m := range *mappings {
		props := roundTrip(t, m)["Properties"].(obj)
		source, ok := props["EventSourceArn"].(obj)["Fn::GetAtt"].(arr)
		if !ok || dig(t, s.json, "Resources", source[0].(string), "Type") != "AWS::SQS::Queue" {
			continue
		}
		limit, ok := dig(t, props, "ScalingConfig", "MaximumConcurrency").(float64)
		require.True(t, ok, "mapping %s has a MaximumConcurrency", id)
		caps[fmt.Sprintf("%s<-%s", dig(t, props, "FunctionName", "Ref"), source[0])] = limit
	}
	return caps
}

// smallAccountLimit is the concurrency limit a new account may have.
const smallAccountLimit = 10

// TestSmallAccountProfile: with smallAccount, a stack that a 10-execution
// account can create (no reservation: AWS keeps 100 unreserved), whose SQS
// mappings together run fewer executions than the account has, with room
// left for enqueue and one API request, so each mapping's cap stays below
// what its function can get and a throttle does not burn a receive.
func TestSmallAccountProfile(t *testing.T) {
	r, err := Reservations(&Props{SmallAccount: true})
	require.NoError(t, err)
	require.Empty(t, r, "the profile reserves nothing")
	r, err = Reservations(nil)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"deliver": 32, "api": 60, "replay": 8}, r, "the defaults need a limit of 200")
	_, err = Reservations(&Props{SmallAccount: true, APIReservedConcurrency: 5})
	require.ErrorContains(t, err, "the small-account profile reserves none")

	s := synth(t, Props{SmallAccount: true})
	for _, fn := range []string{s.enqueueFn, s.deliverFn, s.apiFn, s.replayFn} {
		s.hasProperties(t, "AWS::Lambda::Function", fn, obj{"ReservedConcurrentExecutions": assertions.Match_Absent()})
	}
	caps := sqsMappingCaps(t, s)
	require.Equal(t, map[string]float64{
		s.deliverFn + "<-" + s.deliveryQueue: 2,
		s.deliverFn + "<-" + s.laneQueue:     2,
		s.replayFn + "<-" + s.jobsQueue:      2,
		s.replayFn + "<-" + s.replayOps:      2,
	}, caps, "every SQS mapping at 2, the least SQS takes")
	total := 0.0
	for _, c := range caps {
		total += c
	}
	// What is left for enqueue (one execution per active stream shard: a
	// new outbox table has one) and the API.
	require.LessOrEqual(t, total, float64(smallAccountLimit-2), "the SQS mappings leave 2 of a 10-execution account to enqueue and the API")
	// Enqueue has no SQS mapping: the deferred fan-out queue's 2 would
	// leave the account nothing for enqueue and the API. It fans out
	// inline, told of no fan-out queue, and may send to none.
	for k := range caps {
		require.False(t, strings.HasPrefix(k, s.enqueueFn+"<-"), "enqueue consumes %s in the small-account profile", k)
	}
	env := dig(t, s.resource(t, s.enqueueFn, "AWS::Lambda::Function"), "Properties", "Environment", "Variables").(obj)
	require.NotContains(t, env, "HOOKLINE_FANOUT_QUEUE_URL", "no deferral")
	require.False(t, mentions(s.rolePolicy(t, s.enqueueFn), s.fanOutQueue), "enqueue may not send to the unused fan-out queue")
	// enqueue runs one invocation per shard, as before the parallelization
	// factor was a prop.
	check(t, func() {
		s.tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), obj{
			"FunctionName": refTo(s.enqueueFn), "ParallelizationFactor": 1,
		})
	})
	// The endpoint gate stays below the pool.
	s.hasProperties(t, "AWS::Lambda::Function", s.deliverFn, obj{
		"Environment": obj{"Variables": assertions.Match_ObjectLike(&obj{"HOOKLINE_ENDPOINT_CONCURRENCY": "1"})},
	})
	requireKeptDataEverywhere(t, s)
}
