//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// hostileEndpoints is how many endpoints the hostile tenant filters with a
// 100-branch $or, each its own (a filter text shared by endpoints is
// matched once a record): enough that their filters' work on the wide
// payload is over the record's budget (enqueue: 128 units a payload byte
// for all of them), so that the last of them get the event unfiltered.
const hostileEndpoints = 60

// orPrefixFilter is a filter of n $or branches on one field, each a prefix
// that no leaf of the wide payload has.
func orPrefixFilter(field string, n int) string {
	var b strings.Builder
	b.WriteString(`{"$or":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{%q:[{"prefix":"xxxxxxxxxxxxxxx%02d"}]}`, field, i)
	}
	return b.String() + `]}`
}

// orPrefixFilterFor is orPrefixFilter of n-1 branches and one more, on a
// field no payload has, that makes its text endpoint i's own.
func orPrefixFilterFor(field string, n, i int) string {
	return strings.TrimSuffix(orPrefixFilter(field, n-1), `]}`) + fmt.Sprintf(`,{"only":["ep%02d"]}]}`, i)
}

// rawOutboxPut is the outbox put a producer in another language could
// build by hand, past outbox.Validate: how an item the contract refuses
// reaches the stream.
func rawOutboxPut(tenantID, id, typ, payload string) types.TransactWriteItem {
	item := map[string]types.AttributeValue{
		outbox.AttrID:         &types.AttributeValueMemberS{Value: id},
		outbox.AttrTenantID:   &types.AttributeValueMemberS{Value: tenantID},
		outbox.AttrType:       &types.AttributeValueMemberS{Value: typ},
		outbox.AttrPayload:    &types.AttributeValueMemberS{Value: payload},
		outbox.AttrOccurredAt: &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339Nano)},
	}
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(env.out.OutboxTableName), Item: item}}
}

// Issue 34: a payload nested past the contract, and a wide payload whose
// filters are over the record's work budget, written in one transaction
// (so one stream batch) with a quiet tenant's event: the too-deep item is
// rejected with its reason, the wide one's filters run past the tenant's
// share of the batch, so its fan-out is deferred (the fan-out queue) and
// goes to the hostile tenant's endpoints there (unfiltered past the
// record's budget), and the quiet tenant's event is delivered. Nothing
// fails the batch, so nothing waits behind it.
func TestHostileRecordsLeaveTheBatchDelivered(t *testing.T) {
	t.Parallel()
	hostileTenant, hostileKey := apiTenant(t, "hostile")
	quietID, quietKey := apiTenant(t, "hostilequiet")
	hostile, quiet := newReceiver(t, status(200)), newReceiver(t, status(200))

	createEndpoints(t, hostileKey, hostileEndpoints, func(i int) map[string]any {
		return map[string]any{"url": fmt.Sprintf("%s/h%02d", hostile.URL, i), "event_types": []string{"hostile.*"}, "filter": json.RawMessage(orPrefixFilterFor("a", 100, i))}
	})
	apiEndpoint(t, quietKey, quiet.URL+"/quiet")

	deep := `{"a":` + strings.Repeat(`[`, outbox.MaxPayloadDepth) + `"y"` + strings.Repeat(`]`, outbox.MaxPayloadDepth) + `}`
	wide := `{"a":[` + strings.TrimSuffix(strings.Repeat(`"xxxxxxxxxxxxxxxxxxxx",`, 5000), ",") + `]}`
	stamp := time.Now().UnixNano()
	deepID, wideID, quietEv := fmt.Sprintf("evt_deep_%d", stamp), fmt.Sprintf("evt_wide_%d", stamp), fmt.Sprintf("evt_quiet_%d", stamp)
	_, err := env.ddb.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		rawOutboxPut(hostileTenant, deepID, "hostile.deep", deep),
		rawOutboxPut(hostileTenant, wideID, "hostile.wide", wide),
		rawOutboxPut(quietID, quietEv, "order.created", `{"n":1}`),
	}})
	require.NoError(t, err)

	got := quiet.waitFor(t, 1, 90*time.Second)
	require.Equal(t, quietEv, got[0].Header.Get("X-Event-Id"), "the quiet tenant's event is delivered")

	require.Eventually(t, func() bool {
		r, err := env.store.Rejection(context.Background(), deepID)
		return err == nil && string(r.Reason) == outbox.ReasonTooDeep
	}, 60*time.Second, 500*time.Millisecond, "the too-deep item is rejected with reason %s", outbox.ReasonTooDeep)

	// Past the record's budget the wide event reaches endpoints unfiltered;
	// within it, the filters (which it does not match) hold it back.
	hostile.waitFor(t, 1, 90*time.Second)
	time.Sleep(3 * time.Second) // the rest of the fan-out
	reqs := hostile.requests()
	for _, r := range reqs {
		require.Equal(t, wideID, r.Header.Get("X-Event-Id"), "only the wide event reaches the hostile tenant")
	}
	require.Less(t, len(reqs), hostileEndpoints, "endpoints within the record's budget filter the event out")
}

// wideEndpoints and wideEvents make a fan-out past a tenant's share of a
// stream invocation (laneAfter, 60 messages): 3 x 60 = 180 deliveries in
// one batch.
const (
	wideEndpoints = 60
	wideEvents    = 3
)

// Issue 34: a tenant whose events, in one transaction, fan out past its
// share of the stream's batch gets its share inline and the rest through
// the deferred fan-out and the tenant lane: every delivery arrives, once
// each, and a quiet tenant's event in the same transaction is delivered
// beside it.
func TestWideFanOutIsDeferredAndDelivered(t *testing.T) {
	t.Parallel()
	wideTenant, wideKey := apiTenant(t, "widefanout")
	quietID, quietKey := apiTenant(t, "widequiet")
	wide, quiet := newReceiver(t, status(200)), newReceiver(t, status(200))
	createEndpoints(t, wideKey, wideEndpoints, func(i int) map[string]any {
		return map[string]any{"url": fmt.Sprintf("%s/w%02d", wide.URL, i), "event_types": []string{"wide.*"}}
	})
	apiEndpoint(t, quietKey, quiet.URL+"/quiet")

	stamp := time.Now().UnixNano()
	items := []types.TransactWriteItem{rawOutboxPut(quietID, fmt.Sprintf("evt_wq_%d", stamp), "order.created", `{"n":1}`)}
	for i := range wideEvents {
		items = append(items, rawOutboxPut(wideTenant, fmt.Sprintf("evt_wide_%d_%d", stamp, i), "wide.created", `{"n":1}`))
	}
	_, err := env.ddb.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: items})
	require.NoError(t, err)

	quiet.waitFor(t, 1, 90*time.Second)
	wide.waitFor(t, wideEndpoints*wideEvents, 3*time.Minute)
	seen := map[string]bool{}
	for _, r := range wide.requests() {
		seen[r.Header.Get("webhook-id")] = true // the delivery id: event and endpoint
	}
	require.Len(t, seen, wideEndpoints*wideEvents, "every event at every endpoint")
}
