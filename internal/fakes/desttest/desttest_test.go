package desttest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/fakes/awsfake"
	"github.com/hookline/hookline/internal/fakes/desttest"
	"github.com/hookline/hookline/internal/fakes/ebfake"
	"github.com/hookline/hookline/internal/fakes/snsfake"
	"github.com/hookline/hookline/internal/fakes/stsfake"
)

// The fakes are reached over HTTP, as the sender reaches them, by a client
// that does not retry (a retried refusal would only be slower).
func config(t *testing.T, service string, fake http.Handler, key string) aws.Config {
	cfg := awsfake.Serve(t, map[string]http.Handler{service: fake}).Config(key)
	cfg.RetryMaxAttempts = 1
	return cfg
}

// STS's suite on stsfake, which forgives nothing: the caller is a role
// session (a Lambda function's credentials), the role trusts its account
// and requires an external id, and its maximum session is 2 hours so that
// the 7200 s case is refused by the chaining rule alone.
func TestSTSFakeConformance(t *testing.T) {
	t.Parallel()
	desttest.RunSTS(t, desttest.Target[desttest.STSBundle]{Setup: func(_ context.Context, t *testing.T) *desttest.STSBundle {
		const caller, role = "arn:aws:iam::111111111111:role/deliver", "arn:aws:iam::222222222222:role/hookline-case"
		f := stsfake.New(stsfake.Config{})
		f.AddCaller("ASIALAMBDA", stsfake.Caller{RoleARN: caller, Session: true})
		f.AddRole(stsfake.Role{ARN: role, Trusted: []string{"arn:aws:iam::111111111111:root"}, ExternalID: "hlx_case_external_id", MaxDuration: 7200})
		f.AddRole(stsfake.Role{ARN: role + "-untrusting", Trusted: []string{"333333333333"}})
		return &desttest.STSBundle{Client: sts.NewFromConfig(config(t, "sts", f, "ASIALAMBDA")), RoleARN: role,
			ExternalID: "hlx_case_external_id", UntrustedRoleARN: role + "-untrusting"}
	}})
}

// SNS's suite on snsfake, which forgives nothing and models no
// subscription: what reached the topic is what it accepted.
func TestSNSFakeConformance(t *testing.T) {
	t.Parallel()
	desttest.RunSNS(t, desttest.Target[desttest.SNSBundle]{Setup: func(_ context.Context, t *testing.T) *desttest.SNSBundle {
		const topic = "arn:aws:sns:" + awsfake.Region + ":222222222222:orders"
		f := snsfake.New(snsfake.Config{})
		f.AddTopic(topic)
		return &desttest.SNSBundle{Client: sns.NewFromConfig(config(t, "sns", f, "ASIAROLE")), TopicARN: topic,
			Arrived: func(context.Context, *testing.T, int, time.Duration) []string {
				var ids []string
				for _, m := range f.Published(topic) {
					ids = append(ids, m.Attributes["webhook-id"].Value)
				}
				return ids
			}}
	}})
}

// EventBridge's suite on ebfake, which forgives nothing and models no
// rule: what reached the bus is what it accepted.
func TestEventBridgeFakeConformance(t *testing.T) {
	t.Parallel()
	desttest.RunEventBridge(t, desttest.Target[desttest.EventBridgeBundle]{Setup: func(_ context.Context, t *testing.T) *desttest.EventBridgeBundle {
		const bus = "arn:aws:events:" + awsfake.Region + ":222222222222:event-bus/orders"
		f := ebfake.New(ebfake.Config{})
		f.AddBus(bus)
		return &desttest.EventBridgeBundle{Client: eventbridge.NewFromConfig(config(t, "events", f, "ASIAROLE")), BusARN: bus,
			Arrived: func(_ context.Context, t *testing.T, _ int, _ time.Duration) []string {
				var ids []string
				for _, e := range f.Events(bus) {
					var d struct {
						ID string `json:"webhook-id"`
					}
					require.NoError(t, json.Unmarshal([]byte(e.Detail), &d))
					ids = append(ids, d.ID)
				}
				return ids
			}}
	}})
}
