package cost

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/store"
	"github.com/hookline/hookline/internal/store/keys"
	"github.com/stretchr/testify/require"
)

func TestItemSizeByHand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		// "pk" 2 + "ab" 2.
		{"string", map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ab"}}, 4},
		// "n" 1 + "1250": significant digits 125 (trailing zero trimmed),
		// ceil(3/2) = 2, + 1 = 3.
		{"number", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "1250"}}, 4},
		// "n" 1 + "-0.05": significant digit 5, 1 + 1 = 2.
		{"small number", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "-0.05"}}, 3},
		// "ok" 2 + 1.
		{"bool", map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}}, 3},
		// "m" 1 + 3 overhead + (1 + "a" 1 + "xy" 2).
		{"map", map[string]types.AttributeValue{"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"a": &types.AttributeValueMemberS{Value: "xy"},
		}}}, 8},
		// "l" 1 + 3 + (1 + "a" 1) + (1 + bool 1).
		{"list", map[string]types.AttributeValue{"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "a"}, &types.AttributeValueMemberBOOL{Value: false},
		}}}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, ItemSize(tc.item))
		})
	}
}

func TestRequestUnits(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1.0, WriteUnits(0))
	require.Equal(t, 1.0, WriteUnits(1024))
	require.Equal(t, 2.0, WriteUnits(1025))
	require.Equal(t, 0.5, ReadUnits(4096, false))
	require.Equal(t, 1.0, ReadUnits(4096, true))
	require.Equal(t, 2.0, ReadUnits(4097, true))
}

// deliveryItem builds a delivery record as store.RecordAttempt leaves it:
// the Delivery's own attributes plus the keys and expiry the store adds,
// and last_error, which an attempt writes even empty. enqueue writes no
// record and there is no event index: the first attempt's write creates
// the record, and no index holds a pending or delivered delivery (a
// record of a time-carrying id is in its tenant's shards of records, under
// its id; a legacy one carries the delivery log's index keys). Ids are as
// long as real ones.
func deliveryItem(t *testing.T, d domain.Delivery) map[string]types.AttributeValue {
	t.Helper()
	item, err := attributevalue.MarshalMap(d)
	require.NoError(t, err)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(d.CreatedAt.Add(store.DefaultRetention).Unix(), 10)}
	if pk, ok := store.RecordsPK(d.DeliveryID); ok {
		item["pk"], item["sk"] = s(pk), s(d.DeliveryID)
	} else {
		// Its entry in the delivery log (store.IndexLog), as the store's
		// first write sets it.
		item["pk"], item["sk"] = s("DELIVERY#"+d.DeliveryID), s("DELIVERY")
		item[store.AttrLogPK], item[store.AttrLogSK] = s(store.LogPK(d.TenantID, d.DeliveryID)), s(keys.Time(d.CreatedAt)+"#"+d.DeliveryID)
	}
	if _, ok := item["last_error"]; !ok && d.Attempts > 0 {
		item["last_error"] = s("")
	}
	return item
}

// sampleDelivery is a delivery with ids as long as real ones, before its
// first attempt.
func sampleDelivery() domain.Delivery {
	at := time.Date(2026, 11, 30, 4, 9, 26, 573147393, time.UTC)
	const tenant, endpoint, event = "ten_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F", "ep_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F", "evt_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F"
	return domain.Delivery{
		DeliveryID: domain.DeliveryID(tenant, event, endpoint, at.Add(-time.Second)), TenantID: tenant, EndpointID: endpoint, EventID: event,
		EventType: "payment.succeeded", CreatedAt: at,
	}
}

// sampleDelivered is sampleDelivery delivered at its first attempt.
func sampleDelivered() domain.Delivery {
	d := sampleDelivery()
	at := d.CreatedAt
	d.State, d.DeliveredAt, d.Attempts, d.LastStatus = domain.StateDelivered, &at, 1, 200
	d.AttemptLog = []domain.Attempt{{Number: 1, At: at, Status: 200, LatencyMS: 87, Excerpt: `{"ok":true}`}}
	return d
}

// TestDeliveryRecordSizes ties the write-unit assumptions of the initial
// estimate to the record the store writes. If it fails, the record grew:
// update InitialAssumptions (DeliveryWRU, DeliveryWRUAfterFailure,
// StoredBytesPerRecord) and the estimate in README.md.
func TestDeliveryRecordSizes(t *testing.T) {
	t.Parallel()
	d := sampleDelivery()
	at := d.CreatedAt
	// The first attempt's write creates the record: delivered at once...
	delivered := ItemSize(deliveryItem(t, sampleDelivered()))

	// ... or failed, to be retried.
	failed := d
	failed.State, failed.Attempts, failed.LastStatus, failed.LastError = domain.StatePending, 1, 503, "http_503"
	failed.AttemptLog = []domain.Attempt{{Number: 1, At: at, Status: 503, Error: "http_503", LatencyMS: 120, Excerpt: "Service Unavailable"}}
	retrying := ItemSize(deliveryItem(t, failed))

	// A failed attempt whose answer's first 1 KB is kept in the log.
	longError := failed
	longError.AttemptLog = []domain.Attempt{{Number: 1, At: at, Status: 503, Error: "http_503", LatencyMS: 120, Excerpt: strings.Repeat("x", 1024)}}
	long := ItemSize(deliveryItem(t, longError))

	t.Logf("delivered at the first attempt %d bytes, retrying %d, after a 1 KB error body %d", delivered, retrying, long)
	a := InitialAssumptions
	for _, size := range []int{delivered, retrying} {
		require.Equal(t, a.DeliveryWRU, WriteUnits(size), "a %d-byte record", size)
	}
	require.Equal(t, 2.0, WriteUnits(long), "a record whose log keeps a 1 KB excerpt")
	require.Equal(t, a.StoredBytesPerRecord, float64(delivered+100), "billed storage: the delivered record plus 100 bytes")

	// No entry in the delivery log's index: the record is listed by its
	// own key.
	item := deliveryItem(t, sampleDelivered())
	require.NotContains(t, item, store.AttrLogPK)
	require.Zero(t, a.DeliveryLogIndexWRU)
	require.Zero(t, a.DeliveryLogIndexBytes)

	// A legacy record's entry, until the last of them expires: the keys
	// and the listed attributes, one unit.
	legacy := sampleDelivered()
	legacy.DeliveryID = domain.LegacyDeliveryID(legacy.EventID, legacy.EndpointID)
	item = deliveryItem(t, legacy)
	entry := map[string]types.AttributeValue{}
	for _, name := range append([]string{"pk", "sk", store.AttrLogPK, store.AttrLogSK}, store.LogIndexAttributes...) {
		if v, ok := item[name]; ok {
			entry[name] = v
		}
	}
	t.Logf("a legacy record's delivery log entry %d bytes", ItemSize(entry))
	require.Equal(t, 1.0, WriteUnits(ItemSize(entry)), "each write of a legacy record writes its entry once")
	require.Equal(t, shortIDs(a).DeliveryLogIndexBytes, float64(ItemSize(entry)+100), "billed index storage: the entry plus 100 bytes")
}

// TestEndpointRecordReadUnits ties the read units of an endpoint (1 RRU
// in deliver's consistent batch read, 0.5 in enqueue's eventual query) to
// the record the api function writes, its signing secrets sealed: a KMS
// ciphertext of a 50-byte secret, taken here as 400 bytes (AWS does not
// document the size; its header, nonce and tag are well under 350 bytes),
// kept as base64, two of them while a secret rotates.
func TestEndpointRecordReadUnits(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 30, 4, 9, 26, 573147393, time.UTC)
	sealed := base64.StdEncoding.EncodeToString(make([]byte, 400))
	e := domain.Endpoint{
		TenantID: "ten_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F", EndpointID: "ep_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F",
		URL: "https://hooks.example.com/webhooks/hookline/" + strings.Repeat("x", 56), Description: strings.Repeat("d", 100),
		EventTypes: []string{"order.*", "payment.succeeded", "payment.failed"}, Headers: map[string]string{"X-Env": "production"},
		SealedSecrets: []string{sealed}, SealedRetiringSecret: sealed, RetiringUntil: &at, UpdatedAt: &at, CreatedAt: at,
	}
	item, err := attributevalue.MarshalMap(e)
	require.NoError(t, err)
	item["pk"] = &types.AttributeValueMemberS{Value: "TENANT#" + e.TenantID}
	item["sk"] = &types.AttributeValueMemberS{Value: "ENDPOINT#" + e.EndpointID}
	size := ItemSize(item)
	t.Logf("endpoint, its secret rotating: %d bytes", size)
	require.Equal(t, 1.0, ReadUnits(size, true), "deliver's consistent read of the endpoint")
	require.Equal(t, 0.5, ReadUnits(size, false), "enqueue's eventual query of a one-endpoint tenant")
}
