//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/outbox"
)

// The local stack's event-type catalog (e2e/testdata/catalog, which
// scripts/deploy-local.sh deploys): GET /v1/event-types answers it; a
// subscription to a type it does not know is refused naming the entry; of
// shipment.delivered (validation reject) a payload its schema refuses is
// rejected with reason schema_mismatch and the violated path, never
// delivered, while a good one is; of refund.requested (warn) a bad payload
// is delivered; a test event of a catalog type carries its example.
func TestEventTypeCatalog(t *testing.T) {
	t.Parallel()
	tenantID, key := apiTenant(t, "eventtypes")
	code, body := call(t, "GET", "/v1/event-types?limit=100", key, nil)
	require.Equal(t, http.StatusOK, code, "%v", body)
	require.Equal(t, true, body["catalog"], "the local stack deploys a catalog: %v", body)
	modes := map[string]string{}
	for _, v := range body["data"].([]any) {
		typ := v.(map[string]any)
		modes[typ["name"].(string)] = typ["validation"].(string)
	}
	require.Equal(t, "reject", modes["shipment.delivered"])
	require.Equal(t, "warn", modes["refund.requested"])
	require.Equal(t, "off", modes["order.created"])
	// In pages of 5: every type once, in order, the same as one page.
	require.Greater(t, len(modes), 5, "the local catalog spans pages of 5")
	var paged []string
	for cursor := ""; ; {
		path := "/v1/event-types?limit=5"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		code, page := call(t, "GET", path, key, nil)
		require.Equal(t, http.StatusOK, code, "%v", page)
		for _, v := range page["data"].([]any) {
			paged = append(paged, v.(map[string]any)["name"].(string))
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	require.Len(t, paged, len(modes))
	require.True(t, slices.IsSorted(paged), "%v", paged)
	for _, name := range paged {
		require.Contains(t, modes, name)
	}

	code, body = call(t, "POST", "/v1/endpoints", key, map[string]any{"url": "http://127.0.0.1:9/x", "event_types": []string{"shipment.*", "shipment.lost"}})
	require.Equal(t, http.StatusBadRequest, code, "%v", body)
	errs := body["errors"].([]any)
	require.Len(t, errs, 1, "%v", body)
	require.Equal(t, "event_types[1]", errs[0].(map[string]any)["field"])
	require.Contains(t, errs[0].(map[string]any)["message"], `"shipment.lost" names no type`)

	rcv := newReceiver(t, status(200))
	epID, _ := apiEndpoint(t, key, rcv.URL+"/catalog", "shipment.*", "refund.requested")
	tn := tenant{ID: tenantID}
	stamp := time.Now().UnixNano()
	bad, good, warned := fmt.Sprintf("evt_ship_bad_%d", stamp), fmt.Sprintf("evt_ship_good_%d", stamp), fmt.Sprintf("evt_refund_%d", stamp)
	write(t, event(tn, bad, "shipment.delivered", `{"shipment_id":"shp_1","weight_grams":"heavy"}`))
	write(t, event(tn, good, "shipment.delivered", `{"shipment_id":"shp_2","weight_grams":900}`))
	write(t, event(tn, warned, "refund.requested", `{"refund_id":"rf_1","amount":0}`))

	got := map[string]string{}
	for _, r := range rcv.waitFor(t, 2, 90*time.Second) {
		got[r.Header.Get("X-Event-Id")] = r.Header.Get("X-Event-Type")
	}
	require.Equal(t, map[string]string{good: "shipment.delivered", warned: "refund.requested"}, got,
		"the good shipment and the warned refund are delivered, the bad shipment is not")
	require.Eventually(t, func() bool {
		r, err := env.store.Rejection(context.Background(), bad)
		return err == nil && r.Reason == domain.RejectSchemaMismatch
	}, 60*time.Second, 500*time.Millisecond, "the bad shipment is rejected with reason schema_mismatch")
	r, err := env.store.Rejection(context.Background(), bad)
	require.NoError(t, err)
	require.Equal(t, outbox.AttrPayload, r.Field)
	require.Contains(t, r.Detail, "at /weight_grams: keyword type")
	require.NotContains(t, r.Detail, "heavy", "the detail names the path, not the value")

	code, body = call(t, "POST", "/v1/endpoints/"+epID+"/test", key, map[string]any{"event_type": "shipment.delivered"})
	require.Equal(t, http.StatusAccepted, code, "%v", body)
	require.Equal(t, "shipment.delivered", body["type"])
	last := rcv.waitFor(t, 3, 60*time.Second)[2]
	require.Equal(t, body["id"], last.Header.Get("X-Event-Id"))
	var sent struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(last.Body, &sent))
	require.Equal(t, "shipment.delivered", sent.Type)
	require.JSONEq(t, `{"shipment_id":"shp_42","weight_grams":1250,"signed_by":"A. Lovelace"}`, string(sent.Data), "the type's example")
	require.Len(t, rcv.requests(), 3, "the bad shipment never arrives")
}
