package cost

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hookline/hookline/internal/delivery"
	"github.com/hookline/hookline/internal/store"
	"github.com/stretchr/testify/require"
)

func TestItemSizeByHand(t *testing.T) {
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
	require.Equal(t, 1.0, WriteUnits(0))
	require.Equal(t, 1.0, WriteUnits(1024))
	require.Equal(t, 2.0, WriteUnits(1025))
	require.Equal(t, 0.5, ReadUnits(4096, false))
	require.Equal(t, 1.0, ReadUnits(4096, true))
	require.Equal(t, 2.0, ReadUnits(4097, true))
}

// deliveryItem builds a delivery record as store.CreateDelivery and
// RecordAttempt leave it: the Delivery's own attributes plus the keys,
// expiry and gsi2 keys the store adds. Ids are as long as real ones.
func deliveryItem(t *testing.T, d store.Delivery) map[string]types.AttributeValue {
	t.Helper()
	item, err := attributevalue.MarshalMap(d)
	require.NoError(t, err)
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	item["pk"], item["sk"] = s("DELIVERY#"+d.DeliveryID), s("DELIVERY")
	item["expires_at"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(d.CreatedAt.Add(30*24*time.Hour).Unix(), 10)}
	item["gsi2pk"], item["gsi2sk"] = s("TENANT#"+d.TenantID+"#EVENT#"+d.EventID), s(d.EndpointID)
	return item
}

// TestDeliveryRecordSizes ties the write-unit assumptions of the initial
// estimate to the record the store writes. If it fails, the record grew:
// update InitialAssumptions (DeliveryWRU, DeliveryWRUAfterFailure,
// StoredBytesPerRecord) and the estimate in README.md.
func TestDeliveryRecordSizes(t *testing.T) {
	at := time.Date(2026, 11, 30, 4, 9, 26, 573147393, time.UTC)
	const tenant, endpoint, event = "ten_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F", "ep_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F", "evt_01JD8Z3Q4X5Y6Z7A8B9C0D1E2F"
	d := store.Delivery{
		DeliveryID: delivery.ID(event, endpoint), TenantID: tenant, EndpointID: endpoint, EventID: event,
		EventType: "payment.succeeded", State: delivery.StatePending, CreatedAt: at,
	}
	// The put that creates a record carries enqueued_at: enqueue writes it
	// after sending the message.
	d.EnqueuedAt = &at
	created := ItemSize(deliveryItem(t, d))

	ok := d
	ok.State, ok.DeliveredAt, ok.Attempts, ok.LastStatus = delivery.StateDelivered, &at, 1, 200
	ok.AttemptLog = []store.Attempt{{Number: 1, At: at, Status: 200, LatencyMS: 87, Excerpt: `{"ok":true}`}}
	delivered := ItemSize(deliveryItem(t, ok))

	failed := d
	failed.Attempts, failed.LastStatus, failed.LastError = 1, 503, "http_503"
	failed.AttemptLog = []store.Attempt{{Number: 1, At: at, Status: 503, Error: "http_503", LatencyMS: 120, Excerpt: strings.Repeat("x", 1024)}}
	longError := ItemSize(deliveryItem(t, failed))

	// A KEYS_ONLY gsi2 entry holds the table's keys and the index's.
	item := deliveryItem(t, ok)
	entry := ItemSize(map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"], "gsi2pk": item["gsi2pk"], "gsi2sk": item["gsi2sk"]})

	t.Logf("created %d, delivered %d, after a 1 KB error body %d bytes; gsi2 entry %d bytes", created, delivered, longError, entry)
	a := InitialAssumptions
	for _, size := range []int{created, delivered} {
		require.Equal(t, a.DeliveryWRU, WriteUnits(size), "a %d-byte record", size)
	}
	require.Equal(t, 2.0, WriteUnits(longError), "a record whose log keeps a 1 KB excerpt")
	require.Equal(t, a.StoredBytesPerRecord, float64(delivered+100), "billed storage: the delivered record plus 100 bytes")
	require.Equal(t, a.EventIndexEntryBytes, float64(entry+100), "billed storage of the gsi2 entry: its keys plus 100 bytes")
}
