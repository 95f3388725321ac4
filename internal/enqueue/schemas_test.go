package enqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/hookline/hookline/internal/domain"
	"github.com/hookline/hookline/internal/eventtypes"
	"github.com/hookline/hookline/internal/metrics"
	"github.com/hookline/hookline/internal/payloadschema"
	"github.com/hookline/hookline/outbox"
	"github.com/stretchr/testify/require"
)

// testCatalog has a type of each validation mode, with one schema:
// {"amount": integer >= 1} required.
func testCatalog(t testing.TB) *payloadschema.Validator {
	t.Helper()
	schema := json.RawMessage(`{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":1},"card":{"type":"string","maxLength":4}}}`)
	var types []eventtypes.Type
	for name, v := range map[string]eventtypes.Validation{"pay.rejected": eventtypes.ValidationReject, "pay.warned": eventtypes.ValidationWarn, "pay.off": eventtypes.ValidationOff} {
		types = append(types, eventtypes.Type{Name: name, Schema: schema, Example: json.RawMessage(`{"amount":1}`), Validation: v})
	}
	c, err := eventtypes.New(types)
	require.NoError(t, err)
	require.NoError(t, payloadschema.Check(c))
	return payloadschema.New(c)
}

func typed(id, typ, payload string) map[string]events.DynamoDBAttributeValue {
	return image(id, "t1", map[string]events.DynamoDBAttributeValue{
		outbox.AttrType: events.NewStringAttribute(typ), outbox.AttrPayload: events.NewStringAttribute(payload),
	})
}

// A payload that does not validate against its catalog type's schema is
// rejected (reject: schema_mismatch, the path and keyword, never the
// stream blocked) or delivered and counted (warn); off, a type the catalog
// does not know, and a payload that validates are delivered untouched.
func TestPayloadsAreValidatedByTheirTypesMode(t *testing.T) {
	t.Parallel()
	s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{}
	h := newHandler(s, q)
	var out, logs bytes.Buffer
	h.Metrics, h.Log, h.Schemas = metrics.New(&out), slog.New(slog.NewJSONHandler(&logs, nil)), testCatalog(t)
	secret := `{"amount":"12","card":"4242424242424242"}`
	resp, err := h.Handle(context.Background(), streamEvent(
		typed("bad_rejected", "pay.rejected", secret),
		typed("good_rejected", "pay.rejected", `{"amount":12}`),
		typed("bad_warned", "pay.warned", `{"amount":0}`),
		typed("bad_off", "pay.off", secret),
		typed("unknown", "order.created", secret),
	))
	require.NoError(t, err)
	require.Empty(t, resp.BatchItemFailures)

	var sent []string
	for _, m := range q.sent() {
		sent = append(sent, m.EventID)
	}
	require.Equal(t, []string{"good_rejected", "bad_warned", "bad_off", "unknown"}, sent)

	require.Len(t, s.Rejections(), 1)
	r := s.Rejections()["bad_rejected"]
	require.Equal(t, domain.RejectSchemaMismatch, r.Reason)
	require.Equal(t, outbox.AttrPayload, r.Field)
	require.Equal(t, "t1", r.TenantID)
	require.Contains(t, r.Detail, "at /amount: keyword type")
	require.NotContains(t, r.Detail, "4242424242424242")

	require.Contains(t, out.String(), `"SchemaMismatches"`)
	require.Contains(t, out.String(), `"EventType":"pay.warned"`)
	require.Contains(t, out.String(), `"Reason":"schema_mismatch"`)
	require.Contains(t, logs.String(), `"path":"/amount","keyword":"minimum"`)
	require.NotContains(t, logs.String(), "4242424242424242", "no payload is logged")
}

// failingSchemas is a catalog whose schema does not compile.
type failingSchemas struct{}

func (failingSchemas) Validate(string, []byte) (eventtypes.Validation, *payloadschema.Mismatch, error) {
	return eventtypes.ValidationReject, nil, errors.New("schema: does not compile")
}

// A schema that does not compile (a hand-made catalog file: synth refuses
// one) lets its payloads through unvalidated, logged, rather than
// rejecting every one of them.
func TestASchemaThatDoesNotCompileRejectsNothing(t *testing.T) {
	t.Parallel()
	s, q := newFakeStore(endpoint("t1", "ep_1")), &fakeQueue{}
	h := newHandler(s, q)
	var logs bytes.Buffer
	h.Log, h.Schemas = slog.New(slog.NewJSONHandler(&logs, nil)), failingSchemas{}
	_, err := h.Handle(context.Background(), streamEvent(typed("e1", "pay.rejected", `{}`)))
	require.NoError(t, err)
	require.Len(t, q.sent(), 1)
	require.Empty(t, s.Rejections())
	require.Contains(t, logs.String(), "payload not validated")
}
