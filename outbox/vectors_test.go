package outbox

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// VectorsFile is the shared file of test vectors that this module, the
// TypeScript library (outbox-ts) and the Python library (outbox-py) all
// run: each vector an event as a producer gives it, and either the
// TransactWriteItems put it becomes or the error it is refused with, so
// that the three cannot drift. This test writes it from the cases below
// with -update, and otherwise holds the Go library to it.
const VectorsFile = "testvectors.json"

var updateVectors = flag.Bool("update", false, "rewrite testvectors.json from the Go library")

// vectorInput is an event as a producer in any language gives it: the
// payload as the JSON text it sends, occurred_at as an RFC 3339 string
// (empty: not given), expires_at in unix seconds.
type vectorInput struct {
	ID          string `json:"id"`
	TenantID    string `json:"tenant_id"`
	Type        string `json:"type"`
	Payload     string `json:"payload"`
	OccurredAt  string `json:"occurred_at"`
	EndpointID  string `json:"endpoint_id,omitempty"`
	Sequence    *int64 `json:"sequence,omitempty"`
	ExpiresAt   int64  `json:"expires_at,omitempty"`
	NoExpiry    bool   `json:"no_expiry,omitempty"`
	TraceParent string `json:"traceparent,omitempty"`
}

// vectorError is how a vector's event is refused: a validation error's
// reason, field and detail (its message is `outbox item field "<field>":
// <detail> (<reason>)`), or for the two errors that are not a field's
// (ErrExpiryConflict, ErrNoTable) the message alone.
type vectorError struct {
	Reason  string `json:"reason,omitempty"`
	Field   string `json:"field,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Message string `json:"message"`
}

// vectorPut is the TransactWriteItem's Put, its item in DynamoDB's JSON
// (the low-level wire form: {"S": "..."}, {"N": "..."}).
type vectorPut struct {
	TableName                string                       `json:"TableName"`
	Item                     map[string]map[string]string `json:"Item"`
	ConditionExpression      string                       `json:"ConditionExpression"`
	ExpressionAttributeNames map[string]string            `json:"ExpressionAttributeNames"`
}

type vector struct {
	Name  string       `json:"name"`
	Table string       `json:"table"`
	Input vectorInput  `json:"input"`
	Put   *vectorPut   `json:"put,omitempty"`
	Error *vectorError `json:"error,omitempty"`
}

type vectorFile struct {
	Comment string   `json:"comment"`
	Vectors []vector `json:"vectors"`
}

func seq(n int64) *int64 { return &n }

// vectorCases are the inputs: every rule of Validate and Item once, and
// the shapes a producer's event takes.
func vectorCases() []vector {
	base := vectorInput{ID: "evt_1", TenantID: "acme", Type: "payment.succeeded", Payload: `{"amount":1250,"currency":"EUR"}`, OccurredAt: "2026-12-07T10:00:00Z"}
	with := func(f func(*vectorInput)) vectorInput { in := base; f(&in); return in }
	deep := func(n int) string { return `{"a":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}` }
	return []vector{
		{Name: "minimal", Input: base},
		{Name: "every field", Input: with(func(in *vectorInput) {
			in.EndpointID, in.Sequence, in.ExpiresAt = "ep_1", seq(42), 1798000000
			in.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		})},
		{Name: "no expiry", Input: with(func(in *vectorInput) { in.NoExpiry = true })},
		{Name: "occurred_at with nanoseconds, kept, trailing zeros dropped", Input: with(func(in *vectorInput) { in.OccurredAt = "2026-12-07T10:00:00.123456780Z" })},
		{Name: "occurred_at with an offset, written in UTC", Input: with(func(in *vectorInput) { in.OccurredAt = "2026-12-07T12:30:00.5+02:30" })},
		{Name: "a sequence of zero is written", Input: with(func(in *vectorInput) { in.Sequence = seq(0) })},
		{Name: "a negative sequence", Input: with(func(in *vectorInput) { in.Sequence = seq(-7) })},
		{Name: "an invalid traceparent is left out", Input: with(func(in *vectorInput) { in.TraceParent = "00-00000000000000000000000000000000-00f067aa0ba902b7-01" })},
		{Name: "an uppercase traceparent is left out", Input: with(func(in *vectorInput) { in.TraceParent = "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01" })},
		{Name: "a later traceparent version is read", Input: with(func(in *vectorInput) {
			in.TraceParent = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"
		})},
		{Name: "multi-byte and astral characters", Input: with(func(in *vectorInput) {
			in.Type, in.Payload = "caf\u00e9.\U0001F600", "{\"note\":\"\u2603\U0001F600\",\"esc\":\"\\uffff\"}"
		})},
		{Name: "a scalar payload", Input: with(func(in *vectorInput) { in.Payload = `"just a string"` })},
		{Name: "a payload at the depth limit", Input: with(func(in *vectorInput) { in.Payload = deep(MaxPayloadDepth - 1) })},
		{Name: "a type beside a reserved one", Input: with(func(in *vectorInput) { in.Type = "endpoint.created" })},
		{Name: "an id of 256 bytes", Input: with(func(in *vectorInput) { in.ID = strings.Repeat("i", MaxIDBytes) })},

		{Name: "no id", Input: with(func(in *vectorInput) { in.ID = "" })},
		{Name: "no tenant", Input: with(func(in *vectorInput) { in.TenantID = "" })},
		{Name: "no type", Input: with(func(in *vectorInput) { in.Type = "" })},
		{Name: "no payload", Input: with(func(in *vectorInput) { in.Payload = "" })},
		{Name: "no occurred_at", Input: with(func(in *vectorInput) { in.OccurredAt = "" })},
		{Name: "an id over 256 bytes", Input: with(func(in *vectorInput) { in.ID = strings.Repeat("i", MaxIDBytes+1) })},
		{Name: "a multi-byte type over 256 bytes", Input: with(func(in *vectorInput) { in.Type = strings.Repeat("\u00e9", 129) })},
		{Name: "a newline in the type", Input: with(func(in *vectorInput) { in.Type = "payment\nsucceeded" })},
		{Name: "DEL in the id", Input: with(func(in *vectorInput) { in.ID = "evt\x7f" })},
		{Name: "U+FFFE in the tenant", Input: with(func(in *vectorInput) { in.TenantID = "acme\ufffe" })},
		{Name: "a tab in the endpoint id", Input: with(func(in *vectorInput) { in.EndpointID = "ep\t1" })},
		{Name: "U+FFFF in the payload", Input: with(func(in *vectorInput) { in.Payload = "{\"a\":\"\uffff\"}" })},
		{Name: "a payload that is not JSON", Input: with(func(in *vectorInput) { in.Payload = `{"a":` })},
		{Name: "two JSON documents", Input: with(func(in *vectorInput) { in.Payload = `{} {}` })},
		{Name: "a payload too deep", Input: with(func(in *vectorInput) { in.Payload = deep(MaxPayloadDepth) })},
		{Name: "a payload over 192 KiB", Input: with(func(in *vectorInput) { in.Payload = `"` + strings.Repeat("x", MaxPayloadBytes) + `"` })},
		{Name: "occurred_at not a time", Input: with(func(in *vectorInput) { in.OccurredAt = "yesterday" })},
		{Name: "occurred_at without a zone", Input: with(func(in *vectorInput) { in.OccurredAt = "2026-12-07T10:00:00" })},
		{Name: "a reserved type", Input: with(func(in *vectorInput) { in.Type = "delivery.dead" })},
		{Name: "a reserved type is checked last", Input: with(func(in *vectorInput) { in.Type = "endpoint.failing"; in.Payload = "" })},
		{Name: "the missing id is found before the bad time", Input: with(func(in *vectorInput) { in.ID = ""; in.OccurredAt = "yesterday" })},
		{Name: "expires_at and no_expiry both", Input: with(func(in *vectorInput) { in.ExpiresAt, in.NoExpiry = 1798000000, true })},
		{Name: "no table", Table: "-", Input: base},
	}
}

// event is in as the Go library takes it; errTime is occurred_at's parse
// error, if any (the other languages parse it at its turn: after every
// other field).
func (in vectorInput) event() (Event, error) {
	e := Event{ID: in.ID, TenantID: in.TenantID, Type: in.Type, EndpointID: in.EndpointID, Sequence: in.Sequence, NoExpiry: in.NoExpiry, TraceParent: in.TraceParent}
	if in.Payload != "" {
		e.Payload = json.RawMessage(in.Payload)
	}
	if in.ExpiresAt != 0 {
		e.ExpiresAt = time.Unix(in.ExpiresAt, 0)
	}
	if in.OccurredAt == "" {
		return e, nil
	}
	t, err := ParseOccurredAt(in.OccurredAt)
	if err != nil {
		e.OccurredAt = time.Unix(1, 0) // so that an earlier field's error is found first
		if verr := e.validateFields(); verr != nil {
			return e, verr
		}
		return e, err
	}
	e.OccurredAt = t
	return e, nil
}

// run is what the Go library makes of v.
func (v vector) run() vector {
	out := v
	out.Put, out.Error = nil, nil
	table := v.Table
	if table == "-" {
		table = ""
	}
	e, err := v.Input.event()
	var put types.TransactWriteItem
	if err == nil {
		put, err = TransactPut(table, e)
	}
	var ve *ValidationError
	switch {
	case errors.As(err, &ve):
		out.Error = &vectorError{Reason: ve.Reason, Field: ve.Field, Detail: ve.Detail, Message: ve.Error()}
	case err != nil:
		out.Error = &vectorError{Message: err.Error()}
	default:
		p := vectorPut{TableName: *put.Put.TableName, ConditionExpression: *put.Put.ConditionExpression,
			ExpressionAttributeNames: put.Put.ExpressionAttributeNames, Item: map[string]map[string]string{}}
		for k, av := range put.Put.Item {
			switch a := av.(type) {
			case *types.AttributeValueMemberS:
				p.Item[k] = map[string]string{"S": a.Value}
			case *types.AttributeValueMemberN:
				p.Item[k] = map[string]string{"N": a.Value}
			}
		}
		out.Put = &p
	}
	return out
}

// The Go library makes of each vector what the shared file says; -update
// writes the file from it.
func TestVectors(t *testing.T) {
	t.Parallel()
	var want []vector
	for _, v := range vectorCases() {
		if v.Table == "" {
			v.Table = "outbox"
		}
		want = append(want, v.run())
	}
	if *updateVectors {
		f := vectorFile{
			Comment: "hookline's outbox items: each vector an event as a producer gives it (payload as JSON text, occurred_at RFC 3339, " +
				"expires_at unix seconds) and the TransactWriteItems Put it becomes, or the error it is refused with. Written by the Go " +
				"library (go test ./outbox -run TestVectors -update); the Go, TypeScript (outbox-ts) and Python (outbox-py) tests run it. " +
				"table \"-\" means no table name. Fields are checked in this order: id, tenant_id, type, endpoint_id, payload, occurred_at, " +
				"then the reserved type; the first problem is the error.",
			Vectors: want,
		}
		b, err := json.MarshalIndent(f, "", "  ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(VectorsFile, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(VectorsFile)
	require.NoError(t, err)
	var got vectorFile
	require.NoError(t, json.Unmarshal(b, &got))
	require.Len(t, got.Vectors, len(want), "the file's vectors are the cases': go test ./outbox -run TestVectors -update")
	for i, v := range got.Vectors {
		t.Run(strconv.Itoa(i)+" "+v.Name, func(t *testing.T) {
			require.Equal(t, want[i].Input, v.Input)
			require.Equal(t, v, v.run(), "the Go library makes of the vector what the file says")
		})
	}
}
