//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/hookline/hookline/internal/filter"
	"github.com/stretchr/testify/require"
)

// An endpoint with the filter {"country": ["DE"]} receives the German
// order and not the French one; the message log says the French one was
// filtered out for it (and matched the unfiltered endpoint), and no
// delivery exists for it.
func TestFilterDeliversOnlyMatchingEvents(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "filters")
	de, all := newReceiver(t, status(200)), newReceiver(t, status(200))
	code, body := call(t, "POST", "/v1/endpoints", key, map[string]any{
		"url": de.URL + "/de", "event_types": []string{"order.*"}, "filter": map[string]any{"country": []string{"DE"}},
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	require.Equal(t, map[string]any{"country": []any{"DE"}}, body["filter"])
	epDE := body["id"].(string)
	epAll, _ := apiEndpoint(t, key, all.URL+"/all")

	code, body = call(t, "PATCH", "/v1/endpoints/"+epDE, key, map[string]any{"filter": map[string]any{"country": "DE"}})
	require.Equal(t, http.StatusBadRequest, code, "%v", body)
	require.Equal(t, "filter.country", body["errors"].([]any)[0].(map[string]any)["field"])

	fr, ger := "evt_fr_"+tenantID, "evt_de_"+tenantID
	write(t, event(tenant{ID: tenantID}, fr, "order.created", `{"country":"FR","amount":10}`))
	write(t, event(tenant{ID: tenantID}, ger, "order.created", `{"country":"DE","amount":20}`))
	all.waitFor(t, 2, 60*time.Second)
	de.waitFor(t, 1, 30*time.Second)
	time.Sleep(2 * time.Second) // nothing more may arrive
	got := de.requests()
	require.Len(t, got, 1)
	require.Equal(t, ger, got[0].Header.Get("X-Event-Id"))

	var log map[string]any
	require.Eventually(t, func() bool {
		code, log = call(t, "GET", "/v1/events/"+fr, key, nil)
		return code == http.StatusOK
	}, 15*time.Second, 300*time.Millisecond, "the FR event in the message log")
	require.Equal(t, []any{epDE}, log["filtered_out"], "%v", log)
	require.Equal(t, []any{epAll}, log["matched"], "%v", log)
	code, _ = call(t, "GET", "/v1/deliveries/"+deliveryID(t, fr, epDE), key, nil)
	require.Equal(t, http.StatusNotFound, code, "a filtered-out event has no delivery")
	code, log = call(t, "GET", "/v1/events/"+ger, key, nil)
	require.Equal(t, http.StatusOK, code)
	require.ElementsMatch(t, []any{epDE, epAll}, log["matched"])
	require.Empty(t, log["filtered_out"])
}

// ministackDiffers lists the cases of the filter table where the local
// cloud's EventBridge answers otherwise than EventBridge's documentation
// and Event Ruler (the library EventBridge matches with), and why; each
// is also listed in docs/local-cloud.md. internal/filter keeps AWS's
// answer.
var ministackDiffers = map[string]string{
	"numeric six decimals":       "Event Ruler compares numbers to six decimal places (ComparableNumber), so 1.0000001 = 1.0000002; ministack compares floats exactly",
	"numeric event out of range": "Event Ruler matches numeric conditions only on numbers within ±5e9; ministack compares any float",
}

// Every (filter, data) pair of the filter table gets the same answer from
// internal/filter and from EventBridge's TestEventPattern on the local
// cloud (data as the event's detail, the filter as {"detail": filter}),
// except where the local cloud is known to differ from AWS
// (ministackDiffers): there internal/filter must give the documented
// answer and ministack still the other one, so the list stays true.
func TestFilterAgreesWithEventBridge(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "internal", "filter", "testdata", "cases.json"))
	require.NoError(t, err)
	var cases []struct {
		Name   string          `json:"name"`
		Filter json.RawMessage `json:"filter"`
		Data   json.RawMessage `json:"data"`
		Want   bool            `json:"want"`
	}
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.NotEmpty(t, cases)
	eb := eventbridge.NewFromConfig(env.cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range cases {
		f, err := filter.Parse(tc.Filter)
		require.NoError(t, err, tc.Name)
		ours := f.Match(tc.Data)
		require.Equal(t, tc.Want, ours, "internal/filter on %q", tc.Name)
		ev := fmt.Sprintf(`{"id":"e2e-filter","detail-type":"order.created","source":"hookline.e2e","account":"000000000000",`+
			`"time":"2026-12-03T08:00:00Z","region":"us-east-1","resources":[],"detail":%s}`, tc.Data)
		out, err := eb.TestEventPattern(ctx, &eventbridge.TestEventPatternInput{
			Event: aws.String(ev), EventPattern: aws.String(`{"detail":` + string(tc.Filter) + `}`),
		})
		require.NoError(t, err, "TestEventPattern on %q", tc.Name)
		if why, known := ministackDiffers[tc.Name]; known {
			require.NotEqual(t, ours, out.Result, "the local cloud now agrees on %q: drop it from ministackDiffers and docs/local-cloud.md", tc.Name)
			t.Logf("%s: the local cloud says %v, AWS %v: %s", tc.Name, out.Result, ours, why)
			continue
		}
		require.Equal(t, ours, out.Result, "EventBridge (local cloud) on %q: pattern {\"detail\":%s}, detail %s", tc.Name, tc.Filter, tc.Data)
	}
}
