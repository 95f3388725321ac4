package delivery

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIDIsDeterministicAndDistinct(t *testing.T) {
	a := ID("evt_1", "ep_1")
	require.Equal(t, a, ID("evt_1", "ep_1"), "the same pair always names the same delivery")
	require.Regexp(t, regexp.MustCompile(`^msg_[a-z2-7]{26}$`), a)
	require.NotEqual(t, a, ID("evt_1", "ep_2"))
	require.NotEqual(t, a, ID("evt_2", "ep_1"))
	require.NotEqual(t, ID("ab", "c"), ID("a", "bc"), "the separator keeps the two ids apart")
}

func TestDecodeAndBody(t *testing.T) {
	seq := int64(3)
	m := Message{DeliveryID: "msg_x", TenantID: "t", EndpointID: "e", EventID: "evt", EventType: "a.b",
		OccurredAt: time.Date(2026, 11, 30, 1, 0, 0, 0, time.FixedZone("x", 3600)), Sequence: &seq, Payload: json.RawMessage(`{"k": [1, 2]}`)}
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	got, err := Decode(string(raw))
	require.NoError(t, err)
	require.Equal(t, m.DeliveryID, got.DeliveryID)

	body, err := got.RequestBody()
	require.NoError(t, err)
	require.JSONEq(t, `{"id":"evt","type":"a.b","timestamp":"2026-11-30T00:00:00Z","data":{"k":[1,2]},"sequence":3}`, string(body))
	again, err := got.RequestBody()
	require.NoError(t, err)
	require.Equal(t, body, again, "the same bytes on every attempt")

	for name, bad := range map[string]string{
		"not json": `{`, "no delivery id": `{"tenant_id":"t","endpoint_id":"e","event_id":"v","payload":{}}`,
		"no payload": `{"delivery_id":"d","tenant_id":"t","endpoint_id":"e","event_id":"v"}`,
	} {
		_, err := Decode(bad)
		require.Error(t, err, name)
	}
}

func TestReplayedKeepsTheMessageAndMovesItsAge(t *testing.T) {
	occurred := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	body, err := json.Marshal(Message{DeliveryID: "d", TenantID: "t", EndpointID: "e", EventID: "ev", EventType: "a.b", OccurredAt: occurred, Payload: json.RawMessage(`{"x":1}`)})
	require.NoError(t, err)
	orig, err := Decode(string(body))
	require.NoError(t, err)
	require.Equal(t, occurred, orig.AgeFrom(), "not replayed: from the event")

	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.FixedZone("x", 3600))
	again, err := Replayed(string(body), at)
	require.NoError(t, err)
	m, err := Decode(again)
	require.NoError(t, err)
	require.True(t, at.Equal(m.AgeFrom()), "replayed: from the replay")
	m.ReplayedAt = nil
	require.Equal(t, orig, m, "nothing else changes")

	_, err = Replayed(`{"delivery_id":`, at)
	require.Error(t, err)
}
