//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/tooling/harness"
	"github.com/hookline/hookline/verify"
	"github.com/stretchr/testify/require"
)

// Registration refuses what is not a destination of the customer's: a
// malformed ARN, another region, hookline's own queues, a URL with an AWS
// type, each a 400 naming the field.
func TestAWSDestinationRegistrationRefusals(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "dest_refused")
	role := "arn:aws:iam::000000000000:role/hookline-customer"
	queue := "arn:aws:sqs:us-east-1:000000000000:customer-orders"
	require.NotEmpty(t, env.out.DeadLetterQueueARN)
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"not an ARN", map[string]any{"type": "sqs", "target": "customer-orders", "role_arn": role}, "target"},
		{"a topic for sqs", map[string]any{"type": "sqs", "target": "arn:aws:sns:us-east-1:000000000000:t", "role_arn": role}, "target"},
		{"another region", map[string]any{"type": "sqs", "target": "arn:aws:sqs:eu-west-1:000000000000:customer-orders", "role_arn": role}, "target"},
		{"hookline's own DLQ", map[string]any{"type": "sqs", "target": env.out.DeadLetterQueueARN, "role_arn": role}, "target"},
		{"hookline's own bus", map[string]any{"type": "eventbridge", "target": env.out.OperatorEventBusARN, "role_arn": role}, "target"},
		{"a url with sqs", map[string]any{"type": "sqs", "url": "https://hooks.example.com/x", "target": queue, "role_arn": role}, "url"},
		{"no role", map[string]any{"type": "sns", "target": "arn:aws:sns:us-east-1:000000000000:t"}, "role_arn"},
		{"a user for a role", map[string]any{"type": "sqs", "target": queue, "role_arn": "arn:aws:iam::000000000000:user/x"}, "role_arn"},
		{"a role not named hookline-*", map[string]any{"type": "sqs", "target": queue, "role_arn": "arn:aws:iam::000000000000:role/customer-admin"}, "role_arn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, "POST", "/v1/endpoints", key, tc.body)
			require.Equal(t, http.StatusBadRequest, status, "%v", body)
			require.Contains(t, fmt.Sprint(body["errors"]), "field:"+tc.field, "%v", body)
		})
	}
}

// The console creates an SQS endpoint: the type select shows the target
// and role fields in place of the URL, the external ID is shown once
// beside the secret, and the list names the endpoint by its type and
// target.
func TestConsoleCreatesAnAWSEndpoint(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "console_dest")
	b := newBrowser(t, desktopWidth, desktopHeight)
	signInKey(t, b, key)
	target := "arn:aws:sqs:us-east-1:000000000000:console-customer-orders"
	b.click(dt("endpoint-create"))
	evalIn[bool](b, `(() => { const s = document.querySelector('[data-test="endpoint-type"]'); s.value = 'sqs'; s.dispatchEvent(new Event('change')); return true; })()`)
	require.True(t, evalIn[bool](b, `document.querySelector('[data-test="endpoint-url"]').offsetParent === null`), "no URL field for sqs")
	b.typ(dt("endpoint-target"), target)
	b.typ(dt("endpoint-role"), "arn:aws:iam::000000000000:role/hookline-console-customer")
	b.click(dt("endpoint-save"))
	b.wait(dt("external-id"))
	b.waitJS("the external ID", stepTimeout, `() => document.querySelector('[data-test="external-id"]').textContent.startsWith("hlx_")`)
	ext := strings.TrimSpace(b.text(dt("external-id")))

	status, list := call(t, "GET", "/v1/endpoints", key, nil)
	require.Equal(t, http.StatusOK, status, "%v", list)
	data := list["data"].([]any)
	require.Len(t, data, 1)
	ep := data[0].(map[string]any)
	require.Equal(t, "sqs", ep["type"])
	require.Equal(t, target, ep["target"])
	epRow := row("endpoint-row", ep["id"].(string))
	b.wait(epRow)
	require.Contains(t, b.text(epRow), "sqs "+target)
	b.click(dt("secret-dismiss"))
	require.NotContains(t, b.pageText(), ext, "shown once")

	// Edited: the target changes, the type stays (its select is disabled).
	moved := target + "-2"
	b.click(epRow + " " + dt("endpoint-edit"))
	require.True(t, evalIn[bool](b, `document.querySelector('[data-test="endpoint-type"]').disabled`), "the type is fixed")
	b.typ(dt("endpoint-target"), moved)
	b.click(dt("endpoint-save"))
	b.waitText(epRow, moved)
	status, got := call(t, "GET", "/v1/endpoints/"+ep["id"].(string), key, nil)
	require.Equal(t, http.StatusOK, status, "%v", got)
	require.Equal(t, moved, got["target"])
	require.Equal(t, "sqs", got["type"])
	b.assertSafe("endpoints")
}

// awsEndpoint is an endpoint of an AWS type created through the API.
type awsEndpoint struct {
	typ                    domain.EndpointType
	id, secret, externalID string
}

// createAWSEndpoint creates an endpoint of type typ delivering to the
// customer's resource, subscribed to order.* events.
func createAWSEndpoint(t *testing.T, key string, c *harness.Customer, typ domain.EndpointType) awsEndpoint {
	t.Helper()
	status, body := call(t, "POST", "/v1/endpoints", key, map[string]any{
		"type": typ, "target": c.Target(typ), "role_arn": c.RoleARN, "event_types": []string{"order.*"},
	})
	require.Equal(t, http.StatusCreated, status, "%v", body)
	require.Equal(t, string(typ), body["type"])
	require.Equal(t, c.Target(typ), body["target"])
	require.Equal(t, c.RoleARN, body["role_arn"])
	ext, _ := body["external_id"].(string)
	require.NotEmpty(t, ext, "the external ID is shown at creation")
	return awsEndpoint{typ: typ, id: body["id"].(string), secret: body["secret"].(string), externalID: ext}
}

// One message per (event, endpoint) in the customer's queue, topic and bus,
// each signed as Standard Webhooks says, over its attributes, with the
// delivery's id, and none twice.
func TestAWSDestinationsDeliverSigned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCustomer(t, "dest")
	tenantID, key := apiTenant(t, "dest")
	var eps []awsEndpoint
	for _, typ := range []domain.EndpointType{domain.TypeSQS, domain.TypeSNS, domain.TypeEventBridge} {
		eps = append(eps, createAWSEndpoint(t, key, c, typ))
	}
	status, got := call(t, "GET", "/v1/endpoints/"+eps[0].id, key, nil)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, got, "external_id", "shown once, never again")
	require.NoError(t, c.Trust(ctx, eps[0].externalID, eps[1].externalID, eps[2].externalID))

	events := map[string]bool{}
	for i := range 2 {
		ev := event(tenant{ID: tenantID}, fmt.Sprintf("evt_dest_%d_%s", i, tenantID), "order.created", fmt.Sprintf(`{"n":%d}`, i))
		write(t, ev)
		events[ev.ID] = true
	}
	for _, ep := range eps {
		v, err := verify.New(ep.secret)
		require.NoError(t, err)
		msgs, err := c.Receive(ctx, ep.typ, 2, 60*time.Second)
		require.NoError(t, err)
		require.Len(t, msgs, 2, "%s: one message per event", ep.typ)
		seen := map[string]bool{}
		for _, m := range msgs {
			require.NoError(t, v.Verify(m.Header(), []byte(m.Body)), "%s: the signature verifies over the attributes", ep.typ)
			require.True(t, events[m.EventID], "%s: an event of the test: %+v", ep.typ, m)
			require.Equal(t, deliveryID(t, m.EventID, ep.id), m.WebhookID, "%s: webhook-id is the delivery's id", ep.typ)
			require.Equal(t, "order.created", m.EventType)
			require.Contains(t, m.Body, m.EventID)
			seen[m.EventID] = true
		}
		require.Len(t, seen, 2, "%s: each event once", ep.typ)
		for id := range events {
			waitDelivery(t, deliveryID(t, id, ep.id), 30*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDelivered })
		}
	}
	for _, ep := range eps {
		more, err := c.Receive(ctx, ep.typ, 1, 3*time.Second)
		require.NoError(t, err)
		require.Empty(t, more, "%s: nothing is sent twice", ep.typ)
	}
}

// A delivery to a queue the customer deleted is dead at once with
// destination_not_found, listed in the tenant's DLQ; once the queue is
// back, a replay delivers it with the same webhook-id.
func TestAWSDestinationGoneIsDeadThenReplayed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCustomer(t, "gone")
	tenantID, key := apiTenant(t, "dest_gone")
	ep := createAWSEndpoint(t, key, c, domain.TypeSQS)
	require.NoError(t, c.Trust(ctx, ep.externalID))
	q := sqs.NewFromConfig(env.cfg)
	name := c.QueueURL[strings.LastIndexByte(c.QueueURL, '/')+1:]
	_, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(c.QueueURL)})
	require.NoError(t, err)

	ev := event(tenant{ID: tenantID}, "evt_gone_"+tenantID, "order.created", `{"n":1}`)
	write(t, ev)
	id := domain.DeliveryID(ev.TenantID, ev.ID, ep.id, ev.OccurredAt)
	d := waitDelivery(t, id, 60*time.Second, func(d domain.Delivery) bool { return d.State == domain.StateDead })
	require.Equal(t, domain.ReasonDestinationNotFound, d.DeadReason)
	require.Equal(t, []string{id}, listDead(t, key, "endpoint_id="+ep.id))
	// The endpoint's health and stats show why, as for an http endpoint.
	status, body := call(t, "GET", "/v1/endpoints/"+ep.id, key, nil)
	require.Equal(t, http.StatusOK, status, "%v", body)
	health := body["health"].(map[string]any)
	require.NotEmpty(t, health["last_failure"], "%v", health)
	require.Eventually(t, func() bool {
		_, stats := call(t, "GET", "/v1/endpoints/"+ep.id+"/stats", key, nil)
		totals, _ := stats["totals"].(map[string]any)
		return totals != nil && totals["attempts"].(float64) >= 1
	}, 20*time.Second, 500*time.Millisecond, "the attempt is counted")

	_, err = q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	require.NoError(t, err)
	status, job := call(t, "POST", "/v1/dlq/replay", key, map[string]any{"delivery_ids": []string{id}})
	require.Equal(t, http.StatusAccepted, status, "%v", job)
	waitJob(t, key, "/v1/replays/"+job["id"].(string))
	msgs, err := c.Receive(ctx, domain.TypeSQS, 1, 60*time.Second)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, id, msgs[0].WebhookID, "the replay keeps the webhook-id")
	v, err := verify.New(ep.secret)
	require.NoError(t, err)
	require.NoError(t, v.Verify(msgs[0].Header(), []byte(msgs[0].Body)))
}
