package outbox

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

func valid() Event {
	return Event{ID: "evt_1", TenantID: "t1", Type: "payment.succeeded", Payload: json.RawMessage(`{"a":1}`), OccurredAt: time.Date(2026, 11, 30, 1, 0, 0, 0, time.UTC)}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mut    func(*Event)
		reason string
		field  string
	}{
		{"valid", func(*Event) {}, "", ""},
		{"no id", func(e *Event) { e.ID = "" }, ReasonMissingField, AttrID},
		{"no tenant", func(e *Event) { e.TenantID = "" }, ReasonMissingField, AttrTenantID},
		{"no type", func(e *Event) { e.Type = "" }, ReasonMissingField, AttrType},
		{"long id", func(e *Event) { e.ID = strings.Repeat("i", MaxIDBytes+1) }, ReasonTooLarge, AttrID},
		{"bad utf-8 type", func(e *Event) { e.Type = "a\xffb" }, ReasonInvalidUTF8, AttrType},
		{"bad utf-8 endpoint", func(e *Event) { e.EndpointID = "\xff" }, ReasonInvalidUTF8, AttrEndpointID},
		{"no payload", func(e *Event) { e.Payload = nil }, ReasonMissingField, AttrPayload},
		{"payload not json", func(e *Event) { e.Payload = json.RawMessage(`{`) }, ReasonInvalidJSON, AttrPayload},
		{"payload too deep", func(e *Event) {
			e.Payload = json.RawMessage(`{"a":` + strings.Repeat(`[`, MaxPayloadDepth) + strings.Repeat(`]`, MaxPayloadDepth) + `}`)
		}, ReasonTooDeep, AttrPayload},
		{"payload at the depth limit", func(e *Event) {
			e.Payload = json.RawMessage(`{"a":"[[[[","b":` + strings.Repeat(`[`, MaxPayloadDepth-1) + strings.Repeat(`]`, MaxPayloadDepth-1) + `}`)
		}, "", ""},
		{"payload too large", func(e *Event) { e.Payload = json.RawMessage(`"` + strings.Repeat("x", MaxPayloadBytes) + `"`) }, ReasonTooLarge, AttrPayload},
		{"no time", func(e *Event) { e.OccurredAt = time.Time{} }, ReasonMissingField, AttrOccurredAt},
		{"control character in the type", func(e *Event) { e.Type = "a\nb" }, ReasonInvalidChars, AttrType},
		{"DEL in the id", func(e *Event) { e.ID = "ev\x7f" }, ReasonInvalidChars, AttrID},
		{"U+FFFE in the tenant", func(e *Event) { e.TenantID = "t\ufffe" }, ReasonInvalidChars, AttrTenantID},
		{"U+FFFF in the payload", func(e *Event) { e.Payload = json.RawMessage("\"\uffff\"") }, ReasonInvalidChars, AttrPayload},
		{"escaped U+FFFF in the payload is fine", func(e *Event) { e.Payload = json.RawMessage(`"\uffff"`) }, "", ""},
		{"reserved type", func(e *Event) { e.Type = "delivery.dead" }, ReasonReservedType, AttrType},
		{"reserved type checked last", func(e *Event) { e.Type = "endpoint.failing"; e.Payload = nil }, ReasonMissingField, AttrPayload},
		{"a type beside a reserved one is fine", func(e *Event) { e.Type = "endpoint.created" }, "", ""},
		{"multi-byte and astral characters are fine", func(e *Event) { e.Type = "caf\u00e9.\U0001F600"; e.Payload = json.RawMessage("\"\u2603\U0001F600\"") }, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := valid()
			tc.mut(&e)
			err := e.Validate()
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			require.Equal(t, tc.reason, verr.Reason)
			require.Equal(t, tc.field, verr.Field)
			require.Contains(t, err.Error(), tc.field, "the message names the field")
		})
	}
}

func TestDetailIsBounded(t *testing.T) {
	t.Parallel()
	for _, v := range []string{strings.Repeat("\x01", 100<<10), strings.Repeat("\u2603", 40<<10)} {
		_, err := ParseOccurredAt(v)
		var verr *ValidationError
		require.ErrorAs(t, err, &verr)
		require.LessOrEqual(t, len(verr.Detail), MaxDetailBytes)
		require.True(t, utf8.ValidString(verr.Detail), "cut at a character boundary")
	}
	require.Equal(t, "ab", Truncate("ab", 2))
	require.Equal(t, "a…", Truncate("abcdef", 4))
	require.Equal(t, "…", Truncate("\u2603\u2603", 4), "never half a character")
}

func TestTransactPut(t *testing.T) {
	t.Parallel()
	seq := int64(9)
	e := valid()
	e.Sequence, e.EndpointID, e.ExpiresAt = &seq, "ep_1", time.Unix(1800000000, 0)
	put, err := TransactPut("outbox", e)
	require.NoError(t, err)
	require.Equal(t, "outbox", *put.Put.TableName)
	require.Equal(t, "attribute_not_exists(#id)", *put.Put.ConditionExpression, "an event id is written once")
	require.Equal(t, AttrID, put.Put.ExpressionAttributeNames["#id"])
	item := put.Put.Item
	require.Equal(t, "evt_1", item[AttrID].(*types.AttributeValueMemberS).Value)
	require.Equal(t, `{"a":1}`, item[AttrPayload].(*types.AttributeValueMemberS).Value)
	require.Equal(t, "2026-11-30T01:00:00Z", item[AttrOccurredAt].(*types.AttributeValueMemberS).Value)
	require.Equal(t, "9", item[AttrSequence].(*types.AttributeValueMemberN).Value)
	require.Equal(t, "1800000000", item[AttrExpiresAt].(*types.AttributeValueMemberN).Value)
	require.Equal(t, "ep_1", item[AttrEndpointID].(*types.AttributeValueMemberS).Value)

	_, err = TransactPut("", e)
	require.ErrorIs(t, err, ErrNoTable)
	e.Payload = json.RawMessage("nope")
	_, err = TransactPut("outbox", e)
	require.Error(t, err, "an invalid event is refused before it is written")
	e = valid()
	e.Type = "endpoint.disabled"
	_, err = TransactPut("outbox", e)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr, "a producer cannot write hookline's operational events")
	require.Equal(t, ReasonReservedType, verr.Reason)
}

// Every item expires unless the producer says otherwise: by default
// DefaultRetention after the event occurred, else when ExpiresAt says, and
// never with NoExpiry.
func TestItemExpiry(t *testing.T) {
	t.Parallel()
	occurred := time.Date(2026, 11, 30, 1, 0, 0, 0, time.FixedZone("CET", 3600))
	cases := []struct {
		name    string
		mut     func(*Event)
		expires string // unix seconds; "" means no expires_at attribute
		err     error
	}{
		{"default: 16 days after it occurred", func(*Event) {}, strconv.FormatInt(occurred.Add(16*24*time.Hour).Unix(), 10), nil},
		{"explicit", func(e *Event) { e.ExpiresAt = time.Unix(1800000000, 0) }, "1800000000", nil},
		{"explicit, before it occurred", func(e *Event) { e.ExpiresAt = occurred.Add(-time.Hour) }, strconv.FormatInt(occurred.Unix()-3600, 10), nil},
		{"never", func(e *Event) { e.NoExpiry = true }, "", nil},
		{"never and a time", func(e *Event) { e.NoExpiry, e.ExpiresAt = true, time.Unix(1800000000, 0) }, "", ErrExpiryConflict},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := valid()
			e.OccurredAt = occurred
			tc.mut(&e)
			put, err := TransactPut("outbox", e)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			got, ok := put.Put.Item[AttrExpiresAt]
			if tc.expires == "" {
				require.False(t, ok, "no expires_at: %v", got)
				return
			}
			require.Equal(t, tc.expires, got.(*types.AttributeValueMemberN).Value)
		})
	}
}

func TestParseOccurredAt(t *testing.T) {
	t.Parallel()
	got, err := ParseOccurredAt("2026-11-30T01:02:03.456+01:00")
	require.NoError(t, err)
	require.True(t, got.Equal(time.Date(2026, 11, 30, 0, 2, 3, 456e6, time.UTC)))
	_, err = ParseOccurredAt("30/11/2026")
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, ReasonInvalidTime, verr.Reason)
}

func TestItemWritesNoMessageLogIndexKeys(t *testing.T) {
	t.Parallel()
	e := valid()
	item, err := e.Item()
	require.NoError(t, err)
	// The item is in neither index (each entry a billed write): enqueue
	// lists it in the message log's pages.
	require.NotContains(t, item, AttrLogKey)
	require.NotContains(t, item, AttrLogShard)
	tw, err := TransactPut("outbox", e)
	require.NoError(t, err)
	require.Equal(t, item, tw.Put.Item)
	// Keys sort as their times, whatever offset or precision the producer
	// gave: the message log reads them newest first.
	base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	times := []time.Time{
		base.Add(-time.Hour).In(time.FixedZone("x", 5*3600)),
		base,
		base.Add(time.Nanosecond),
		base.Add(999 * time.Millisecond).In(time.FixedZone("y", -7*3600)),
		base.Add(time.Second),
	}
	for i := 1; i < len(times); i++ {
		require.Less(t, LogKey(times[i-1], "z"), LogKey(times[i], "a"), "key %d", i)
	}
}

func TestPutIfNewIsConditionalOnTheID(t *testing.T) {
	t.Parallel()
	item := map[string]types.AttributeValue{AttrID: &types.AttributeValueMemberS{Value: "evt_1"}}
	put := PutIfNew("outbox", item)
	require.Equal(t, "outbox", *put.TableName)
	require.Equal(t, item, put.Item)
	require.Equal(t, "attribute_not_exists(#id)", *put.ConditionExpression, "an event id is written once")
	require.Equal(t, map[string]string{"#id": AttrID}, put.ExpressionAttributeNames)
}

func TestLogShardOfItemsWrittenBefore(t *testing.T) {
	t.Parallel()
	// The shard of an item written by an earlier producer library is the tenant's, a function of the id alone (not of the
	// time, which the sort key carries), and spreads ids over every shard.
	seen := map[string]int{}
	for i := 0; i < 1600; i++ {
		id := "evt_" + strconv.Itoa(i)
		k := LogShard("t1", id)
		require.Equal(t, k, LogShard("t1", id))
		n, err := strconv.Atoi(strings.TrimPrefix(k, "t1#"))
		require.NoError(t, err, k)
		require.True(t, n >= 0 && n < LogShards, k)
		require.Equal(t, LogShardKey("t1", n), k)
		seen[k]++
	}
	require.Len(t, seen, LogShards)
	for k, c := range seen {
		require.InDelta(t, 100, c, 40, "shard %s", k)
	}
	require.Equal(t, "t1#2", LogShard("t1", "evt_1"), "the hash is part of the stored data: it may not change")
}

func TestItemCarriesAValidTraceParentOnly(t *testing.T) {
	t.Parallel()
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	e := valid()
	e.TraceParent = tp
	item, err := e.Item()
	require.NoError(t, err)
	require.Equal(t, &types.AttributeValueMemberS{Value: tp}, item[AttrTraceParent])
	for _, bad := range []string{"x", strings.ToUpper(tp), "00-00000000000000000000000000000000-00f067aa0ba902b7-01", tp + "-", "ff" + tp[2:], tp[:54] + "\n"} {
		e.TraceParent = bad
		item, err := e.Item()
		require.NoError(t, err, "a malformed traceparent is never an error: %q", bad)
		require.NotContains(t, item, AttrTraceParent, "%q is left out", bad)
		require.NoError(t, e.Validate())
	}
}
