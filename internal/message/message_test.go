package message

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecodeAndBody(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

// A payload goes out as written: no HTML escaping, which would write each
// <, > and & as six bytes and could take a message under the outbox's
// limit past SQS's.
func TestPayloadIsNotEscaped(t *testing.T) {
	t.Parallel()
	payload := json.RawMessage(`{"html":"<a href=\"x\">&amp;</a>"}`)
	m := Message{DeliveryID: "d", TenantID: "t", EndpointID: "e", EventID: "ev", EventType: "a.b", OccurredAt: time.Unix(0, 0), Payload: payload}
	body, err := m.RequestBody()
	require.NoError(t, err)
	require.Contains(t, string(body), `"data":{"html":"<a href=\"x\">&amp;</a>"}`)
	enc, err := Encode(m)
	require.NoError(t, err)
	require.Contains(t, string(enc), string(payload))
	require.NotContains(t, string(enc), `\u003c`)
	require.False(t, len(enc) > 0 && enc[len(enc)-1] == '\n', "no trailing newline")

	// The largest payload the outbox takes, all of it characters
	// json.Marshal would escape, still makes a message SQS takes.
	big := json.RawMessage(`"` + strings.Repeat("<", 192<<10-2) + `"`)
	m.Payload = big
	enc, err = Encode(m)
	require.NoError(t, err)
	require.Less(t, len(enc), MaxBatchBytes)
}

// A replay starts a fresh schedule: the attempts and deferrals a message
// carried (sent again to wait for a rate limit) are dropped.
func TestReplayedCarriesNoAttempts(t *testing.T) {
	t.Parallel()
	body, err := Encode(Message{DeliveryID: "d", TenantID: "t", EndpointID: "e", EventID: "ev", EventType: "a.b", Payload: json.RawMessage(`{}`), Attempts: 3, Deferrals: 2})
	require.NoError(t, err)
	require.Contains(t, string(body), `"attempts":3`)
	again, err := Replayed(string(body), time.Now())
	require.NoError(t, err)
	m, err := Decode(again)
	require.NoError(t, err)
	require.Zero(t, m.Attempts)
	require.Zero(t, m.Deferrals)
	require.NotContains(t, again, "attempts")
}

// A message carries the endpoint revision its sender read; one of an
// earlier version, without it, still decodes (revision 0: any copy of the
// endpoint will do), and 0 is left out of the body. A replay keeps the
// revision, and the receiver's body never shows it.
func TestEndpointRevisionIsCarriedAndOptional(t *testing.T) {
	t.Parallel()
	old := `{"delivery_id":"d","tenant_id":"t","endpoint_id":"e","event_id":"ev","event_type":"a.b","occurred_at":"2026-11-01T00:00:00Z","payload":{}}`
	m, err := Decode(old)
	require.NoError(t, err)
	require.Zero(t, m.EndpointRevision)
	body, err := Encode(m)
	require.NoError(t, err)
	require.NotContains(t, string(body), "endpoint_revision")

	m.EndpointRevision = 7
	body, err = Encode(m)
	require.NoError(t, err)
	require.Contains(t, string(body), `"endpoint_revision":7`)
	again, err := Replayed(string(body), time.Now())
	require.NoError(t, err)
	r, err := Decode(again)
	require.NoError(t, err)
	require.EqualValues(t, 7, r.EndpointRevision)
	sent, err := r.RequestBody()
	require.NoError(t, err)
	require.NotContains(t, string(sent), "revision")
}
