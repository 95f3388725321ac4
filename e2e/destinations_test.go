//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Registration refuses what is not a destination of the customer's: a
// malformed ARN, another region, hookline's own queues, a URL with an AWS
// type, each a 400 naming the field.
func TestAWSDestinationRegistrationRefusals(t *testing.T) {
	t.Parallel()
	_, key := apiTenant(t, "dest_refused")
	role := "arn:aws:iam::000000000000:role/customer-hookline"
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
	b.typ(dt("endpoint-role"), "arn:aws:iam::000000000000:role/console-customer-hookline")
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
	b.assertSafe("endpoints")
}
